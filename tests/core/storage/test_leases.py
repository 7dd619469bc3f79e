"""Replica leases and the sweep (agent/storage/recovery.py), on SQLite and on PostgreSQL.

What they promise: a replica whose heartbeat stopped has its running tasks ended by a survivor
once its lease is older than the ttl (FAILED, one ``execution_failed`` Data Part, one audit
row, the runner row gone, the cluster store's version and event log moved on), and not a moment
before; a live replica's tasks and a settled task are left alone; survivors sweeping at once end
each task exactly once; the end and its audit row are one transaction. Time is a fake clock.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from a2a.server.cluster import VersionedDatabaseTaskStore
from a2a.server.cluster.version import TaskVersion
from a2a.server.context import ServerCallContext
from a2a.types import StreamResponse, Task, TaskState, TaskStatus
from sqlalchemy import func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.security.principal import Principal, PrincipalUser
from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from agent.storage.recovery import EVENTS, INTERRUPTED, TASKS, VERSIONS, ReplicaLease
from agent.storage.schema import replica_lease, task_runner
from tests.conftest import postgres_database

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
WORKING = TaskState.TASK_STATE_WORKING
SUBMITTED = TaskState.TASK_STATE_SUBMITTED
FAILED = TaskState.TASK_STATE_FAILED
COMPLETED = TaskState.TASK_STATE_COMPLETED
ERROR = {"code": "execution_failed", "message": INTERRUPTED}


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class Database:
    """One migrated database with the cluster store's tables, and what writes to it."""

    backend: str
    url: str
    engine: AsyncEngine
    store: VersionedDatabaseTaskStore
    clock: Clock
    engines: list[AsyncEngine]

    def lease(self, replica: str, *, own_engine: bool = False) -> ReplicaLease:
        engine = self.engine
        if own_engine:  # another process: its own connection pool
            engine = make_engine(self.url)
            self.engines.append(engine)
        return ReplicaLease(engine, replica=replica, clock=self.clock)

    async def run_task(
        self,
        task_id: str,
        replica: str,
        *,
        state: TaskState = WORKING,
        subject: str = "alice",
        tenant: str | None = "acme",
        skill_id: str | None = "check_link_capacity",
        principal: str | None = None,
    ) -> None:
        """Save a task as a replica's handler would (SUBMITTED, then ``state``) with its runner."""
        context = ServerCallContext(user=PrincipalUser(Principal(subject, tenant, frozenset())))
        first = Task(id=task_id, context_id=f"c-{task_id}", status=TaskStatus(state=SUBMITTED))
        version = await self.store.save(first, prev_version=TaskVersion.MISSING, context=context)
        if state != SUBMITTED:
            later = Task(id=task_id, context_id=f"c-{task_id}", status=TaskStatus(state=state))
            await self.store.save(later, prev_version=version, context=context)
        async with self.engine.begin() as connection:
            await connection.execute(
                insert(task_runner).values(
                    task_id=task_id,
                    replica=replica,
                    owner=f"{tenant or ''}:{subject}",
                    principal=subject if principal is None else principal,
                    tenant=tenant,
                    skill_id=skill_id,
                    since=self.clock(),
                )
            )

    async def task(self, task_id: str) -> tuple[dict[str, Any], int]:
        """The stored status (as JSON) and version of a task."""
        async with self.engine.connect() as connection:
            row = (
                await connection.execute(
                    select(TASKS.c.status, VERSIONS.c.version)
                    .join(VERSIONS, VERSIONS.c.task_id == TASKS.c.id)
                    .where(TASKS.c.id == task_id)
                )
            ).one()
        return dict(row[0]), int(row[1])

    async def runners(self) -> set[str]:
        async with self.engine.connect() as connection:
            return set((await connection.execute(select(task_runner.c.task_id))).scalars())

    async def leases(self) -> set[str]:
        async with self.engine.connect() as connection:
            return set((await connection.execute(select(replica_lease.c.replica))).scalars())

    async def audit(self, task_id: str | None = None) -> list[dict[str, Any]]:
        return await DatabaseAuditLog(self.engine).query(task_id=task_id, limit=10_000)

    async def events(self, task_id: str) -> list[tuple[int, StreamResponse]]:
        async with self.engine.connect() as connection:
            rows = (
                await connection.execute(
                    select(EVENTS.c.task_version, EVENTS.c.event_data)
                    .where(EVENTS.c.task_id == task_id)
                    .order_by(EVENTS.c.seq)
                )
            ).all()
        return [(int(v), StreamResponse.FromString(bytes(data))) for v, data in rows]

    async def execute(self, *statements: str) -> None:
        async with self.engine.begin() as connection:
            for statement in statements:
                await connection.execute(text(statement))


@pytest.fixture(params=["sqlite", "postgresql"])
async def db(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    migrated_sqlite: Path,
    migrated_postgres: str | None,
) -> AsyncIterator[Database]:
    if request.param == "sqlite":
        target = tmp_path / "leases.db"
        shutil.copyfile(migrated_sqlite, target)
        url = f"sqlite+aiosqlite:///{target}"
    else:
        if migrated_postgres is None:
            pytest.skip("no PostgreSQL cluster in this session (CI always has one)")
        found = postgres_database(f"leases_{uuid.uuid4().hex[:12]}", template=migrated_postgres)
        assert found is not None
        url = found
    engine = make_engine(url)
    store = VersionedDatabaseTaskStore(engine, create_table=True)
    await store.initialize()
    database = Database(request.param, url, engine, store, Clock(), [engine])
    yield database
    for each in database.engines:
        await each.dispose()


async def assert_ended(db: Database, task_id: str, principal: str = "alice") -> None:
    """FAILED with exactly the error object, version moved on once, one FAILED event, one row."""
    status, version = await db.task(task_id)
    assert status["state"] == "TASK_STATE_FAILED"
    (part,) = status["message"]["parts"]
    assert part["data"] == ERROR and part["mediaType"] == "application/json"
    assert version == 3  # submitted 1, working 2, the end 3
    (event_version, event), *more = (await db.events(task_id))[-1:]
    assert not more and event_version == 3
    assert event.status_update.task_id == task_id
    assert event.status_update.status.state == FAILED
    (row,) = await db.audit(task_id)
    assert (row["tool"], row["operation"], row["decision"], row["reason"]) == (
        "agent",
        "invoke",
        "allow",
        "execution_failed",
    )
    assert row["principal"] == principal
    assert task_id not in await db.runners()


# -- a dead replica's tasks ----------------------------------------------------------------------


async def test_a_lease_whose_heartbeat_stopped_is_swept_after_the_ttl(db: Database) -> None:
    dead, survivor = db.lease("dead"), db.lease("survivor")
    await dead.start(beat=False)
    await survivor.start(beat=False)
    await db.run_task("t-1", "dead")
    await db.run_task("t-2", "dead", state=SUBMITTED)

    db.clock.advance(10)  # exactly the ttl: not older than it yet
    await survivor.heartbeat()
    assert await survivor.sweep() == []
    assert (await db.task("t-1"))[0]["state"] == "TASK_STATE_WORKING"

    db.clock.advance(0.001)
    assert sorted(await survivor.sweep()) == ["t-1", "t-2"]
    await assert_ended(db, "t-1")
    status, version = await db.task("t-2")
    assert status["state"] == "TASK_STATE_FAILED" and version == 2  # submitted 1, the end 2
    (row,) = await db.audit("t-1")
    assert (row["tenant"], row["skill_id"], row["task_id"]) == (
        "acme",
        "check_link_capacity",
        "t-1",
    )
    assert row["ts"] == db.clock()
    assert await db.leases() == {"survivor"}  # the expired lease is gone, the live one stays

    assert await survivor.sweep() == []  # nothing twice
    assert len(await db.audit()) == 2


async def test_a_runner_whose_replica_never_had_a_lease_is_swept_at_once(db: Database) -> None:
    survivor = db.lease("survivor")
    await survivor.start(beat=False)
    await db.run_task("t-1", "ghost")
    assert await survivor.sweep() == ["t-1"]
    await assert_ended(db, "t-1")


async def test_a_live_replica_keeps_its_tasks(db: Database) -> None:
    alive, survivor = db.lease("alive"), db.lease("survivor")
    await alive.start(beat=False)
    await survivor.start(beat=False)
    await db.run_task("t-1", "alive")
    for _ in range(5):  # 40 s of heartbeats every 8 s: never older than the ttl
        db.clock.advance(8)
        await alive.heartbeat()
        assert await survivor.sweep() == []
    assert (await db.task("t-1"))[0]["state"] == "TASK_STATE_WORKING"
    assert await db.runners() == {"t-1"} and await db.audit() == []
    assert await db.leases() == {"alive", "survivor"}


async def test_a_replica_never_sweeps_its_own_tasks(db: Database) -> None:
    """Even with its own lease long expired (a stall): it may still be running them."""
    stalled = db.lease("stalled")
    await stalled.start(beat=False)
    await db.run_task("t-1", "stalled")
    db.clock.advance(3600)
    assert await stalled.sweep() == []
    assert await db.runners() == {"t-1"}
    assert await db.leases() == {"stalled"}


async def test_a_lease_renewed_after_the_candidates_were_read_is_not_claimed(db: Database) -> None:
    """The claim re-checks the lease: a replica back from a stall keeps its task."""
    slow, survivor = db.lease("slow"), db.lease("survivor")
    await slow.start(beat=False)
    await survivor.start(beat=False)
    await db.run_task("t-1", "slow")
    db.clock.advance(11)
    (orphan,) = await survivor.orphans(db.clock())
    await slow.heartbeat()  # back, between the read and the claim
    assert await survivor.end(orphan, db.clock()) is False
    assert (await db.task("t-1"))[0]["state"] == "TASK_STATE_WORKING"
    assert await db.runners() == {"t-1"} and await db.audit() == []


async def test_a_settled_task_only_loses_its_stale_runner_row(db: Database) -> None:
    survivor = db.lease("survivor")
    await survivor.start(beat=False)
    await db.run_task("t-done", "dead", state=COMPLETED)
    await db.run_task("t-parked", "dead", state=TaskState.TASK_STATE_INPUT_REQUIRED)
    before = {t: await db.task(t) for t in ("t-done", "t-parked")}
    assert await survivor.sweep() == []
    assert {t: await db.task(t) for t in ("t-done", "t-parked")} == before
    assert await db.runners() == set() and await db.audit() == []
    assert [e for _, e in await db.events("t-done")] == []  # saved without events: none added


async def test_a_stalled_replica_whose_lease_was_dropped_takes_it_again(db: Database) -> None:
    stalled, survivor = db.lease("stalled"), db.lease("survivor")
    await stalled.start(beat=False)
    await survivor.start(beat=False)
    db.clock.advance(11)
    await survivor.heartbeat()
    await survivor.sweep()
    assert await db.leases() == {"survivor"}
    await stalled.heartbeat()
    assert await db.leases() == {"stalled", "survivor"}
    await stalled.stop()
    assert await db.leases() == {"survivor"}  # its own row only


# -- one transaction -----------------------------------------------------------------------------

REFUSE_AUDIT = {
    "sqlite": (
        [
            "CREATE TRIGGER refuse_audit BEFORE INSERT ON principal_audit "
            "BEGIN SELECT RAISE(ABORT, 'audit refused'); END"
        ],
        ["DROP TRIGGER refuse_audit"],
    ),
    "postgresql": (
        [
            "CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'audit refused'; END $$",
            "CREATE TRIGGER refuse_audit BEFORE INSERT ON principal_audit "
            "FOR EACH ROW EXECUTE FUNCTION refuse_audit()",
        ],
        ["DROP TRIGGER refuse_audit ON principal_audit"],
    ),
}


async def test_the_end_and_its_audit_row_are_one_transaction(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """The audit insert fails after the task row was written: nothing of the end remains."""
    survivor = db.lease("survivor")
    await survivor.start(beat=False)
    await db.run_task("t-1", "dead")
    await db.run_task("t-2", "dead")
    before = await db.task("t-1"), await db.events("t-1")
    refuse, allow = REFUSE_AUDIT[db.backend]
    await db.execute(*refuse)
    with caplog.at_level(logging.ERROR, logger="agent.storage.recovery"):
        assert await survivor.sweep() == []
    assert "could not end task t-1 of replica dead" in caplog.text
    assert (await db.task("t-1"), await db.events("t-1")) == before
    assert await db.runners() == {"t-1", "t-2"} and await db.audit() == []

    await db.execute(*allow)
    assert sorted(await survivor.sweep()) == ["t-1", "t-2"]  # the next sweep ends them
    await assert_ended(db, "t-1")


# -- several survivors ---------------------------------------------------------------------------


@pytest.mark.parametrize("order", ["same", "opposite"])
async def test_two_concurrent_sweepers_end_each_task_exactly_once(db: Database, order: str) -> None:
    """Both read the same orphans before either claims one, then end them at once, each on
    its own connection pool: every task ends once, with one audit row and one event."""
    if db.backend != "postgresql":
        pytest.skip("one process serves a SQLite file: there is no second sweeper")
    first, second = db.lease("first", own_engine=True), db.lease("second", own_engine=True)
    await first.start(beat=False)
    await second.start(beat=False)
    ids = [f"t-{n:03}" for n in range(40)]
    for task_id in ids:
        await db.run_task(task_id, "dead")
    now = db.clock()
    seen = await asyncio.gather(first.orphans(now), second.orphans(now))
    assert [o.task_id for o in seen[0]] == [o.task_id for o in seen[1]] == ids
    mine, theirs = seen[0], seen[1] if order == "same" else list(reversed(seen[1]))

    async def end_all(lease: ReplicaLease, orphans: list[Any]) -> list[str]:
        return [o.task_id for o in orphans if await lease.end(o, now)]

    by_first, by_second = await asyncio.gather(end_all(first, mine), end_all(second, theirs))
    assert sorted(by_first + by_second) == ids  # every one ended, none twice
    assert not set(by_first) & set(by_second)
    rows = await db.audit()
    assert sorted(r["task_id"] for r in rows) == ids
    for task_id in ids[:3] + ids[-3:]:
        await assert_ended(db, task_id)
    async with db.engine.connect() as connection:
        events = await connection.execute(
            select(EVENTS.c.task_id, func.count()).group_by(EVENTS.c.task_id)
        )
        assert {task_id: count for task_id, count in events.all()} == {t: 1 for t in ids}


async def test_whole_sweeps_at_once_end_each_task_exactly_once(db: Database) -> None:
    if db.backend != "postgresql":
        pytest.skip("one process serves a SQLite file: there is no second sweeper")
    leases = [db.lease(f"survivor-{n}", own_engine=True) for n in range(3)]
    for lease in leases:
        await lease.start(beat=False)
    ids = [f"t-{n:03}" for n in range(30)]
    for task_id in ids:
        await db.run_task(task_id, "dead")
    ended = await asyncio.gather(*(lease.sweep() for lease in leases))
    assert sorted(t for each in ended for t in each) == ids
    assert sorted(r["task_id"] for r in await db.audit()) == ids


# -- hostile values ------------------------------------------------------------------------------


async def test_separators_and_long_values_reach_the_audit_row_as_they_are(db: Database) -> None:
    survivor = db.lease("survivor")
    await survivor.start(beat=False)
    principal = "agent:" + "p:" * 124 + "x"  # 255 characters, ':' throughout
    tenant = "t:" * 32  # 64
    skill = "s" * 64
    await db.run_task(
        "t-1", "dead", subject="bob", tenant=tenant, skill_id=skill, principal=principal
    )
    assert await survivor.sweep() == ["t-1"]
    (row,) = await db.audit("t-1")
    assert (row["principal"], row["tenant"], row["skill_id"]) == (principal, tenant, skill)
    await assert_ended(db, "t-1", principal=principal)


async def test_values_the_columns_cannot_hold_are_fitted_not_refused(db: Database) -> None:
    """SQLite keeps what PostgreSQL would refuse (NUL, over-long): the end still happens."""
    if db.backend != "sqlite":
        pytest.skip("PostgreSQL refuses such a runner row when it is written")
    survivor = db.lease("survivor")
    await survivor.start(beat=False)
    await db.run_task(
        "t-1",
        "dead",
        subject="m\x00allory",
        tenant="x" * 500,
        skill_id="k" * 500,
        principal="m\x00allory" + "y" * 1000,
    )
    assert await survivor.sweep() == ["t-1"]
    (row,) = await db.audit("t-1")
    assert row["principal"] == ("m\ufffdallory" + "y" * 1000)[:255]
    assert (row["tenant"], row["skill_id"]) == ("x" * 64, "k" * 64)


async def test_an_empty_principal_is_audited_as_anonymous(db: Database) -> None:
    survivor = db.lease("survivor")
    await survivor.start(beat=False)
    await db.run_task("t-1", "dead", tenant=None, skill_id=None, principal="")
    assert await survivor.sweep() == ["t-1"]
    (row,) = await db.audit("t-1")
    assert (row["principal"], row["tenant"], row["skill_id"]) == ("anonymous", None, None)


# -- the heartbeat -------------------------------------------------------------------------------

REFUSE_HEARTBEAT = {
    "sqlite": (
        [
            "CREATE TRIGGER refuse_beat BEFORE UPDATE ON replica_lease "
            "BEGIN SELECT RAISE(ABORT, 'heartbeat refused'); END"
        ],
        ["DROP TRIGGER refuse_beat"],
    ),
    "postgresql": (
        [
            "CREATE FUNCTION refuse_beat() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'heartbeat refused'; END $$",
            "CREATE TRIGGER refuse_beat BEFORE UPDATE ON replica_lease "
            "FOR EACH ROW EXECUTE FUNCTION refuse_beat()",
        ],
        ["DROP TRIGGER refuse_beat ON replica_lease"],
    ),
}


async def until(condition: Callable[[], Any], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_a_failed_heartbeat_is_logged_and_retried(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """The background loop outlives failures, and sweeps once it beats again."""
    lease = ReplicaLease(
        db.engine, replica="beating", clock=db.clock, heartbeat_seconds=0.02, ttl_seconds=1
    )
    await lease.start()
    refuse, allow = REFUSE_HEARTBEAT[db.backend]
    try:
        await db.execute(*refuse)  # before the orphan exists: a beat in between would sweep it
        await db.run_task("t-1", "dead")
        with caplog.at_level(logging.ERROR, logger="agent.storage.recovery"):

            async def refused_twice() -> bool:
                return caplog.text.count("could not renew its lease") >= 2

            await until(refused_twice)
        assert (await db.task("t-1"))[0]["state"] == "TASK_STATE_WORKING"  # no beat, no sweep
        await db.execute(*allow)
        db.clock.advance(5)

        async def beating() -> bool:
            async with db.engine.connect() as connection:
                beat = await connection.scalar(select(replica_lease.c.heartbeat_at))
            return bool(beat == db.clock())

        await until(beating)

        async def swept() -> bool:
            return (await db.task("t-1"))[0]["state"] == "TASK_STATE_FAILED"

        await until(swept)
    finally:
        await lease.stop()
    assert await db.leases() == set()


def test_a_lease_needs_a_ttl_longer_than_its_heartbeat() -> None:
    engine = make_engine("sqlite+aiosqlite:///:memory:")
    with pytest.raises(ValueError, match="heartbeat_seconds < ttl_seconds"):
        ReplicaLease(engine, heartbeat_seconds=5, ttl_seconds=5)
    with pytest.raises(ValueError):
        ReplicaLease(engine, heartbeat_seconds=0)
    one, two = ReplicaLease(engine), ReplicaLease(engine)
    assert len(one.replica) == 32 and int(one.replica, 16) >= 0 and one.replica != two.replica
