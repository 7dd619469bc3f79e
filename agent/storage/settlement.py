"""Settled task states as single durable writes: what a writer is handed, and its contract.

A request's first acknowledged state and its settled state (terminal or input-required) must
be in the database before the caller sees them, and the invocation's audit rows with its
settled state, in one transaction. ``Settlement`` is one such write; a ``TaskWriter`` makes it
durable. The database writers (agent/storage/group_commit.py, ``task_writer``) share one
transaction among the settlements pending at once; ``StoreTaskWriter`` here writes through the
store interfaces one by one, for in-memory stores and as the reference semantics.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types import Artifact, Task, TaskState
from google.protobuf import json_format

from agent.base.errors import NetagentError
from agent.storage.audit import AuditLog, AuditRecord
from agent.storage.bindings import Binding, BindingStore

RUNNING_STATES = frozenset({TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING})
"""A task in these states has a runner (a ``task_runner`` row); in any other it has none."""
PARKED_STATES = frozenset({TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED})
"""A task in these states waits for its caller: no one runs it until a follow-up claims it."""
ENDED_STATES = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
"""Terminal states: once one is durable (and so may have been acknowledged), no write replaces
it."""

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
