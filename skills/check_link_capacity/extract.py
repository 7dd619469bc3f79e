"""Arguments of ``check_link_capacity`` from plain text.

* ``link_id``: the first link id; otherwise ``a_device`` and ``b_device`` when two different
  devices are named (by name or resource id), in the order written. One device alone is not
  used: a link needs both ends, and the caller is asked.
* ``requested_bps``: the first rate that is not the size of a link or port (``100G link``,
  ``2x100G LAG`` describe capacity, not a request).
* ``max_sample_age_seconds``: a duration after ``no older than``, ``newer than``, ``max age``,
  ``staleness limit``..., or before ``old`` (``at most 5 minutes old``).
* ``window_seconds``: the first other duration (``over the last hour``).
* ``direction``: only when written as ``a to b``/``a->b``/``a_to_b`` (or ``b to a``), or
  ``both directions``; ``from nyc1-core-01 to ...`` is not read as a direction.

Durations are clamped into the schema's range (a window of a minute becomes 300 s; a month
becomes 604800 s, which the skill's own limit then refuses with a clear message).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Any

from skills.common.text import (
    Found,
    after_spaces,
    clamp_int,
    clean,
    device_refs,
    find_bandwidths,
    find_durations,
    fold,
    link_ids,
    total,
)

WINDOW_RANGE = (300, 604800)
MAX_AGE_RANGE = (60, 604800)
REQUESTED_RANGE = (1, 10**15)
AGE_GAP = 12
"""Characters between an age phrase and its duration (``no older than about 10 minutes``)."""

_CAPACITY_NOUN = re.compile(
    r"(?:-\s*+)?(?:links?|lags?|circuits?|ports?|interfaces?|uplinks?|pipes?|trunks?|bundles?"
    r"|lines?|connections?|capacity|ethernet|optics?|transceivers?|members?)\b",
    re.I,
)
_AGE_BEFORE = re.compile(
    r"(?:(?:no|not|nothing)\s+older\s+than|(?:newer|fresher|younger)\s+than"
    r"|max(?:imum|\.)?\s+(?:sample\s+|data\s+)?age(?:\s+of)?"
    r"|(?:sample|data|telemetry)\s+age\s*(?:of|<=?|under|below|at\s+most|max|:|=)?"
    r"|stale(?:ness)?\s+(?:limit|threshold|cutoff|after|beyond)(?:\s+of)?)",
    re.I,
)
_AGE_AFTER = re.compile(r"(?<!\s)\s++old\b", re.I)  # read at a duration's end
_A_TO_B = re.compile(
    r"(?<![a-z0-9])a[\s_-]*(?:side[\s_-]*)?(?:to|->|\u2192|>)[\s_-]*(?:the[\s_-]+)?b(?:[\s_-]*side)?"
    r"(?![a-z0-9])"
)
_B_TO_A = re.compile(
    r"(?<![a-z0-9])b[\s_-]*(?:side[\s_-]*)?(?:to|->|\u2192|>)[\s_-]*(?:the[\s_-]+)?a(?:[\s_-]*side)?"
    r"(?![a-z0-9])"
)
_BOTH = re.compile(
    r"(?<![a-z])(?:both|either|each|all)\s+(?:directions?|ways|sides)|bidirectional|bi-directional"
)


def _requested(cleaned: str) -> int | None:
    for rate in find_bandwidths(cleaned):
        if _CAPACITY_NOUN.match(cleaned, after_spaces(cleaned, rate.end)):
            continue
        if REQUESTED_RANGE[0] <= rate.value <= REQUESTED_RANGE[1]:
            return int(rate.value)
    return None


def _age(cleaned: str, durations: list[Found]) -> Found | None:
    triggers = [m.end() for m in _AGE_BEFORE.finditer(cleaned)]  # in order
    for duration in durations:
        # the first trigger ending at most AGE_GAP before it (a search, not a scan of all)
        at = bisect_left(triggers, duration.start - AGE_GAP)
        if at < len(triggers) and triggers[at] <= duration.start:
            return duration
        if _AGE_AFTER.match(cleaned, duration.end):
            return duration
    return None


def _direction(folded: str) -> str | None:
    if _BOTH.search(folded):
        return "both"
    a_to_b, b_to_a = _A_TO_B.search(folded), _B_TO_A.search(folded)
    if a_to_b and not b_to_a:
        return "a_to_b"
    if b_to_a and not a_to_b:
        return "b_to_a"
    return None


@total
def extract(text: str) -> dict[str, Any]:
    """Whatever of the link, request, window, sample age and direction ``text`` states."""
    arguments: dict[str, Any] = {}
    links = link_ids(text)
    devices = device_refs(text)
    if links:
        arguments["link_id"] = links[0]
    elif len(devices) >= 2:
        arguments["a_device"], arguments["b_device"] = devices[0], devices[1]
    cleaned = clean(text)
    requested = _requested(cleaned)
    if requested is not None:
        arguments["requested_bps"] = requested
    durations = find_durations(cleaned)
    age = _age(cleaned, durations)
    if age is not None:
        arguments["max_sample_age_seconds"] = clamp_int(age.value, *MAX_AGE_RANGE)
    window = next((d for d in durations if d is not age), None)
    if window is not None:
        arguments["window_seconds"] = clamp_int(window.value, *WINDOW_RANGE)
    direction = _direction(fold(text))
    if direction is not None:
        arguments["direction"] = direction
    return arguments
