"""The principal audit trail: who did what, through which tool, for which task, and the verdict.

Append-only (the database refuses updates and deletes), one row per tool call and per skill
invocation, plus one structured JSON log line each. Tokens are never stored, only their ids.
``AuditLog`` is the interface the executor, the gate, the console and the CLI use, and holds
what every form shares (the log line, batching); ``DatabaseAuditLog`` keeps the rows in the
``principal_audit`` table; ``InMemoryAuditLog`` keeps them in a list, the test seam (as the SDK's
``InMemoryTaskStore`` is for tasks), under the same contract.
"""

from __future__ import annotations

import json
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any, Final, Literal

from sqlalchemy import String, case, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.schema import principal_audit

log = logging.getLogger("netagent.audit")

Decision = Literal["allow", "deny"]
NOT_FOUND: Final = "not found in the caller's tenant"
"""The reason of a ``deny`` row whose check found nothing in the caller's own tenant: not a
refusal of the caller, an absence (the console shows such rows as "not found")."""
AGENT_TOOL = "agent"  # rows for skill invocations themselves, not tool calls
A2A: Final = "a2a"
MCP: Final = "mcp"
"""The projections a request reaches the skills through, named in its rows' ``projection``."""
_PENDING: ContextVar[list[AuditRecord] | None] = ContextVar("netagent_audit_pending", default=None)
"""Rows of the current invocation not yet inserted (see ``AuditLog.batched``)."""
_TASK: ContextVar[str | None] = ContextVar("netagent_audit_task", default=None)
FlushHook = Callable[[list["AuditRecord"]], Awaitable[None]]
_HOOK: ContextVar[FlushHook | None] = ContextVar("netagent_audit_hook", default=None)
"""Who takes a batch's rows on ``flush()`` instead of the log's own insert."""
_PROJECTION: ContextVar[str | None] = ContextVar("netagent_audit_projection", default=None)
"""The projection (``a2a``, ``mcp``) the invocation running in this context came through."""


@dataclass(frozen=True)
class AuditRecord:
    """One audited action; ``principal`` is the subject, ``actor_chain`` who acted for it."""

    principal: str
    tenant: str | None
    tool: str
    operation: str
    decision: Decision
    reason: str
    actor_chain: tuple[str, ...] = ()
    skill_id: str | None = None
    skill_version: str | None = None
    interface_digest: str | None = None
    task_id: str | None = None
    resource_ids: tuple[str, ...] = ()
    token_id: str | None = None
    projection: str | None = None
    """``a2a`` or ``mcp``: how the request reached the skill (None: not from a request)."""
    ts: datetime = field(default_factory=lambda: datetime.now(UTC))

    def as_row(self) -> dict[str, Any]:
        """Column values for the insert (a shallow copy: every field is immutable)."""
        row = {name: getattr(self, name) for name in _FIELDS}
        row["actor_chain"] = list(self.actor_chain)
        row["resource_ids"] = list(self.resource_ids)
        return row


_FIELDS = tuple(f.name for f in fields(AuditRecord))


class AuditLog(ABC):
    """Writes audit rows (and log lines) and reads them back for the CLI and the console.

    The contract every form keeps (tests/core/storage/test_audit_contract.py): rows get
    increasing ids; ``query`` is newest first (by id), each filter an equality (``since``: at or
    after), at most ``limit`` rows, each row a dict of every column with lists for the JSON
    ones and an aware UTC ``ts``; ``usage`` counts the invocation rows per skill and UTC day,
    ordered by skill and day; a naive ``ts`` is refused.
    """

    async def write(self, record: AuditRecord) -> None:
        """Append one record; the log line goes out even if the insert fails.

        Inside ``batched()`` the row waits for the batch's next ``flush()`` (one transaction for
        several rows); elsewhere it is inserted at once. A record without a ``projection``
        gets the batch's.
        """
        projection = _PROJECTION.get()
        if record.projection is None and projection is not None:
            record = replace(record, projection=projection)
        if log.isEnabledFor(logging.INFO):  # the JSON line costs as much as the insert
            row = record.as_row() | {"ts": record.ts.isoformat()}
            log.info(json.dumps(row, sort_keys=True, default=str))
        pending = _PENDING.get()
        if pending is not None:
            pending.append(record)
            return
        await self._append([record])

    @staticmethod
    @contextmanager
    def batched(
        task_id: str | None = None,
        on_flush: FlushHook | None = None,
        projection: str | None = None,
    ) -> Iterator[None]:
        """Collect this context's rows (one invocation's tool calls and its own row) so that
        ``flush()`` inserts them in one transaction. The executor flushes before any artifact
        leaves and when the invocation ends, so no result goes out before its audit rows are
        stored; rows not flushed when the block ends are dropped (flush first). ``task_id``
        is the invocation's task, for ``invocation_task()``. ``on_flush``: who takes the rows
        instead of the log's own insert (the request handler, which commits them with the
        task's settled state). ``projection``: the one the invocation came through; every row
        written in the block without its own (its tool calls' too) is stamped with it."""
        pending, task = _PENDING.set([]), _TASK.set(task_id)
        hook, projected = _HOOK.set(on_flush), _PROJECTION.set(projection)
        try:
            yield
        finally:
            _PROJECTION.reset(projected)
            _HOOK.reset(hook)
            _TASK.reset(task)
            _PENDING.reset(pending)

    @staticmethod
    def batching() -> bool:
        """Whether this context collects rows already (an outer ``batched`` block)."""
        return _PENDING.get() is not None

    @staticmethod
    def take() -> list[AuditRecord]:
        """The rows collected and not yet flushed, handed over (the batch is then empty)."""
        pending = _PENDING.get()
        if not pending:
            return []
        records = list(pending)
        pending.clear()
        return records

    @staticmethod
    def invocation_task() -> str | None:
        """The task whose invocation runs in this context (None outside one).

        A tool names it in its rows: tool tokens carry no task id, since one token serves a
        caller token's invocations of a skill while it is fresh (agent/security/exchange_cache.py).
        """
        return _TASK.get()

    async def flush(self) -> None:
        """Insert the current batch's rows, if any, in one transaction (or hand them over)."""
        records = self.take()
        if not records:
            return
        hook = _HOOK.get()
        if hook is not None:
            await hook(records)
            return
        await self._append(records)

    @abstractmethod
    async def _append(self, records: Sequence[AuditRecord]) -> None:
        """Store ``records``, in order, all or none."""

    @abstractmethod
    async def query(
        self,
        *,
        tenant: str | None = None,
        principal: str | None = None,
        task_id: str | None = None,
        since: datetime | None = None,
        limit: int = 200,
        exclude_tool: str | None = None,
    ) -> list[dict[str, Any]]:
        """Newest first, filtered as asked (``exclude_tool``: leave that tool's rows out)."""

    @abstractmethod
    async def usage(self, since: datetime | None = None) -> list[dict[str, Any]]:
        """Per skill and day: invocations run and refused, distinct callers, the last call."""


class DatabaseAuditLog(AuditLog):
    """Audit rows in the ``principal_audit`` table."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def _append(self, records: Sequence[AuditRecord]) -> None:
        """One transaction for all of them."""
        rows = [record.as_row() for record in records]
        async with self._engine.begin() as connection:
            await connection.execute(principal_audit.insert(), rows)

    async def query(
        self,
        *,
        tenant: str | None = None,
        principal: str | None = None,
        task_id: str | None = None,
        since: datetime | None = None,
        limit: int = 200,
        exclude_tool: str | None = None,
    ) -> list[dict[str, Any]]:
        """Newest first, filtered as asked (``exclude_tool``: leave that tool's rows out)."""
        statement = select(principal_audit).order_by(principal_audit.c.id.desc()).limit(limit)
        if tenant is not None:
            statement = statement.where(principal_audit.c.tenant == tenant)
        if principal is not None:
            statement = statement.where(principal_audit.c.principal == principal)
        if task_id is not None:
            statement = statement.where(principal_audit.c.task_id == task_id)
        if since is not None:
            statement = statement.where(principal_audit.c.ts >= since)
        if exclude_tool is not None:
            statement = statement.where(principal_audit.c.tool != exclude_tool)
        async with self._engine.connect() as connection:
            rows = (await connection.execute(statement)).mappings().all()
        return [dict(r) for r in rows]

    async def usage(self, since: datetime | None = None) -> list[dict[str, Any]]:
        """Per skill and day: invocations run and refused, distinct callers, the last call."""
        table = principal_audit
        day = func.substr(func.cast(table.c.ts, String), 1, 10)
        statement = (
            select(
                table.c.skill_id,
                day.label("day"),
                func.sum(case((table.c.decision == "allow", 1), else_=0)).label("calls"),
                func.sum(case((table.c.decision == "allow", 0), else_=1)).label("refused"),
                func.count(func.distinct(table.c.principal)).label("callers"),
                func.max(table.c.ts).label("last_call"),
            )
            .where(table.c.tool == AGENT_TOOL, table.c.operation == "invoke")
            .group_by(table.c.skill_id, day)
            .order_by(table.c.skill_id, day)
        )
        if since is not None:
            statement = statement.where(table.c.ts >= since)
        async with self._engine.connect() as connection:
            rows: Sequence[Any] = (await connection.execute(statement)).mappings().all()
        return [dict(r) for r in rows]


class InMemoryAuditLog(AuditLog):
    """Audit rows in a list: one process's, nothing survives it.

    Same contract as the table: ids in insertion order, queries newest first with the same
    filters, usage per skill and UTC day, rows shaped as the database returns them. Writing,
    batching and the log line are the interface's own, so they cannot differ.
    """

    def __init__(self) -> None:
        self._rows: list[dict[str, Any]] = []

    async def _append(self, records: Sequence[AuditRecord]) -> None:
        """All or none: every record is checked before any is kept."""
        rows = [_row(record) for record in records]
        for row in rows:
            row["id"] = len(self._rows) + 1
            self._rows.append(row)

    async def query(
        self,
        *,
        tenant: str | None = None,
        principal: str | None = None,
        task_id: str | None = None,
        since: datetime | None = None,
        limit: int = 200,
        exclude_tool: str | None = None,
    ) -> list[dict[str, Any]]:
        """Newest first, filtered as asked (``exclude_tool``: leave that tool's rows out)."""
        wanted = {"tenant": tenant, "principal": principal, "task_id": task_id}
        found: list[dict[str, Any]] = []
        for row in reversed(self._rows):
            if len(found) >= limit:
                break
            if any(value is not None and row[key] != value for key, value in wanted.items()):
                continue
            if since is not None and row["ts"] < since:
                continue
            if exclude_tool is not None and row["tool"] == exclude_tool:
                continue
            found.append(_copy(row))
        return found

    async def usage(self, since: datetime | None = None) -> list[dict[str, Any]]:
        """Per skill and day: invocations run and refused, distinct callers, the last call."""
        groups: dict[tuple[str | None, str], list[dict[str, Any]]] = {}
        for row in self._rows:
            if row["tool"] != AGENT_TOOL or row["operation"] != "invoke":
                continue
            if since is not None and row["ts"] < since:
                continue
            groups.setdefault((row["skill_id"], row["ts"].date().isoformat()), []).append(row)
        return [
            {
                "skill_id": skill_id,
                "day": day,
                "calls": sum(r["decision"] == "allow" for r in rows),
                "refused": sum(r["decision"] != "allow" for r in rows),
                "callers": len({r["principal"] for r in rows}),
                "last_call": max(r["ts"] for r in rows),
            }
            for (skill_id, day), rows in sorted(groups.items(), key=_skill_then_day)
        ]


def _row(record: AuditRecord) -> dict[str, Any]:
    """The row the table would hold: ``ts`` in UTC, a naive one refused as the column does."""
    row = record.as_row()
    ts = record.ts
    if ts.tzinfo is None or ts.utcoffset() is None:
        raise ValueError(f"naive datetime {ts.isoformat()} rejected; use a tz-aware one")
    row["ts"] = ts.astimezone(UTC)
    return row


def _copy(row: dict[str, Any]) -> dict[str, Any]:
    """A row the caller may change without changing the trail."""
    return row | {key: list(row[key]) for key in ("actor_chain", "resource_ids")}


def _skill_then_day(item: tuple[tuple[str | None, str], Any]) -> tuple[bool, str, str]:
    """SQLite's order (the embedded default): rows without a skill first."""
    (skill_id, day), _ = item
    return (skill_id is not None, skill_id or "", day)
