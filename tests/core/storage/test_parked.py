"""Parked tasks' count and expiry (agent/storage/task_store.py, the sweeper in agent/server/
bounds.py), on SQLite and on PostgreSQL with the cluster store's tables.

What they promise: a task parked (input-required, auth-required) longer than the ttl ends
CANCELED, with a status message naming the bound, its question moved to the history, the
version moved on once with one event, and one audit row; a task parked more recently, a task
running and a task ended are left alone; sweepers at once end each task exactly once. Time is
a fake clock.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from a2a.server.cluster.version import TaskVersion
from a2a.server.context import ServerCallContext
from a2a.types import Message, Part, Role, Task, TaskState, TaskStatus
from sqlalchemy import func, select

from agent.security.identity import owner_key
from agent.security.principal import Principal, PrincipalUser
from agent.server.bounds import ParkedSweeper
from agent.storage.engine import make_engine
from agent.storage.recovery import EVENTS, TASKS
from agent.storage.task_store import ParkedTasks
from tests.core.storage.test_leases import Database, db  # noqa: F401  (the fixture)

TTL = 60.0
PARKED = TaskState.TASK_STATE_INPUT_REQUIRED


async def _no_lock(task_id: str) -> Callable[[], None]:
    return lambda: None


def sweeper(database: Database, engine: Any = None) -> ParkedSweeper:
    parked = ParkedTasks(engine or database.engine, TASKS)
    return ParkedSweeper(parked, TTL, _no_lock, lambda task_id: None, clock=database.clock)


async def save(database: Database, task_id: str, state: Any, subject: str = "alice") -> None:
    """A task saved as a handler saves it: SUBMITTED, then ``state`` (now), with a question."""
    principal = Principal(subject, "acme", frozenset())
    context = ServerCallContext(user=PrincipalUser(principal))
    first = Task(id=task_id, context_id=f"c-{task_id}", status=TaskStatus(state=1))
    first.status.timestamp.FromDatetime(database.clock())
    version = await database.store.save(first, prev_version=TaskVersion.MISSING, context=context)
    question = Message(
        message_id=f"q-{task_id}", role=Role.ROLE_AGENT, parts=[Part(text="which one?")]
    )
    later = Task(id=task_id, context_id=f"c-{task_id}", status=TaskStatus(state=state))
    later.status.message.CopyFrom(question)
    later.status.timestamp.FromDatetime(database.clock())
    await database.store.save(later, prev_version=version, context=context)


async def test_a_task_parked_past_the_ttl_is_ended_once_and_nothing_else_is(
    db: Database,  # noqa: F811
) -> None:
    await save(db, "old-parked", PARKED)
    await save(db, "old-auth", TaskState.TASK_STATE_AUTH_REQUIRED, subject="bob")
    await save(db, "old-working", TaskState.TASK_STATE_WORKING)
    await save(db, "old-done", TaskState.TASK_STATE_COMPLETED)
    db.clock.advance(TTL - 1)
    await save(db, "new-parked", PARKED)
    sweep = sweeper(db)
    assert await sweep.sweep() == []  # not a moment before
    assert await ParkedTasks(db.engine, TASKS).count(owner_key("acme", "alice")) == 2
    db.clock.advance(2)
    assert sorted(await sweep.sweep()) == ["old-auth", "old-parked"]
    assert await sweep.sweep() == []
    for task_id, subject in (("old-parked", "alice"), ("old-auth", "bob")):
        status, version = await db.task(task_id)
        assert status["state"] == "TASK_STATE_CANCELED"
        (part,) = status["message"]["parts"]
        assert part["text"].startswith(f"canceled: no input came within {TTL:g} s")
        assert "parked_task_ttl" in part["text"]
        assert version == 3  # submitted 1, parked 2, the end 3
        [(event_version, event)] = (await db.events(task_id))[-1:]
        assert event_version == 3 and event.status_update.status.state == 5  # CANCELED
        (row,) = await db.audit(task_id)
        assert (row["tool"], row["operation"], row["decision"], row["reason"]) == (
            "agent",
            "expire",
            "allow",
            "expired",
        )
        assert (row["principal"], row["tenant"]) == (subject, "acme")
        async with db.engine.connect() as connection:
            history = (
                await connection.execute(select(TASKS.c.history).where(TASKS.c.id == task_id))
            ).scalar_one()
        assert history[-1]["messageId"] == f"q-{task_id}"  # the question joined the history
    for task_id, state in (
        ("new-parked", "TASK_STATE_INPUT_REQUIRED"),
        ("old-working", "TASK_STATE_WORKING"),
        ("old-done", "TASK_STATE_COMPLETED"),
    ):
        assert (await db.task(task_id))[0]["state"] == state
        assert await db.audit(task_id) == []
    assert await ParkedTasks(db.engine, TASKS).count(owner_key("acme", "alice")) == 1


async def test_two_concurrent_sweepers_end_each_parked_task_exactly_once(
    db: Database,  # noqa: F811
) -> None:
    """Both list the same stale tasks before either ends one, then end them at once, each on
    its own connection pool (replicas): every task ends once, one audit row and one event."""
    if db.backend != "postgresql":
        pytest.skip("one process serves a SQLite file: there is no second sweeper")
    ids = [f"p-{n:03}" for n in range(30)]
    for task_id in ids:
        await save(db, task_id, PARKED)
    db.clock.advance(TTL + 1)
    engines = [make_engine(db.url), make_engine(db.url)]
    db.engines.extend(engines)
    first, second = (ParkedTasks(engine, TASKS) for engine in engines)
    now = db.clock()
    cutoff = now - timedelta(seconds=TTL)
    listed = await asyncio.gather(first.stale(cutoff), second.stale(cutoff))
    assert [s.task_id for s in listed[0]] == [s.task_id for s in listed[1]] == ids

    async def end_all(parked: ParkedTasks, stale: list[Any]) -> list[str]:
        ttl = timedelta(seconds=TTL)
        return [s.task_id for s in stale if await parked.expire(s, cutoff, now, ttl)]

    by_first, by_second = await asyncio.gather(
        end_all(first, listed[0]), end_all(second, list(reversed(listed[1])))
    )
    assert sorted(by_first + by_second) == ids and not set(by_first) & set(by_second)
    assert sorted(r["task_id"] for r in await db.audit()) == ids
    async with db.engine.connect() as connection:
        events = await connection.execute(
            select(EVENTS.c.task_id, func.count())
            .where(EVENTS.c.task_version == 3)
            .group_by(EVENTS.c.task_id)
        )
        assert {task_id: count for task_id, count in events.all()} == {t: 1 for t in ids}


async def test_a_parked_task_with_no_time_counts_as_stale(db: Database) -> None:  # noqa: F811
    """A row whose status had no timestamp cannot be shown to be recent."""
    task_id = f"nt-{uuid.uuid4().hex[:8]}"
    await save(db, task_id, PARKED)
    async with db.engine.begin() as connection:
        await connection.execute(
            TASKS.update().where(TASKS.c.id == task_id).values(last_updated=None)
        )
    assert await sweeper(db).sweep() == [task_id]


async def test_the_count_reads_only_tasks_parked_within_the_ttl(db: Database) -> None:  # noqa: F811
    """Those parked longer are being ended: the count reads the caller's recent tasks only."""
    db.clock.now = datetime.now(UTC) - timedelta(seconds=2 * TTL)
    await save(db, "long-parked", PARKED)
    db.clock.now = datetime.now(UTC)
    await save(db, "just-parked", PARKED)
    owner = owner_key("acme", "alice")
    assert await ParkedTasks(db.engine, TASKS).count(owner) == 2
    assert await ParkedTasks(db.engine, TASKS, TTL).count(owner) == 1
