"""Ending the tasks of a process that died, and the replica leases that tell a replica has.

A task left SUBMITTED or WORKING by a process that is gone would say so forever: no one settles
it, and a cancel finds nothing to cancel. Two paths end such tasks, and both write exactly the
same thing (``end_task``, ``fail_task``): FAILED, ``execution_failed``, interrupted, with its
invocation audit row. A single process ends every running task at its next start
(``UpsertDatabaseTaskStore.end_interrupted``, agent/storage/task_store.py: every one was its
own); replicas sharing a database cannot (another replica may be running them), so each holds a
row in ``replica_lease`` and renews it every ``heartbeat_seconds`` (``ReplicaLease``), the
request handler names the replica in ``task_runner`` while a task runs there, and at every
heartbeat each replica sweeps: a ``task_runner`` row whose replica has no lease, or one not
renewed for ``ttl_seconds``, belongs to a process that died, and its task is ended. Everything
of one task happens in one transaction: the tasks row, the cluster store's version and event
log when it has them, and the audit row, so a failure leaves all of them as they were.
Survivors sweeping at once end each task exactly once: the one whose conditional DELETE of the
runner row returns it ends the task; the others find no row.

Time is this process's clock: ``ttl_seconds`` must exceed the heartbeat interval plus the clock
skew between the replicas' hosts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from a2a.helpers import new_data_part
from a2a.server.models import TaskEventModel, TaskModel, TaskVersionModel
from a2a.types import Message, Role, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent
from google.protobuf.json_format import MessageToDict
from sqlalchemy import Table, and_, delete, exists, insert, inspect, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from agent.base.ids import random_hex
from agent.interfaces import ErrorCode, SkillError
from agent.security.identity import parse_owner_key
from agent.storage.audit import AGENT_TOOL, AuditRecord
from agent.storage.schema import principal_audit, replica_lease, task_runner

log = logging.getLogger(__name__)
HEARTBEAT_SECONDS = 2.0
TTL_SECONDS = 10.0

INTERRUPTED = "interrupted by a restart"
"""The error message of a task its process left running when it died."""
RUNNING = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
"""The stored states (proto enum names in the tasks row's JSON) that no one will settle."""
ANONYMOUS_PRINCIPAL = "anonymous"  # what the executor's own rows name a caller without subject

TASKS: Table = TaskModel.__table__  # type: ignore[assignment]
VERSIONS: Table = TaskVersionModel.__table__  # type: ignore[assignment]
EVENTS: Table = TaskEventModel.__table__  # type: ignore[assignment]


@dataclass(frozen=True)
class Runner:
    """Whose task it was: what its audit row names."""

    principal: str
    tenant: str | None
    skill_id: str | None = None

    @classmethod
    def of_owner(cls, owner: str | None) -> Runner:
        """Derived from a task-store owner key (``agent/security/identity.py``) when no runner
        row says more; a key it did not make (the anonymous ``""``) names no tenant."""
        parsed = parse_owner_key(owner or "")
        if parsed is None:
            return cls(owner or "", None)
        tenant, subject = parsed
        return cls(subject, tenant or None)


def interrupted_status(task_id: str, context_id: str, now: datetime) -> TaskStatus:
    """FAILED, its message one Data Part: the ``execution_failed`` error object."""
    error = SkillError(ErrorCode.EXECUTION_FAILED, INTERRUPTED).to_object()
    status = TaskStatus(
        state=TaskState.TASK_STATE_FAILED,
        message=Message(
            message_id=random_hex(),
            role=Role.ROLE_AGENT,
            task_id=task_id,
            context_id=context_id,
            parts=[new_data_part(dict(error), media_type="application/json")],
        ),
    )
    status.timestamp.FromDatetime(now.astimezone(UTC))
    return status


async def has_versions(connection: AsyncConnection) -> bool:
    """Whether the cluster store's version and event tables exist (replicas write them)."""

    def check(sync: Any) -> bool:
        inspector = inspect(sync)
        return all(inspector.has_table(str(t.name)) for t in (VERSIONS, EVENTS))

    return bool(await connection.run_sync(check))


@dataclass(frozen=True)
class Locked:
    """A task row, locked for the rest of the transaction: what ending it needs."""

    task_id: str
    context_id: str
    owner: str | None
    running: bool


async def lock_task(
    connection: AsyncConnection, task_id: str, *, versioned: bool, tasks: Table = TASKS
) -> Locked | None:
    """Lock the task's rows in the cluster store's own order (version, then task), so this
    never deadlocks with a replica's save; None if there is no such task."""
    if versioned:
        locked = select(VERSIONS.c.version).where(VERSIONS.c.task_id == task_id)
        await connection.execute(locked.with_for_update())
    found = (
        await connection.execute(
            select(tasks.c.context_id, tasks.c.owner, tasks.c.status)
            .where(tasks.c.id == task_id)
            .with_for_update()
        )
    ).one_or_none()
    if found is None:
        return None
    context_id, owner, stored = found
    running = isinstance(stored, dict) and stored.get("state") in RUNNING
    return Locked(task_id, context_id or "", owner, running)


async def fail_task(
    connection: AsyncConnection,
    task: Locked,
    runner: Runner | None,
    now: datetime,
    *,
    versioned: bool,
    tasks: Table = TASKS,
) -> None:
    """Write the end of a locked running task: FAILED, and its invocation audit row.

    With ``versioned``, the version goes up (a late write from a runner presumed dead then
    fails its compare-and-swap rather than overwriting the end) and the FAILED status joins the
    event log, so a subscriber on another replica gets it and its stream ends. ``runner``
    None: whose it was is derived from the owner.
    """
    status = interrupted_status(task.task_id, task.context_id, now)
    await connection.execute(
        update(tasks)
        .where(tasks.c.id == task.task_id)
        .values(status=MessageToDict(status), last_updated=now.astimezone(UTC).replace(tzinfo=None))
    )
    if versioned:
        await append_event(connection, task, status)
    whose = runner or Runner.of_owner(task.owner)
    await connection.execute(principal_audit.insert(), [_audit_row(task.task_id, whose, now)])


async def end_task(
    connection: AsyncConnection,
    task_id: str,
    runner: Runner | None,
    now: datetime,
    *,
    versioned: bool,
    tasks: Table = TASKS,
) -> bool:
    """End ``task_id`` if it is still SUBMITTED or WORKING, in the caller's transaction; True
    if it did (:func:`lock_task`, then :func:`fail_task`)."""
    locked = await lock_task(connection, task_id, versioned=versioned, tasks=tasks)
    if locked is None or not locked.running:
        return False
    await fail_task(connection, locked, runner, now, versioned=versioned, tasks=tasks)
    return True


async def append_event(connection: AsyncConnection, task: Locked, status: TaskStatus) -> None:
    """Version + 1 and the status update at that version, as the cluster store writes them."""
    version = (
        await connection.execute(
            update(VERSIONS)
            .where(VERSIONS.c.task_id == task.task_id)
            .values(version=VERSIONS.c.version + 1)
            .returning(VERSIONS.c.version)
        )
    ).scalar_one_or_none()
    if version is None:  # written by a store that keeps no versions: nothing to follow
        return
    event = TaskStatusUpdateEvent(task_id=task.task_id, context_id=task.context_id, status=status)
    await connection.execute(
        EVENTS.insert().values(
            task_id=task.task_id,
            owner=task.owner,
            task_version=version,
            event_data=StreamResponse(status_update=event).SerializeToString(),
        )
    )


def _audit_row(task_id: str, runner: Runner, now: datetime) -> dict[str, Any]:
    """The invocation row the executor would have written had it lived: allow, execution_failed.

    Values are fitted to the columns (NUL replaced, cut to length): a value the database
    refuses would roll the end back and leave the task running forever.
    """
    record = AuditRecord(
        principal=_fit(runner.principal, 255) or ANONYMOUS_PRINCIPAL,
        tenant=_fit(runner.tenant, 64),
        tool=AGENT_TOOL,
        operation="invoke",
        decision="allow",
        reason=ErrorCode.EXECUTION_FAILED.value,
        skill_id=_fit(runner.skill_id, 64),
        task_id=task_id,
        ts=now.astimezone(UTC),
    )
    return record.as_row()


def _fit(value: str | None, length: int) -> str | None:
    if not value:
        return None
    return value.replace("\x00", "\ufffd")[:length]


@dataclass(frozen=True)
class Orphan:
    """A ``task_runner`` row whose replica's lease is gone or expired."""

    task_id: str
    replica: str

    @property
    def names(self) -> tuple[str, str]:
        """(task id, replica), for a log line."""
        return self.task_id, self.replica


class ReplicaLease:
    """This process's lease, its heartbeat, and the sweep of expired replicas' tasks."""

    def __init__(
        self,
        engine: AsyncEngine,
        *,
        replica: str | None = None,
        clock: Callable[[], datetime] | None = None,
        heartbeat_seconds: float = HEARTBEAT_SECONDS,
        ttl_seconds: float = TTL_SECONDS,
    ) -> None:
        if heartbeat_seconds <= 0 or ttl_seconds <= heartbeat_seconds:
            raise ValueError("a lease needs 0 < heartbeat_seconds < ttl_seconds")
        self._engine = engine
        self._replica = replica or uuid.uuid4().hex
        self._clock = clock or (lambda: datetime.now(UTC))
        self._heartbeat = heartbeat_seconds
        self._ttl = timedelta(seconds=ttl_seconds)
        self._versioned: bool | None = None
        self._loop: asyncio.Task[None] | None = None

    @property
    def replica(self) -> str:
        """This process's replica id: what its ``task_runner`` rows name."""
        return self._replica

    async def start(self, *, beat: bool = True) -> None:
        """Take the lease (insert its row); with ``beat``, renew it and sweep in the background."""
        now = self._now()
        async with self._engine.begin() as connection:
            await connection.execute(
                insert(replica_lease).values(
                    replica=self._replica, started_at=now, heartbeat_at=now
                )
            )
        if beat and self._loop is None:
            self._loop = asyncio.get_running_loop().create_task(
                self._beat_forever(), name=f"lease-{self._replica}"
            )

    async def stop(self) -> None:
        """Stop the heartbeat and give the lease back (delete its row only).

        Tasks still named by this replica's runner rows are left for a survivor's sweep: a
        clean shutdown settles or flushes them first, and whatever it could not is as dead as
        after a crash.
        """
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop
            self._loop = None
        try:
            async with self._engine.begin() as connection:
                await connection.execute(
                    delete(replica_lease).where(replica_lease.c.replica == self._replica)
                )
        except Exception:  # shutting down: the lease expires on its own within the ttl
            log.exception("replica %s could not give its lease back", self._replica)

    async def heartbeat(self) -> None:
        """Renew the lease; re-take it if a survivor deleted it as expired (a long stall)."""
        now = self._now()
        async with self._engine.begin() as connection:
            renewed = await connection.execute(
                update(replica_lease)
                .where(replica_lease.c.replica == self._replica)
                .values(heartbeat_at=now)
            )
            if renewed.rowcount == 0:
                log.warning(
                    "replica %s found its lease expired: its running tasks may have been ended",
                    self._replica,
                )
                await connection.execute(
                    insert(replica_lease).values(
                        replica=self._replica, started_at=now, heartbeat_at=now
                    )
                )

    async def sweep(self) -> list[str]:
        """End the tasks of replicas whose lease expired; drop expired leases. Returns the ids.

        Each task in its own transaction: one that fails (logged) stays for the next sweep and
        does not hold the others back.
        """
        now = self._now()
        ended: list[str] = []
        for orphan in await self.orphans(now):
            try:
                if await self.end(orphan, now):
                    ended.append(orphan.task_id)
            except Exception:
                log.exception("could not end task %s of replica %s", *orphan.names)
        cutoff = now - self._ttl
        async with self._engine.begin() as connection:
            await connection.execute(
                delete(replica_lease).where(
                    replica_lease.c.heartbeat_at < cutoff, replica_lease.c.replica != self._replica
                )
            )
        if ended:
            log.warning("ended %d task(s) of expired replicas: %s", len(ended), ", ".join(ended))
        return ended

    async def orphans(self, now: datetime) -> list[Orphan]:
        """The runner rows of other replicas with no lease, or one older than the ttl."""
        lease = replica_lease
        query = (
            select(task_runner.c.task_id, task_runner.c.replica)
            .outerjoin(lease, lease.c.replica == task_runner.c.replica)
            .where(
                task_runner.c.replica != self._replica,
                (lease.c.replica.is_(None)) | (lease.c.heartbeat_at < now - self._ttl),
            )
            .order_by(task_runner.c.since, task_runner.c.task_id)
        )
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [Orphan(task_id, replica) for task_id, replica in rows]

    async def end(self, orphan: Orphan, now: datetime) -> bool:
        """Claim ``orphan``'s runner row and end its task, in one transaction; True if ended.

        The task's rows are locked first (in the cluster store's order); the claim is then a
        DELETE that re-checks the lease: it returns the row to exactly one sweeper, and to none
        if the replica renewed its lease or the row changed hands since :meth:`orphans` read
        it. A task already settled only loses its stale runner row. A writer that changes
        ``task_runner`` with the task in one transaction should lock in the same order
        (version, task, runner row), or PostgreSQL may abort one of the two as a deadlock.
        """
        if self._versioned is None:
            async with self._engine.connect() as connection:
                self._versioned = await has_versions(connection)
        alive = exists().where(
            replica_lease.c.replica == orphan.replica,
            replica_lease.c.heartbeat_at >= now - self._ttl,
        )
        claim = (
            delete(task_runner)
            .where(
                and_(
                    task_runner.c.task_id == orphan.task_id,
                    task_runner.c.replica == orphan.replica,
                    ~alive,
                )
            )
            .returning(task_runner.c.principal, task_runner.c.tenant, task_runner.c.skill_id)
        )
        versioned = self._versioned
        async with self._engine.begin() as connection:
            task = await lock_task(connection, orphan.task_id, versioned=versioned)
            claimed = (await connection.execute(claim)).one_or_none()
            if claimed is None or task is None or not task.running:
                return False
            runner = Runner(claimed.principal, claimed.tenant, claimed.skill_id)
            await fail_task(connection, task, runner, now, versioned=versioned)
            return True

    async def _beat_forever(self) -> None:
        """Heartbeat, then sweep, every interval; a failure is logged and the next one tries."""
        while True:
            await asyncio.sleep(self._heartbeat)
            try:
                await self.heartbeat()
            except Exception:
                log.exception("replica %s could not renew its lease", self._replica)
                continue  # the database is out of reach: the sweep would fail as well
            try:
                await self.sweep()
            except Exception:
                log.exception("replica %s could not sweep expired leases", self._replica)

    def _now(self) -> datetime:
        return self._clock().astimezone(UTC)
