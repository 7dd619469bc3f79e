"""``TaskRun.add_artifact`` builds in the task what ``TaskUpdater.add_artifact`` sends and the
TaskManager's rule adds: the same task and the same events to a listener, for records, result
parts and extensions; where the general rule applies (a replaced id, a value only ParseDict can
judge, no task yet) it declines and the TaskUpdater way gives the SDK's outcome."""

from __future__ import annotations

import math
from typing import Any

import pytest
from a2a.helpers import new_text_message, new_text_part
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import Task, TaskState, TaskStatus
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.edge.proto_json import data_part, message_to_wire_dict
from agent.server.task_run import TaskRun
from agent.storage.audit import InMemoryAuditLog
from agent.storage.bindings import InMemoryBindingStore
from agent.storage.settlement import StoreTaskWriter

RECORDS: list[dict[str, Any]] = [
    {"record_id": "r-1", "utilized_bps": 123456789, "ratio": 0.25, "ok": True, "none": None},
    {"nested": {"list": [1, 2.5, "x", {"deep": []}], "empty": {}}},
    {},
]
JSON = "application/json"


def _run() -> TaskRun:
    writer = StoreTaskWriter(InMemoryTaskStore(), InMemoryAuditLog(), InMemoryBindingStore())
    task = Task(id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    return TaskRun("owner", writer, task=task)


@pytest.mark.parametrize("extensions", [[], ["https://example.test/ext"]])
async def test_records_and_result_as_the_updater_adds_them(extensions: list[str]) -> None:
    fast, slow = _run(), _run()
    fast_events, slow_events = fast.listen(), slow.listen()
    updater = TaskUpdater(slow, "t-1", "c-1")
    for n, record in enumerate(RECORDS):
        assert fast.add_artifact(
            f"rec-{n}", "sample", data=record, media_type=JSON, extensions=extensions
        )
        await updater.add_artifact(
            [data_part(record, JSON)],
            artifact_id=f"rec-{n}",
            name="sample",
            extensions=extensions or None,
        )
    parts = [data_part({"fits": True}, JSON), new_text_part("fits", media_type="text/plain")]
    assert fast.add_artifact("result", "check", parts, extensions=extensions)
    await updater.add_artifact(
        parts, artifact_id="result", name="check", extensions=extensions or None
    )
    assert fast.task == slow.task
    assert len(fast.task.artifacts) == len(RECORDS) + 1  # type: ignore[union-attr]
    for _ in range(len(RECORDS) + 1):
        assert fast_events.get_nowait() == slow_events.get_nowait()
    assert fast_events.empty() and slow_events.empty()


async def test_the_parts_given_are_copied_not_shared() -> None:
    run = _run()
    part = data_part({"a": 1}, JSON)
    assert run.add_artifact("result", "x", [part])
    part.data.struct_value["a"] = 2
    assert run.task is not None
    assert run.task.artifacts[0].parts[0].data.struct_value["a"] == 1


@pytest.mark.parametrize(
    "data",
    [{"nan": math.nan}, {"big": 2**64}, {1: "non-str key"}, {"tuple": (1, 2)}],
    ids=["nan", "huge-int", "int-key", "tuple"],
)
async def test_a_value_only_parsedict_can_judge_is_declined(data: dict[Any, Any]) -> None:
    run = _run()
    assert not run.add_artifact("rec", "sample", data=data, media_type=JSON)
    assert run.task is not None and not run.task.artifacts


async def test_an_id_the_task_has_is_declined_so_the_replace_rule_applies() -> None:
    run = _run()
    updater = TaskUpdater(run, "t-1", "c-1")
    await updater.add_artifact([data_part({"v": 1}, JSON)], artifact_id="a", name="n")
    assert not run.add_artifact("a", "n", data={"v": 2}, media_type=JSON)
    assert run.add_artifact("b", "n", data={"v": 3}, media_type=JSON)
    assert not run.add_artifact("b", "n", data={"v": 4}, media_type=JSON)
    assert run.task is not None
    assert [a.artifact_id for a in run.task.artifacts] == ["a", "b"]


async def test_an_id_of_an_earlier_turn_is_declined() -> None:
    run = _run()
    assert run.task is not None
    run.task.artifacts.add(artifact_id="old", name="n")
    assert not run.add_artifact("old", "n", data={}, media_type=JSON)


async def test_no_task_yet_is_declined() -> None:
    writer = StoreTaskWriter(InMemoryTaskStore(), InMemoryAuditLog(), InMemoryBindingStore())
    assert not TaskRun("owner", writer).add_artifact("a", "n", data={}, media_type=JSON)


@pytest.mark.parametrize("metadata", [None, {}, {"routing": {"stage": "explicit", "top": [1, 2]}}])
@pytest.mark.parametrize("with_message", [False, True])
async def test_working_is_what_the_updater_makes_of_it(
    metadata: dict[str, Any] | None, with_message: bool
) -> None:
    fast, slow = _run(), _run()
    question = new_text_message("which link?")
    for run in (fast, slow):
        assert run.task is not None
        run.task.metadata.update({"routing": {"stage": "classifier"}, "kept": True})
        if with_message:  # a follow-up's previous status message goes to the history
            run.task.status.message.CopyFrom(question)
    assert fast.working(metadata)
    await TaskUpdater(slow, "t-1", "c-1").update_status(
        TaskState.TASK_STATE_WORKING, metadata=metadata
    )
    assert fast.task is not None and slow.task is not None
    assert fast.task.status.HasField("timestamp")
    fast.task.status.ClearField("timestamp")
    slow.task.status.ClearField("timestamp")
    assert fast.task == slow.task


async def test_working_with_a_listener_goes_the_updater_way() -> None:
    run = _run()
    run.listen()
    assert not run.working({"a": 1})
    assert run.task is not None and run.task.status.state == TaskState.TASK_STATE_WORKING
    assert not run.task.metadata.fields


# -- no listener: records kept sparse until someone reads the task ---------------------------

_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=5), max_size=6))
async def test_a_sparse_record_is_whole_for_every_reader(records: list[dict[str, Any]]) -> None:
    """With no listener a record goes in by id and name only; ``task``, the settlement's
    ``whole_task`` and the answer printed from ``wire_artifacts`` then say the same, and a
    listened run (built at once) holds the same task."""
    sparse, whole = _run(), _run()
    whole.listen()
    for n, record in enumerate(records):
        for run in (sparse, whole):
            assert run.add_artifact(f"rec-{n}", "sample", data=record, media_type=JSON)
    bare = sparse.sparse_task()
    assert bare is not None and all(not a.parts for a in bare.artifacts)
    settlement = sparse.settlement([])
    assert settlement is not None and settlement.sparse == {f"rec-{n}" for n in range(len(records))}
    printed = [sparse.wire_artifacts[f"rec-{n}"] for n in range(len(records))]
    assert sparse.task is not None and whole.task is not None
    assert [message_to_wire_dict(a) for a in sparse.task.artifacts] == printed
    assert [message_to_wire_dict(a) for a in whole.task.artifacts] == printed
    assert settlement.whole_task() == sparse.task
    assert sparse.sparse_task() is sparse.task  # built in place, once


async def test_reading_the_task_id_or_status_builds_nothing() -> None:
    run = _run()
    assert run.add_artifact("rec", "sample", data={"a": 1}, media_type=JSON)
    assert run.task_id == "t-1"
    assert run.working({"step": 1})
    bare = run.sparse_task()
    assert bare is not None and not bare.artifacts[0].parts
    settlement = run.settlement([])
    assert settlement is not None and not settlement.task.artifacts[0].parts  # type: ignore[union-attr]


async def test_a_listener_after_sparse_records_gets_them_whole_and_the_rest_as_events() -> None:
    run = _run()
    assert run.add_artifact("rec-0", "sample", data={"a": 1}, media_type=JSON)
    assert run.task is not None  # (a subscriber's snapshot reads the task)
    snapshot = Task()
    snapshot.CopyFrom(run.task)
    events = run.listen()
    assert run.add_artifact("rec-1", "sample", data={"b": 2}, media_type=JSON)
    assert snapshot.artifacts[0].parts[0].data.struct_value["a"] == 1
    event = events.get_nowait()
    assert event.artifact.parts[0].data.struct_value["b"] == 2  # type: ignore[union-attr]


async def test_an_event_on_a_sparse_record_applies_to_the_whole_record() -> None:
    run = _run()
    assert run.add_artifact("rec", "sample", data={"a": 1}, media_type=JSON)
    await TaskUpdater(run, "t-1", "c-1").add_artifact(
        [data_part({"b": 2}, JSON)], artifact_id="rec", name="sample", append=True
    )
    assert run.task is not None
    parts = run.task.artifacts[0].parts
    assert [dict(p.data.struct_value) for p in parts] == [{"a": 1}, {"b": 2}]
    assert "rec" not in run.wire_artifacts  # printed anew, from the task
