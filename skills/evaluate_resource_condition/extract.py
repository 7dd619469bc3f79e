"""Arguments of ``evaluate_resource_condition`` from plain text.

``resource_id`` is the first resource named, by position: a resource id
(``network-resource-123``, an interface ``network-resource-1001:et-0/0/2``), a device name
(``nyc1-core-01``) or a link id (``acme-lnk-00010``: a link is a resource too). When both a
device and an id of one of its ports are named, the id (the more specific) wins.
``condition`` holds only the members found: ``metric`` (see ``skills.common.text.metric``),
``operator`` (the leftmost operator phrase), ``threshold`` (the number next to the operator, or
else the first percentage, or else the number after ``threshold``/``limit``) and ``unit``
(``percent`` when the threshold carries ``%``/``percent``; otherwise the metric's own unit,
``count`` for errors, once a threshold was found; but a bare fraction such as ``cpu >= 0.9``
gets no unit, since 0.9 percent and 90 percent are both plausible readings).
"""

from __future__ import annotations

import re
from typing import Any

from skills.common.text import (
    METRIC_UNITS_ALL,
    Comparison,
    Found,
    after_spaces,
    clean,
    device_names,
    find_comparison,
    fold,
    is_percent_at,
    link_ids,
    mask_ids,
    metric,
    numbers,
    plain_number,
    resource_ids,
    total,
)

NEAR_AFTER = 40
"""Characters an operator may be from its number (``exceeds a threshold of 90``)."""
NEAR_BEFORE = 12
"""Characters a trailing operator may follow its number (``90% or more``)."""
LOOK_BEHIND = 40
"""Characters before a number searched for ``threshold``/``limit``."""

_NOT_A_THRESHOLD = re.compile(
    r"\s?-?\s?(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?"
    r"|months?|[kmgt]b?(?:ps|its?)?|[kmgt]bit/s|x)(?![\w/])"
)
_NAMED = re.compile(
    r"(?<![\w-])(?:threshold|thresh|thr|limit|level|target)\s*(?:of|=|:|at|is|to)?\s*$"
)
_COUNT_AFTER = re.compile(r"(?:errors?|errs?|crcs?|count|packets?|pkts?)\b")


def _candidates(folded: str) -> list[Found]:
    return [n for n in numbers(folded) if not _NOT_A_THRESHOLD.match(folded, n.end)]


def _threshold(folded: str, op: Comparison | None) -> Found | None:
    """The threshold number, by the rules in the module docstring."""
    found = _candidates(folded)
    if op is not None and op.postfix:
        before = [n for n in found if n.end <= op.start and op.start - n.end <= NEAR_BEFORE]
        if before:
            return before[-1]
    elif op is not None:
        after = [n for n in found if n.start >= op.end and n.start - op.end <= NEAR_AFTER]
        if after:
            return after[0]
    for number in found:
        if is_percent_at(folded, number.end):
            return number
    for number in found:
        if _NAMED.search(folded, max(0, number.start - LOOK_BEHIND), number.start):
            return number
    return None


def _looks_like_ratio(value: float, name: str) -> bool:
    """``cpu >= 0.9``: a fraction for a percent metric is ambiguous, so the unit is asked for."""
    return METRIC_UNITS_ALL[name] == "percent" and 0 < value < 1


def _resource(text: str) -> str | None:
    """The first resource by position (see the module notes)."""
    ids = resource_ids(text)
    if ids:
        return ids[0]
    cleaned = clean(text).lower()
    named = [(cleaned.find(name), name) for name in device_names(text) + link_ids(text)]
    named = [(at, name) for at, name in named if at >= 0] or [(0, n) for _, n in named]
    return min(named)[1] if named else None


@total
def extract(text: str) -> dict[str, Any]:
    """Whatever of ``resource_id`` and ``condition`` ``text`` states; ``{}`` when nothing."""
    arguments: dict[str, Any] = {}
    resource = _resource(text)
    if resource is not None:
        arguments["resource_id"] = resource
    folded = mask_ids(fold(text))
    condition: dict[str, Any] = {}
    name = metric(text)
    if name is not None:
        condition["metric"] = name
    op = find_comparison(folded)
    if op is not None:
        condition["operator"] = op.op
    threshold = _threshold(folded, op)
    if threshold is not None:
        condition["threshold"] = plain_number(threshold.value)
        if is_percent_at(folded, threshold.end):
            condition["unit"] = "percent"
        elif name is not None and not _looks_like_ratio(threshold.value, name):
            condition["unit"] = METRIC_UNITS_ALL[name]
        elif _COUNT_AFTER.match(folded, after_spaces(folded, threshold.end)):
            condition["unit"] = "count"
    if (
        name is None
        and condition.get("unit") == "percent"
        and "operator" in condition
        and resource is not None
        and resource in link_ids(text)
    ):
        # a link past a percent, its metric unsaid ("is <link> running over 85%?"): its
        # utilization, the only percent a link is measured in here (its errors are counted)
        condition["metric"] = "utilization"
    if condition:
        arguments["condition"] = condition
    return arguments
