"""Hypothesis strategies for malformed A2A requests, shared by the fuzz modules."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from agent.observability.metrics import JSONRPC_METHODS

METHODS = JSONRPC_METHODS
SAFE_METHODS = tuple(m for m in METHODS if m not in ("SendMessage", "SendStreamingMessage"))

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
"""Any JSON value, NaN and Infinity included (Python's json reads them; clients send them)."""

ids = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.text(max_size=40),
    st.booleans(),
    st.floats(allow_nan=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
task_ids = st.one_of(
    st.uuids().map(str),
    st.text(max_size=60),
    st.text(alphabet="0123456789abcdef-", min_size=36, max_size=36),
    st.just("x" * 300),
)


def text_message(text: str = "hello") -> dict[str, Any]:
    """A well-formed text message, for mutation."""
    return {"messageId": "fuzz-1", "role": "ROLE_USER", "parts": [{"text": text}]}


PART_KEYS = ("text", "data", "raw", "url", "mediaType", "filename", "metadata")
MESSAGE_KEYS = (
    "messageId",
    "contextId",
    "taskId",
    "role",
    "parts",
    "metadata",
    "extensions",
    "referenceTaskIds",
)


@st.composite
def mutated_messages(draw: st.DrawFn) -> dict[str, Any]:
    """A message with some members replaced by arbitrary JSON, or dropped, or added."""
    message: dict[str, Any] = text_message()
    for key in draw(st.lists(st.sampled_from(MESSAGE_KEYS), max_size=3, unique=True)):
        if draw(st.booleans()):
            message.pop(key, None)
        else:
            message[key] = draw(json_values)
    if draw(st.booleans()) and isinstance(message.get("parts"), list):
        part: dict[str, Any] = {}
        for key in draw(st.lists(st.sampled_from(PART_KEYS), min_size=1, max_size=3, unique=True)):
            part[key] = draw(json_values)
        message["parts"] = [*message["parts"], part]
    return message


@st.composite
def send_params(draw: st.DrawFn) -> Any:
    """SendMessage params: mutated messages, odd configurations, or anything at all."""
    choice = draw(st.integers(min_value=0, max_value=3))
    if choice == 0:
        return draw(json_values)
    params: dict[str, Any] = {"message": draw(mutated_messages())}
    if choice >= 2:
        params["configuration"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "acceptedOutputModes": json_values,
                    "historyLength": json_values,
                    "returnImmediately": json_values,
                    "pushNotificationConfig": json_values,
                },
            )
        )
    if choice == 3:
        params["metadata"] = draw(json_values)
    return params


@st.composite
def method_params(draw: st.DrawFn, method: str) -> Any:
    """Params for a non-send method: plausible members holding arbitrary values."""
    if draw(st.integers(min_value=0, max_value=4)) == 0:
        return draw(json_values)
    keys = ("id", "taskId", "historyLength", "pageSize", "pageToken", "status", "contextId")
    params = {key: draw(json_values) for key in draw(st.lists(st.sampled_from(keys), max_size=3))}
    if draw(st.booleans()):
        params["id"] = draw(task_ids)
    return params
