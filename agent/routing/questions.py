"""What the agent asks back: which skill was meant, or which arguments are missing."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agent.interfaces import error_details
from agent.registry.loader import Capability
from agent.registry.manifest import State, thawed

MAX_VALUES_SHOWN = 12
MAX_VALUE_SHOWN = 80
"""How much of a long enum a question shows (values, characters of each)."""
HOW_TO_ANSWER = (
    "Reply with the skill id or its number in this task, or send a skill request "
    'Data Part {"skill": <id>, "arguments": {...}}.'
)


def _schema_at(schema: dict[str, Any], pointer: str) -> dict[str, Any]:
    node: Any = schema
    for token in [t for t in pointer.split("/") if t]:
        node = node.get("properties", {}).get(token.replace("~1", "/").replace("~0", "~"), {})
    return node if isinstance(node, dict) else {}


def expected_text(node: dict[str, Any]) -> str:
    """What a member with no description takes: its values when the schema lists them (a
    caller asked for ``/kind`` is told ``one of: "sites", "items"``, not ``a value``)."""
    values = node.get("enum")
    if isinstance(values, list) and values:
        shown = ", ".join(json.dumps(v)[:MAX_VALUE_SHOWN] for v in values[:MAX_VALUES_SHOWN])
        more = f" ({len(values)} in all)" if len(values) > MAX_VALUES_SHOWN else ""
        return f"one of: {shown}{more}"
    if "const" in node:
        return "exactly " + json.dumps(node["const"])[:MAX_VALUE_SHOWN]
    return f"a {node.get('type', 'value')}"


def missing_fields(capability: Capability, arguments: dict[str, Any]) -> list[dict[str, str]]:
    """Required members the arguments lack, by JSON Pointer, with the schema's description.

    Only absences count: a present but invalid value is the caller's input error, reported as
    ``input_invalid`` when the skill runs, not asked for again.
    """
    interface = capability.interface
    if interface is None:
        return []
    details = error_details(interface.input_validator, arguments)
    if not details or any(d["keyword"] not in ("required", "oneOf", "anyOf") for d in details):
        return []
    schema = interface.document["input_schema"]["resolution"]["schema"]
    return [_missing(schema, detail) for detail in details]


def _missing(schema: dict[str, Any], detail: dict[str, Any]) -> dict[str, str]:
    """One absence: a required member, or a choice of members (``oneOf``/``anyOf``)."""
    at = detail["instance_path"]
    if detail["keyword"] == "required":
        node = _schema_at(schema, at)
        return {"pointer": at, "description": node.get("description") or expected_text(node)}
    branches = _schema_at(schema, at).get(detail["keyword"]) or (
        schema.get(detail["keyword"], []) if at == "" else []
    )
    options = [" and ".join(b["required"]) for b in branches if b.get("required")]
    first = branches[0]["required"][0] if options else ""
    return {"pointer": f"{at}/{first}", "description": "one of: " + "; or ".join(options)}


def clarification_text(
    candidates: Iterable[Capability], note: str = "", *, matched: bool = True
) -> str:
    """The question put to the caller when the router is unsure; the deployment's ``note``
    (why no skill fits) first, when there is one. ``matched`` False: nothing fits the text,
    and ``candidates`` are what the caller can ask for."""
    offered = list(candidates)
    if not matched:
        lead = note or "I could not match this to anything I do."
        lines = [lead, "What I can do for you:"]
    else:
        question = "Did you mean this?" if len(offered) == 1 else "Which of these did you mean?"
        lines = [note, f"Or {question[0].lower()}{question[1:]}"] if note else [question]
    for index, capability in enumerate(offered, start=1):
        lines.append(f"{index}. {_line(capability)}")
    lines.append(HOW_TO_ANSWER)
    return "\n".join(lines)


def _line(capability: Capability) -> str:
    """A skill in one line: id, name, the first sentence of its description."""
    skill = thawed(capability.manifest.skill)
    first = skill["description"].split(". ")[0].rstrip(".")
    line = f"{capability.id} ({skill['name']}): {first}."
    replacement = capability.manifest.replacement
    if capability.manifest.state is State.DEPRECATED and replacement:
        line += f" Deprecated: {replacement} replaces it."
    return line


def missing_text(capability: Capability, missing: Iterable[dict[str, str]]) -> str:
    """The question put to the caller when arguments are missing."""
    lines = [f"To run {capability.id} I still need:"]
    lines += [f"- {m['pointer']}: {m['description']}" for m in missing]
    lines.append(
        "Reply in this task with text, or with a Data Part holding the arguments "
        "(skill_version and interface_digest are in this message's data)."
    )
    return "\n".join(lines)
