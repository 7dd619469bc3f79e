"""Read the schema-interface skill request out of an A2A message.

The request is exactly one Data Part ``{"skill", "skill_version"?, "interface_digest"?,
"arguments"}`` (project choice 10: no other members). Anything else is for the router.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, overload

from a2a.types import Message

from agent.edge.proto_json import message_to_dict
from agent.interfaces import ErrorCode, SkillError

REQUEST_MEMBERS = frozenset({"skill", "skill_version", "interface_digest", "arguments"})


@dataclass(frozen=True)
class SkillRequest:
    """An explicit request for one skill, as the client sent it."""

    skill: str
    arguments: dict[str, Any]
    skill_version: str | None
    interface_digest: str | None


@overload
def plain_json(value: dict[str, Any]) -> dict[str, Any]: ...
@overload
def plain_json(value: list[Any]) -> list[Any]: ...
@overload
def plain_json(value: Any) -> Any: ...


def plain_json(value: Any) -> Any:
    """Undo protobuf's doubles: integral numbers become ints again (80.0 -> 80).

    An object stays an object and an array an array, which the overloads let callers rely on.
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_json(v) for v in value]
    return value


def data_parts(message: Message | None) -> list[Any]:
    """The JSON values of every Data Part of a message, in order."""
    if message is None:
        return []
    return [
        plain_json(message_to_dict(part.data))  # MessageToDict's value, a third of its cost
        for part in message.parts
        if part.WhichOneof("content") == "data"
    ]


def explicit_request(message: Message | None) -> SkillRequest | None:
    """The skill request if the message is one (a lone Data Part with a ``skill``), else None.

    A message that is clearly meant as a skill request but is malformed raises
    ``input_invalid`` instead of falling through to text routing.
    """
    if message is None or len(message.parts) != 1:
        return None
    parts = data_parts(message)
    if len(parts) != 1 or not isinstance(parts[0], dict) or "skill" not in parts[0]:
        return None
    data = parts[0]
    if not data.keys() <= REQUEST_MEMBERS:
        # Fixed text: the unknown names are the caller's input, of any length (never echoed).
        raise SkillError(
            ErrorCode.INPUT_INVALID,
            "a skill request has only the members skill, skill_version, interface_digest "
            "and arguments",
        )
    skill, arguments = data.get("skill"), data.get("arguments", {})
    version, digest = data.get("skill_version"), data.get("interface_digest")
    if not isinstance(skill, str) or not skill:
        raise SkillError(ErrorCode.INPUT_INVALID, "'skill' must be a non-empty string")
    if not isinstance(arguments, dict):
        raise SkillError(ErrorCode.INPUT_INVALID, "'arguments' must be an object")
    if version is not None and not isinstance(version, str):
        raise SkillError(ErrorCode.INTERFACE_MISMATCH, "'skill_version' must be a string")
    if digest is not None and not isinstance(digest, str):
        raise SkillError(ErrorCode.INTERFACE_MISMATCH, "'interface_digest' must be a string")
    return SkillRequest(skill, arguments, version, digest)
