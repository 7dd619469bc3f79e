"""Sites, devices, interfaces or links of the caller's tenant."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError, rfc3339
from skills.lookup_inventory.extract import extract as extract

NOT_ACCESSIBLE = "resource not found or not accessible"
DEVICE_FILTERS = ("site", "role", "status")
"""The filters a named device must pass too, as the device list applies them."""
DEFAULT_LIMIT = 100


def _jsonable(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k: rfc3339(v) if isinstance(v, datetime) else v for k, v in row.items()}


def _kept(
    row: Mapping[str, Any] | None, arguments: Mapping[str, Any], filters: tuple[str, ...]
) -> list[Mapping[str, Any]]:
    """The one named record, as a list, if every filter given keeps it as the list would (the
    filters are named as the record's fields)."""
    if row is None:
        return []
    return [row] if all(row[f] == arguments[f] for f in filters if f in arguments) else []


def _ends(link: Mapping[str, Any]) -> set[str]:
    """The names and resource ids a ``device`` filter may give for a link's two devices."""
    return {
        link["a_device"],
        link["a_device_resource_id"],
        link["b_device"],
        link["b_device_resource_id"],
    }


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """A named device or link must be the caller's own; someone else's looks absent."""
    inventory = ctx.tool("inventory")
    device = arguments.get("device")
    if device is not None and await inventory.device(device) is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)
    link = arguments.get("link")
    if link is not None and await inventory.link(link) is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Query the inventory tool; it filters by the caller's tenant in SQL."""
    inventory = ctx.tool("inventory")
    kind = arguments["kind"]
    if kind == "sites":
        rows = await inventory.sites()
    elif kind == "devices" and "device" in arguments:
        # one named device (1.1): a point lookup, kept if the other filters keep it
        rows = _kept(await inventory.device(arguments["device"]), arguments, DEVICE_FILTERS)
    elif kind == "devices":
        rows = await inventory.devices(
            site=arguments.get("site"), role=arguments.get("role"), status=arguments.get("status")
        )
    elif kind == "interfaces":
        rows = await inventory.interfaces(arguments["device"])
    elif "link" in arguments:  # one named link (1.1), likewise
        rows = _kept(await inventory.link(arguments["link"]), arguments, ("status",))
        device = arguments.get("device")
        rows = [r for r in rows if device is None or device in _ends(r)]
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
