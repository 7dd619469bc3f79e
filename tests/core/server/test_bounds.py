"""The bounds per caller and per task (agent/server/bounds.py): their settings and rules.

The agents' behaviour on every binding and both databases is in
tests/integration/test_bounds.py; here, what each rule does at its edges.
"""

from __future__ import annotations

import asyncio

import pytest
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    InvalidParamsError,
    ListTasksResponse,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a.utils.task import decode_list_tasks_cursor

from agent.base.settings import Limits, Settings
from agent.server.bounds import NewRuns, check_history, cursor_of, fit_page
from agent.server.task_run import TaskRun
from agent.storage.audit import InMemoryAuditLog
from agent.storage.bindings import InMemoryBindingStore
from agent.storage.settlement import StoreTaskWriter

BOUNDS = {
    "max_parked_tasks": "NETAGENT_MAX_PARKED_TASKS",
    "max_history_messages": "NETAGENT_MAX_HISTORY_MESSAGES",
    "max_history_bytes": "NETAGENT_MAX_HISTORY_BYTES",
    "max_list_bytes": "NETAGENT_MAX_LIST_BYTES",
    "parked_task_ttl": "NETAGENT_PARKED_TASK_TTL",
}


@pytest.mark.parametrize(("name", "variable"), BOUNDS.items())
def test_every_bound_is_a_setting_and_one_that_cannot_work_is_refused_by_name(
    name: str, variable: str
) -> None:
    assert Limits.ENV[name] == variable
    assert getattr(Settings.from_env({variable: "7"}).limits, name) == 7
    for raw in ("0", "-1", "lots", "1.5"):
        with pytest.raises(ValueError, match=variable):
            Limits.from_env({variable: raw})


def test_the_defaults_are_the_documented_ones() -> None:
    limits = Limits()
    assert (limits.max_parked_tasks, limits.max_history_messages) == (100, 64)
    assert limits.max_history_bytes == limits.max_list_bytes == 2 * 1024 * 1024
    assert limits.parked_task_ttl == 86400


def _message(text: str, role: int = Role.ROLE_USER) -> Message:
    return Message(message_id=text[:8], role=role, parts=[Part(text=text)])


def _refused(task: Task, message: Message, limits: Limits) -> dict[str, str]:
    with pytest.raises(InvalidParamsError) as caught:
        check_history(task, message, limits)
    return dict(caught.value.data)


def test_the_history_counts_what_the_follow_up_stores_the_status_message_too() -> None:
    task = Task(id="t", history=[_message("a"), _message("b")])
    limits = Limits(max_history_messages=4)
    check_history(task, _message("c"), limits)  # a, b, c
    task.status.message.CopyFrom(_message("which one?", Role.ROLE_AGENT))
    check_history(task, _message("c"), limits)  # a, b, the question, c
    task.history.append(_message("d"))
    refused = _refused(task, _message("e"), limits)
    assert refused == {"limit": "max_history_messages", "max": "4"}


def test_the_history_bytes_are_the_messages_protobuf_size() -> None:
    task = Task(id="t", history=[_message("x" * 1000)])
    size = task.history[0].ByteSize() + _message("y" * 1000).ByteSize()
    check_history(task, _message("y" * 1000), Limits(max_history_bytes=size))
    refused = _refused(task, _message("y" * 1001), Limits(max_history_bytes=size))
    assert refused == {"limit": "max_history_bytes", "max": str(size)}


def _page(sizes: list[int]) -> ListTasksResponse:
    page = ListTasksResponse()
    for index, size in enumerate(sizes):
        task = page.tasks.add(
            id=f"t{index}", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
        )
        task.status.timestamp.FromSeconds(1_800_000_000 - index)
        task.history.append(_message("x" * size))
    return page


def test_a_page_is_cut_after_what_fits_and_its_token_names_the_last_task_kept() -> None:
    page = _page([1000, 1000, 1000, 1000])
    cursors = [cursor_of(task) for task in page.tasks]
    one = page.tasks[0].ByteSize()
    fit_page(page, cursors, 2 * one + 10)
    assert [t.id for t in page.tasks] == ["t0", "t1"]
    cursor = decode_list_tasks_cursor(page.next_page_token)
    assert cursor == cursors[1] and cursor.timestamp_ns == 1_799_999_999 * 10**9


def test_a_page_always_holds_its_first_task_and_a_page_that_fits_is_left_alone() -> None:
    page = _page([5000, 10])
    fit_page(page, [cursor_of(task) for task in page.tasks], 100)
    assert [t.id for t in page.tasks] == ["t0"] and page.next_page_token
    whole = _page([10, 10])
    whole.next_page_token = "theirs"
    fit_page(whole, [cursor_of(task) for task in whole.tasks], 10_000)
    assert len(whole.tasks) == 2 and whole.next_page_token == "theirs"


async def test_new_runs_started_while_the_database_is_asked_are_counted() -> None:
    """A run that starts and ends during the count is in neither the database's answer nor
    the runs in flight: it is counted by the runs started since the count began."""
    runs = NewRuns()
    limits = Limits(max_parked_tasks=2)
    asked = asyncio.Event()
    answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def count(owner: str) -> int:
        asked.set()
        return await answer

    admitting = asyncio.ensure_future(runs.admit("o", count, limits))
    await asked.wait()
    for _ in range(2):  # two runs start (and, the first, end) while the count is out
        runs.track("o", asyncio.ensure_future(asyncio.sleep(0)))
    await asyncio.sleep(0.01)
    answer.set_result(0)
    with pytest.raises(InvalidParamsError):
        await admitting
    await runs.admit("o", _zero, limits)  # nothing running, nothing parked: room
    assert runs._started == runs._running == runs._asking == {}  # nothing kept per caller


async def _zero(owner: str) -> int:
    return 0


@pytest.mark.parametrize(
    "state",
    [TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED],
    ids=["input-required", "auth-required"],
)
async def test_a_new_run_not_counted_under_max_parked_tasks_cannot_park(state: int) -> None:
    """A new task the handler did not count (its route runs a skill, which ends terminal)
    is refused a parked status: else it would wait for input past the bound, uncounted.
    One that was counted parks."""
    uncounted, counted = _run(may_park=False), _run(may_park=True)
    with pytest.raises(RuntimeError, match="max_parked_tasks"):
        await uncounted.enqueue_event(_status(state))
    assert uncounted.final is None
    assert uncounted.task is not None
    assert uncounted.task.status.state == TaskState.TASK_STATE_WORKING
    await counted.enqueue_event(_status(state))
    assert counted.final is not None and counted.final.status.state == state
    await uncounted.enqueue_event(_status(TaskState.TASK_STATE_COMPLETED))  # its end is its own
    assert uncounted.final is not None


def _run(*, may_park: bool) -> TaskRun:
    writer = StoreTaskWriter(InMemoryTaskStore(), InMemoryAuditLog(), InMemoryBindingStore())
    task = Task(id="t", context_id="c", status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    return TaskRun("o", writer, task=task, may_park=may_park)


def _status(state: int) -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(
        task_id="t",
        context_id="c",
        status=TaskStatus(state=state),  # type: ignore[arg-type]  # the SDK's enum annotation
    )
