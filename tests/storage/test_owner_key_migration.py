"""core_0003: stored owners move from ``tenant:subject`` to the injective owner key.

On each backend, rows written under the old key (the SDK's task table and the cluster
store's, the core's bindings and runner rows) are migrated, and the stores then find each task
for the identity that made it, and for no other; downgrade restores the old keys.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.types import Task, TaskState, TaskStatus
from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.security.identity import owner_key
from agent.storage import schema as core
from agent.storage.engine import make_engine
from agent.storage.recovery import EVENTS, TASKS, VERSIONS
from agent.storage.schema import task_binding, task_runner
from agent.storage.settlement import OwnerUser
from agent.storage.task_store import UpsertDatabaseTaskStore
from tests.storage.conftest import NewDatabase

NOW = datetime(2026, 12, 2, tzinfo=UTC)
IDENTITIES = [
    ("acme", "alice"),
    ("acme", "bob:x"),
    ("acme", "agent:peer"),
    ("globex", ":x"),
    ("acme", "s" * 187),
    ("t" * 64, "s" * 187),
    ("acme", "bob\uff1ax"),
    ("acme", "Zo\u00eb|a/b%3A"),
    ("", "tenantless"),
]
OLD = {f"task-{n}": f"{tenant}:{subject}" for n, (tenant, subject) in enumerate(IDENTITIES)}
OLD["task-anonymous"] = ""
OLD["task-too-long"] = "t" * 64 + ":" + "s" * 190  # the old limits allowed this; the new not


def new_key(old: str) -> str:
    tenant, _, subject = old.partition(":")
    return owner_key(tenant, subject)


def task_row(engine: AsyncEngine, task_id: str, owner: str) -> dict[str, Any]:
    """The columns the SDK's store writes for a completed task of ``owner``."""
    task = Task(
        id=task_id, context_id="ctx", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED)
    )
    return UpsertDatabaseTaskStore(engine).row(task, owner)


async def write_old_rows(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        # Only the SDK's tables this revision rewrites (core_0005 makes the push-config one).
        for table in (TASKS, VERSIONS, EVENTS):
            await conn.run_sync(table.create)
        for task_id, owner in OLD.items():
            await conn.execute(TASKS.insert().values(task_row(engine, task_id, owner)))
            await conn.execute(VERSIONS.insert().values(task_id=task_id, owner=owner, version=1))
            await conn.execute(
                EVENTS.insert().values(task_id=task_id, owner=owner, task_version=1, event_data=b"")
            )
            await conn.execute(
                task_binding.insert().values(
                    task_id=task_id,
                    owner=owner,
                    phase="bound",
                    skill_id="ping",
                    candidates=[],
                    arguments={},
                    text="",
                    updated_at=NOW,
                )
            )
            await conn.execute(
                task_runner.insert().values(
                    task_id=task_id,
                    replica="r",
                    owner=owner,
                    principal="p",
                    tenant=None,
                    skill_id=None,
                    since=NOW,
                )
            )


async def owners(engine: AsyncEngine, table: Table, key: str = "task_id") -> dict[str, str]:
    async with engine.connect() as conn:
        rows = (await conn.execute(select(table.c[key], table.c.owner))).all()
    return {row[0]: row[1] for row in rows}


async def test_stored_owners_are_rewritten_and_read_back(new_database: NewDatabase) -> None:
    url = new_database("owners")
    await core.upgrade(url, "core_0002")
    engine = make_engine(url)
    try:
        await write_old_rows(engine)
        await core.upgrade(url)
        expected = {task_id: new_key(old) if old else old for task_id, old in OLD.items()}
        expected["task-too-long"] = "~" + OLD["task-too-long"][:254]
        for table, key in (
            (TASKS, "id"),
            (VERSIONS, "task_id"),
            (EVENTS, "task_id"),
            (task_binding, "task_id"),
            (task_runner, "task_id"),
        ):
            assert await owners(engine, table, key) == expected, table.name

        # Each identity's task is its own, and the look-alike's is not.
        store = UpsertDatabaseTaskStore(engine)
        for n, (tenant, subject) in enumerate(IDENTITIES):
            mine = ServerCallContext(user=OwnerUser(owner_key(tenant, subject)))
            assert (await store.get(f"task-{n}", mine)) is not None, (tenant, subject)
        shifted = ServerCallContext(user=OwnerUser(owner_key("acme:bob", "x")))
        assert await store.get("task-1", shifted) is None

        await core.downgrade(url, "core_0002")
        restored = {**OLD, "task-too-long": expected["task-too-long"]}
        assert await owners(engine, TASKS, "id") == restored
        assert await owners(engine, task_binding) == restored
    finally:
        await engine.dispose()


async def test_a_fresh_database_has_nothing_to_rewrite(new_database: NewDatabase) -> None:
    """No SDK table yet (the core migrates before the SDK's store creates it)."""
    url = new_database("fresh")
    await core.upgrade(url)
    assert await core.current_revision(url) == core.head_revision()
