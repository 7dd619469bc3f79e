"""Tasks waiting for input (input-required, auth-required): how many a caller has, and the end
of those that waited too long.

A parked task has no runner: nothing ends it but its caller's answer or cancel. Left alone it
would be kept, with its history, for ever, so the request handler bounds how many one caller
may have (``count``), and a sweeper (agent/server/bounds.py) ends those parked longer than
``parked_task_ttl`` (``stale``, ``expire``): CANCELED, a status message saying why, and an
audit row, in one transaction. The end is one conditional UPDATE (still parked, not touched
since the cutoff), so however many processes sweep at once, each task is ended once, and a
task a follow-up took up meanwhile is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from a2a.types import Message, Part, Role, TaskState, TaskStatus
from google.protobuf.json_format import MessageToDict
from sqlalchemy import ColumnElement, Table, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.base.ids import random_hex
from agent.storage.audit import AGENT_TOOL, AuditRecord
from agent.storage.interrupted import (
    ANONYMOUS_PRINCIPAL,
    VERSIONS,
    Locked,
    Runner,
    append_event,
    has_versions,
)
from agent.storage.tables import principal_audit

PARKED = (
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_AUTH_REQUIRED",
    "input-required",  # rows an 0.3 store wrote, as the SDK's own queries read them
    "auth-required",
)
EXPIRE_OPERATION = "expire"
EXPIRED_REASON = "expired"
"""The audit row of an expired task: ``tool`` agent, ``operation`` expire, ``reason`` expired."""
STALE_BATCH = 500
"""Stale tasks one sweep reads at most (the oldest first); the next sweep takes the rest."""


@dataclass(frozen=True)
class Stale:
    """A task parked since before the cutoff, when the sweep listed it."""

    task_id: str
    context_id: str
    owner: str


def expired_text(ttl: timedelta) -> str:
    """The status message of an expired task: what happened and the bound that did it."""
    seconds = f"{ttl.total_seconds():g}"
    return (
        f"canceled: no input came within {seconds} s (parked_task_ttl); "
        "send a new message to start again"
    )


class ParkedTasks:
    """Parked tasks in the SDK's task table ``tasks`` (the store's ``table``)."""

    def __init__(self, engine: AsyncEngine, tasks: Table, ttl_seconds: float | None = None) -> None:
        """``ttl_seconds``: how long a task may stay parked; ``count`` then reads only the
        caller's tasks changed since (the index on owner and time), not all it ever had."""
        self._engine = engine
        self._tasks = tasks
        self._ttl = None if ttl_seconds is None else timedelta(seconds=ttl_seconds)
        self._versioned: bool | None = None

    def _parked(self) -> ColumnElement[bool]:
        """Rows whose stored status is a parked state (the SDK's JSON path, both databases)."""
        state: ColumnElement[str] = self._tasks.c.status["state"].as_string()
        return state.in_(PARKED)

    def _before(self, cutoff: datetime) -> ColumnElement[bool]:
        """Parked since before ``cutoff``; a row with no time (its status had no timestamp)
        cannot be shown to be recent, so it counts as stale too."""
        last_updated = self._tasks.c.last_updated
        return or_(last_updated < _naive(cutoff), last_updated.is_(None))

    async def count(self, owner: str) -> int:
        """How many tasks ``owner`` has waiting for input (those past the ttl are being
        ended, and are not counted)."""
        tasks = self._tasks
        query = select(func.count()).where(tasks.c.owner == owner, self._parked())
        if self._ttl is not None:
            query = query.where(tasks.c.last_updated >= _naive(datetime.now(UTC) - self._ttl))
        async with self._engine.connect() as connection:
            return int((await connection.execute(query)).scalar_one())

    async def stale(self, cutoff: datetime) -> list[Stale]:
        """Tasks parked since before ``cutoff``, the oldest first (at most ``STALE_BATCH``)."""
        tasks = self._tasks
        query = (
            select(tasks.c.id, tasks.c.context_id, tasks.c.owner)
            .where(self._parked(), self._before(cutoff))
            .order_by(tasks.c.last_updated, tasks.c.id)
            .limit(STALE_BATCH)
        )
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [
            Stale(task_id, context_id or "", owner or "") for task_id, context_id, owner in rows
        ]

    async def expire(self, task: Stale, cutoff: datetime, now: datetime, ttl: timedelta) -> bool:
        """End ``task`` CANCELED if it is still parked since before ``cutoff``; True if this
        call ended it. With the cluster store's version table, its version row is locked
        first (the store's lock order), the version goes up and the status joins its event
        log, so subscribers on every replica read the end."""
        if self._versioned is None:
            async with self._engine.connect() as connection:
                self._versioned = await has_versions(connection)
        status = _expired_status(task, now, ttl)
        tasks = self._tasks
        this = tasks.c.id == task.task_id
        # The claim: a write that changes nothing, taken only while the task is still parked
        # since before the cutoff; it holds the row (PostgreSQL) or the database (SQLite)
        # until the end is written, so no two sweepers, and no follow-up's write, come between.
        claim = (
            update(tasks)
            .where(this, self._parked(), self._before(cutoff))
            .values(last_updated=tasks.c.last_updated)
        )
        async with self._engine.begin() as connection:
            if self._versioned:
                locked = select(VERSIONS.c.version).where(VERSIONS.c.task_id == task.task_id)
                await connection.execute(locked.with_for_update())
            if (await connection.execute(claim)).rowcount != 1:
                return False
            before = (
                await connection.execute(select(tasks.c.status, tasks.c.history).where(this))
            ).one()
            end = update(tasks).where(this)
            await connection.execute(
                end.values(
                    status=MessageToDict(status),
                    history=_with_question(before.status, before.history),
                    last_updated=_naive(now),
                )
            )
            if self._versioned:
                row = Locked(task.task_id, task.context_id, task.owner, running=False)
                await append_event(connection, row, status)
            await connection.execute(principal_audit.insert(), [_audit_row(task, now)])
        return True


def _naive(moment: datetime) -> datetime:
    """The SDK's ``last_updated`` is naive UTC."""
    return moment.astimezone(UTC).replace(tzinfo=None)


def _with_question(status: Any, history: Any) -> list[Any]:
    """The history with the parked status's message (the question asked) at its end: the SDK
    TaskManager's rule for a new status."""
    kept = list(history) if isinstance(history, list) else []
    if isinstance(status, dict) and status.get("message"):
        kept.append(status["message"])
    return kept


def _expired_status(task: Stale, now: datetime, ttl: timedelta) -> TaskStatus:
    """CANCELED, its message one text part saying why."""
    status = TaskStatus(
        state=TaskState.TASK_STATE_CANCELED,
        message=Message(
            message_id=random_hex(),
            role=Role.ROLE_AGENT,
            task_id=task.task_id,
            context_id=task.context_id,
            parts=[Part(text=expired_text(ttl))],
        ),
    )
    status.timestamp.FromDatetime(now.astimezone(UTC))
    return status


def _audit_row(task: Stale, now: datetime) -> dict[str, Any]:
    """Whose task it was (from its owner key), that it expired, when."""
    whose = Runner.of_owner(task.owner)
    record = AuditRecord(
        principal=(whose.principal or ANONYMOUS_PRINCIPAL)[:255],
        tenant=whose.tenant[:64] if whose.tenant else None,
        tool=AGENT_TOOL,
        operation=EXPIRE_OPERATION,
        decision="allow",
        reason=EXPIRED_REASON,
        task_id=task.task_id,
        ts=now.astimezone(UTC),
    )
    return record.as_row()
