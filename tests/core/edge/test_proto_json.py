"""agent/edge/proto_json.py prints exactly what ``json_format.MessageToDict`` prints.

Differential: every A2A message type, filled at random from its own descriptor (every field
kind, maps, repeated, oneofs, nested Structs with integral, fractional, huge and negative
numbers, timestamps, bytes, int64, unknown enum numbers), compared with protobuf's own
printer; and a realistic task (24 record artifacts) compared the same way.
"""

from __future__ import annotations

import math
from typing import Any

import a2a.types as a2a_types
import pytest
from google.protobuf import json_format, struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.edge import proto_json
from agent.edge.json_numbers import integral_numbers
from agent.edge.proto_json import data_part, message_to_dict, message_to_wire_dict

MESSAGE_TYPES = sorted(
    (
        value
        for value in vars(a2a_types).values()
        if isinstance(value, type) and issubclass(value, Message)
    ),
    key=lambda cls: cls.DESCRIPTOR.full_name,
)
json_numbers = st.one_of(
    st.integers(-(2**53), 2**53).map(float),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1e300, 5e-324, 0.1, 2.5]),
)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | json_numbers | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
SCALARS: dict[int, st.SearchStrategy[Any]] = {
    FieldDescriptor.TYPE_STRING: st.text(max_size=10),
    FieldDescriptor.TYPE_BYTES: st.binary(max_size=10),
    FieldDescriptor.TYPE_BOOL: st.booleans(),
    FieldDescriptor.TYPE_INT32: st.integers(-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: st.integers(-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: st.integers(-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: st.integers(0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: st.integers(0, 2**32 - 1),
    FieldDescriptor.TYPE_INT64: st.integers(-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: st.integers(-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: st.integers(-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT64: st.integers(0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: st.integers(0, 2**64 - 1),
    FieldDescriptor.TYPE_DOUBLE: st.floats(),
    FieldDescriptor.TYPE_FLOAT: st.floats(width=32),
}


def _fill(draw: st.DrawFn, message: Any, depth: int) -> None:
    descriptor: Descriptor = message.DESCRIPTOR
    name = descriptor.full_name
    if name == "google.protobuf.Struct":
        message.update(draw(st.dictionaries(st.text(max_size=6), json_values, max_size=4)))
        return
    if name == "google.protobuf.Value":
        json_format.ParseDict(draw(json_values), message)
        return
    if name == "google.protobuf.Timestamp":
        message.seconds = draw(st.integers(0, 253402300799))
        message.nanos = draw(st.sampled_from([0, 1, 1000, 1000000, 123456789]))
        return
    for field in descriptor.fields:
        if depth > 3 or not draw(st.booleans()):
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key_field = field.message_type.fields_by_name["key"]
            value_field = field.message_type.fields_by_name["value"]
            for _ in range(draw(st.integers(0, 2))):
                key = draw(SCALARS[key_field.type])
                target = getattr(message, field.name)
                if value_field.message_type is not None:
                    _fill(draw, target[key], depth + 1)
                else:
                    target[key] = draw(_scalar(value_field))
            continue
        if field.is_repeated:
            target = getattr(message, field.name)
            for _ in range(draw(st.integers(0, 2))):
                if field.message_type is not None:
                    _fill(draw, target.add(), depth + 1)
                else:
                    target.append(draw(_scalar(field)))
            continue
        if field.message_type is not None:
            _fill(draw, getattr(message, field.name), depth + 1)
            getattr(message, field.name).SetInParent()
        else:
            setattr(message, field.name, draw(_scalar(field)))


def _scalar(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    if field.enum_type is not None:
        numbers = [value.number for value in field.enum_type.values]
        return st.sampled_from(numbers) | st.integers(0, 40)
    return SCALARS[field.type]


@st.composite
def messages(draw: st.DrawFn) -> Message:
    cls = draw(st.sampled_from(MESSAGE_TYPES))
    message = cls()
    _fill(draw, message, 0)
    return message


def _same(message: Message) -> None:
    try:
        expected = json_format.MessageToDict(message)
    except (json_format.SerializeToJsonError, ValueError) as error:
        with pytest.raises(type(error)):
            message_to_dict(message)
        with pytest.raises(type(error)):
            message_to_wire_dict(message)
        return
    got = message_to_dict(message)
    assert _typed(got) == _typed(expected)
    # The wire form: the same walk with integral numbers as integers, exactly what
    # integral_numbers makes of protobuf's own output (it changes its argument: a new one).
    expected_wire = integral_numbers(json_format.MessageToDict(message))
    assert _typed(message_to_wire_dict(message)) == _typed(expected_wire)
    for _ in range(2):  # shared: a large Struct is printed, then taken from the cache
        assert _typed(message_to_dict(message, shared=True)) == _typed(expected)
        assert _typed(message_to_wire_dict(message, shared=True)) == _typed(expected_wire)


def _typed(value: Any) -> Any:
    """Equality that also tells 1 from 1.0 and 0.0 from -0.0 (the wire would)."""
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if isinstance(value, float):
        return ("float", math.copysign(1.0, value), abs(value))
    return (type(value).__name__, value)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages())
def test_every_a2a_message_prints_as_message_to_dict_prints_it(message: Message) -> None:
    _same(message)


def test_a_task_with_many_record_artifacts_prints_the_same() -> None:
    task = a2a_types.Task(id="t-1", context_id="c-1")
    task.status.state = a2a_types.TaskState.TASK_STATE_COMPLETED
    task.status.timestamp.FromJsonString("2026-12-01T10:00:00.120Z")
    for index in range(24):
        artifact = task.artifacts.add(artifact_id=f"rec-{index}", name="record")
        part = artifact.parts.add()
        record = {"samples": 11, "ratio": 0.25, "link": "acme-lnk-00002", "ok": True}
        json_format.ParseDict(record, part.data)
        part.media_type = "application/json"
        artifact.metadata.update({"kind": "link-utilization-sample", "index": index})
    task.history.add(message_id="m", role=a2a_types.Role.ROLE_USER).parts.add(text="hi")
    task.metadata.update({"routing": {"stage": "data", "score": 1.0}})
    _same(task)
    _same(a2a_types.SendMessageResponse(task=task))
    _same(a2a_types.StreamResponse(task=task))


def _described(extra: int = 0) -> a2a_types.Task:
    """A task answering describe_skill: one large fixed document in a Data Part."""
    document = {
        "skill_id": "check_link_capacity",
        "revision": extra,
        "skill_interface": {
            f"property_{i}": {"type": "number", "minimum": i, "maximum": 1.5 * i} for i in range(60)
        },
    }
    task = a2a_types.Task(id="t-1", context_id="c-1")
    artifact = task.artifacts.add(artifact_id="result", name="describe_skill")
    artifact.parts.append(data_part(document, "application/json"))
    return task


def test_a_large_struct_printed_for_output_is_walked_once_and_shared() -> None:
    task = _described()
    document = task.artifacts[0].parts[0].data
    assert proto_json.SHARED_MIN_BYTES <= document.ByteSize() <= proto_json.SHARED_MAX_BYTES
    first = message_to_wire_dict(task, shared=True)
    again = message_to_wire_dict(_described(), shared=True)  # equal content, another object
    assert again == first == integral_numbers(json_format.MessageToDict(task))
    assert again["artifacts"][0]["parts"][0]["data"] is first["artifacts"][0]["parts"][0]["data"]
    # the other number form is its own entry: 1.0 stays 1.0 where integers are not asked for
    plain = message_to_dict(task, shared=True)
    assert _typed(plain) == _typed(json_format.MessageToDict(task))
    assert _typed(plain) != _typed(first)
    # without shared, every result is the caller's own to change
    own = message_to_wire_dict(task)
    assert own["artifacts"][0]["parts"][0]["data"] is not first["artifacts"][0]["parts"][0]["data"]


def test_the_shared_cache_is_bounded_whatever_callers_send() -> None:
    for revision in range(3 * proto_json.SHARED_ENTRIES):
        message_to_wire_dict(_described(revision), shared=True)
        assert len(proto_json._PRINTED) <= proto_json.SHARED_ENTRIES
    huge = a2a_types.Task(id="t-2")
    blob = {"text": "x" * (proto_json.SHARED_MAX_BYTES + 1)}
    huge.artifacts.add(artifact_id="a").parts.append(data_part(blob))
    proto_json._PRINTED.clear()
    message_to_wire_dict(huge, shared=True)
    assert proto_json._PRINTED == {}  # too large to keep


def test_numbers_a_struct_cannot_print_are_refused_as_message_to_dict_refuses_them() -> None:
    for bad in (math.inf, -math.inf, math.nan):
        value = struct_pb2.Value(number_value=bad)
        task = a2a_types.Task(id="t")
        task.metadata.fields["x"].CopyFrom(value)
        _same(task)


odd_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()
    | st.text(max_size=6)
    | st.just(("a", 1)),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=4) | st.integers(0, 3), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text(max_size=6), odd_values, max_size=5) | odd_values)
def test_a_data_part_is_new_data_parts_part(data: Any) -> None:
    """The same Part as the SDK's helper for any value, or the same refusal."""
    from a2a.helpers import new_data_part

    try:
        expected = new_data_part(data, media_type="application/json")
    except Exception as error:
        with pytest.raises(type(error)):
            data_part(data, "application/json")
        return
    got = data_part(data, "application/json")
    assert got == expected or (  # NaN != NaN: compare what they print
        json_format.MessageToJson(got) == json_format.MessageToJson(expected)
    )
