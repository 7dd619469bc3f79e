"""The ``describe_skill`` handler: return a pre-built Skill Interface Document, nothing else.

It runs no domain logic and builds nothing per request (digest §4.4): the answer for a skill
version is a FixedResult, so the document is parsed, checked against the output schema and
turned into its Data Part once per process, and reused for every caller allowed to see it. A
skill the caller may not see is answered exactly like an unknown one, so describe never
reveals existence; that check runs on every request.
"""

from __future__ import annotations

from typing import Any

from agent.interfaces import SkillInterface
from agent.interfaces.errors import ErrorCode, SkillError
from agent.registry.fixed_result import FixedResult

NOT_ADVERTISED = "no such skill is advertised to you"


async def authorize(arguments: dict[str, Any], ctx: Any) -> None:
    """Only skills the caller's card lists can be described."""
    if not ctx.can_see(arguments["skill_id"]):
        raise SkillError(ErrorCode.SKILL_NOT_ADVERTISED, NOT_ADVERTISED)


async def handle(arguments: dict[str, Any], ctx: Any) -> FixedResult:
    """The frozen document and its digest, exactly as built at start-up."""
    interface = ctx.interface_of(arguments["skill_id"])
    if interface is None:
        raise SkillError(
            ErrorCode.INTERFACE_UNAVAILABLE, "the interface of this skill cannot be returned now"
        )
    return described(interface)


def described(interface: SkillInterface) -> FixedResult:
    """The answer for one skill version; its key is the version and the document's digest."""
    return FixedResult(
        key=(interface.skill_id, interface.skill_version, interface.interface_digest),
        build=lambda: {
            "skill_id": interface.skill_id,
            "skill_version": interface.skill_version,
            "interface_digest": interface.interface_digest,
            "skill_interface": interface.document,
        },
    )
