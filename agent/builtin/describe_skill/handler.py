"""The ``describe_skill`` handler: return a pre-built Skill Interface Document, nothing else.

It runs no domain logic and builds nothing per request (digest §4.4). A skill the caller may
not see is answered exactly like an unknown one, so describe never reveals existence.
"""

from __future__ import annotations

from typing import Any

from agent.interfaces.errors import ErrorCode, SkillError

NOT_ADVERTISED = "no such skill is advertised to you"


async def authorize(arguments: dict[str, Any], ctx: Any) -> None:
    """Only skills the caller's card lists can be described."""
    if not ctx.can_see(arguments["skill_id"]):
        raise SkillError(ErrorCode.SKILL_NOT_ADVERTISED, NOT_ADVERTISED)


async def handle(arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The frozen document and its digest, exactly as built at start-up."""
    interface = ctx.interface_of(arguments["skill_id"])
    if interface is None:
        raise SkillError(
            ErrorCode.INTERFACE_UNAVAILABLE, "the interface of this skill cannot be returned now"
        )
    return {
        "skill_id": interface.skill_id,
        "skill_version": interface.skill_version,
        "interface_digest": interface.interface_digest,
        "skill_interface": interface.document,
    }
