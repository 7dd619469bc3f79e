"""What the router reads of a message: its media types, its text, its argument Data Parts."""

from __future__ import annotations

import json
from typing import Any

from a2a.types import Message

from agent.interfaces import ErrorCode, SkillError
from agent.routing.extractors import MAX_TEXT
from agent.routing.skill_request import data_parts, plain_json

JSON = "application/json"
TEXT = "text/plain"
MAX_READ_TEXT = MAX_TEXT
"""Characters of a message's text routing reads at all (what an extractor reads); the rest is
neither routed on, nor extracted from, nor kept for a follow-up."""


def part_media_types(message: Message) -> set[str]:
    """Media types of a message's parts; untyped text and data parts get the obvious ones."""
    kinds = set()
    for part in message.parts:
        content = part.WhichOneof("content")
        if part.media_type:
            kinds.add(part.media_type.split(";")[0].strip().lower())
        elif content == "text":
            kinds.add(TEXT)
        elif content == "data":
            kinds.add(JSON)
        else:
            kinds.add("application/octet-stream")
    return kinds


def message_text(message: Message | None) -> str:
    """The text of a message's text parts, joined."""
    if message is None:
        return ""
    return "\n".join(p.text for p in message.parts if p.WhichOneof("content") == "text").strip()


def read_text(message: Message) -> str:
    """What routing reads of a message's text: its first ``MAX_READ_TEXT`` characters."""
    return message_text(message)[:MAX_READ_TEXT]


def text_length(message: Message | None) -> int:
    """Characters in a message's text parts (what routing would have to read)."""
    if message is None:
        return 0
    return sum(len(p.text) for p in message.parts if p.WhichOneof("content") == "text")


def data_as_text(message: Message) -> str:
    """A message's Data Parts as JSON text: what the text stages read of a message without
    text."""
    return " ".join(json.dumps(d) for d in data_parts(message))


def argument_parts(message: Message | None) -> dict[str, Any]:
    """Plain-object Data Parts that are not skill requests: arguments, merged in order.

    A part naming a ``skill`` contributes its ``arguments``, which must then be an object
    (``input_invalid`` otherwise: a client error, said as such).
    """
    merged: dict[str, Any] = {}
    for data in data_parts(message):
        if not isinstance(data, dict):
            continue
        if "skill" in data:
            arguments = data.get("arguments", {})
            if not isinstance(arguments, dict):
                raise SkillError(ErrorCode.INPUT_INVALID, "'arguments' must be an object")
            merged.update(arguments)
        else:
            merged.update(data)
    return merged


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Deep merge of argument objects; ``extra`` wins."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = plain_json(value)
    return merged
