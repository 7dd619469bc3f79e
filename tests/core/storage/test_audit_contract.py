"""AuditLog's contract, held by the in-memory form and by the table on SQLite and PostgreSQL.

What the executor, the gate, the console (`/console/audit`) and the CLI (`netagent audit`,
`netagent usage`) rely on: rows as the table returns them, newest first, the same filters,
batches that are stored only when flushed, and usage per skill and UTC day.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy.exc import StatementError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.audit import (
    AGENT_TOOL,
    AuditLog,
    AuditRecord,
    DatabaseAuditLog,
    InMemoryAuditLog,
)

NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
COLUMNS = {
    "id",
    "ts",
    "tenant",
    "principal",
    "actor_chain",
    "skill_id",
    "skill_version",
    "interface_digest",
    "task_id",
    "tool",
    "operation",
    "resource_ids",
    "decision",
    "reason",
    "token_id",
    "projection",
}


@pytest.fixture
def audit(form: str, engine_for: Callable[[], AsyncEngine]) -> AuditLog:
    if form == "memory":
        return InMemoryAuditLog()
    return DatabaseAuditLog(engine_for())


def tool_call(**changes: Any) -> AuditRecord:
    values: dict[str, Any] = {
        "principal": "alice",
        "tenant": "acme",
        "tool": "inventory",
        "operation": "link",
        "decision": "allow",
        "reason": "ok",
        "actor_chain": ("netops-agent",),
        "skill_id": "check_link_capacity",
        "skill_version": "1.0",
        "interface_digest": "sha-256:abc",
        "task_id": "t-1",
        "resource_ids": ("acme-lnk-00001",),
        "token_id": "jti-1",
        "ts": NOON,
    }
    return AuditRecord(**(values | changes))


def invocation(skill_id: str | None, decision: str, principal: str, ts: datetime) -> AuditRecord:
    return AuditRecord(
        principal=principal,
        tenant="acme",
        tool=AGENT_TOOL,
        operation="invoke",
        decision="allow" if decision == "allow" else "deny",
        reason="completed" if decision == "allow" else "authorization_failed",
        skill_id=skill_id,
        ts=ts,
    )


async def test_a_written_row_reads_back_with_every_column(audit: AuditLog) -> None:
    await audit.write(tool_call())
    (row,) = await audit.query()
    assert set(row) == COLUMNS
    assert isinstance(row["id"], int)
    assert {k: v for k, v in row.items() if k != "id"} == {
        "ts": NOON,
        "tenant": "acme",
        "principal": "alice",
        "actor_chain": ["netops-agent"],
        "skill_id": "check_link_capacity",
        "skill_version": "1.0",
        "interface_digest": "sha-256:abc",
        "task_id": "t-1",
        "tool": "inventory",
        "operation": "link",
        "resource_ids": ["acme-lnk-00001"],
        "decision": "allow",
        "reason": "ok",
        "token_id": "jti-1",
        "projection": None,
    }
    assert row["ts"].utcoffset() == timedelta(0)


async def test_optional_columns_read_back_as_none_and_empty_lists(audit: AuditLog) -> None:
    await audit.write(AuditRecord("anonymous", None, AGENT_TOOL, "invoke", "deny", "x", ts=NOON))
    (row,) = await audit.query()
    assert (row["tenant"], row["skill_id"], row["task_id"], row["token_id"]) == (None,) * 4
    assert (row["actor_chain"], row["resource_ids"]) == ([], [])


async def test_a_time_in_another_zone_reads_back_as_the_same_instant_in_utc(
    audit: AuditLog,
) -> None:
    local = NOON.astimezone(timezone(timedelta(hours=5, minutes=30)))
    await audit.write(tool_call(ts=local))
    (row,) = await audit.query()
    assert row["ts"] == NOON and row["ts"].utcoffset() == timedelta(0)


async def test_a_naive_time_is_refused(audit: AuditLog) -> None:
    with pytest.raises((ValueError, StatementError)):
        await audit.write(tool_call(ts=NOON.replace(tzinfo=None)))
    assert await audit.query() == []


async def test_rows_come_newest_first_with_increasing_ids(audit: AuditLog) -> None:
    for n in range(5):
        await audit.write(tool_call(operation=f"op-{n}"))
    rows = await audit.query()
    assert [r["operation"] for r in rows] == ["op-4", "op-3", "op-2", "op-1", "op-0"]
    ids = [r["id"] for r in rows]
    assert ids == sorted(ids, reverse=True) and len(set(ids)) == 5


async def test_limit_keeps_the_newest(audit: AuditLog) -> None:
    for n in range(5):
        await audit.write(tool_call(operation=f"op-{n}"))
    assert [r["operation"] for r in await audit.query(limit=2)] == ["op-4", "op-3"]
    assert await audit.query(limit=0) == []


async def test_each_filter_is_an_equality_and_filters_combine(audit: AuditLog) -> None:
    await audit.write(tool_call(operation="a"))
    await audit.write(tool_call(operation="b", tenant="globex", principal="gary", task_id="t-2"))
    await audit.write(tool_call(operation="c", task_id="t-2"))
    await audit.write(tool_call(operation="d", tenant=None, principal="unverified:?", task_id=None))

    async def operations(**filters: Any) -> list[str]:
        return [r["operation"] for r in await audit.query(**filters)]

    assert await operations(tenant="acme") == ["c", "a"]
    assert await operations(tenant="globex") == ["b"]
    assert await operations(principal="alice") == ["c", "a"]
    assert await operations(principal="unverified:?") == ["d"]
    assert await operations(task_id="t-2") == ["c", "b"]
    assert await operations(tenant="acme", task_id="t-2") == ["c"]
    assert await operations(tenant="acme", principal="gary") == []
    assert await operations(task_id="t-") == []  # no prefix matching


async def test_since_keeps_rows_at_or_after_it(audit: AuditLog) -> None:
    for minutes in (0, 10, 20):
        await audit.write(
            tool_call(operation=f"at-{minutes}", ts=NOON + timedelta(minutes=minutes))
        )
    since = NOON + timedelta(minutes=10)
    assert [r["operation"] for r in await audit.query(since=since)] == ["at-20", "at-10"]
    in_another_zone = since.astimezone(timezone(timedelta(hours=-7)))
    assert [r["operation"] for r in await audit.query(since=in_another_zone)] == ["at-20", "at-10"]


async def test_order_is_by_id_not_by_time(audit: AuditLog) -> None:
    """A row written later with an earlier time is still the newest."""
    await audit.write(tool_call(operation="first", ts=NOON))
    await audit.write(tool_call(operation="second", ts=NOON - timedelta(hours=1)))
    assert [r["operation"] for r in await audit.query()] == ["second", "first"]


async def test_rows_read_are_copies(audit: AuditLog) -> None:
    await audit.write(tool_call())
    (row,) = await audit.query()
    row["resource_ids"].append("changed")
    row["actor_chain"].clear()
    (again,) = await audit.query()
    assert (again["resource_ids"], again["actor_chain"]) == (["acme-lnk-00001"], ["netops-agent"])


async def test_a_batch_is_stored_only_when_flushed(audit: AuditLog) -> None:
    with AuditLog.batched():
        await audit.write(tool_call(operation="one"))
        await audit.write(tool_call(operation="two"))
        assert await audit.query() == []
        await audit.flush()
        assert [r["operation"] for r in await audit.query()] == ["two", "one"]
        await audit.write(tool_call(operation="three"))
        await audit.flush()
        await audit.flush()  # an empty batch writes nothing
    assert [r["operation"] for r in await audit.query()] == ["three", "two", "one"]


async def test_rows_not_flushed_when_the_batch_ends_are_dropped(audit: AuditLog) -> None:
    with AuditLog.batched():
        await audit.write(tool_call(operation="lost"))
    await audit.flush()  # outside a batch: nothing pending
    assert await audit.query() == []
    await audit.write(tool_call(operation="kept"))  # and writes go straight in again
    assert [r["operation"] for r in await audit.query()] == ["kept"]


async def test_a_batch_stamps_its_projection_on_rows_without_one(audit: AuditLog) -> None:
    with AuditLog.batched("t-1", projection="mcp"):
        await audit.write(tool_call(operation="stamped"))
        await audit.write(replace(tool_call(operation="own"), projection="a2a"))
        await audit.flush()
    await audit.write(tool_call(operation="outside"))
    rows = {r["operation"]: r["projection"] for r in await audit.query()}
    assert rows == {"stamped": "mcp", "own": "a2a", "outside": None}


def test_a_batch_names_its_invocations_task_while_it_lasts() -> None:
    assert AuditLog.invocation_task() is None
    with AuditLog.batched("t-9"):
        assert AuditLog.invocation_task() == "t-9"
        with AuditLog.batched():
            assert AuditLog.invocation_task() is None
        assert AuditLog.invocation_task() == "t-9"
    assert AuditLog.invocation_task() is None


async def test_a_batch_with_a_bad_row_stores_none_of_it(audit: AuditLog) -> None:
    with AuditLog.batched():
        await audit.write(tool_call(operation="good"))
        await audit.write(tool_call(operation="bad", ts=NOON.replace(tzinfo=None)))
        with pytest.raises((ValueError, StatementError)):
            await audit.flush()
    assert await audit.query() == []


async def test_usage_counts_invocations_per_skill_and_day(audit: AuditLog) -> None:
    day_before = NOON - timedelta(days=1)
    for record in (
        invocation("alpha", "allow", "alice", NOON),
        invocation("alpha", "allow", "alice", NOON + timedelta(hours=1)),
        invocation("alpha", "deny", "carl", NOON + timedelta(hours=2)),
        invocation("alpha", "allow", "carl", day_before),
        invocation("beta", "deny", "vic", NOON),
        tool_call(skill_id="alpha"),  # a tool call is not an invocation
        tool_call(skill_id="alpha", tool=AGENT_TOOL, operation="describe"),
    ):
        await audit.write(record)
    assert await audit.usage() == [
        {
            "skill_id": "alpha",
            "day": "2026-11-28",
            "calls": 1,
            "refused": 0,
            "callers": 1,
            "last_call": day_before,
        },
        {
            "skill_id": "alpha",
            "day": "2026-11-29",
            "calls": 2,
            "refused": 1,
            "callers": 2,
            "last_call": NOON + timedelta(hours=2),
        },
        {
            "skill_id": "beta",
            "day": "2026-11-29",
            "calls": 0,
            "refused": 1,
            "callers": 1,
            "last_call": NOON,
        },
    ]


async def test_usage_since_counts_only_later_invocations(audit: AuditLog) -> None:
    await audit.write(invocation("alpha", "allow", "alice", NOON - timedelta(hours=2)))
    await audit.write(invocation("alpha", "deny", "carl", NOON))
    (row,) = await audit.usage(since=NOON - timedelta(hours=1))
    assert (row["calls"], row["refused"], row["callers"], row["last_call"]) == (0, 1, 1, NOON)


async def test_usage_counts_invocations_that_named_no_skill(audit: AuditLog) -> None:
    """Where the group without a skill sorts is the backend's (SQLite: first; PostgreSQL: last)."""
    await audit.write(invocation(None, "deny", "alice", NOON))
    await audit.write(invocation(None, "deny", "carl", NOON))
    await audit.write(invocation("alpha", "allow", "alice", NOON))
    rows = await audit.usage()
    assert sorted(rows, key=lambda r: r["skill_id"] is not None) == [
        {
            "skill_id": None,
            "day": "2026-11-29",
            "calls": 0,
            "refused": 2,
            "callers": 2,
            "last_call": NOON,
        },
        {
            "skill_id": "alpha",
            "day": "2026-11-29",
            "calls": 1,
            "refused": 0,
            "callers": 1,
            "last_call": NOON,
        },
    ]


async def test_usage_of_an_empty_trail_is_empty(audit: AuditLog) -> None:
    assert await audit.usage() == []
