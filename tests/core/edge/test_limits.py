"""The request limits as functions: settings, the depth scan, and the message walk."""

from __future__ import annotations

import json

import pytest
from a2a.helpers import new_data_part, new_text_part
from a2a.types import InvalidParamsError, Message, Role, SendMessageRequest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.base.settings import Limits, Settings
from agent.edge.limits import check_message, json_too_deep


def _send(parts: list, **message: object) -> SendMessageRequest:
    return SendMessageRequest(
        message=Message(message_id="m-1", role=Role.ROLE_USER, parts=parts, **message)
    )


def _nested(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"a": value}
    return value


def _refusal(params: SendMessageRequest, limits: Limits) -> dict:
    with pytest.raises(InvalidParamsError) as caught:
        check_message(params, limits)
    return {"message": caught.value.message, **caught.value.data}


def test_settings_read_the_limits_from_the_environment():
    settings_ = Settings.from_env({"NETAGENT_MAX_BODY_BYTES": "2048", "NETAGENT_MAX_DEPTH": "8"})
    assert settings_.limits == Limits(max_body_bytes=2048, max_depth=8)
    assert Settings.from_env({}).limits == Limits()


@pytest.mark.parametrize("raw", ["0", "-5", "lots"])
def test_a_limit_that_cannot_work_is_refused_by_name(raw):
    with pytest.raises(ValueError, match="NETAGENT_MAX_PARTS"):
        Limits.from_env({"NETAGENT_MAX_PARTS": raw})


@pytest.mark.parametrize(
    ("body", "deep"),
    [
        (b"[" * 100_000, True),  # unbalanced: json.loads would recurse until RecursionError
        (b"[" * 41 + b"]" * 41, True),
        (b"[" * 40 + b"]" * 40, False),
        (b"[]" * 200_000, False),  # many brackets, all shallow
        (b'{"a": "' + b"[" * 1000 + b'"}', False),  # brackets inside a string do not nest
        (b"[}" * 1000, False),  # malformed but shallow: the parser reports it
        (b"]" * 1000, False),
        (b"[" * 30 + b"{" + b"[" * 20, True),
    ],
)
def test_depth_scan(body, deep):
    assert json_too_deep(body, 40) is deep


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.text(alphabet='[]{}"\\ab', max_size=5),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=40,
    )
)
def test_depth_scan_agrees_with_the_real_depth_of_valid_json(value):
    def depth(v: object) -> int:
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    body = json.dumps(value).encode()
    for limit in (1, 2, 3, 5):
        assert json_too_deep(body, limit) is (depth(value) > limit)


def test_message_limits_name_the_limit_and_where_never_the_value():
    limits = Limits(max_parts=2, max_string_length=10, max_items=3, max_depth=4)
    secret = "s3cr3t-value-" * 3
    too_long = _refusal(_send([new_text_part(secret)]), limits)
    assert too_long["limit"] == "max_string_length"
    assert too_long["pointer"] == "/message/parts/0/text"
    assert secret not in json.dumps(too_long)

    parts = _refusal(_send([new_text_part("a")] * 3), limits)
    assert (parts["limit"], parts["pointer"]) == ("max_parts", "/message/parts")

    items = _refusal(_send([new_data_part({"arguments": {"ids": [1, 2, 3, 4]}})]), limits)
    assert items["limit"] == "max_items"
    assert items["pointer"] == "/message/parts/0/data/arguments/ids"

    deep = _refusal(_send([new_data_part(_nested(5))]), limits)
    assert deep["limit"] == "max_depth" and deep["pointer"].startswith("/message/parts/0/data/a")

    key = _refusal(_send([new_data_part({secret: 1})]), limits)
    assert key["pointer"] == "/message/parts/0/data"  # the pointer stops before the long key

    metadata = _refusal(_send([new_text_part("a")], metadata={"note": secret}), limits)
    assert metadata["pointer"] == "/message/metadata/note"


def test_a_message_within_the_limits_passes():
    limits = Limits(max_parts=2, max_string_length=10, max_items=3, max_depth=4)
    check_message(_send([new_text_part("hello"), new_data_part(_nested(4))]), limits)


@pytest.mark.parametrize(
    ("message", "pointer"),
    [
        (
            Message(message_id="m", role=Role.ROLE_AGENT, parts=[new_text_part("a")]),
            "/message/role",
        ),
        (Message(message_id="m", role=Role.ROLE_USER), "/message/parts"),
        (
            Message(
                message_id="m", role=Role.ROLE_USER, parts=[new_text_part("a"), new_text_part("")]
            ),
            "/message/parts/1/text",
        ),
    ],
)
def test_what_the_sdk_cannot_make_a_task_of_is_refused(message, pointer):
    """The SDK's task creation raises ValueError on these; refused as invalid params instead."""
    refusal = _refusal(SendMessageRequest(message=message), Limits())
    assert refusal["pointer"] == pointer


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_numbers_must_be_finite(number):
    """Python's json reads NaN and Infinity; protobuf could not write them back out."""
    refusal = _refusal(_send([new_data_part({"arguments": {"x": [1, number]}})]), Limits())
    assert refusal["pointer"] == "/message/parts/0/data/arguments/x/1"
    assert "limit" not in refusal


@pytest.mark.parametrize(
    ("part", "pointer"),
    [
        (new_text_part("check acme-lnk-00002\x00"), "/message/parts/0/text"),
        (new_data_part({"skill": "x\x00"}), "/message/parts/0/data/skill"),
        (new_data_part({"k\x00": 1}), "/message/parts/0/data"),
    ],
)
def test_a_nul_character_is_refused_wherever_it_is(part, pointer):
    """PostgreSQL text cannot hold U+0000, so no backend takes it (the fuzz found a 500)."""
    refused = _refusal(_send([part]), Limits())
    assert refused == {
        "message": f"strings may not contain U+0000 (at {pointer})",
        "pointer": pointer,
    }
