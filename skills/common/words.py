"""The word tables the plain-text parsers read, loaded once from ``words.json`` beside this module.

Language is data a deployment ships and can replace, not code: ``text.py`` keeps the syntax (ids,
numbers, unit symbols, the patterns around the words) and reads its English words from here. A
table of the wrong shape fails the import with a ``ValueError`` naming it, so a replaced file
that would misread every message never serves one. Keys beginning with ``_`` are comments.
"""

from __future__ import annotations

import json
from importlib import resources
from types import MappingProxyType
from typing import Any, Final

WORDS_FILE: Final = "words.json"
OPERATORS: Final = ("gte", "gt", "lt", "lte")
"""The comparison operators the skills take; every operator phrase means one of them."""


def _fields(value: Any, where: str) -> dict[str, Any]:
    """``value``'s members but comments, or a ValueError naming ``where``."""
    if not isinstance(value, dict):
        raise ValueError(f"{WORDS_FILE}: {where} must be an object")
    return {key: item for key, item in value.items() if not key.startswith("_")}


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{WORDS_FILE}: {where} must be a list of non-empty strings")
    return tuple(value)


def _positive_numbers(value: Any, where: str) -> MappingProxyType[str, int | float]:
    """Word -> number, in the file's order (it matters to the callers that iterate it)."""
    table = _fields(value, where)
    for word, number in table.items():
        if isinstance(number, bool) or not isinstance(number, int | float) or not number > 0:
            raise ValueError(f"{WORDS_FILE}: {where}/{word} must be a positive number")
    return MappingProxyType(table)


def _positive_integers(value: Any, where: str) -> MappingProxyType[str, int]:
    """Word -> whole number, in the file's order (it matters to the callers that iterate it)."""
    table = _fields(value, where)
    for word, number in table.items():
        if isinstance(number, bool) or not isinstance(number, int) or not number > 0:
            raise ValueError(f"{WORDS_FILE}: {where}/{word} must be a positive whole number")
    return MappingProxyType(table)


def _phrases(value: Any, where: str) -> MappingProxyType[str, str]:
    """Phrase -> operator from lists grouped by operator; a phrase names one operator only."""
    table: dict[str, str] = {}
    for op, phrases in _fields(value, where).items():
        if op not in OPERATORS:
            raise ValueError(f"{WORDS_FILE}: {where}/{op} is not one of {', '.join(OPERATORS)}")
        for phrase in _strings(phrases, f"{where}/{op}"):
            if phrase in table:
                raise ValueError(f"{WORDS_FILE}: {where}/{op}: {phrase!r} is listed twice")
            table[phrase] = op
    return MappingProxyType(table)


def _load() -> dict[str, Any]:
    text = resources.files("skills.common").joinpath(WORDS_FILE).read_text("utf-8")
    return _fields(json.loads(text), "the file")


_DATA: Final = _load()
_BANDWIDTH: Final = _fields(_DATA.get("bandwidth"), "bandwidth")

KEYWORDS: Final = frozenset(
    word
    for group, words in _fields(_DATA.get("keywords"), "keywords").items()
    for word in _strings(words, f"keywords/{group}")
)
"""Words a cheap typo of which is read as the word (the groups are for the reader)."""
NOT_TYPOS: Final = frozenset(_strings(_DATA.get("not_typos"), "not_typos"))
"""Real words one edit away from a keyword, never corrected to it."""
NUMBER_WORDS: Final = _positive_numbers(_DATA.get("number_words"), "number_words")
"""Words that count the time unit after them (``a couple of`` days, ``half an`` hour)."""
OPERATOR_PHRASES_BEFORE: Final = _phrases(_DATA.get("operator_phrases"), "operator_phrases")
"""Comparison phrases that come before the number (``at least 80%``)."""
OPERATOR_PHRASES_AFTER: Final = _phrases(
    _DATA.get("operator_phrases_after_the_number"), "operator_phrases_after_the_number"
)
"""Comparison phrases that follow the number (``80% or more``, ``80%+``)."""
BANDWIDTH_WORD_PREFIXES: Final = _positive_integers(
    _BANDWIDTH.get("word_prefixes"), "bandwidth/word_prefixes"
)
"""Worded rate prefixes and their factor, tried in this order (``giga`` before ``gig``)."""
BANDWIDTH_PREFIXES_ALONE: Final = frozenset(
    _strings(_BANDWIDTH.get("prefixes_alone"), "bandwidth/prefixes_alone")
)
"""Worded prefixes that are a rate on their own (``10 gig``)."""
BIT_WORDS: Final = frozenset(_strings(_BANDWIDTH.get("bit_words"), "bandwidth/bit_words"))
BYTE_WORDS: Final = frozenset(_strings(_BANDWIDTH.get("byte_words"), "bandwidth/byte_words"))
BYTE_RATE_WORDS: Final = frozenset(
    _strings(_BANDWIDTH.get("byte_rate_words"), "bandwidth/byte_rate_words")
)
"""Byte words that are a rate with no prefix (``bytes/s``; a bare ``bytes`` is a size)."""
