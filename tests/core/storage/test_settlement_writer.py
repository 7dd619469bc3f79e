"""The group-committing task writers, on SQLite (thread and asyncio) and PostgreSQL.

What they promise (agent/storage/settlement.py, group_commit.py): ``commit`` returns once its
settlement is durable, concurrent settlements share transactions, the rows read back through
the stores' own readers are those the stores' own writes give, a task row of another owner is
never touched, the runner row follows the task's state, a bad settlement fails only itself,
``stop`` drains, and no failure of the writer leaves a caller waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import Artifact, ListTasksRequest, Message, Part, Role, Task, TaskState, TaskStatus
from sqlalchemy import select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.audit import AuditRecord, DatabaseAuditLog, InMemoryAuditLog
from agent.storage.bindings import Binding, DatabaseBindingStore, InMemoryBindingStore, Phase
from agent.storage.engine import make_engine
from agent.storage.group_commit import AsyncGroupWriter, SqliteThreadWriter, task_writer
from agent.storage.schema import principal_audit, task_binding, task_runner
from agent.storage.settlement import (
    BatchStatements,
    OwnerUser,
    Runner,
    Settlement,
    StaleTaskError,
    StoreTaskWriter,
    TaskWriter,
    WriterStats,
    batch_steps,
)
from agent.storage.task_store import UpsertDatabaseTaskStore
from tests.conftest import postgres_database

pytestmark = pytest.mark.asyncio

SUBMITTED = TaskState.TASK_STATE_SUBMITTED
WORKING = TaskState.TASK_STATE_WORKING
COMPLETED = TaskState.TASK_STATE_COMPLETED
INPUT_REQUIRED = TaskState.TASK_STATE_INPUT_REQUIRED
ALICE = "acme:alice"
MALLORY = "globex:mallory"
T0 = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
WAIT = 20.0  # no test waits this long unless a caller hangs


@pytest.fixture(
    params=[("sqlite", "thread"), ("sqlite", "async"), ("postgresql", "async")],
    ids=["sqlite-thread", "sqlite-async", "postgresql"],
)
def kind(request: pytest.FixtureRequest) -> tuple[str, str]:
    return tuple(request.param)  # type: ignore[return-value]


@pytest.fixture
async def engine_for(
    kind: tuple[str, str],
    tmp_path: Path,
    migrated_sqlite: Path,
    migrated_postgres: str | None,
) -> AsyncIterator[Callable[[], AsyncEngine]]:
    """Makes fresh migrated databases, each a different one (two in a test are compared)."""
    engines: list[AsyncEngine] = []

    def make() -> AsyncEngine:
        name = f"writer_{uuid.uuid4().hex[:12]}"
        if kind[0] == "sqlite":
            target = tmp_path / f"{name}.db"
            shutil.copyfile(migrated_sqlite, target)
            url = f"sqlite+aiosqlite:///{target}"
        else:
            if migrated_postgres is None:
                pytest.skip("no PostgreSQL cluster in this session (CI always has one)")
            url = postgres_database(name, template=migrated_postgres)
            assert url is not None
        engines.append(make_engine(url))
        return engines[-1]

    yield make
    for engine in engines:
        await engine.dispose()


@dataclass
class Stores:
    engine: AsyncEngine
    tasks: UpsertDatabaseTaskStore
    audit: DatabaseAuditLog
    bindings: DatabaseBindingStore

    def reference(self) -> StoreTaskWriter:
        return StoreTaskWriter(self.tasks, self.audit, self.bindings)


def stores_on(engine: AsyncEngine) -> Stores:
    return Stores(
        engine,
        UpsertDatabaseTaskStore(engine, create_table=True),
        DatabaseAuditLog(engine),
        DatabaseBindingStore(engine),
    )


@pytest.fixture
async def stores(engine_for: Callable[[], AsyncEngine]) -> Stores:
    return stores_on(engine_for())


def make_writer(kind: tuple[str, str], stores: Stores, **options: Any) -> TaskWriter:
    if kind[1] == "thread":
        return SqliteThreadWriter(stores.engine, stores.tasks, **options)
    return AsyncGroupWriter(stores.engine, stores.tasks, **options)


@pytest.fixture
async def writer(kind: tuple[str, str], stores: Stores) -> AsyncIterator[TaskWriter]:
    writer = make_writer(kind, stores)
    await writer.start()
    yield writer
    await writer.stop()


def task(
    task_id: str, state: TaskState, *, second: int = 0, artifacts: int = 0, text: str = "ok"
) -> Task:
    status = TaskStatus(
        state=state,
        message=Message(message_id=f"m-{task_id}", role=Role.ROLE_AGENT, parts=[Part(text=text)]),
    )
    status.timestamp.FromDatetime(T0 + timedelta(seconds=second))
    return Task(
        id=task_id,
        context_id=f"c-{task_id}",
        status=status,
        artifacts=[
            Artifact(artifact_id=f"a-{n}", parts=[Part(text=f"record {n} {text}")])
            for n in range(artifacts)
        ],
        history=[Message(message_id=f"h-{task_id}", role=Role.ROLE_USER, parts=[Part(text=text)])],
    )


def record(task_id: str, n: int = 0, **fields: Any) -> AuditRecord:
    values: dict[str, Any] = {
        "principal": "alice",
        "tenant": "acme",
        "tool": "agent",
        "operation": "invoke",
        "decision": "allow",
        "reason": f"call {n}",
        "actor_chain": ("alice", "agent"),
        "skill_id": "ping",
        "task_id": task_id,
        "resource_ids": (f"r-{n}",),
        "ts": T0 + timedelta(seconds=n),
    }
    return AuditRecord(**(values | fields))


def binding(task_id: str, owner: str = ALICE, skill: str = "ping") -> Binding:
    return Binding(task_id, owner, Phase.BOUND, skill, ("ping", "trace"), {"host": "r1"}, "go")


RUNNER = Runner(replica="replica-a", principal="alice", tenant="acme", skill_id="ping")


def settled(task_id: str, n: int = 0, owner: str = ALICE) -> Settlement:
    """A terminal state with its audit rows and binding, as the handler hands it over."""
    return Settlement(
        owner=owner,
        task=task(task_id, COMPLETED, second=n, artifacts=2),
        audit=(record(task_id, n), record(task_id, n, tool="ping", operation="run")),
        binding=binding(task_id, owner),
    )


def ctx(owner: str) -> ServerCallContext:
    return ServerCallContext(user=OwnerUser(owner))


async def runners(engine: AsyncEngine) -> dict[str, dict[str, Any]]:
    async with engine.connect() as connection:
        rows = (await connection.execute(select(task_runner))).mappings().all()
    return {row["task_id"]: dict(row) for row in rows}


async def snapshot(stores: Stores, task_ids: list[str], owner: str = ALICE) -> dict[str, Any]:
    """Everything the readers give back for these tasks (what a follow-up would see)."""
    listed = await stores.tasks.list(ListTasksRequest(page_size=100), ctx(owner))
    audit = await stores.audit.query(limit=10_000)
    for row in audit:
        row.pop("id")  # ids differ between two databases; order is what matters
    return {
        "tasks": [await stores.tasks.get(t, ctx(owner)) for t in task_ids],
        "list": [t.id for t in listed.tasks],
        "list_tasks": list(listed.tasks),
        "audit": audit,
        "bindings": [await stores.bindings.get(t, owner) for t in task_ids],
        "runners": {
            k: {c: v for c, v in r.items() if c != "since"}
            for k, r in (await runners(stores.engine)).items()
        },
    }


# --- durability and group commit --------------------------------------------------------------


async def test_concurrent_commits_are_all_durable_and_share_transactions(
    writer: TaskWriter, stores: Stores, kind: tuple[str, str]
) -> None:
    ids = [f"t-{n:03d}" for n in range(300)]
    await asyncio.wait_for(
        asyncio.gather(*(writer.commit(settled(t, n)) for n, t in enumerate(ids))), WAIT
    )
    stats = writer.stats
    assert stats.settlements == 300
    assert stats.failures == 0
    assert stats.commits <= 30, stats  # group commit: far fewer transactions than settlements
    # durable: visible to a fresh engine on the same database, through the readers
    fresh = stores_on(_same_database(stores.engine))
    try:
        for n, t in enumerate(ids):
            got = await fresh.tasks.get(t, ctx(ALICE))
            assert got == task(t, COMPLETED, second=n, artifacts=2)
        assert len(await fresh.audit.query(limit=1000)) == 600
        assert await fresh.bindings.get(ids[-1], ALICE) == binding(ids[-1])
    finally:
        await fresh.engine.dispose()


def _same_database(engine: AsyncEngine) -> AsyncEngine:
    return make_engine(engine.url.render_as_string(hide_password=False))


async def test_rows_read_back_equal_the_stores_own_writes(
    kind: tuple[str, str], engine_for: Callable[[], AsyncEngine]
) -> None:
    ours, theirs = stores_on(engine_for()), stores_on(engine_for())
    writer, reference = make_writer(kind, ours), theirs.reference()
    await writer.start()
    ids = [f"t-{n}" for n in range(12)]
    # several states of each task, interleaved, as concurrent requests would submit them
    plan: list[Settlement] = []
    for n, t in enumerate(ids):
        plan.append(Settlement(ALICE, task(t, SUBMITTED, second=n), runner=RUNNER))
    for n, t in enumerate(ids):
        state = INPUT_REQUIRED if n % 3 == 0 else COMPLETED
        plan.append(
            Settlement(
                ALICE,
                task(t, state, second=100 - n, artifacts=n % 4),
                audit=tuple(record(t, k) for k in range(n % 3 + 1)),
                binding=binding(t),
            )
        )
    plan.append(Settlement(ALICE, audit=(record("t-0", 99),)))  # audit only
    plan.append(Settlement(ALICE, binding=binding("t-1", skill="trace")))  # binding only
    await asyncio.wait_for(asyncio.gather(*(writer.commit(s) for s in plan)), WAIT)
    for s in plan:
        await reference.commit(s)
    await writer.stop()
    mine, expected = await snapshot(ours, ids), await snapshot(theirs, ids)
    expected["runners"] = {}  # the reference ignores runners; every task here settled
    assert mine == expected
    assert mine["list"] == [f"t-{n}" for n in range(12)]  # newest status first
    assert mine["bindings"][1] == binding("t-1", skill="trace")


async def test_a_row_of_another_owner_is_never_touched(writer: TaskWriter, stores: Stores) -> None:
    await writer.commit(Settlement(ALICE, task("t-1", WORKING), runner=RUNNER))
    intruder = Runner("replica-x", "mallory", "globex", "wipe")
    # in one batch: mallory's attempts between alice's own states
    await asyncio.gather(
        writer.commit(Settlement(MALLORY, task("t-1", COMPLETED, text="pwned"))),
        writer.commit(Settlement(ALICE, task("t-1", WORKING, second=1), runner=RUNNER)),
        writer.commit(Settlement(MALLORY, task("t-1", WORKING, text="pwned"), runner=intruder)),
        writer.commit(Settlement(MALLORY, task("t-2", WORKING, text="theirs"), runner=intruder)),
    )
    assert await stores.tasks.get("t-1", ctx(ALICE)) == task("t-1", WORKING, second=1)
    assert await stores.tasks.get("t-1", ctx(MALLORY)) is None
    assert await stores.tasks.get("t-2", ctx(MALLORY)) == task("t-2", WORKING, text="theirs")
    rows = await runners(stores.engine)
    assert rows["t-1"]["replica"] == "replica-a" and rows["t-1"]["owner"] == ALICE
    assert rows["t-2"]["replica"] == "replica-x"
    # mallory "settling" alice's task deletes nothing of hers either
    await writer.commit(Settlement(MALLORY, task("t-1", COMPLETED)))
    assert "t-1" in await runners(stores.engine)


async def test_runner_row_while_running_deleted_once_settled(
    writer: TaskWriter, stores: Stores
) -> None:
    before = datetime.now(UTC)
    await writer.commit(Settlement(ALICE, task("t-1", SUBMITTED), runner=RUNNER))
    row = (await runners(stores.engine))["t-1"]
    assert row == {
        "task_id": "t-1",
        "replica": "replica-a",
        "owner": ALICE,
        "principal": "alice",
        "tenant": "acme",
        "skill_id": "ping",
        "since": row["since"],
    }
    assert before - timedelta(seconds=1) <= row["since"] <= datetime.now(UTC)
    moved = Runner("replica-b", "alice", None, None)
    await writer.commit(Settlement(ALICE, task("t-1", WORKING), runner=moved))
    assert (await runners(stores.engine))["t-1"]["replica"] == "replica-b"
    assert (await runners(stores.engine))["t-1"]["tenant"] is None
    await writer.commit(Settlement(ALICE, task("t-1", INPUT_REQUIRED)))
    assert await runners(stores.engine) == {}
    # running again, then settled within one batch: the last state wins
    await asyncio.gather(
        writer.commit(Settlement(ALICE, task("t-1", WORKING), runner=RUNNER)),
        writer.commit(Settlement(ALICE, task("t-1", COMPLETED))),
        writer.commit(Settlement(ALICE, task("t-2", SUBMITTED), runner=moved)),
        writer.commit(Settlement(ALICE, task("t-2", WORKING), runner=RUNNER)),
    )
    assert set(await runners(stores.engine)) == {"t-2"}


async def test_a_first_write_deletes_no_runner_row_and_lands_as_any_other(
    kind: tuple[str, str], engine_for: Callable[[], AsyncEngine]
) -> None:
    """A blocking send's new task is written once, settled (``first_write``): it has no
    runner row, so its batch sends no DELETE of one, and no one waits on its id, so no
    replica is notified; the rows are those the same settlement gives without the hint,
    alone or batched with others' states."""
    hinted, plain = stores_on(engine_for()), stores_on(engine_for())
    statements = BatchStatements(hinted.tasks, kind[0], notify=True)
    for first_write in (True, False):
        sent = _statements(statements, [replace(settled("t-1"), first_write=first_write)])
        assert (statements.runner_delete in sent) is not first_write, sent
        if statements.notify is not None:  # (PostgreSQL)
            assert (statements.notify in sent) is not first_write, sent
    plan = [settled(f"t-{n}", n) for n in range(6)]
    plan.append(Settlement(ALICE, task("t-9", WORKING), runner=RUNNER))  # another's runner row
    for stores, hint in ((hinted, True), (plain, False)):
        writer = make_writer(kind, stores)
        await writer.start()
        batch = [replace(s, first_write=hint and s.runner is None) for s in plan]
        await asyncio.wait_for(asyncio.gather(*(writer.commit(s) for s in batch)), WAIT)
        await writer.stop()
    ids = [f"t-{n}" for n in (*range(6), 9)]
    assert await snapshot(hinted, ids) == await snapshot(plain, ids)
    assert set((await snapshot(hinted, ids))["runners"]) == {"t-9"}


def _statements(statements: BatchStatements, batch: list[Settlement]) -> list[Any]:
    """The statements ``batch_steps`` sends for ``batch``, every task row written."""
    sent: list[Any] = []
    steps = batch_steps(statements, batch)
    returned: set[str] | None = None
    with contextlib.suppress(StopIteration):
        while True:
            statement, _, _ = steps.send(returned)
            sent.append(statement)
            returned = {s.task.id for s in batch if s.task is not None}
    return sent


# --- ended tasks and transitions --------------------------------------------------------------

ENDED = [
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
]
EVERY_STATE = [SUBMITTED, WORKING, INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED, *ENDED]
PARKED = frozenset({INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED})


def over(
    task_id: str, state: TaskState, n: int, expect: frozenset[int] | None = None
) -> Settlement:
    """A later write of ``task_id`` with an audit row and a binding of its own."""
    return Settlement(
        ALICE,
        task(task_id, state, second=n, text=f"late {n}"),
        audit=(record(task_id, 100 + n, reason=f"late {n}"),),
        binding=binding(task_id, skill=f"late-{n}"),
        runner=RUNNER,
        expect=expect,
    )


@pytest.mark.parametrize("ended", ENDED, ids=TaskState.Name)
async def test_an_ended_task_is_never_replaced(
    writer: TaskWriter, stores: Stores, ended: TaskState
) -> None:
    """Whatever comes after a terminal state (any state, a transition, alone or in one batch
    with it) is refused whole: its commit raises and none of its rows is written."""
    first = Settlement(ALICE, task("t-1", ended), audit=(record("t-1"),), binding=binding("t-1"))
    await writer.commit(first)
    later = [over("t-1", state, n) for n, state in enumerate(EVERY_STATE, start=1)]
    later.append(over("t-1", WORKING, 99, expect=frozenset({ended, *PARKED})))
    outcomes = await asyncio.gather(*(writer.commit(s) for s in later), return_exceptions=True)
    assert all(isinstance(o, StaleTaskError) for o in outcomes), outcomes
    # the same within one batch: the ended state and what follows it, submitted together
    together = [Settlement(ALICE, task("t-2", WORKING), runner=RUNNER), over("t-2", ended, 0)]
    together += [over("t-2", state, n) for n, state in enumerate(EVERY_STATE, start=1)]
    outcomes = await asyncio.gather(*(writer.commit(s) for s in together), return_exceptions=True)
    assert outcomes[:2] == [None, None]
    assert all(isinstance(o, StaleTaskError) for o in outcomes[2:]), outcomes
    assert await stores.tasks.get("t-1", ctx(ALICE)) == task("t-1", ended)
    assert await stores.tasks.get("t-2", ctx(ALICE)) == task("t-2", ended, text="late 0")
    assert [r["reason"] for r in await stores.audit.query(task_id="t-1")] == ["call 0"]
    assert [r["reason"] for r in await stores.audit.query(task_id="t-2")] == ["late 0"]
    assert await stores.bindings.get("t-1", ALICE) == binding("t-1")
    assert await stores.bindings.get("t-2", ALICE) == binding("t-2", skill="late-0")
    assert await runners(stores.engine) == {}


@pytest.mark.parametrize("stored", EVERY_STATE, ids=TaskState.Name)
async def test_a_transition_replaces_only_the_states_it_expects(
    writer: TaskWriter, stores: Stores, stored: TaskState
) -> None:
    await writer.commit(Settlement(ALICE, task("t-1", stored), runner=RUNNER))
    claim = over("t-1", WORKING, 1, expect=PARKED)
    if stored in PARKED:
        await writer.commit(claim)
        assert await stores.tasks.get("t-1", ctx(ALICE)) == claim.task
        assert (await runners(stores.engine))["t-1"]["replica"] == "replica-a"
        assert [r["reason"] for r in await stores.audit.query(task_id="t-1")] == ["late 1"]
        return
    with pytest.raises(StaleTaskError):
        await writer.commit(claim)
    assert await stores.tasks.get("t-1", ctx(ALICE)) == task("t-1", stored)
    assert await stores.audit.query(task_id="t-1") == []
    assert await stores.bindings.get("t-1", ALICE) is None
    # a transition of a task that does not exist, or is another owner's, is refused too
    with pytest.raises(StaleTaskError):
        await writer.commit(over("t-none", WORKING, 1, expect=PARKED))
    with pytest.raises(StaleTaskError):
        await writer.commit(
            Settlement(MALLORY, task("t-1", WORKING, text="pwned"), expect=frozenset(EVERY_STATE))
        )
    assert await stores.tasks.get("t-1", ctx(ALICE)) == task("t-1", stored)


async def test_of_racing_transitions_on_two_writers_exactly_one_wins(
    kind: tuple[str, str], stores: Stores, engine_for: Callable[[], AsyncEngine]
) -> None:
    """Two writers on one database (two replicas): of many claims of one parked task, sent
    at once through both and among ordinary settlements, one wins; the rest write nothing."""
    other = stores_on(_same_database(stores.engine))
    writers = [make_writer(kind, stores), make_writer(kind, other)]
    for each in writers:
        await each.start()
    try:
        await writers[0].commit(Settlement(ALICE, task("t-1", INPUT_REQUIRED)))
        claims = [over("t-1", WORKING, n, expect=PARKED) for n in range(12)]
        noise = [settled(f"n-{n}", n) for n in range(12)]
        sent = [writers[n % 2].commit(s) for n, s in enumerate(claims)]
        sent += [writers[n % 2].commit(s) for n, s in enumerate(noise)]
        outcomes = await asyncio.wait_for(asyncio.gather(*sent, return_exceptions=True), WAIT)
    finally:
        for each in writers:
            await each.stop()
        await other.engine.dispose()
    won = [n for n, outcome in enumerate(outcomes[:12]) if outcome is None]
    assert len(won) == 1, outcomes
    assert all(isinstance(o, StaleTaskError) for n, o in enumerate(outcomes[:12]) if n not in won)
    assert outcomes[12:] == [None] * 12
    assert await stores.tasks.get("t-1", ctx(ALICE)) == claims[won[0]].task
    assert [r["reason"] for r in await stores.audit.query(task_id="t-1")] == [f"late {won[0]}"]
    assert set(await runners(stores.engine)) == {"t-1"}


# --- isolation --------------------------------------------------------------------------------


def bad_items(kind: tuple[str, str]) -> dict[str, Settlement]:
    """Settlements the database (or its driver) refuses, by name."""
    bad = {
        "naive ts": Settlement(
            ALICE, task("bad-ts", COMPLETED), audit=(record("bad-ts", ts=datetime(2026, 1, 1)),)
        ),
        "unserializable": Settlement(
            ALICE, binding=Binding("bad-js", ALICE, Phase.BOUND, arguments={"x": object()})
        ),
    }
    if kind[0] == "postgresql":
        bad["nul"] = Settlement(
            ALICE, task("bad-nul", COMPLETED), audit=(record("bad-nul", principal="a\x00b"),)
        )
        bad["oversize"] = Settlement(
            ALICE, task("bad-long", COMPLETED), audit=(record("bad-long", decision="x" * 9),)
        )
        bad["long id"] = Settlement(ALICE, task("x" * 37, COMPLETED))
    return bad


async def test_a_bad_settlement_fails_only_itself(
    writer: TaskWriter, stores: Stores, kind: tuple[str, str]
) -> None:
    bad = bad_items(kind)
    good = [settled(f"ok-{n}", n) for n in range(10)]
    batch = good[:5] + list(bad.values()) + good[5:]
    results = await asyncio.wait_for(
        asyncio.gather(*(writer.commit(s) for s in batch), return_exceptions=True), WAIT
    )
    outcome = dict(zip(map(id, batch), results, strict=True))
    for s in good:
        assert outcome[id(s)] is None
        assert s.task is not None
        assert await stores.tasks.get(s.task.id, ctx(ALICE)) == s.task
    for name, s in bad.items():
        assert isinstance(outcome[id(s)], Exception), name
        if s.task is not None:  # nothing of it was written: its task row went with its audit
            assert await stores.tasks.get(s.task.id, ctx(ALICE)) is None, name
    assert writer.stats.failures == len(bad)
    assert writer.stats.settlements == len(good)
    assert writer.stats.isolations >= 1
    assert len(await stores.audit.query(limit=1000)) == 2 * len(good)


def hostile(kind: tuple[str, str]) -> list[Settlement]:
    """Settlements an attacker shapes: NUL, separators, huge, many rows, odd ids and owners."""
    huge = "x" * 2_000_000
    items = [
        Settlement(ALICE, task("nul-text", COMPLETED, text="a\x00b"), binding=binding("nul-text")),
        Settlement(
            ALICE, task("nul-audit", COMPLETED), audit=(record("nul-audit", principal="a\x00b"),)
        ),
        Settlement("acme:a\x00lice", task("nul-owner", COMPLETED)),
        Settlement(
            ALICE,
            task("seps", COMPLETED, text="\u2028\u2029\x1f\x1e\u202e\U0001f600;--'\""),
            audit=(record("seps", reason="'; DROP TABLE tasks; --\u2028"),),
        ),
        Settlement(ALICE, task("huge", COMPLETED, artifacts=3, text=huge)),
        Settlement(
            ALICE, task("rows", COMPLETED), audit=tuple(record("rows", n) for n in range(2000))
        ),
        Settlement(ALICE, task("a/b?c#d%25 :", COMPLETED)),
        Settlement(ALICE, task("x" * 37, COMPLETED)),
        Settlement(
            ALICE, task("surrogate", COMPLETED), audit=(record("surrogate", reason="\ud800"),)
        ),
        Settlement(
            ALICE,
            binding=Binding(
                "deep",
                ALICE,
                Phase.ARGUMENTS,
                None,
                (),
                {"k\x00\u2028": [[{"a": [1.5, None, True]}]] * 50},
                "\x00",
            ),
        ),
        Settlement(
            ALICE, task("long-reason", COMPLETED), audit=(record("long-reason", reason="r" * 256),)
        ),
    ]
    return items


def task_ids_of(settlement: Settlement) -> set[str]:
    ids = {r.task_id for r in settlement.audit if r.task_id}
    if settlement.task is not None:
        ids.add(settlement.task.id)
    if settlement.binding is not None:
        ids.add(settlement.binding.task_id)
    return ids


async def test_hostile_settlements_fail_or_land_as_the_stores_own_writes(
    kind: tuple[str, str], engine_for: Callable[[], AsyncEngine]
) -> None:
    """Differential: what the reference writer stores, ours stores identically, in one batch;
    what the database refuses through the stores fails ours too, and leaves nothing behind."""
    ours, theirs = stores_on(engine_for()), stores_on(engine_for())
    writer, reference = make_writer(kind, ours), theirs.reference()
    await writer.start()
    items = hostile(kind)
    expected: list[BaseException | None] = []
    for s in items:
        try:
            await reference.commit(s)
        except Exception as exc:
            expected.append(exc)
        else:
            expected.append(None)
    got = await asyncio.wait_for(
        asyncio.gather(*(writer.commit(s) for s in items), return_exceptions=True), WAIT
    )
    await writer.stop()
    for s, want, have in zip(items, expected, got, strict=True):
        assert (want is None) == (have is None), (task_ids_of(s), want, have)
        if have is not None:
            assert isinstance(have, SQLAlchemyError | UnicodeError | TypeError | ValueError), have
    ok = [s for s, have in zip(items, got, strict=True) if have is None]
    failed = [s for s, have in zip(items, got, strict=True) if have is not None]
    assert ok and failed  # both kinds are exercised on every backend
    ok_ids = sorted(set().union(*map(task_ids_of, ok)))
    mine = await snapshot(ours, ok_ids)
    reference_view = await snapshot(theirs, ok_ids)
    good = set(ok_ids)
    reference_view["audit"] = [r for r in reference_view["audit"] if r["task_id"] in good]
    reference_view["list_tasks"] = [t for t in reference_view["list_tasks"] if t.id in good]
    reference_view["list"] = [t.id for t in reference_view["list_tasks"]]
    reference_view["runners"] = {}
    assert mine == reference_view
    async with ours.engine.connect() as connection:  # by id: a NUL owner cannot be asked for
        stored = set((await connection.execute(select(ours.tasks.table.c.id))).scalars())
        bound = set((await connection.execute(select(task_binding.c.task_id))).scalars())
    assert stored == {s.task.id for s in ok if s.task is not None}
    assert bound == {s.binding.task_id for s in ok if s.binding is not None}
    for s in failed:  # nothing of a refused settlement was written
        for task_id in task_ids_of(s) - good:
            assert await ours.audit.query(task_id=task_id) == []


class LimitedSqliteWriter(SqliteThreadWriter):
    """The thread writer on a connection whose SQLite refuses values over 1 MB (SQLITE_TOOBIG,
    what any SQLite says past its compiled limit, 1 GB by default)."""

    def _pragmas(self, connection: Any, record: Any) -> None:
        super()._pragmas(connection, record)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 1_000_000)


async def test_sqlite_refuses_an_oversize_value_and_only_its_settlement_fails(
    stores: Stores, kind: tuple[str, str]
) -> None:
    if kind != ("sqlite", "thread"):
        pytest.skip("the length limit is set on the thread writer's own connection")
    writer = LimitedSqliteWriter(stores.engine, stores.tasks)
    await writer.start()
    big = Settlement(ALICE, task("big", COMPLETED, text="x" * 1_100_000), audit=(record("big"),))
    batch = [settled(f"ok-{n}", n) for n in range(5)] + [big] + [settled("ok-9", 9)]
    results = await asyncio.gather(*(writer.commit(s) for s in batch), return_exceptions=True)
    await writer.stop()
    assert [r is None for r in results] == [True] * 5 + [False, True]
    assert "too big" in str(results[5])
    assert await stores.tasks.get("big", ctx(ALICE)) is None
    assert await stores.audit.query(task_id="big") == []
    assert await stores.tasks.get("ok-9", ctx(ALICE)) is not None


async def test_states_of_one_task_commit_in_submission_order(
    kind: tuple[str, str], stores: Stores
) -> None:
    writer = make_writer(kind, stores, max_batch=3)  # many batches, states split across them
    await writer.start()
    states = [
        Settlement(ALICE, task("t-1", WORKING, second=n, artifacts=n), runner=RUNNER)
        for n in range(40)
    ]
    states.append(Settlement(ALICE, task("t-1", COMPLETED, second=99, artifacts=40)))
    states += [Settlement(ALICE, task("t-2", WORKING, second=n), runner=RUNNER) for n in range(10)]
    await asyncio.wait_for(asyncio.gather(*(writer.commit(s) for s in states)), WAIT)
    assert writer.stats.commits >= len(states) // 3
    assert await stores.tasks.get("t-1", ctx(ALICE)) == task(
        "t-1", COMPLETED, second=99, artifacts=40
    )
    assert await stores.tasks.get("t-2", ctx(ALICE)) == task("t-2", WORKING, second=9)
    assert set(await runners(stores.engine)) == {"t-2"}
    await writer.stop()


async def test_writes_beside_the_async_stores_on_the_same_database(
    writer: TaskWriter, stores: Stores
) -> None:
    """The writer and the engine's own writers (bindings, audit, task saves) share the file:
    neither fails on the other's lock."""
    ours = [writer.commit(settled(f"w-{n}", n)) for n in range(100)]
    theirs = [stores.bindings.put(binding(f"s-{n}")) for n in range(30)]
    theirs += [stores.audit._append([record(f"s-{n}", n)]) for n in range(30)]
    theirs += [stores.tasks.save(task(f"s-{n}", WORKING), ctx(ALICE)) for n in range(30)]
    await asyncio.wait_for(asyncio.gather(*ours, *theirs), WAIT)
    assert len(await stores.audit.query(limit=1000)) == 230
    assert await stores.tasks.get("s-29", ctx(ALICE)) is not None
    assert await stores.tasks.get("w-99", ctx(ALICE)) is not None


async def test_a_cancelled_caller_leaves_the_writer_working(
    writer: TaskWriter, stores: Stores
) -> None:
    waiting = [asyncio.ensure_future(writer.commit(settled(f"t-{n}", n))) for n in range(50)]
    await asyncio.sleep(0)
    for w in waiting[::2]:
        w.cancel()
    await asyncio.wait(waiting)
    assert all(w.cancelled() or w.exception() is None for w in waiting)
    await asyncio.wait_for(writer.commit(settled("after")), WAIT)
    assert await stores.tasks.get("after", ctx(ALICE)) is not None
    assert await stores.tasks.get("t-0", ctx(ALICE)) is not None  # queued before it was cancelled


async def test_commits_racing_stop_either_land_or_raise(
    kind: tuple[str, str], stores: Stores
) -> None:
    writer = make_writer(kind, stores)
    await writer.start()
    early = [asyncio.ensure_future(writer.commit(settled(f"e-{n}", n))) for n in range(50)]
    stopping = asyncio.ensure_future(writer.stop())
    late = [asyncio.ensure_future(writer.commit(settled(f"l-{n}", n))) for n in range(50)]
    await asyncio.wait_for(asyncio.wait([*early, stopping, *late]), WAIT)
    assert all(e.exception() is None for e in early)
    assert all(isinstance(x.exception(), RuntimeError) for x in late)
    assert await stores.tasks.get("e-49", ctx(ALICE)) is not None
    assert await stores.tasks.get("l-0", ctx(ALICE)) is None


# --- stop and failure -------------------------------------------------------------------------


async def test_stop_drains_then_commit_raises(kind: tuple[str, str], stores: Stores) -> None:
    writer = make_writer(kind, stores)
    await writer.start()
    await writer.start()  # idempotent
    pending = [asyncio.ensure_future(writer.commit(settled(f"t-{n}", n))) for n in range(100)]
    await asyncio.sleep(0)  # the commits are submitted, not written
    await asyncio.wait_for(writer.stop(), WAIT)
    assert all(p.done() and p.exception() is None for p in pending)
    assert len(await stores.audit.query(limit=1000)) == 200
    with pytest.raises(RuntimeError):
        await writer.commit(settled("late"))
    assert await stores.tasks.get("late", ctx(ALICE)) is None
    await writer.stop()  # idempotent


async def test_a_database_error_reaches_every_caller(writer: TaskWriter, stores: Stores) -> None:
    async with stores.engine.begin() as connection:
        await connection.execute(text("DROP TABLE task_binding"))
    results = await asyncio.wait_for(
        asyncio.gather(
            *(writer.commit(settled(f"t-{n}", n)) for n in range(20)), return_exceptions=True
        ),
        WAIT,
    )
    assert all(isinstance(r, Exception) for r in results)
    # the writer lives on: a settlement that needs no binding is written
    await asyncio.wait_for(writer.commit(Settlement(ALICE, task("t-x", COMPLETED))), WAIT)
    assert await stores.tasks.get("t-x", ctx(ALICE)) is not None


class Crash(BaseException):
    """Not an Exception: nothing on the way catches it, as with a bug in the writer itself."""


async def test_a_crashed_writer_fails_its_callers_and_refuses_more(
    kind: tuple[str, str], stores: Stores
) -> None:
    writer = make_writer(kind, stores)

    def crash(*_: Any) -> None:
        raise Crash("boom")

    await writer.start()
    await writer.commit(settled("before"))
    writer._write = crash  # type: ignore[attr-defined,method-assign]
    results = await asyncio.wait_for(
        asyncio.gather(
            *(writer.commit(settled(f"t-{n}")) for n in range(10)), return_exceptions=True
        ),
        WAIT,
    )
    assert all(isinstance(r, RuntimeError) for r in results), results
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(writer.commit(settled("after")), WAIT)
    await asyncio.wait_for(writer.stop(), WAIT)


async def test_task_writer_picks_by_engine(stores: Stores, kind: tuple[str, str]) -> None:
    chosen = task_writer(stores.engine, stores.tasks)
    expected = SqliteThreadWriter if kind[0] == "sqlite" else AsyncGroupWriter
    assert type(chosen) is expected


async def test_the_sqlite_writer_syncs_every_commit_in_wal(
    stores: Stores, kind: tuple[str, str]
) -> None:
    """WAL with synchronous=FULL: a commit survives power loss, not only a killed process."""
    if kind != ("sqlite", "thread"):
        pytest.skip("the thread writer's own connection")
    writer = SqliteThreadWriter(stores.engine, stores.tasks)
    await writer.commit(settled("t-1"))  # starts it
    await writer.stop()
    assert writer.pragmas == {"journal_mode": "wal", "synchronous": 2}  # 2: FULL


KILLED_WRITER = """
import asyncio, sys
from agent.storage.engine import make_engine
from agent.storage.group_commit import AsyncGroupWriter, SqliteThreadWriter
from agent.storage.settlement import Settlement
from agent.storage.task_store import UpsertDatabaseTaskStore
from tests.core.storage.test_settlement_writer import ALICE, COMPLETED, record, task

async def main(url, kind):
    engine = make_engine(url)
    tasks = UpsertDatabaseTaskStore(engine)
    writer = (SqliteThreadWriter if kind == "thread" else AsyncGroupWriter)(engine, tasks)
    await writer.start()

    async def caller(n):
        for k in range(100_000):
            task_id = f"t-{n}-{k}"
            settlement = Settlement(ALICE, task(task_id, COMPLETED), audit=(record(task_id),))
            await writer.commit(settlement)
            print(task_id, flush=True)  # the caller has seen it

    await asyncio.gather(*(caller(n) for n in range(16)))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def test_what_a_caller_saw_survives_a_killed_process(
    kind: tuple[str, str], engine_for: Callable[[], AsyncEngine], tmp_path: Path
) -> None:
    """SIGKILL the writer's process mid-load: every settlement a caller was answered for is
    in the database, with its audit row."""
    engine = engine_for()
    script = tmp_path / "killed_writer.py"
    script.write_text(KILLED_WRITER)
    url = engine.url.render_as_string(hide_password=False)
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(script),
        url,
        kind[1],
        stdout=asyncio.subprocess.PIPE,
        env=os.environ | {"PYTHONPATH": str(Path.cwd())},
    )
    assert child.stdout is not None
    seen: list[str] = []
    try:
        while len(seen) < 500:
            line = await asyncio.wait_for(child.stdout.readline(), WAIT)
            assert line, "the writer process ended early"
            seen.append(line.decode().strip())
    finally:
        child.kill()
        await child.wait()
    seen += [line.decode().strip() for line in (await child.stdout.read()).splitlines()]
    stores = stores_on(engine)
    async with engine.connect() as connection:
        stored = set((await connection.execute(select(stores.tasks.table.c.id))).scalars())
        audited = set((await connection.execute(select(principal_audit.c.task_id))).scalars())
    assert set(seen) <= stored
    assert set(seen) <= audited
    assert stored == audited  # never a task row without its audit row, nor the reverse


async def test_a_writer_stopped_before_it_started_refuses_commits(
    kind: tuple[str, str], stores: Stores
) -> None:
    writer = make_writer(kind, stores)
    await writer.stop()
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(writer.commit(settled("t-1")), WAIT)
    assert await stores.tasks.get("t-1", ctx(ALICE)) is None


async def test_the_store_writer_on_the_in_memory_stores() -> None:
    """The reference writer on the in-memory seam the server's unit tests stand on."""
    tasks, audit, bindings = InMemoryTaskStore(), InMemoryAuditLog(), InMemoryBindingStore()
    writer = StoreTaskWriter(tasks, audit, bindings)
    await writer.start()
    await asyncio.gather(
        writer.commit(Settlement(ALICE, task("t-1", WORKING), runner=RUNNER)),
        writer.commit(settled("t-1", 3)),
        writer.commit(Settlement(MALLORY, audit=(record("t-1", 4, principal="mallory"),))),
    )
    assert await tasks.get("t-1", ctx(ALICE)) == settled("t-1", 3).task
    assert await tasks.get("t-1", ctx(MALLORY)) is None
    assert [r["reason"] for r in await audit.query()] == ["call 4", "call 3", "call 3"]
    assert await bindings.get("t-1", ALICE) == binding("t-1")
    assert writer.stats == WriterStats(commits=3, settlements=3, failures=0, isolations=0)
    await writer.stop()
    with pytest.raises(RuntimeError):
        await writer.commit(settled("t-2"))
