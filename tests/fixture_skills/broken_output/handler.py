"""Test-only skill whose output or record breaks its own schema (proves output_invalid)."""

from __future__ import annotations

from typing import Any

from agent.server.skill_context import SkillContext


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Break what the caller asks to be broken."""
    if arguments["break"] == "record":
        await ctx.emit_record("probe-record", {"record_id": "probe-1"}, artifact_id="probe-1")
    if arguments["break"] == "result":
        return {"result": "maybe", "supporting_record_refs": []}
    return {"result": "condition_met", "supporting_record_refs": []}
