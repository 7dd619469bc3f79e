"""The write-behind task store over the one-statement database store, on SQLite and PostgreSQL.

What it promises (agent/storage/task_store.py): a task's first state and its settled states are
in the database when save returns; the states in between are read from memory and reach the
database after ``flush_after``, before a ListTasks of their owner, and at shutdown; nothing
written late ever overwrites a settled state; another owner sees nothing of a running task.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a.server.context import ServerCallContext
from a2a.server.id_generator import IDGeneratorContext
from a2a.server.tasks import DatabaseTaskStore
from a2a.types import (
    Artifact,
    ListTasksRequest,
    Part,
    Task,
    TaskState,
    TaskStatus,
)

from agent.security.principal import Principal, PrincipalUser
from agent.storage.engine import make_engine
from agent.storage.migrate import upgrade
from agent.storage.task_store import UpsertDatabaseTaskStore, WriteBehindTaskStore
from tests.conftest import postgres_database

pytestmark = pytest.mark.asyncio

SUBMITTED = TaskState.TASK_STATE_SUBMITTED
WORKING = TaskState.TASK_STATE_WORKING
COMPLETED = TaskState.TASK_STATE_COMPLETED
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED


def context(subject: str, tenant: str = "acme") -> ServerCallContext:
    return ServerCallContext(user=PrincipalUser(Principal(subject, tenant, frozenset())))


ALICE = context("alice")
MALLORY = context("mallory", "globex")


def task(state: TaskState, artifacts: int = 0, task_id: str = "t-1") -> Task:
    return Task(
        id=task_id,
        context_id="c-1",
        status=TaskStatus(state=state),
        artifacts=[
            Artifact(artifact_id=f"a-{n}", parts=[Part(text=f"record {n}")])
            for n in range(artifacts)
        ],
    )


class SlowStore(UpsertDatabaseTaskStore):
    """The real store, with a pause before each write, or a failed write, when asked."""

    pause = 0.0
    fail = False

    async def save(self, task: Task, context: ServerCallContext) -> None:
        if self.pause:
            await asyncio.sleep(self.pause)
        if self.fail:
            raise ConnectionError("database unreachable")
        await super().save(task, context)


def database_url(backend: str, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'tasks.db'}"
    url = postgres_database(f"tasks_{uuid.uuid4().hex[:12]}")
    if url is None:
        pytest.skip("no PostgreSQL server installed (CI installs one)")
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
async def stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[WriteBehindTaskStore, SlowStore]]:
    url = database_url(request.param, tmp_path)
    await upgrade(url)  # the core's tables, as start-up makes them (a restart writes audit rows)
    engine = make_engine(url)
    database = SlowStore(engine, create_table=True)
    store = WriteBehindTaskStore(database, flush_after=0.1)
    await store.initialize()
    yield store, database
    await store.flush_all()
    await engine.dispose()


def state_of(found: Task | None) -> tuple[TaskState, int] | None:
    return None if found is None else (found.status.state, len(found.artifacts))


async def test_first_state_is_in_the_database_when_save_returns(stores) -> None:
    store, database = stores
    await store.save(task(SUBMITTED), ALICE)
    assert state_of(await database.get("t-1", ALICE)) == (SUBMITTED, 0)


async def test_states_between_are_read_from_memory_and_written_later(stores) -> None:
    store, database = stores
    await store.save(task(SUBMITTED), ALICE)
    await store.save(task(WORKING), ALICE)
    await store.save(task(WORKING, artifacts=2), ALICE)
    assert state_of(await store.get("t-1", ALICE)) == (WORKING, 2)
    assert state_of(await database.get("t-1", ALICE)) == (SUBMITTED, 0)
    await asyncio.sleep(0.3)
    assert state_of(await database.get("t-1", ALICE)) == (WORKING, 2)


async def test_settled_states_are_written_at_once_and_leave_memory(stores) -> None:
    store, database = stores
    await store.save(task(SUBMITTED), ALICE)
    await store.save(task(WORKING, artifacts=1), ALICE)
    await store.save(task(COMPLETED, artifacts=2), ALICE)
    assert state_of(await database.get("t-1", ALICE)) == (COMPLETED, 2)
    await asyncio.sleep(0.3)  # no flush left to bring back an older state
    assert state_of(await database.get("t-1", ALICE)) == (COMPLETED, 2)
    assert store._live == {}


@pytest.mark.parametrize("settled", [INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED])
async def test_interrupted_states_are_written_at_once(stores, settled: TaskState) -> None:
    store, database = stores
    await store.save(task(SUBMITTED), ALICE)
    await store.save(task(settled), ALICE)
    assert state_of(await database.get("t-1", ALICE)) == (settled, 0)


async def test_a_flush_under_way_never_lands_after_the_settled_state(stores) -> None:
    store, database = stores
    await store.save(task(SUBMITTED), ALICE)
    await store.save(task(WORKING, artifacts=1), ALICE)
    database.pause = 0.3
    await asyncio.sleep(0.15)  # the flush has started and is held in its write
    database.pause = 0.0
    await store.save(task(COMPLETED, artifacts=3), ALICE)
    await asyncio.sleep(0.4)
    assert state_of(await database.get("t-1", ALICE)) == (COMPLETED, 3)


async def test_list_writes_the_owners_running_tasks_first(stores) -> None:
    store, _ = stores
    await store.save(task(SUBMITTED), ALICE)
    await store.save(task(WORKING, artifacts=1), ALICE)
    listed = await store.list(ListTasksRequest(), ALICE)
    assert [(t.id, t.status.state) for t in listed.tasks] == [("t-1", WORKING)]


async def test_another_owner_sees_nothing_of_a_running_task(stores) -> None:
    store, _ = stores
    await store.save(task(SUBMITTED), ALICE)
    await store.save(task(WORKING), ALICE)
    assert await store.get("t-1", MALLORY) is None
    assert list((await store.list(ListTasksRequest(), MALLORY)).tasks) == []


async def test_reads_are_copies(stores) -> None:
    store, _ = stores
    await store.save(task(SUBMITTED), ALICE)
    await store.save(task(WORKING), ALICE)
    first = await store.get("t-1", ALICE)
    assert first is not None
    first.status.state = COMPLETED
    assert state_of(await store.get("t-1", ALICE)) == (WORKING, 0)


async def test_flush_all_writes_every_running_task(stores) -> None:
    _, database = stores
    slow = WriteBehindTaskStore(database, flush_after=60)
    for n in range(3):
        await slow.save(task(SUBMITTED, task_id=f"t-{n}"), ALICE)
        await slow.save(task(WORKING, artifacts=n, task_id=f"t-{n}"), ALICE)
    await slow.flush_all()
    assert [state_of(await database.get(f"t-{n}", ALICE)) for n in range(3)] == [
        (WORKING, n) for n in range(3)
    ]


async def test_delete_forgets_the_running_task(stores) -> None:
    store, database = stores
    await store.save(task(SUBMITTED), ALICE)
    await store.save(task(WORKING), ALICE)
    await store.delete("t-1", ALICE)
    await asyncio.sleep(0.3)
    assert await store.get("t-1", ALICE) is None
    assert await database.get("t-1", ALICE) is None


async def test_one_statement_saves_keep_the_owner(stores) -> None:
    _, database = stores
    await database.save(task(SUBMITTED), ALICE)
    await database.save(task(WORKING, artifacts=1), ALICE)
    assert state_of(await database.get("t-1", ALICE)) == (WORKING, 1)
    await database.save(task(COMPLETED, artifacts=5), MALLORY)  # another owner's write: nothing
    assert state_of(await database.get("t-1", ALICE)) == (WORKING, 1)
    assert await database.get("t-1", MALLORY) is None
    same = DatabaseTaskStore(database.engine)  # what the SDK's own store reads back
    assert state_of(await same.get("t-1", ALICE)) == (WORKING, 1)


async def test_ids_handed_out_for_new_tasks_need_no_query_until_saved(stores) -> None:
    store, database = stores
    fresh = store.fresh_ids().generate(IDGeneratorContext())
    await database.save(task(SUBMITTED, task_id=fresh), ALICE)  # behind the store's back
    assert await store.get(fresh, ALICE) is None  # answered from what it knows: new
    await store.save(task(WORKING, task_id=fresh), ALICE)
    assert state_of(await store.get(fresh, ALICE)) == (WORKING, 0)


async def test_a_first_save_that_fails_leaves_nothing_behind(stores) -> None:
    store, database = stores
    database.fail = True
    with pytest.raises(ConnectionError):
        await store.save(task(SUBMITTED), ALICE)
    database.fail = False
    assert await store.get("t-1", ALICE) is None  # not pretended to exist
    await store.save(task(WORKING), ALICE)  # the next save is a first save again: written now
    assert state_of(await database.get("t-1", ALICE)) == (WORKING, 0)


# -- what a restart finds running ----------------------------------------------------------------


async def test_a_restart_ends_what_its_previous_run_left_running(stores) -> None:
    """SUBMITTED and WORKING end FAILED execution_failed; every settled state is left alone,
    including one whose text mentions a running state."""
    from datetime import UTC, datetime

    from google.protobuf.json_format import MessageToDict

    from agent.storage.task_store import INTERRUPTED

    _, database = stores
    chatty = task(COMPLETED, task_id="t-chatty")
    chatty.status.message.parts.add(text="was TASK_STATE_WORKING a moment ago")
    for saved in (
        task(SUBMITTED, task_id="t-submitted"),
        task(WORKING, artifacts=1, task_id="t-working"),
        task(INPUT_REQUIRED, task_id="t-parked"),
        chatty,
    ):
        await database.save(saved, ALICE)
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    assert sorted(await database.end_interrupted(now)) == ["t-submitted", "t-working"]

    for task_id in ("t-submitted", "t-working"):
        found = await database.get(task_id, ALICE)
        assert found is not None and found.status.state == TaskState.TASK_STATE_FAILED
        (part,) = found.status.message.parts
        assert MessageToDict(part)["data"] == {"code": "execution_failed", "message": INTERRUPTED}
        assert found.status.timestamp.ToDatetime(tzinfo=UTC) == now
    working = await database.get("t-working", ALICE)
    assert working is not None and len(working.artifacts) == 1  # what it had made is kept
    assert state_of(await database.get("t-parked", ALICE)) == (INPUT_REQUIRED, 0)
    assert state_of(await database.get("t-chatty", ALICE)) == (COMPLETED, 0)
    assert await database.end_interrupted(now) == []  # nothing is running any more


async def test_a_restart_audits_each_task_it_ends_and_drops_every_runner_row(stores) -> None:
    """One invocation row per ended task, naming whose it was: its runner row if it has one,
    else its owner ``tenant:subject`` split at the first ':' (cut to the columns, NUL
    replaced); settled tasks get none; no runner row survives."""
    from datetime import UTC, datetime

    from sqlalchemy import insert, select

    from agent.storage.audit import DatabaseAuditLog
    from agent.storage.tables import task_runner

    _, database = stores
    now = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    callers = {
        "t-runner": context("alice"),
        "t-colons": context("agent:bot:1", "ac"),
        "t-no-tenant": ServerCallContext(user=PrincipalUser(Principal("bob", None, frozenset()))),
        "t-long-tenant": context("x", "t" * 200),
        "t-anonymous": ServerCallContext(user=PrincipalUser(Principal("", None, frozenset()))),
        "t-done": context("carol"),
    }
    sqlite = database.engine.dialect.name == "sqlite"
    if sqlite:  # PostgreSQL cannot store a NUL in the owner at all
        callers["t-nul"] = context("m\x00allory")
    for task_id, caller in callers.items():
        await database.save(
            task(COMPLETED if task_id == "t-done" else WORKING, task_id=task_id), caller
        )
    async with database.engine.begin() as connection:
        for task_id in ("t-runner", "t-done"):
            await connection.execute(
                insert(task_runner).values(
                    task_id=task_id,
                    replica="previous-run",
                    owner="acme:alice",
                    principal="alice:from-runner",
                    tenant="acme",
                    skill_id="check_link_capacity",
                    since=now,
                )
            )

    ended = await database.end_interrupted(now)

    assert sorted(ended) == sorted(set(callers) - {"t-done"})
    rows = await DatabaseAuditLog(database.engine).query(limit=100)
    whose = {r["task_id"]: (r["principal"], r["tenant"], r["skill_id"]) for r in rows}
    expected = {
        "t-runner": ("alice:from-runner", "acme", "check_link_capacity"),
        "t-colons": ("agent:bot:1", "ac", None),
        "t-no-tenant": ("bob", None, None),
        "t-long-tenant": ("x", "t" * 64, None),
        "t-anonymous": ("anonymous", None, None),
    }
    if sqlite:
        expected["t-nul"] = ("m\ufffdallory", "acme", None)
    assert whose == expected and len(rows) == len(expected)
    assert {(r["tool"], r["operation"], r["decision"], r["reason"]) for r in rows} == {
        ("agent", "invoke", "allow", "execution_failed")
    }
    assert {r["ts"] for r in rows} == {now}
    async with database.engine.connect() as connection:
        assert (await connection.execute(select(task_runner))).all() == []
    assert state_of(await database.get("t-done", callers["t-done"])) == (COMPLETED, 0)


async def test_a_restart_whose_audit_row_is_refused_changes_nothing(stores) -> None:
    """The ends and their audit rows are one transaction: start-up fails, nothing is half done."""
    from datetime import UTC, datetime

    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    _, database = stores
    await database.save(task(WORKING, task_id="t-1"), ALICE)
    await database.save(task(WORKING, task_id="t-2"), ALICE)
    postgres = database.engine.dialect.name == "postgresql"
    refuse = (
        [
            "CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'audit refused'; END $$",
            "CREATE TRIGGER refuse_audit BEFORE INSERT ON principal_audit "
            "FOR EACH ROW EXECUTE FUNCTION refuse_audit()",
        ]
        if postgres
        else [
            "CREATE TRIGGER refuse_audit BEFORE INSERT ON principal_audit "
            "BEGIN SELECT RAISE(ABORT, 'audit refused'); END"
        ]
    )
    async with database.engine.begin() as connection:
        for statement in refuse:
            await connection.execute(text(statement))
    with pytest.raises(DBAPIError, match="audit refused"):
        await database.end_interrupted(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))
    assert [state_of(await database.get(t, ALICE)) for t in ("t-1", "t-2")] == [(WORKING, 0)] * 2
