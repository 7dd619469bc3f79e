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
INTERFACE_FILTERS = ("site", "role")
"""The filters of an interface list: its device's site and role."""
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


async def _named(kind: str, arguments: dict[str, Any], ctx: SkillContext) -> Any:
    """The named device or link (``kind``), looked up once per invocation (``authorize`` first,
    ``handle`` reuses it); None if it is not the caller's."""
    if kind not in ctx.found:
        ctx.found[kind] = await getattr(ctx.tool("inventory"), kind)(arguments[kind])
    return ctx.found[kind]


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """A named device or link must be the caller's own; someone else's looks absent."""
    for kind in ("device", "link"):
        if kind in arguments and await _named(kind, arguments, ctx) is None:
            raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Query the inventory tool with every filter given; it filters by the caller's tenant in
    SQL. A filter the record does not carry (a link's site or role: either end's; an
    interface's: its device's) keeps what it would keep of the records it belongs to."""
    inventory = ctx.tool("inventory")
    kind = arguments["kind"]
    given = {
        f: arguments[f] for f in ("site", "device", "role", "status", "link") if f in arguments
    }
    if kind == "sites":
        rows = await inventory.sites(**given)
    elif kind == "devices" and "device" in arguments:
        # one named device (1.1): a point lookup, kept if the other filters keep it
        rows = _kept(await _named("device", arguments, ctx), arguments, DEVICE_FILTERS)
    elif kind == "devices":
        rows = await inventory.devices(**given)
    elif kind == "interfaces":
        # the named device's ports, if its site and role are the ones asked for
        device = _kept(await _named("device", arguments, ctx), arguments, INTERFACE_FILTERS)
        rows = await inventory.interfaces(arguments["device"]) if device else []
    else:
        rows = await inventory.links(**given)
    limit = min(int(arguments.get("limit", DEFAULT_LIMIT)), int(ctx.limits["max_items"]))
    return {
        "kind": kind,
        "tenant": ctx.principal.tenant or "",
        "count": len(rows),
        "truncated": len(rows) > limit,
        "items": [_jsonable(r) for r in rows[:limit]],
    }
