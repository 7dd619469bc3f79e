"""Arguments of ``plan_link_upgrade`` from plain text.

* ``min_utilization_ratio``: the number next to an operator (``above 80%``, ``over 0.8``,
  ``hotter than 75``) or else the first percentage, as a ratio: ``80%`` and a bare ``80`` give
  0.8, a bare ``0.8`` stays 0.8; anything outside (0, 1] is dropped.
* ``window_seconds``: the first duration (``this week`` = 604800, ``last 30 days``), clamped
  into 3600..2592000 (the skill's own limit refuses more than a week, with a clear message).
* ``max_links``: ``top 5``, ``worst 10``, ``at most 3 links``, ``10 hottest links``; at most 500.
"""

from __future__ import annotations

import re
from typing import Any

from skills.common.text import (
    Found,
    clamp_int,
    duration_seconds,
    find_comparison,
    fold,
    is_percent_at,
    mask_ids,
    numbers,
    total,
)

WINDOW_RANGE = (3600, 2592000)
MAX_LINKS_RANGE = (1, 500)
NEAR_AFTER = 25
NEAR_BEFORE = 12

_NOT_A_LEVEL = re.compile(
    r"\s?-?\s?(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?"
    r"|months?|[kmgt]b?(?:ps|its?)?|[kmgt]bit/s|x|links?|circuits?)(?![\w/])"
)
_NAMED_RATIO = re.compile(
    r"(?<![\w-])(?:ratio|utili[sz]ation|util|level|threshold)\s*(?:of|=|:)?\s*$"
)
_COUNT = r"(\d{1,6}|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|fifty)"
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "fifty": 50,
}
_MAX_LINKS = re.compile(
    r"(?<![\w-])(?:top|worst|hottest|busiest|first|max(?:imum)?|limit(?:\s+(?:to|of))?"
    r"|up\s+to|at\s+most|only)\s+" + _COUNT + r"(?![\w.%])(?!\s*(?:%|percent|pct|per\s?cent))"
    r"(?!\s?-?\s?(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?"
    r"|months?)\b)"
    r"|(?<![\w.-])"
    + _COUNT
    + r"\s+(?:(?:hottest|worst|busiest|hot|top|most\s+\w+|congested|saturated)\s+)?"
    r"(?:links|circuits|recommendations|candidates|upgrades)\b"
)


def _as_ratio(value: float, is_percent: bool) -> float | None:
    ratio = value / 100 if is_percent or value > 1 else value
    return round(ratio, 6) if 0 < ratio <= 1 else None


def _level(masked: str) -> float | None:
    found = [n for n in numbers(masked) if not _NOT_A_LEVEL.match(masked, n.end)]
    op = find_comparison(masked)
    chosen: Found | None = None
    if op is not None and op.postfix:
        chosen = next(
            (n for n in reversed(found) if n.end <= op.start and op.start - n.end <= NEAR_BEFORE),
            None,
        )
    elif op is not None:
        chosen = next(
            (n for n in found if n.start >= op.end and n.start - op.end <= NEAR_AFTER), None
        )
    if chosen is None:
        chosen = next((n for n in found if is_percent_at(masked, n.end)), None)
    if chosen is None:
        chosen = next(
            (n for n in found if _NAMED_RATIO.search(masked, max(0, n.start - 30), n.start)),
            None,
        )
    if chosen is None:
        return None
    return _as_ratio(float(chosen.value), is_percent_at(masked, chosen.end))


def _max_links(masked: str) -> int | None:
    m = _MAX_LINKS.search(masked)
    if m is None:
        return None
    word = m[1] or m[2]
    value = int(word) if word.isdigit() else _NUMBER_WORDS[word]
    return clamp_int(value, *MAX_LINKS_RANGE) if value >= 1 else None


@total
def extract(text: str) -> dict[str, Any]:
    """Whatever of the level, window and number of links ``text`` states."""
    arguments: dict[str, Any] = {}
    masked = mask_ids(fold(text))
    level = _level(masked)
    if level is not None:
        arguments["min_utilization_ratio"] = level
    window = duration_seconds(text)
    if window is not None:
        arguments["window_seconds"] = clamp_int(window, *WINDOW_RANGE)
    max_links = _max_links(masked)
    if max_links is not None:
        arguments["max_links"] = max_links
    return arguments
