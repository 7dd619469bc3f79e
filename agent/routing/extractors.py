"""What every text extractor needs, whatever its domain: totality and a plain-text fold.

An extractor (``extract(text) -> arguments``) is best effort: the router asks for whatever
it leaves out, so an extractor must never raise. ``total`` makes that so; ``plain`` is the
domain-free normalisation the core's own extractors read (a domain adds its vocabulary on top,
as ``skills/common/text.py`` does).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from typing import Any

MAX_TEXT = 20_000
"""Text beyond this many characters is not read (the message limits bound it anyway)."""
_DASHES = re.compile("[\u2010-\u2015\u2212\ufe58\ufe63\uff0d]")

Extract = Callable[[str], dict[str, Any]]


def plain(text: Any) -> str:
    """NFKC-normalised, dashes unified, lower case; non-str gives ""."""
    if not isinstance(text, str):
        return ""
    try:
        normalised = unicodedata.normalize("NFKC", text[:MAX_TEXT])
    except ValueError:  # pragma: no cover - lone surrogates normalise fine, but be total
        return ""
    return _DASHES.sub("-", normalised).lower()


def total(fn: Extract) -> Callable[[Any], dict[str, Any]]:
    """Make an extractor total: non-str input and any unexpected failure give ``{}``."""

    @functools.wraps(fn)
    def wrapper(text: Any) -> dict[str, Any]:
        if not isinstance(text, str):
            return {}
        try:
            return fn(text)
        except Exception:  # an extractor is best effort; the caller asks for what is missing
            return {}

    return wrapper
