"""Two real `netagent serve` processes on one PostgreSQL behave as one agent.

They share nothing but the database (and the signing key file): a task parked on one is
continued on the other, a subscription on one follows a task running on the other, and each
sees the tasks and audit rows the other wrote.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskNotCancelableError,
    TaskState,
)

from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from tests.a2a_helpers import (
    BINDINGS,
    binding_of,
    call,
    call_context,
    data_message,
    make_client,
    send,
    text_message,
)
from tests.conftest import postgres_available
from tests.replicas import Pair, Replica, running_pair, skills_with_slow_probe

TERMINAL = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}

pytestmark = pytest.mark.skipif(not postgres_available(), reason="needs the session's PostgreSQL")


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    home = tmp_path_factory.mktemp("replicas-home")
    with running_pair(home, "replicas", skills_dir=skills_with_slow_probe(home)) as replicas:
        yield replicas


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("first,second", [("a", "b"), ("b", "a")])
async def test_input_required_on_one_replica_is_continued_on_the_other(
    pair: Pair, binding: str, first: str, second: str
) -> None:
    here, there = getattr(pair, first), getattr(pair, second)
    asked = await send(
        here.base_url, pair.token, text_message("spare capacity on acme-lnk-00002"), binding=binding
    )
    assert asked.state == "TASK_STATE_INPUT_REQUIRED", asked.task.status
    reply = await send(
        there.base_url, pair.token, text_message("1", task_id=asked.task.id), binding=binding
    )
    assert reply.task.id == asked.task.id
    assert reply.task.context_id == asked.task.context_id
    assert reply.state == "TASK_STATE_COMPLETED", reply.task.status
    assert reply.result("check_link_capacity")["link_id"] == "acme-lnk-00002"
    # The first replica reads the outcome its peer wrote.
    async with make_client(here.base_url, pair.token, binding) as client:
        seen = await client.get_task(GetTaskRequest(id=asked.task.id), context=call_context())
    assert seen.status.state == TaskState.TASK_STATE_COMPLETED


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_stream_on_one_replica_follows_a_task_running_on_the_other(
    pair: Pair, binding: str
) -> None:
    interface = await binding_of(pair.a.base_url, pair.token, "slow_probe")
    request = {"skill": "slow_probe", "arguments": {"seconds": 2}, **interface}
    async with make_client(pair.a.base_url, pair.token, binding, polling=True) as client:
        accepted = None
        async for event in client.send_message(
            SendMessageRequest(message=data_message(request)), context=call_context()
        ):
            accepted = event.task
            break
    assert accepted is not None and accepted.status.state in (
        TaskState.TASK_STATE_SUBMITTED,
        TaskState.TASK_STATE_WORKING,
    )
    states: list[int] = []
    async with make_client(pair.b.base_url, pair.token, binding, streaming=True) as client:
        async for event in client.subscribe(
            SubscribeToTaskRequest(id=accepted.id), context=call_context()
        ):
            kind = event.WhichOneof("payload")
            if kind == "task":
                states.append(event.task.status.state)
            elif kind == "status_update":
                states.append(event.status_update.status.state)
    assert states[0] in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
    assert states[-1] == TaskState.TASK_STATE_COMPLETED, [TaskState.Name(s) for s in states]


async def start_running(replica: Replica, token: str, skill: str, seconds: float) -> str:
    """Start a probe on one replica without waiting for it; return its task id once working."""
    interface = await binding_of(replica.base_url, token, skill)
    request = {"skill": skill, "arguments": {"seconds": seconds}, **interface}
    async with make_client(replica.base_url, token, "JSONRPC", polling=True) as client:
        async for event in client.send_message(
            SendMessageRequest(message=data_message(request)), context=call_context()
        ):
            task_id = event.task.id
            break
        await wait_for_state(client, task_id, {TaskState.TASK_STATE_WORKING})
    return task_id


async def wait_for_state(client: Any, task_id: str, states: set[int]) -> int:
    for _ in range(200):
        task = await client.get_task(GetTaskRequest(id=task_id), context=call_context())
        if task.status.state in states:
            return task.status.state
        await asyncio.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {states}")


@pytest.mark.parametrize("binding", BINDINGS)
async def test_every_replica_refuses_to_cancel_a_non_cancelable_task(
    pair: Pair, binding: str
) -> None:
    task_id = await start_running(pair.a, pair.token, "steady_probe", 2)
    for replica in (pair.b, pair.a):  # the peer first: it does not run the task
        async with make_client(replica.base_url, pair.token, binding) as client:
            with pytest.raises(TaskNotCancelableError):
                await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())
    async with make_client(pair.b.base_url, pair.token, binding) as client:
        final = await wait_for_state(client, task_id, TERMINAL)
    assert final == TaskState.TASK_STATE_COMPLETED, TaskState.Name(final)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_cancel_on_the_peer_replica_cancels_a_cancelable_task(
    pair: Pair, binding: str
) -> None:
    task_id = await start_running(pair.a, pair.token, "slow_probe", 2.5)
    async with make_client(pair.b.base_url, pair.token, binding) as client:
        cancelled = await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    await asyncio.sleep(3)  # past the probe's own end: the running replica must not revive it
    async with make_client(pair.a.base_url, pair.token, binding) as client:
        task = await client.get_task(GetTaskRequest(id=task_id), context=call_context())
    assert task.status.state == TaskState.TASK_STATE_CANCELED, TaskState.Name(task.status.state)


async def test_tasks_and_audit_rows_from_both_replicas_are_visible_on_either(pair: Pair) -> None:
    arguments = {"link_id": "acme-lnk-00001", "direction": "a_to_b"}
    made = {
        name: await call(getattr(pair, name).base_url, pair.token, "check_link_capacity", arguments)
        for name in ("a", "b")
    }
    for outcome in made.values():
        assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    for name in ("a", "b"):
        replica = getattr(pair, name)
        async with make_client(replica.base_url, pair.token, "JSONRPC") as client:
            for outcome in made.values():
                task = await client.get_task(
                    GetTaskRequest(id=outcome.task.id), context=call_context()
                )
                assert task.status.state == TaskState.TASK_STATE_COMPLETED
            listed = await client.list_tasks(
                ListTasksRequest(page_size=100), context=call_context()
            )
        listed_ids = {task.id for task in listed.tasks}
        assert {outcome.task.id for outcome in made.values()} <= listed_ids
    engine = make_engine(pair.database_url)
    try:
        audit = DatabaseAuditLog(engine)
        for outcome in made.values():
            rows = await audit.query(task_id=outcome.task.id)
            assert {row["principal"] for row in rows} == {"alice"}
            assert any(row["tool"] == "inventory" for row in rows), rows
            assert any(row["skill_id"] == "check_link_capacity" for row in rows), rows
    finally:
        await engine.dispose()


async def test_both_replicas_answer_concurrently_without_conflicts(pair: Pair) -> None:
    """Interleaved work on both replicas: every task ends completed, none is lost.

    Four per replica: limits.max_concurrent (4 for this skill) is counted per process.
    """
    arguments = {"link_id": "acme-lnk-00003", "direction": "a_to_b"}
    replicas = [pair.a, pair.b] * 4
    outcomes = await asyncio.gather(
        *(call(r.base_url, pair.token, "check_link_capacity", arguments) for r in replicas)
    )
    assert [o.state for o in outcomes] == ["TASK_STATE_COMPLETED"] * len(replicas)
    assert len({o.task.id for o in outcomes}) == len(replicas)
