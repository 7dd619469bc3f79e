"""A database made by 68c130d upgrades in place, on SQLite and PostgreSQL.

At 68c130d the inventory's history (0002-0004) created the core's tables. The dumps in
tests/fixtures/ (see the README there) hold such a database with a few rows in each core table
and one task. Loaded into a fresh database and started the way ``netagent serve`` starts
(``prepare_storage``), it must end with both histories at head, every row readable through
today's stores, and the schema a fresh database gets.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from a2a.server.context import ServerCallContext
from a2a.types import TaskState
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from agent.app import prepare_storage, task_store
from agent.base.settings import Settings
from agent.client.compose import CorrelationStore
from agent.security.principal import Principal, PrincipalUser
from agent.storage import schema as core
from agent.storage.audit import AuditRecord, DatabaseAuditLog
from agent.storage.bindings import Binding, DatabaseBindingStore, Phase
from agent.storage.engine import make_engine
from agent.storage.schema import metadata
from agent.storage.task_store import UpsertDatabaseTaskStore
from db import migrate as inventory
from db.models import Base
from netops.deployment import network_deployment
from tests.conftest import postgres_script
from tests.storage.conftest import NewDatabase
from tests.storage.schema import metadata_differences, schema_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
MOMENT = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)  # the audit rows' time in the dumps
BINDINGS = [  # the dumps hold the old owners (acme:alice ...); core_0003 rewrote them
    Binding(
        "task-bound",
        "4:acme:alice",
        Phase.BOUND,
        skill_id="check_link_capacity",
        arguments={"link_id": "acme-lnk-00002"},
        text="is acme-lnk-00002 running hot?",
    ),
    Binding(
        "task-clarify",
        "4:acme:paula",
        Phase.CLARIFY,
        candidates=("check_link_capacity", "plan_link_upgrade"),
        text="capacity",
    ),
    Binding(
        "task-arguments",
        "6:globex:gary",
        Phase.ARGUMENTS,
        skill_id="plan_link_upgrade",
        arguments={"horizon_days": 90},
        text="plan an upgrade",
    ),
]


def load_dump(url: str) -> None:
    """The dump of ``url``'s backend, loaded the way an operator would restore it."""
    if make_url(url).get_backend_name() == "postgresql":
        postgres_script(url, (FIXTURES / "68c130d.postgresql.sql").read_text())
        return
    with sqlite3.connect(str(make_url(url).database)) as connection:
        connection.executescript((FIXTURES / "68c130d.sqlite.sql").read_text())
    connection.close()


async def start_up(url: str, home: Path) -> None:
    """What ``netagent serve`` does to its database before it listens (no demo seed)."""
    settings = Settings(home=home, database_url=url, seed_on_start=False)
    engine = make_engine(url)
    try:
        await prepare_storage(settings, engine, network_deployment(), [task_store(engine)])
    finally:
        await engine.dispose()


def upgrades_run(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Running upgrade")]


async def rows(url: str) -> dict[str, Any]:
    """Every old row, read through today's stores."""
    engine = make_engine(url)
    alice = ServerCallContext(user=PrincipalUser(Principal("alice", "acme", frozenset())))
    try:
        bindings = DatabaseBindingStore(engine)
        task = await UpsertDatabaseTaskStore(engine).get("task-bound", alice)
        return {
            "bindings": [await bindings.get(b.task_id, b.owner) for b in BINDINGS],
            "audit": await DatabaseAuditLog(engine).query(),
            "correlation": await CorrelationStore(engine).query(workflow_id="wf-68c130d"),
            "task": None if task is None else (task.context_id, task.status.state),
        }
    finally:
        await engine.dispose()


async def test_a_68c130d_database_upgrades_in_place(
    new_database: NewDatabase, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old, fresh = new_database("from_68c130d"), new_database("fresh")
    load_dump(old)
    assert await inventory.current_revision(old) == "0004"
    assert await core.current_revision(old) is None
    caplog.set_level(logging.INFO, logger="alembic")

    await start_up(old, tmp_path / "old")
    ran = upgrades_run(caplog)  # the core's revisions; the inventory is at head already
    assert [line.split(",")[0] for line in ran] == [
        "Running upgrade  -> core_0001",
        "Running upgrade core_0001 -> core_0002",
        "Running upgrade core_0002 -> core_0003",
        "Running upgrade core_0003 -> core_0004",
        "Running upgrade core_0004 -> core_0005",
    ]
    assert await core.current_revision(old) == core.head_revision()
    assert await inventory.current_revision(old) == inventory.head_revision()

    found = await rows(old)
    assert found["bindings"] == BINDINGS
    audit = found["audit"]
    assert [(r["id"], r["principal"], r["decision"]) for r in audit] == [
        (3, "vic", "deny"),
        (2, "alice", "allow"),
        (1, "alice", "allow"),
    ]
    assert {r["ts"] for r in audit} == {MOMENT}
    assert audit[1]["resource_ids"] == ["acme-lnk-00002"] and audit[1]["token_id"] == "tok-1"
    assert audit[2]["actor_chain"] == ["urn:netops-agent"]
    assert audit[2]["interface_digest"] == "sha-256:" + "ab" * 32
    (link,) = found["correlation"]
    assert link["upstream_task_id"] == "task-bound"
    assert link["downstream_task_id"] == "task-downstream"
    assert link["ts"].tzinfo is UTC
    assert found["task"] == ("ctx-68c130d", TaskState.TASK_STATE_COMPLETED)

    await start_up(fresh, tmp_path / "fresh")
    assert await schema_of(old) == await schema_of(fresh)
    assert await metadata_differences(old, metadata) == []
    assert await metadata_differences(old, Base.metadata) == []

    caplog.clear()
    schema = await schema_of(old)
    await start_up(old, tmp_path / "old")  # a second start: nothing to do
    assert upgrades_run(caplog) == []
    assert await schema_of(old) == schema
    assert await rows(old) == found


async def test_adopted_tables_keep_their_rules_and_counters(
    new_database: NewDatabase, tmp_path: Path
) -> None:
    """The audit trail stays append-only, and new rows follow the old ones."""
    url = new_database("rules")
    load_dump(url)
    await start_up(url, tmp_path)
    engine = make_engine(url)
    try:
        audit = DatabaseAuditLog(engine)
        await audit.write(AuditRecord("alice", "acme", "agent", "invoke", "allow", "ok"))
        assert [r["id"] for r in await audit.query(limit=2)] == [4, 3]
        for statement in ("UPDATE principal_audit SET reason = 'x'", "DELETE FROM principal_audit"):
            with pytest.raises(DBAPIError, match="append-only"):
                async with engine.begin() as connection:
                    await connection.execute(text(statement))
        assert len(await audit.query()) == 4
    finally:
        await engine.dispose()
