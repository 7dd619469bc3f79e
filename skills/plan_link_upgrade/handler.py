"""Recommend upgrades for links that ran hot; recommends only, changes nothing."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from agent.interfaces import ErrorCode, SkillError
from agent.skill_context import SkillContext, rfc3339
from skills.plan_link_upgrade.extract import extract as extract

RECORD_KIND = "utilization-peak"
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


def check_constraints(arguments: dict[str, Any], limits: Mapping[str, Any]) -> None:
    """Window and result size within the advertised limits."""
    if int(arguments.get("window_seconds", 604800)) > int(limits["max_window_seconds"]):
        raise SkillError(
            ErrorCode.CONSTRAINT_REJECTED,
            f"window_seconds exceeds max_window_seconds ({limits['max_window_seconds']})",
        )
    if int(arguments.get("max_links", 20)) > int(limits["max_links"]):
        raise SkillError(
            ErrorCode.CONSTRAINT_REJECTED, f"max_links exceeds the limit ({limits['max_links']})"
        )


def recommended_capacity(capacity_bps: int, peak_ratio: float) -> int:
    """The smallest standard rate that would have kept the peak at or under half load."""
    needed = capacity_bps * peak_ratio / TARGET_RATIO
    for step in STEPS_BPS:
        if step >= needed and step > capacity_bps:
            return step
    return max(STEPS_BPS[-1], capacity_bps * 2)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Peak utilization per link over the window, worst first, with the evidence as records."""
    level = float(arguments.get("min_utilization_ratio", 0.8))
    window = int(arguments.get("window_seconds", 604800))
    max_links = int(arguments.get("max_links", 20))
    end = ctx.now()
    start = end - timedelta(seconds=window)
    hot = await ctx.tool("inventory").hot_links(level, since=start)
    recommendations, refs = [], []
    for link in hot[:max_links]:
        record_id = f"peak-{link['link_id']}"
        await ctx.emit_record(
            RECORD_KIND,
            {
                "record_id": record_id,
                "link_id": link["link_id"],
                "window_start": rfc3339(start),
                "window_end": rfc3339(end),
                "samples": link["samples"],
                "peak_utilization_ratio": link["max_ratio"],
                "mean_utilization_ratio": link["avg_ratio"],
            },
            artifact_id=record_id,
        )
        refs.append(record_id)
        target = recommended_capacity(link["capacity_bps"], link["max_ratio"])
        recommendations.append(
            {
                "link_id": link["link_id"],
                "capacity_bps": link["capacity_bps"],
                "peak_utilization_ratio": link["max_ratio"],
                "recommended_capacity_bps": target,
                "reason": f"peak utilization {link['max_ratio']:.0%} is over {level:.0%}",
                "evidence": record_id,
            }
        )
    return {
        "min_utilization_ratio": level,
        "window_seconds": window,
        "recommendations": recommendations,
        "supporting_record_refs": refs,
    }
