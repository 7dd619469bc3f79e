"""The audit trail in a list: the test seam, as the SDK's InMemoryTaskStore is for tasks.

Same contract as the table (``agent/storage/audit.py``): ids in insertion order, queries newest
first with the same filters, usage per skill and UTC day, rows shaped as the database returns
them. Writing, batching and the log line are the interface's own, so they cannot differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from agent.storage.audit import AGENT_TOOL, AuditLog, AuditRecord


class InMemoryAuditLog(AuditLog):
    """Audit rows of one process; nothing survives it."""

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
