"""Settlements: the durable writes of an invocation, and the writer interface that commits them.

PROVISIONAL (handler branch): the group-committing database writers replace this file's
StoreTaskWriter-only form when they land.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types import Task

from agent.storage.audit import AuditLog, AuditRecord
from agent.storage.bindings import Binding, BindingStore


@dataclass(frozen=True)
class Runner:
    """Which process runs a task whose id has escaped, and whose it is (for its audit row)."""

    replica: str
    principal: str
    tenant: str | None
    skill_id: str | None


@dataclass(frozen=True)
class Settlement:
    """One durable write of an invocation."""

    owner: str
    task: Task | None = None
    audit: Sequence[AuditRecord] = ()
    binding: Binding | None = None
    runner: Runner | None = None


@dataclass
class WriterStats:
    """What a writer has done, for benchmarks and tests."""

    commits: int = 0
    settlements: int = 0
    failures: int = 0


class TaskWriter(ABC):
    """Commits settlements; ``commit`` returns once its settlement is durable."""

    @abstractmethod
    async def start(self) -> None:
        """Ready to commit (idempotent)."""

    @abstractmethod
    async def stop(self) -> None:
        """Commit what was submitted, then refuse more."""

    @abstractmethod
    async def commit(self, settlement: Settlement) -> None:
        """Write the settlement; raise if it could not be written."""

    @property
    @abstractmethod
    def stats(self) -> WriterStats:
        """Counts so far."""


class OwnerUser(User):
    """The SDK user a task store keys rows on: just the owner."""

    def __init__(self, owner: str) -> None:
        self._owner = owner

    @property
    def is_authenticated(self) -> bool:
        """Whether there is an owner at all."""
        return bool(self._owner)

    @property
    def user_name(self) -> str:
        """The owner key."""
        return self._owner


class StoreTaskWriter(TaskWriter):
    """Through the store interfaces, one write each: the reference semantics, and for tests."""

    def __init__(self, tasks: TaskStore, audit: AuditLog, bindings: BindingStore) -> None:
        self._tasks, self._audit, self._bindings = tasks, audit, bindings
        self._stats = WriterStats()

    async def start(self) -> None:
        """Nothing to start."""

    async def stop(self) -> None:
        """Nothing to stop."""

    async def commit(self, settlement: Settlement) -> None:
        """Task, then audit rows, then binding."""
        if settlement.task is not None:
            context = ServerCallContext(user=OwnerUser(settlement.owner))
            await self._tasks.save(settlement.task, context)
        if settlement.audit:
            await self._audit._append(list(settlement.audit))
        if settlement.binding is not None:
            await self._bindings.put(settlement.binding)
        self._stats.commits += 1
        self._stats.settlements += 1

    @property
    def stats(self) -> WriterStats:
        """Counts so far."""
        return self._stats
