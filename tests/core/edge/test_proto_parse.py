"""agent/edge/proto_parse.py gives exactly what ``json_format.ParseDict`` gives.

Differential: for every A2A message type, JSON made from generated messages
(``MessageToDict`` of messages filled at random from their descriptors, so every member kind
occurs), then mutated the ways a hostile or careless client would (nulls, numbers as
strings, wrong types, unknown members, a member under both its names, two members of one
oneof, unknown enum names, deep nesting): the fast parse and ParseDict must produce equal
messages, or both refuse with the same error.
"""

from __future__ import annotations

from typing import Any

import a2a.types as a2a_types
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.edge.proto_parse import parse_dict
from tests.core.edge.test_proto_json import MESSAGE_TYPES, _fill

json_junk: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**65), 2**65)
    | st.floats()
    | st.text(max_size=5)
    | st.sampled_from(["1", "NaN", "TASK_STATE_COMPLETED", "ROLE_USER", "nope", "[x]", "@type"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def _mutate(draw: st.DrawFn, js: Any, depth: int = 0) -> Any:
    if depth > 4 or not draw(st.integers(0, 3)):
        return js
    if isinstance(js, dict) and js:
        key = draw(st.sampled_from(sorted(js)))
        choice = draw(st.integers(0, 5))
        out = dict(js)
        if choice == 0:
            out[key] = draw(json_junk)
        elif choice == 1:
            out[key] = None
        elif choice == 2:
            out[draw(st.sampled_from(["unknownMember", "[ext]", "@type", "task_id", "taskId"]))] = (
                draw(json_junk)
            )
        elif choice == 3:  # the same field under its proto name too
            snake = "".join("_" + c.lower() if c.isupper() else c for c in key)
            out[snake] = out[key]
        else:
            out[key] = _mutate(draw, js[key], depth + 1)
        return out
    if isinstance(js, list) and js:
        index = draw(st.integers(0, len(js) - 1))
        out = list(js)
        out[index] = _mutate(draw, js[index], depth + 1) if draw(st.booleans()) else draw(json_junk)
        return out
    return js


@st.composite
def requests(draw: st.DrawFn) -> tuple[type[Message], Any]:
    cls = draw(st.sampled_from(MESSAGE_TYPES))
    message = cls()
    _fill(draw, message, 0)
    try:
        js = json_format.MessageToDict(message)
    except (json_format.SerializeToJsonError, ValueError):
        js = {}
    return cls, _mutate(draw, js)


def _outcome(parse: Any, cls: type[Message], js: Any) -> tuple[str, Any]:
    try:
        return "ok", parse(js, cls(), ignore_unknown_fields=True)
    except Exception as error:
        return "error", (type(error), str(error))


@settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))
@given(requests())
def test_every_request_parses_as_parse_dict_parses_it(case: tuple[type[Message], Any]) -> None:
    cls, js = case
    assert _outcome(parse_dict, cls, js) == _outcome(json_format.ParseDict, cls, js)


def test_a_send_message_request_takes_the_fast_way_and_equals_parse_dict() -> None:
    import agent.edge.proto_parse as module

    params = {
        "message": {
            "messageId": "m-1",
            "role": "ROLE_USER",
            "parts": [
                {"text": "hello"},
                {
                    "data": {"skill": "x", "arguments": {"a": [1, 2.5, None, True, {}], "b": {}}},
                    "mediaType": "application/json",
                },
            ],
            "metadata": {"k": "v"},
            "referenceTaskIds": ["t-0"],
        },
        "configuration": {"acceptedOutputModes": ["application/json"], "historyLength": 3},
        "unknown": 1,
    }
    calls = []
    original = module.json_format.ParseDict
    try:
        module.json_format.ParseDict = lambda *a, **k: calls.append(1) or original(*a, **k)  # type: ignore[assignment]
        fast = parse_dict(params, a2a_types.SendMessageRequest(), ignore_unknown_fields=True)
    finally:
        module.json_format.ParseDict = original  # type: ignore[assignment]
    assert calls == []  # no fallback for a plain request
    assert fast == json_format.ParseDict(
        params, a2a_types.SendMessageRequest(), ignore_unknown_fields=True
    )


def test_nesting_past_parse_dicts_limit_is_its_error() -> None:
    deep: Any = "leaf"
    for _ in range(60):
        deep = {"d": deep}
    params = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"data": deep}]}}
    with pytest.raises(json_format.ParseError) as expected:
        json_format.ParseDict(params, a2a_types.SendMessageRequest(), ignore_unknown_fields=True)
    with pytest.raises(json_format.ParseError) as got:
        parse_dict(params, a2a_types.SendMessageRequest(), ignore_unknown_fields=True)
    assert str(got.value) == str(expected.value)
