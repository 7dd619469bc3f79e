"""A check's four outcomes (``netagent check``'s report, ``netagent describe``'s checks): their
own module, so that ``describe`` prints them without importing the conformance checker."""

from __future__ import annotations

from typing import Final

PASS: Final = "pass"
FAIL: Final = "fail"
SKIP: Final = "skip"
NOT_APPLICABLE: Final = "n/a"

__all__ = ["FAIL", "NOT_APPLICABLE", "PASS", "SKIP"]
