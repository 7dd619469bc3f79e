"""Recommend whether one checked link needs an upgrade; recommends only, changes nothing.

The input is a ``check_link_capacity`` result (this skill's input schema is that skill's
output schema, so the two compose directly). The link's status and capacity are read again
from the inventory, as they are now; from the input only ``link_id``, ``requested_bps`` and
``fits`` are used.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError, bit_rate, rfc3339
from skills.plan_link_upgrade.extract import extract as extract

RECORD_KIND = "utilization-peak"
NOT_ACCESSIBLE = "resource not found or not accessible"
STEPS_BPS = (
    1_000_000_000,
    10_000_000_000,
    25_000_000_000,
    40_000_000_000,
    100_000_000_000,
    200_000_000_000,
    400_000_000_000,
    800_000_000_000,
)
TARGET_RATIO = 0.5
UPGRADE, NO_CHANGE = "upgrade", "no_change"


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """The checked link must belong to the caller's tenant; other tenants' links look absent."""
    if await ctx.tool("inventory").link(arguments["link_id"]) is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


def recommended_capacity(capacity_bps: int, peak_ratio: float, requested_bps: int = 0) -> int:
    """The smallest standard rate above ``capacity_bps`` that keeps the peak at or under half
    load and carries the peak plus ``requested_bps``.

    Beyond the largest standard rate, the smallest multiple of it (a bundle) that does.
    """
    peak_bps = capacity_bps * peak_ratio
    needed = max(peak_bps / TARGET_RATIO, peak_bps + requested_bps)
    for step in STEPS_BPS:
        if step >= needed and step > capacity_bps:
            return step
    largest = STEPS_BPS[-1]
    return largest * max(math.ceil(needed / largest), capacity_bps // largest + 1)


def _period(seconds: int) -> str:
    if seconds % 86400 == 0:
        days = seconds // 86400
        return f"{days} day{'s' if days != 1 else ''}"
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return f"{hours} hour{'s' if hours != 1 else ''}"
    return f"{seconds} s"


def _decide(
    link: dict[str, Any],
    peak: float,
    arguments: dict[str, Any],
    limits: Mapping[str, Any],
) -> tuple[str, int, str]:
    """(recommendation, recommended capacity, reason) for a link and its peak."""
    capacity = int(link["capacity_bps"])
    if link["status"] != "connected":
        return NO_CHANGE, capacity, f"link is {link['status']}: it carries no traffic to plan for"
    above = float(limits["upgrade_above_ratio"])
    period = _period(int(limits["lookback_seconds"]))
    requested = arguments.get("requested_bps")
    hot = peak > above
    short = arguments.get("fits") is False
    if not hot and not short:
        reason = f"peak utilization {peak:.0%} over the last {period} is not above {above:.0%}"
        if requested is not None:
            reason += f", and the requested {bit_rate(requested)} fits"
        return NO_CHANGE, capacity, reason
    because = []
    if hot:
        because.append(f"peak utilization {peak:.0%} over the last {period} is above {above:.0%}")
    if short:
        wanted = "bandwidth" if requested is None else bit_rate(requested)
        because.append(f"the requested {wanted} does not fit")
    target = recommended_capacity(capacity, peak, int(requested or 0))
    return UPGRADE, target, "; ".join(because)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Peak and mean utilization of the link over the lookback, one record, one recommendation."""
    inventory = ctx.tool("inventory")
    link = await inventory.link(arguments["link_id"])
    if link is None:  # deleted between the check and the run
        raise SkillError(ErrorCode.EXECUTION_FAILED, NOT_ACCESSIBLE)
    lookback = int(ctx.limits["lookback_seconds"])
    end = ctx.now()
    start = end - timedelta(seconds=lookback)
    samples = await inventory.utilization_samples(link["link_id"], since=start, until=end)
    ratios = [float(s["utilization_ratio"]) for s in samples]
    if not ratios and link["status"] == "connected":
        raise SkillError(
            ErrorCode.EXECUTION_FAILED,
            f"no utilization samples for this link in the last {lookback} s; cannot plan",
        )
    peak = max(ratios, default=0.0)
    mean = round(sum(ratios) / len(ratios), 6) if ratios else 0.0
    record_id = f"peak-{link['link_id']}"
    await ctx.emit_record(
        RECORD_KIND,
        {
            "record_id": record_id,
            "link_id": link["link_id"],
            "window_start": rfc3339(start),
            "window_end": rfc3339(end),
            "samples": len(ratios),
            "peak_utilization_ratio": peak,
            "mean_utilization_ratio": mean,
        },
        artifact_id=record_id,
    )
    recommendation, target, reason = _decide(link, peak, arguments, ctx.limits)
    return {
        "link_id": link["link_id"],
        "recommendation": recommendation,
        "current_capacity_bps": int(link["capacity_bps"]),
        "recommended_capacity_bps": target,
        "peak_utilization_ratio": peak,
        "mean_utilization_ratio": mean,
        "reason": reason,
        "supporting_record_refs": [record_id],
    }


def summarize(output: dict[str, Any]) -> str:
    """One line: ``acme-lnk-00002: upgrade to 200 Gbit/s (peak 94%)`` or ``...: no change``."""
    peak = f"(peak {float(output['peak_utilization_ratio']):.0%})"
    if output["recommendation"] == UPGRADE:
        target = bit_rate(int(output["recommended_capacity_bps"]))
        return f"{output['link_id']}: upgrade to {target} {peak}"
    return f"{output['link_id']}: no change {peak}"
