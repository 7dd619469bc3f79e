"""A parked (input-required) task on two replicas: each state change happens once.

Two real `netagent serve` processes on one PostgreSQL. Answers and cancels of one parked task
reach both at the same moment; whichever wins, the store, every caller and the audit trail
tell the same story: one answer runs, the others are refused as one process refuses them; a
cancel reaches the run wherever it runs or is refused; an end a caller was told is never
written over.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    SendMessageRequest,
    Task,
    TaskNotCancelableError,
    TaskState,
    UnsupportedOperationError,
)
from a2a.utils.errors import A2AError
from sqlalchemy import text

from agent.storage.audit import AuditLog, DatabaseAuditLog
from agent.storage.engine import make_engine
from tests.a2a_helpers import (
    BINDINGS,
    call_context,
    data_message,
    follow_states,
    make_client,
    text_message,
)
from tests.conftest import postgres_available
from tests.replicas import Pair, Replica, running_pair, skills_with_slow_probe

pytestmark = pytest.mark.skipif(not postgres_available(), reason="needs the session's PostgreSQL")

ENDED = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
}
PROBE_SECONDS = 1.5  # a run long enough for a peer's request to land in it
ROUNDS = 3


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    home = tmp_path_factory.mktemp("parked-home")
    skills = skills_with_slow_probe(home)
    with running_pair(home, "parked_replicas", skills_dir=skills, trained=True) as replicas:
        yield replicas


@pytest.fixture(scope="module")
async def audit(pair: Pair) -> AsyncIterator[AuditLog]:
    engine = make_engine(pair.database_url)
    yield DatabaseAuditLog(engine)
    await engine.dispose()


async def trail(audit: AuditLog, task_id: str) -> list[tuple[str, str, str]]:
    """The agent's own rows of a task, oldest first: (operation, decision, reason)."""
    rows = await audit.query(task_id=task_id, limit=100)
    mine = sorted((r for r in rows if r["tool"] == "agent"), key=lambda r: r["id"])
    return [(r["operation"], r["decision"], r["reason"]) for r in mine]


async def ask(replica: Replica, token: str, message: Message, binding: str) -> Any:
    """A blocking send: the task it answers with, or the protocol error it raised."""
    async with make_client(replica.base_url, token, binding) as client:
        try:
            async for event in client.send_message(
                SendMessageRequest(message=message), context=call_context()
            ):
                return event.task
        except A2AError as error:
            return error
    raise AssertionError("no answer")


async def cancel(replica: Replica, token: str, task_id: str, binding: str) -> Task | A2AError:
    async with make_client(replica.base_url, token, binding) as client:
        try:
            return await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())
        except A2AError as error:
            return error


async def stored(replica: Replica, token: str, task_id: str) -> Task:
    async with make_client(replica.base_url, token, "JSONRPC") as client:
        return await client.get_task(GetTaskRequest(id=task_id), context=call_context())


def probe_request(text: str = "probe") -> Message:
    """Text hinted to the slow probe with no seconds: the router asks for them (parked)."""
    message = text_message(text)
    message.metadata.update({"skill_id": "slow_probe"})
    return message


async def park_probe(replica: Replica, token: str, binding: str) -> str:
    parked = await ask(replica, token, probe_request(), binding)
    assert isinstance(parked, Task), parked
    assert parked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, parked.status
    return parked.id


def seconds(task_id: str, value: float) -> Message:
    return data_message({"seconds": value}, task_id=task_id)


# -- two answers ---------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_two_answers_to_one_parked_task_on_two_replicas_run_once(
    pair: Pair, audit: AuditLog, binding: str
) -> None:
    """One answer per replica, sent at once: one runs, the other is refused ("the task has
    ended"); the audit holds one completed invocation, the task one answer and its message."""
    for _ in range(ROUNDS):
        asked = await ask(
            pair.a, pair.token, text_message("spare capacity on acme-lnk-00002"), binding
        )
        assert isinstance(asked, Task), asked
        assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, asked.status
        answers = [text_message("1", task_id=asked.id) for _ in range(2)]
        outcomes = await asyncio.gather(
            ask(pair.a, pair.token, answers[0], binding),
            ask(pair.b, pair.token, answers[1], binding),
        )
        done = [o for o in outcomes if isinstance(o, Task)]
        refused = [o for o in outcomes if isinstance(o, UnsupportedOperationError)]
        assert len(done) == 1 and len(refused) == 1, outcomes
        assert done[0].status.state == TaskState.TASK_STATE_COMPLETED, done[0].status
        assert "ended" in str(refused[0].message)
        assert await trail(audit, asked.id) == [
            ("invoke", "allow", "input_required"),
            ("invoke", "allow", "completed"),
        ]
        final = await stored(pair.b, pair.token, asked.id)
        assert final == await stored(pair.a, pair.token, asked.id)
        assert final.status.state == TaskState.TASK_STATE_COMPLETED
        sent = {m.message_id for m in answers}
        kept = [m.message_id for m in final.history if m.message_id in sent]
        assert len(kept) == 1, kept
        assert list(final.artifacts) == list(done[0].artifacts)


# -- cancels -------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_cancel_on_the_peer_reaches_the_answer_running_here(
    pair: Pair, audit: AuditLog, binding: str
) -> None:
    """An answer runs on A; CancelTask reaches B: the run on A is cancelled, the task ends
    CANCELED and stays so after the run's own end, and the audit says canceled."""
    task_id = await park_probe(pair.a, pair.token, binding)
    async with make_client(pair.a.base_url, pair.token, binding, polling=True) as client:
        async for event in client.send_message(
            SendMessageRequest(message=seconds(task_id, PROBE_SECONDS)), context=call_context()
        ):
            assert event.task.id == task_id
            break
    await asyncio.sleep(0.3)  # the answer is running on A now
    cancelled = await cancel(pair.b, pair.token, task_id, binding)
    assert isinstance(cancelled, Task), cancelled
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    await asyncio.sleep(PROBE_SECONDS + 1)  # past the run's own end: nothing may revive it
    for replica in (pair.a, pair.b):
        task = await stored(replica, pair.token, task_id)
        assert task.status.state == TaskState.TASK_STATE_CANCELED, TaskState.Name(task.status.state)
    assert await trail(audit, task_id) == [
        ("invoke", "allow", "input_required"),
        ("invoke", "allow", "canceled"),
    ]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_cancelling_a_parked_task_on_the_peer_is_audited_and_ends_it(
    pair: Pair, audit: AuditLog, binding: str
) -> None:
    task_id = await park_probe(pair.a, pair.token, binding)
    cancelled = await cancel(pair.b, pair.token, task_id, binding)
    assert isinstance(cancelled, Task) and cancelled.status.state == TaskState.TASK_STATE_CANCELED
    refused = await ask(pair.a, pair.token, seconds(task_id, 0), binding)
    assert isinstance(refused, UnsupportedOperationError), refused
    assert await trail(audit, task_id) == [
        ("invoke", "allow", "input_required"),
        ("cancel", "allow", "canceled"),
    ]


ENDINGS = {
    "completed": (TaskState.TASK_STATE_COMPLETED, PROBE_SECONDS),
    "failed": (TaskState.TASK_STATE_FAILED, 5),  # past the probe's 3 s limit
    "rejected": (TaskState.TASK_STATE_REJECTED, 99),  # over the schema's maximum
    "canceled": (TaskState.TASK_STATE_CANCELED, None),  # a cancel ends it
}


@pytest.mark.parametrize("ending", list(ENDINGS))
async def test_every_end_a_caller_is_told_stands_across_replicas(
    pair: Pair, audit: AuditLog, ending: str
) -> None:
    """A parked task is ended on A (answered to each terminal state, or cancelled) while B
    gets cancels and answers of its own: every caller told an end was told the same one, the
    store keeps it, and the audit trail names one outcome after the question."""
    state, value = ENDINGS[ending]
    task_id = await park_probe(pair.a, pair.token, "JSONRPC")
    if value is None:
        ender = cancel(pair.a, pair.token, task_id, "JSONRPC")
    else:
        ender = ask(pair.a, pair.token, seconds(task_id, value), "JSONRPC")

    async def peer() -> list[Any]:
        await asyncio.sleep(0.2)  # into the run on A (an instant one may be over by then)
        return await asyncio.gather(
            cancel(pair.b, pair.token, task_id, "JSONRPC"),
            ask(pair.b, pair.token, seconds(task_id, 0.2), "JSONRPC"),
            cancel(pair.b, pair.token, task_id, "HTTP+JSON"),
        )

    first, others = await asyncio.gather(ender, peer())
    outcomes = [first, *others]
    told = {o.status.state for o in outcomes if isinstance(o, Task) and o.status.state in ENDED}
    assert len(told) == 1, outcomes
    for outcome in outcomes:
        assert isinstance(outcome, (Task, UnsupportedOperationError, TaskNotCancelableError)), (
            outcome
        )
    await asyncio.sleep(0.5)
    final = (await stored(pair.b, pair.token, task_id)).status.state
    assert {final} == told, (TaskState.Name(final), outcomes)
    if not any(isinstance(o, Task) for o in others):  # B changed nothing: A's end it is
        assert final == state, TaskState.Name(final)
    rows = await trail(audit, task_id)
    assert rows[0] == ("invoke", "allow", "input_required")
    assert len(rows) == 2, rows  # one outcome, whoever caused it


# -- idle subscriptions --------------------------------------------------------------------

IDLE_STREAMS = 20
WINDOW_S = 4.0
POLLING_XACTS_PER_S = IDLE_STREAMS * 5.0
"""What twenty subscriptions polling the store five times a second each would add. Idle replicas
commit transactions of their own (lease heartbeats, sweeps, the database's autovacuum), at a rate
that varies with the machine's load, so the test compares with that rate measured just before."""
WAKE_S = 2.5
"""A subscription hears its task's change by the relay, far sooner than its 5 s safety look."""


async def transactions(engine: Any) -> int:
    """Transactions committed or rolled back in the database so far (its statistics)."""
    async with engine.connect() as connection:
        await connection.execute(text("SELECT pg_stat_clear_snapshot()"))
        count = await connection.scalar(
            text(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database "
                "WHERE datname = current_database()"
            )
        )
    return int(count)


async def transaction_rate(engine: Any) -> float:
    """Transactions per second in the database over one window."""
    before = await transactions(engine)
    await asyncio.sleep(WINDOW_S)
    return (await transactions(engine) - before) / WINDOW_S


async def test_idle_subscriptions_to_parked_tasks_cost_nothing_until_a_change(pair: Pair) -> None:
    """Subscriptions on B to tasks parked on A: while nothing changes the database sees no
    more than idle replicas' own work; an answer on A reaches B's subscriber at once."""
    task_ids = [await park_probe(pair.a, pair.token, "JSONRPC") for _ in range(IDLE_STREAMS)]
    engine = make_engine(pair.database_url)
    idle = await transaction_rate(engine)
    seen: list[list[int]] = [[] for _ in task_ids]
    streams = [
        asyncio.ensure_future(follow_states(pair.b.base_url, pair.token, task_id, states))
        for task_id, states in zip(task_ids, seen, strict=True)
    ]
    try:
        deadline = time.monotonic() + 30
        while not all(seen) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert all(seen), "a subscription never started"
        await asyncio.sleep(1.0)
        added = await transaction_rate(engine) - idle
        assert added < POLLING_XACTS_PER_S / 2, f"{added:.1f} transactions/s more when subscribed"
        answered = await ask(pair.a, pair.token, seconds(task_ids[0], 0), "JSONRPC")
        assert (
            isinstance(answered, Task) and answered.status.state == TaskState.TASK_STATE_COMPLETED
        )
        await asyncio.wait_for(streams[0], WAKE_S)
        assert seen[0][-1] == TaskState.TASK_STATE_COMPLETED, seen[0]
    finally:
        for stream in streams:
            stream.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
        for task_id in task_ids[1:]:
            await cancel(pair.a, pair.token, task_id, "JSONRPC")
        await engine.dispose()
