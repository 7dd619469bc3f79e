"""agent/lazy.py: a name is imported when first asked for, kept, and an unknown one refused."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from agent.lazy import on_first_use


def test_a_name_is_imported_on_first_use_and_kept() -> None:
    sys.modules.pop("colorsys", None)
    namespace: dict[str, Any] = {}
    lookup = on_first_use("pkg", {"rgb_to_hsv": "colorsys"}, namespace)
    assert "colorsys" not in sys.modules  # nothing imported until asked
    function = lookup("rgb_to_hsv")
    assert function is sys.modules["colorsys"].rgb_to_hsv
    assert namespace == {"rgb_to_hsv": function}  # later lookups find it there


def test_an_unknown_name_is_an_attribute_error() -> None:
    lookup = on_first_use("pkg", {}, {})
    with pytest.raises(AttributeError, match="module 'pkg' has no attribute 'missing'"):
        lookup("missing")
