"""Available bandwidth on one link over a recent window, and whether a request fits."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError, bit_rate, rfc3339
from skills.check_link_capacity.extract import extract as extract

RECORD_KIND = "link-utilization-sample"
NOT_ACCESSIBLE = "resource not found or not accessible"
DEFAULT_WINDOW = 3600
DEFAULT_MAX_AGE = 900
DIRECTIONS = ("a_to_b", "b_to_a")


def _window(arguments: dict[str, Any]) -> int:
    return int(arguments.get("window_seconds", DEFAULT_WINDOW))


def check_constraints(arguments: dict[str, Any], limits: Mapping[str, Any]) -> None:
    """The window may not exceed what the agent advertises it will scan."""
    if _window(arguments) > int(limits["max_window_seconds"]):
        raise SkillError(
            ErrorCode.CONSTRAINT_REJECTED,
            f"window_seconds exceeds max_window_seconds ({limits['max_window_seconds']})",
        )


async def _link(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any] | None:
    """The link, looked up once per invocation (``authorize`` first, ``handle`` reuses it)."""
    if "link" not in ctx.found:
        inventory = ctx.tool("inventory")
        if "link_id" in arguments:
            ctx.found["link"] = await inventory.link(arguments["link_id"])
        else:
            ctx.found["link"] = await inventory.link_between(
                arguments["a_device"], arguments["b_device"]
            )
    link = ctx.found["link"]  # the inventory's link record, or None
    return link if isinstance(link, dict) else None


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """The link must belong to the caller's tenant; other tenants' links look absent."""
    if await _link(arguments, ctx) is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


def _p95(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def _stats(direction: str, samples: list[dict[str, Any]]) -> dict[str, Any]:
    utilized = [s["utilized_bps"] for s in samples]
    return {
        "direction": direction,
        "samples": len(samples),
        "available_bps_min": min(s["available_bps"] for s in samples),
        "utilized_bps_max": max(utilized),
        "utilized_bps_p95": _p95(utilized),
        "utilization_ratio_max": max(s["utilization_ratio"] for s in samples),
    }


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Worst-case available bandwidth per direction in the window, from fresh samples only."""
    link = await _link(arguments, ctx)
    if link is None:  # deleted between the check and the run
        raise SkillError(ErrorCode.EXECUTION_FAILED, NOT_ACCESSIBLE)
    window = _window(arguments)
    requested = arguments.get("requested_bps")
    wanted = arguments.get("direction", "both")
    directions = DIRECTIONS if wanted == "both" else (wanted,)
    end = ctx.now()
    result: dict[str, Any] = {
        "link_id": link["link_id"],
        "a_device": link["a_device"],
        "b_device": link["b_device"],
        "status": link["status"],
        "capacity_bps": link["capacity_bps"],
        "window_seconds": window,
        "window_end": rfc3339(end),
        "directions": [],
        "supporting_record_refs": [],
    }
    if requested is not None:
        result["requested_bps"] = requested
    if link["status"] != "connected":
        return {
            **result,
            "available_bps": 0,
            "fits": None if requested is None else False,
            "verdict": f"link is {link['status']}: it carries no traffic",
        }
    samples = await ctx.tool("inventory").utilization_samples(
        link["link_id"], since=end - timedelta(seconds=window), until=end
    )
    samples = [s for s in samples if s["direction"] in directions]
    max_age = int(arguments.get("max_sample_age_seconds", DEFAULT_MAX_AGE))
    newest = max((s["observed_at"] for s in samples), default=None)
    if newest is None or (end - newest).total_seconds() > max_age:
        raise SkillError(
            ErrorCode.EXECUTION_FAILED,
            f"no utilization sample newer than max_sample_age_seconds ({max_age}); "
            "telemetry for this link is stale",
        )
    if len(samples) > int(ctx.limits["max_records"]):
        raise SkillError(
            ErrorCode.RESOURCE_LIMIT_EXCEEDED,
            f"the window holds more than max_records ({ctx.limits['max_records']}) samples",
        )
    for sample in samples:
        record_id = f"sample-{sample['direction']}-{int(sample['observed_at'].timestamp())}"
        await ctx.emit_record(
            RECORD_KIND,
            {
                "record_id": record_id,
                "link_id": link["link_id"],
                "direction": sample["direction"],
                "observed_at": rfc3339(sample["observed_at"]),
                "interval_s": sample["interval_s"],
                "utilized_bps": sample["utilized_bps"],
                "available_bps": sample["available_bps"],
                "utilization_ratio": sample["utilization_ratio"],
            },
            artifact_id=record_id,
        )
        result["supporting_record_refs"].append(record_id)
    stats = [
        _stats(d, [s for s in samples if s["direction"] == d])
        for d in directions
        if any(s["direction"] == d for s in samples)
    ]
    available = min(s["available_bps_min"] for s in stats)
    fits = None if requested is None else requested <= available
    # For people, in the unit they use; the numbers of the result stay in bit/s.
    verdict = f"{bit_rate(available)} available at worst in the window"
    if requested is not None:
        verdict = f"{bit_rate(requested)} {'fits' if fits else 'does not fit'}: {verdict}"
    return {
        **result,
        "directions": stats,
        "available_bps": available,
        "fits": fits,
        "verdict": verdict,
    }
