"""Sites, devices, interfaces or links of the caller's tenant."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError, rfc3339
from skills.lookup_inventory.extract import extract as extract

NOT_ACCESSIBLE = "resource not found or not accessible"
DEFAULT_LIMIT = 100


def _jsonable(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: rfc3339(v) if isinstance(v, datetime) else v for k, v in row.items()}


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """A named device must be the caller's own; someone else's looks absent."""
    device = arguments.get("device")
    if device is not None and await ctx.tool("inventory").device(device) is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Query the inventory tool; it filters by the caller's tenant in SQL."""
    inventory = ctx.tool("inventory")
    kind = arguments["kind"]
    if kind == "sites":
        rows = await inventory.sites()
    elif kind == "devices":
        rows = await inventory.devices(
            site=arguments.get("site"), role=arguments.get("role"), status=arguments.get("status")
        )
    elif kind == "interfaces":
        rows = await inventory.interfaces(arguments["device"])
    else:
        rows = await inventory.links(device=arguments.get("device"), status=arguments.get("status"))
    limit = min(int(arguments.get("limit", DEFAULT_LIMIT)), int(ctx.limits["max_items"]))
    return {
        "kind": kind,
        "tenant": ctx.principal.tenant or "",
        "count": len(rows),
        "truncated": len(rows) > limit,
        "items": [_jsonable(r) for r in rows[:limit]],
    }
