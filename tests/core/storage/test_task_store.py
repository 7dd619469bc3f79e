"""The write-behind task store over the one-statement database store, on SQLite and PostgreSQL.

What it promises (agent/storage/task_store.py): a task's first state and its settled states are
in the database when save returns; the states in between are read from memory and reach the
database after ``flush_after``, before a ListTasks of their owner, and at shutdown; nothing
written late ever overwrites a settled state; another owner sees nothing of a running task.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a.server.context import ServerCallContext
from a2a.server.tasks import DatabaseTaskStore
from a2a.types import (
    Artifact,
    Part,
    Task,
    TaskState,
    TaskStatus,
)

from agent.security.principal import Principal, PrincipalUser
from agent.storage.engine import make_engine
from agent.storage.schema import upgrade
from agent.storage.task_store import UpsertDatabaseTaskStore
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


def database_url(backend: str, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'tasks.db'}"
    url = postgres_database(f"tasks_{uuid.uuid4().hex[:12]}")
    if url is None:
        pytest.skip("no PostgreSQL server installed (CI installs one)")
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
async def database(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[UpsertDatabaseTaskStore]:
    url = database_url(request.param, tmp_path)
    await upgrade(url)  # the core's tables, as start-up makes them (a restart writes audit rows)
    engine = make_engine(url)
    store = UpsertDatabaseTaskStore(engine, create_table=True)
    await store.initialize()
    yield store
    await engine.dispose()


def state_of(found: Task | None) -> tuple[TaskState, int] | None:
    return None if found is None else (found.status.state, len(found.artifacts))


async def test_one_statement_saves_keep_the_owner(
    database: UpsertDatabaseTaskStore,
) -> None:
    await database.save(task(SUBMITTED), ALICE)
    await database.save(task(WORKING, artifacts=1), ALICE)
    assert state_of(await database.get("t-1", ALICE)) == (WORKING, 1)
    await database.save(task(COMPLETED, artifacts=5), MALLORY)  # another owner's write: nothing
    assert state_of(await database.get("t-1", ALICE)) == (WORKING, 1)
    assert await database.get("t-1", MALLORY) is None
    same = DatabaseTaskStore(database.engine)  # what the SDK's own store reads back
    assert state_of(await same.get("t-1", ALICE)) == (WORKING, 1)


# -- what a restart finds running ----------------------------------------------------------------


async def test_a_restart_ends_what_its_previous_run_left_running(
    database: UpsertDatabaseTaskStore,
) -> None:
    """SUBMITTED and WORKING end FAILED execution_failed; every settled state is left alone,
    including one whose text mentions a running state."""
    from datetime import UTC, datetime

    from google.protobuf.json_format import MessageToDict

    from agent.storage.recovery import INTERRUPTED

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


async def test_a_restart_audits_each_task_it_ends_and_drops_every_runner_row(
    database: UpsertDatabaseTaskStore,
) -> None:
    """One invocation row per ended task, naming whose it was: its runner row if it has one,
    else its owner ``tenant:subject`` split at the first ':' (cut to the columns, NUL
    replaced); settled tasks get none; no runner row survives."""
    from datetime import UTC, datetime

    from sqlalchemy import insert, select

    from agent.storage.audit import DatabaseAuditLog
    from agent.storage.schema import task_runner

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


async def test_a_restart_whose_audit_row_is_refused_changes_nothing(
    database: UpsertDatabaseTaskStore,
) -> None:
    """The ends and their audit rows are one transaction: start-up fails, nothing is half done."""
    from datetime import UTC, datetime

    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

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


async def test_a_row_is_the_sdks_row_for_any_task() -> None:
    """``row`` computes the SDK's ``_to_orm`` values itself: equal for generated tasks."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.core.edge.test_proto_json import _fill

    engine = make_engine("sqlite://")
    store = UpsertDatabaseTaskStore(engine, create_table=True)
    assert store._own_row  # the fast path is the one measured

    @st.composite
    def tasks(draw: st.DrawFn) -> Task:
        generated = Task()
        _fill(draw, generated, 0)
        return generated

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(tasks(), st.sampled_from(["", "4:acme:alice"]))
    def same(generated: Task, owner: str) -> None:
        try:
            model = store._to_orm(generated, owner)
        except (ValueError, OverflowError) as error:  # e.g. a NaN in a Struct, a bad timestamp
            with pytest.raises(type(error)):
                store.row(generated, owner)
            return
        expected = {column: getattr(model, key) for key, column in store._columns}
        assert store.row(generated, owner) == expected

    same()
    await engine.dispose()


async def test_a_printed_record_is_stored_as_printed_and_reads_back_the_same() -> None:
    """An artifact the answer printed (``TaskRun.wire_artifacts``) goes into the row as it is,
    and is the same Task when read back: integral numbers as integers change nothing."""
    from google.protobuf.json_format import MessageToDict, ParseDict
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from agent.edge.prepared_answer import artifact_wire
    from agent.edge.proto_json import plain_json

    engine = make_engine("sqlite://")
    store = UpsertDatabaseTaskStore(engine, create_table=True)
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**63), max_value=2**63 - 1)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=8)
    )
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
        max_leaves=12,
    )

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.dictionaries(st.text(max_size=6), values, max_size=6), st.booleans())
    def same(record: dict[str, object], extended: bool) -> None:
        if not plain_json(record, 1):
            return  # (such a record goes the general way, and is not printed)
        task = Task(id="t-1", context_id="c-1")
        extensions = ["https://example.com/ext/v1"] if extended else None
        artifact = task.artifacts.add(artifact_id="sample-1", name="kind")
        if extensions:
            artifact.extensions.extend(extensions)
        part = artifact.parts.add(media_type="application/json")
        part.data.struct_value.SetInParent()
        part.data.struct_value.update(record)
        wire = artifact_wire("sample-1", "kind", record, "application/json", extensions)
        row = store.row(task, "4:acme:alice", {"sample-1": wire})
        assert row["artifacts"][0] is wire
        assert row == store.row(task, "4:acme:alice")
        stored = json.loads(json.dumps(row["artifacts"][0]))
        # (equal as values: a negative zero reads back as the zero the answer printed)
        assert MessageToDict(ParseDict(stored, Artifact())) == MessageToDict(task.artifacts[0])

    same()
    await engine.dispose()


async def test_a_store_that_walks_the_task_gets_a_sparse_settlements_records_whole() -> None:
    """A run that no one read keeps its records out of the task's Structs (``TaskRun``): a
    store that prints them itself (its own row) takes them from ``printed``; one given its own
    conversion walks the task, and is handed the whole one."""
    from a2a.server.tasks import InMemoryTaskStore

    from agent.server.task_run import TaskRun
    from agent.storage.audit import InMemoryAuditLog
    from agent.storage.bindings import InMemoryBindingStore
    from agent.storage.settlement import StoreTaskWriter, _task_row

    writer = StoreTaskWriter(InMemoryTaskStore(), InMemoryAuditLog(), InMemoryBindingStore())
    task = Task(id="t-1", context_id="c-1", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))
    run = TaskRun("owner", writer, task=task)
    for n in range(3):
        assert run.add_artifact(f"rec-{n}", "sample", data={"n": n, "x": [n / 2]}, media_type="j")
    settlement = run.settlement([])
    assert settlement is not None and settlement.sparse
    engine = make_engine("sqlite://")
    own = UpsertDatabaseTaskStore(engine, create_table=True)
    walking = UpsertDatabaseTaskStore(
        engine, create_table=False, core_to_model_conversion=lambda t, o: own._to_orm(t, o)
    )
    assert own.takes_printed and not walking.takes_printed
    whole = run.task
    assert whole is not None and all(a.parts for a in whole.artifacts)
    expected = own.row(whole, "owner")
    assert _task_row(own, settlement) == expected
    assert _task_row(walking, settlement) == expected
    await engine.dispose()
