"""Settled task states as single durable writes: what a writer is handed, its contract, and
the statements that write a batch of them.

A request's first acknowledged state and its settled state (terminal or input-required) must
be in the database before the caller sees them, and the invocation's audit rows with its
settled state, in one transaction. ``Settlement`` is one such write; a ``TaskWriter`` makes it
durable. The database writers (agent/storage/group_commit.py, ``task_writer``) share one
transaction among the settlements pending at once, with the statements built here;
``StoreTaskWriter`` writes through the store interfaces one by one, for in-memory stores and as
the reference semantics.

``batch_steps`` yields (statement, parameters, wants ids) and is sent back the ids a step
returned; ``run_sync`` and ``run_async`` drive it on a sync or an async connection, so the
SQLite writer thread and the asyncio writer run exactly the same statements. A batch costs
one executemany per table, whatever its size, and gives the same rows as writing its
settlements one after another:

- task rows: one upsert per task is enough for consecutive saves of one owner (each replaces
  the whole row under the same owner condition), so only the last of such a run is written.
  A task saved under another owner in between (which must change nothing if the row is not
  theirs) starts a second layer, written by a second statement: PostgreSQL refuses an upsert
  that touches one row twice.
- runner rows follow the last settlement of each task whose task row was written (RETURNING
  says which were; a row of another owner is not, and neither is its runner row); a task's
  first write (``Settlement.first_write``) has no runner row to delete.
- bindings: ``put`` replaces whoever wrote before, so the last one per task is written.
- audit rows: all of them, in order (append-only).

A settlement refused (``Settlement.may_replace``: its owner's task row has ended, found by the
upsert's condition leaving that row alone, or ended earlier in the same batch) writes none of
its rows; the others of the batch are written as if it were not there.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types import Artifact, Task, TaskState
from google.protobuf import json_format
from sqlalchemy import Connection, Executable, bindparam, delete, text
from sqlalchemy.ext.asyncio import AsyncConnection

from agent.base.errors import NetagentError
from agent.storage.audit import AuditLog, AuditRecord
from agent.storage.bindings import Binding, BindingStore, binding_row
from agent.storage.engine import dialect_module
from agent.storage.schema import principal_audit, task_binding, task_runner
from agent.storage.task_store import ENDED_STATES, RUNNING_STATES, UpsertDatabaseTaskStore

TASK_CHANNEL = "netagent_task"
"""PostgreSQL: each transaction that writes task rows notifies their ids on this channel
(``BatchStatements.notify``); the cancel relay's connection listens to it."""


class StaleTaskError(NetagentError):
    """A settlement refused because the stored task is not in a state it may replace: the task
    has ended, or (a transition) another request moved it first. Nothing of it was written."""

    def __init__(self, task_id: str) -> None:
        super().__init__("the stored task has moved on; nothing was written")
        self.task_id = task_id


@dataclass(frozen=True)
class Runner:
    """Which process runs a task, and for whom: its ``task_runner`` row."""

    replica: str
    principal: str
    tenant: str | None
    skill_id: str | None


@dataclass(frozen=True)
class Settlement:
    """One durable write of an invocation.

    ``task`` is upserted for ``owner`` (a row of another owner is left alone, and so is that
    task's runner row); ``audit`` rows are appended in order; ``binding`` replaces the task's
    binding; ``runner`` is recorded while ``task`` is SUBMITTED or WORKING, and the runner row
    is deleted when ``task`` is in any other state. All in one transaction. ``printed``: some
    of ``task``'s artifacts as the answer printed them, by id, which the task's row takes as
    they are instead of walking their Structs again (``UpsertDatabaseTaskStore.row``).
    ``sparse``: ids of artifacts of ``task`` that are only there by id and name (no one read
    their Struct while the task ran); their whole form is in ``printed`` (``whole_task``).
    ``first_write``: the task's first write, its id new and seen by no one (a blocking send's
    new task): no runner row of it exists, so a settled one deletes none, and no one on any
    replica waits on its changes, so none is told of it (``TASK_CHANNEL``): statements less.

    A stored task in a terminal state is never replaced: a settlement whose task it would
    replace is refused whole (none of its rows is written; its ``commit`` raises
    ``StaleTaskError``). ``expect``: a transition, which replaces the stored task only while it
    is in one of these states (its owner's, existing, and not ended: a terminal state in
    ``expect`` is ignored), else is refused the same way; the
    writers commit a transition in a transaction of its own, so exactly one of several
    requests racing for one task wins, on any number of processes.
    """

    owner: str
    task: Task | None = None
    audit: Sequence[AuditRecord] = ()
    binding: Binding | None = None
    runner: Runner | None = None
    printed: Mapping[str, dict[str, Any]] = field(default_factory=dict)
    sparse: frozenset[str] = frozenset()
    expect: frozenset[int] | None = None
    first_write: bool = False

    def may_replace(self, stored: Task | None) -> bool:
        """Whether this settlement's task may replace ``stored`` (the owner's task, or None)."""
        if stored is not None and stored.status.state in ENDED_STATES:
            return False
        return self.expect is None or (stored is not None and stored.status.state in self.expect)

    def whole_task(self) -> Task | None:
        """``task`` with its sparse artifacts whole, for a store that walks every Struct."""
        if self.task is None or not self.sparse:
            return self.task
        task = Task()
        task.CopyFrom(self.task)
        for artifact in task.artifacts:
            if artifact.artifact_id in self.sparse:
                whole = Artifact()
                json_format.ParseDict(self.printed[artifact.artifact_id], whole)
                artifact.CopyFrom(whole)
        return task


@dataclass
class WriterStats:
    """What a writer has done: for the benchmark and the tests."""

    commits: int = 0  # transactions committed
    settlements: int = 0  # settlements made durable
    failures: int = 0  # settlements whose commit() raised
    isolations: int = 0  # batches that failed and were retried one settlement at a time


class TaskWriter(ABC):
    """Makes settlements durable; ``commit`` returns once its settlement is.

    Settlements of one task commit in the order their ``commit`` calls were made. A settlement
    that cannot be written fails only its own ``commit`` (with the database's error); one the
    stored task refuses (``Settlement.may_replace``) raises ``StaleTaskError``.
    """

    @abstractmethod
    async def start(self) -> None:
        """Get ready to write (idempotent)."""

    @abstractmethod
    async def stop(self) -> None:
        """Commit everything already submitted, then stop; ``commit`` raises afterwards."""

    @abstractmethod
    async def commit(self, settlement: Settlement) -> None:
        """Return once ``settlement`` is durable; raise if it could not be written."""

    @property
    @abstractmethod
    def stats(self) -> WriterStats:
        """Counts so far."""


class OwnerUser(User):
    """The SDK user whose ``user_name`` (what the owner resolver reads) is ``owner``."""

    def __init__(self, owner: str) -> None:
        self._owner = owner

    @property
    def is_authenticated(self) -> bool:
        """An owner was resolved from a verified caller."""
        return True

    @property
    def user_name(self) -> str:
        """The task-store owner."""
        return self._owner


class StoreTaskWriter(TaskWriter):
    """One settlement at a time through the stores' own writes; ``runner`` is ignored.

    Not one transaction (the stores commit separately): for in-memory stores in unit tests,
    and as the reference the database writers are compared with.
    """

    def __init__(self, tasks: TaskStore, audit: AuditLog, bindings: BindingStore) -> None:
        self._tasks, self._audit, self._bindings = tasks, audit, bindings
        self._lock = asyncio.Lock()  # one at a time: the submission order is the write order
        self._stopped = False
        self._stats = WriterStats()

    async def start(self) -> None:
        """Nothing to start."""

    async def stop(self) -> None:
        """Wait for the commit in progress; refuse new ones."""
        self._stopped = True
        async with self._lock:
            pass

    async def commit(self, settlement: Settlement) -> None:
        """Task, then audit rows, then binding, each through its store."""
        if self._stopped:
            raise RuntimeError("the task writer is stopped")
        async with self._lock:
            try:
                task = settlement.whole_task()
                if task is not None:
                    context = ServerCallContext(user=OwnerUser(settlement.owner))
                    if not settlement.may_replace(await self._tasks.get(task.id, context)):
                        raise StaleTaskError(task.id)
                    await self._tasks.save(task, context)
                if settlement.audit:
                    await self._audit._append(list(settlement.audit))
                if settlement.binding is not None:
                    await self._bindings.put(settlement.binding)
            except Exception:
                self._stats.failures += 1
                raise
            self._stats.commits += 1
            self._stats.settlements += 1

    @property
    def stats(self) -> WriterStats:
        """Counts so far (each settlement is its own commit)."""
        return self._stats


Step = tuple[Executable, list[dict[str, Any]] | dict[str, Any], bool]
Steps = Generator[Step, set[str] | None, set[int]]
"""Statements to run; returns the indices of the batch's refused settlements."""


@dataclass
class _Run:
    """Consecutive settlements of one task and one owner: only the last one's row is written."""

    owner: str
    indices: list[int] = field(default_factory=list)


class BatchStatements:
    """The statements of one dialect (built once per writer: SQLAlchemy caches their SQL)."""

    def __init__(self, tasks: UpsertDatabaseTaskStore, dialect: str, notify: bool = False) -> None:
        """``notify`` (PostgreSQL): each transaction notifies the ids of the task rows it wrote
        on ``TASK_CHANNEL``, delivered when it commits (what subscribers on replicas wait on)."""
        self.tasks = tasks
        self.notify = (
            text(f"SELECT pg_notify('{TASK_CHANNEL}', id) FROM unnest(CAST(:ids AS text[])) AS id")
            if notify and dialect == "postgresql"
            else None
        )
        self.task_upsert = tasks.upsert().returning(tasks.table.c.id)
        insert = dialect_module(dialect).insert
        runner = insert(task_runner)
        self.runner_upsert = runner.on_conflict_do_update(
            index_elements=[task_runner.c.task_id],
            set_={c.name: runner.excluded[c.name] for c in task_runner.c if c.name != "task_id"},
        )
        self.runner_delete = delete(task_runner).where(
            task_runner.c.task_id.in_(bindparam("ids", expanding=True))
        )
        self.audit_insert = principal_audit.insert()
        binding = insert(task_binding)
        self.binding_upsert = binding.on_conflict_do_update(
            index_elements=[task_binding.c.task_id],
            set_={c.name: binding.excluded[c.name] for c in task_binding.c if c.name != "task_id"},
        )


def batch_steps(statements: BatchStatements, batch: Sequence[Settlement]) -> Steps:
    """The batch's statements in order; send each step the ids it returned (or None).

    Returns the indices of the settlements refused (``Settlement.may_replace``): none of
    their rows is written. A transition (``Settlement.expect``) comes in a batch of its own.
    """
    if any(s.expect is not None for s in batch):
        if len(batch) != 1:
            raise ValueError("a transition is written in a batch of its own")
        return (yield from _transition_steps(statements, batch[0]))
    now = datetime.now(UTC)
    runs: dict[str, list[_Run]] = {}
    refused: set[int] = set()
    for index, settlement in enumerate(batch):
        if settlement.task is None:
            continue
        task_runs = runs.setdefault(settlement.task.id, [])
        if task_runs and task_runs[-1].owner == settlement.owner:
            last = batch[task_runs[-1].indices[-1]].task
            assert last is not None
            if last.status.state in ENDED_STATES:  # ended earlier in this batch
                refused.add(index)
                continue
        else:
            task_runs.append(_Run(settlement.owner))
        task_runs[-1].indices.append(index)
    written: set[int] = set()
    unwritten: list[_Run] = []
    depth = max((len(r) for r in runs.values()), default=0)
    for layer in range(depth):
        layer_runs = [r[layer] for r in runs.values() if len(r) > layer]
        rows = [_task_row(statements.tasks, batch[run.indices[-1]]) for run in layer_runs]
        ids = yield statements.task_upsert, rows, True
        for run, row in zip(layer_runs, rows, strict=True):
            if ids is not None and row["id"] in ids:
                written.update(run.indices)
            else:
                unwritten.append(run)
    if statements.notify is not None:
        changed = _seen(batch, written)
        if changed:
            yield statements.notify, {"ids": changed}, False
    if unwritten:  # the owner's own row, left alone: it has ended (another owner's: ignored)
        rows = [_task_row(statements.tasks, batch[run.indices[-1]]) for run in unwritten]
        ended = yield statements.tasks.owned(rows), {}, True
        for run, row in zip(unwritten, rows, strict=True):
            if ended is not None and row["id"] in ended:
                refused.update(run.indices)
    yield from _side_rows(statements, batch, written, refused, now)
    return refused


def _seen(batch: Sequence[Settlement], written: set[int]) -> list[str]:
    """The written tasks someone may wait on: all but first writes (their ids are unseen)."""
    seen = {s.task.id for i in written if (s := batch[i]).task is not None and not s.first_write}
    return sorted(seen)


def _transition_steps(statements: BatchStatements, settlement: Settlement) -> Steps:
    """One conditional UPDATE; only if it changed the row, the settlement's other rows."""
    assert settlement.task is not None and settlement.expect is not None
    row = _task_row(statements.tasks, settlement)
    expect = {TaskState.Name(state) for state in settlement.expect - ENDED_STATES}
    ids = yield statements.tasks.transition(row, expect), {}, True
    if not ids:
        return {0}
    if statements.notify is not None:
        yield statements.notify, {"ids": [row["id"]]}, False
    yield from _side_rows(statements, [settlement], {0}, set(), datetime.now(UTC))
    return set()


def _side_rows(
    statements: BatchStatements,
    batch: Sequence[Settlement],
    written: set[int],
    refused: set[int],
    now: datetime,
) -> Generator[Step, set[str] | None, None]:
    """Runner rows of the written tasks; audit rows and bindings of all but the refused."""
    upserts, deletes = _runner_rows(batch, written, now)
    if upserts:
        yield statements.runner_upsert, upserts, False
    if deletes:
        yield statements.runner_delete, {"ids": deletes}, False
    kept = [s for index, s in enumerate(batch) if index not in refused]
    audit = [record.as_row() for settlement in kept for record in settlement.audit]
    if audit:
        yield statements.audit_insert, audit, False
    kept_bindings = [s.binding for s in kept if s.binding is not None]
    bindings = {binding.task_id: binding_row(binding, now) for binding in kept_bindings}
    if bindings:
        yield statements.binding_upsert, list(bindings.values()), False


def _task_row(tasks: UpsertDatabaseTaskStore, settlement: Settlement) -> dict[str, Any]:
    task = settlement.task if tasks.takes_printed else settlement.whole_task()
    assert task is not None
    return tasks.row(task, settlement.owner, settlement.printed)


def _runner_rows(
    batch: Sequence[Settlement], written: set[int], now: datetime
) -> tuple[list[dict[str, Any]], list[str]]:
    """Each written task's last runner action: its row while running, a delete once settled."""
    last: dict[str, dict[str, Any] | None] = {}
    for index in sorted(written):
        settlement = batch[index]
        task, runner = settlement.task, settlement.runner
        assert task is not None
        if task.status.state not in RUNNING_STATES:
            if not settlement.first_write:  # (a task's first write has no runner row)
                last[task.id] = None
        elif runner is not None:
            last[task.id] = {
                "task_id": task.id,
                "replica": runner.replica,
                "owner": settlement.owner,
                "principal": runner.principal,
                "tenant": runner.tenant,
                "skill_id": runner.skill_id,
                "since": now,
            }
    upserts = [row for row in last.values() if row is not None]
    return upserts, [task_id for task_id, row in last.items() if row is None]


def run_sync(connection: Connection, steps: Steps) -> set[int]:
    """Execute ``steps`` on a sync connection (inside the caller's transaction); the refused."""
    ids: set[str] | None = None
    try:
        while True:
            statement, parameters, wants_ids = steps.send(ids)
            result = connection.execute(statement, parameters)
            ids = set(result.scalars()) if wants_ids else None
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def run_async(connection: AsyncConnection, steps: Steps) -> set[int]:
    """Execute ``steps`` on an async connection (inside the caller's transaction); the refused."""
    ids: set[str] | None = None
    try:
        while True:
            statement, parameters, wants_ids = steps.send(ids)
            result = await connection.execute(statement, parameters)
            ids = set(result.scalars()) if wants_ids else None
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
