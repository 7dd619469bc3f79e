"""Replica leases: each serving process says it is alive; a survivor ends a dead one's tasks.

Replicas sharing a database cannot end every running task at start, as a single process does
(another replica may be running them). Instead each holds a row in ``replica_lease`` and renews
it every ``heartbeat_seconds``; the request handler names the replica in ``task_runner`` while
a task runs there. At every heartbeat each replica also sweeps: a ``task_runner`` row whose
replica has no lease, or one not renewed for ``ttl_seconds``, belongs to a process that died,
and its task is ended FAILED ``execution_failed`` (agent/storage/interrupted.py), with its audit
row, in one transaction. Survivors sweeping at once end each task exactly once: the one whose
conditional DELETE of the runner row returns it ends the task; the others find no row.

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

from sqlalchemy import and_, delete, exists, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.interrupted import Runner, fail_task, has_versions, lock_task
from agent.storage.tables import replica_lease, task_runner

log = logging.getLogger(__name__)
HEARTBEAT_SECONDS = 2.0
TTL_SECONDS = 10.0


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
