"""Deprecated shape kept for old callers: headroom percent from the latest sample."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError, rfc3339
from skills.link_headroom.extract import extract as extract

NOT_ACCESSIBLE = "resource not found or not accessible"
LOOKBACK = timedelta(hours=1)


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """The link must be the caller's."""
    if await ctx.tool("inventory").link(arguments["link_id"]) is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Headroom of the busier direction at the latest sample; 0 for links that are not up."""
    inventory = ctx.tool("inventory")
    link = await inventory.link(arguments["link_id"])
    if link is None:
        raise SkillError(ErrorCode.EXECUTION_FAILED, NOT_ACCESSIBLE)
    result = {"link_id": link["link_id"], "capacity_bps": link["capacity_bps"]}
    if link["status"] != "connected":
        return {**result, "headroom_percent": 0, "observed_at": None}
    end = ctx.now()
    samples = await inventory.utilization_samples(link["link_id"], since=end - LOOKBACK, until=end)
    if not samples:
        raise SkillError(ErrorCode.EXECUTION_FAILED, "no recent utilization sample for this link")
    latest = max(s["observed_at"] for s in samples)
    busiest = max(s["utilization_ratio"] for s in samples if s["observed_at"] == latest)
    headroom = round(max(0.0, 1.0 - busiest) * 100, 2)
    return {**result, "headroom_percent": headroom, "observed_at": rfc3339(latest)}
