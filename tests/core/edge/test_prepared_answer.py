"""A blocking send's answer printed from the run's JSON is the answer the printer would
give: the same JSON document as ``message_to_wire_dict(SendMessageResponse(task=...))``, for
every plain JSON record (numbers beyond 2**53, -0.0, huge and tiny doubles, deep and empty
containers), and the adapters' printer takes it only for the task it was prepared for."""

from __future__ import annotations

import json
from typing import Any

from a2a.helpers import new_text_part
from a2a.types import Artifact, SendMessageResponse, Task, TaskState, TaskStatus
from hypothesis import given, settings
from hypothesis import strategies as st

from agent import _sdk
from agent.edge.prepared_answer import (
    artifact_wire,
    prepare,
    take,
    take_task,
    task_wire,
    wire_value,
)
from agent.edge.proto_json import data_part, message_to_wire_dict, plain_json

JSON = "application/json"
NUMBERS = [0, -0.0, 1, -1, 2**53, 2**53 + 1, -(2**53) - 1, 2**63 - 1, -(2**63), 1e300, 5e-324]
NUMBERS += [0.1, 2.0, -3.0, 1e16, 123456789012345678]

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=8),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(NUMBERS),
)
values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=24,
)
records = st.dictionaries(st.text(max_size=8), values, max_size=6)


def _printed(data: Any) -> Any:
    return message_to_wire_dict(data_part(data, JSON))["data"]


def _same_json(a: Any, b: Any) -> bool:
    return json.loads(json.dumps(a, sort_keys=True)) == json.loads(json.dumps(b, sort_keys=True))


@settings(max_examples=300, deadline=None)
@given(records)
def test_a_record_prints_as_its_struct_prints(record: dict[str, Any]) -> None:
    assert plain_json(record, 1)
    assert _same_json(wire_value(record), _printed(record))
    assert json.dumps(wire_value(record), sort_keys=True) == json.dumps(
        _printed(record), sort_keys=True
    )


def test_every_edge_number_prints_as_its_struct_prints() -> None:
    for number in NUMBERS:
        record = {"n": number, "in": [number, {"deep": number}]}
        printed = json.dumps(_printed(record), sort_keys=True)
        assert json.dumps(wire_value(record), sort_keys=True) == printed, number


def _task(
    records: list[dict[str, Any]], extensions: list[str], metadata: dict[str, Any] | None = None
) -> tuple[Task, dict[str, Any]]:
    task = Task(id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    if metadata is not None:
        task.metadata.update(metadata)  # {} too: a set, empty Struct prints as {}
    wire = {}
    for n, record in enumerate(records):
        artifact = task.artifacts.add(artifact_id=f"r-{n}", name="sample")
        artifact.extensions.extend(extensions)
        artifact.parts.append(data_part(record, JSON))
        wire[f"r-{n}"] = artifact_wire(f"r-{n}", "sample", record, JSON, extensions)
    result = Artifact(artifact_id="result", name="check", parts=[new_text_part("done")])
    task.artifacts.append(result)  # printed the usual way: no entry for it
    task.history.append(task.status.message)
    return task, wire


@settings(max_examples=100, deadline=None)
@given(
    st.lists(records, max_size=5),
    st.sampled_from([[], ["https://example.test/ext"]]),
    st.one_of(st.none(), records),
)
def test_a_task_prints_as_the_printer_prints_it(
    items: list[dict[str, Any]], extensions: list[str], metadata: dict[str, Any] | None
) -> None:
    task, wire = _task(items, extensions, metadata)
    expected = message_to_wire_dict(task)
    printed = task_wire(task, wire)
    assert json.dumps(printed, sort_keys=True) == json.dumps(expected, sort_keys=True)
    assert list(printed) == list(expected)  # members in the printer's order


def test_the_printer_takes_the_prepared_answer_for_its_task_only() -> None:
    task, wire = _task([{"a": 1}, {"b": [2.5]}], [])
    prepare(task, wire)
    answer = _sdk._message_to_dict(SendMessageResponse(task=task))
    assert answer == {"task": task_wire(task, wire)}
    assert take(SendMessageResponse(task=task)) is None  # consumed

    prepare(task, wire)
    other = Task()
    other.CopyFrom(task)
    other.artifacts[0].parts[0].data.struct_value["a"] = 2  # changed after it was prepared
    answer = _sdk._message_to_dict(SendMessageResponse(task=other))
    assert answer == message_to_wire_dict(SendMessageResponse(task=other))
    assert answer["task"]["artifacts"][0]["parts"][0]["data"] == {"a": 2}

    prepare(task, wire)
    assert take(task) is None  # not a SendMessageResponse: it waits for that one
    assert take(SendMessageResponse(task=task)) == {"task": task_wire(task, wire)}


def test_nothing_to_prepare_prepares_nothing() -> None:
    task, _ = _task([], [])
    prepare(task, {})
    assert take(SendMessageResponse(task=task)) is None


def test_the_straight_path_takes_the_answer_of_the_very_task_only() -> None:
    task, wire = _task([{"a": 1}, {"b": [2.5]}], [])
    prepare(task, wire)
    equal = Task()
    equal.CopyFrom(task)
    assert take_task(equal) is None  # an equal copy is not the task the run prepared
    assert take_task(task) == _sdk._message_to_dict(SendMessageResponse(task=task))
    prepare(task, wire)
    assert take_task(task) == {"task": task_wire(task, wire)}
    assert take_task(task) is None  # consumed
    assert take(SendMessageResponse(task=task)) is None
