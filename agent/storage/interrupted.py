"""Ending a task whose process died: FAILED, ``execution_failed``, and its audit row, at once.

A task left SUBMITTED or WORKING by a process that is gone would say so forever: no one settles
it, and a cancel finds nothing to cancel. Two paths end such tasks, and both come here so they
write exactly the same thing: a single process at its next start (every running task was its
own), and a replica's sweep for the tasks of a replica whose lease expired
(agent/storage/leases.py). Everything happens in the caller's transaction: the tasks row, the
cluster store's version and event log when it has them, and one invocation audit row, so a
failure leaves all of them as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from a2a.helpers import new_data_part
from a2a.server.models import TaskEventModel, TaskModel, TaskVersionModel
from a2a.types import Message, Role, StreamResponse, TaskState, TaskStatus, TaskStatusUpdateEvent
from google.protobuf.json_format import MessageToDict
from sqlalchemy import Table, inspect, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from agent.base.ids import random_hex
from agent.interfaces import ErrorCode, SkillError
from agent.security.identity import parse_owner_key
from agent.storage.audit import AGENT_TOOL, AuditRecord
from agent.storage.tables import principal_audit

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
