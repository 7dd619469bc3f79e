"""The core's migrations: its own tables and version table, beside any deployment's history."""

from __future__ import annotations

import io
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from a2a.server.models import Base as SdkBase
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import Column, inspect, select, text
from sqlalchemy.exc import DBAPIError

from agent.storage import schema as core
from agent.storage.audit import AuditRecord, DatabaseAuditLog
from agent.storage.bindings import Binding, DatabaseBindingStore, Phase
from agent.storage.engine import make_engine
from agent.storage.schema import TABLES, metadata
from db import migrate as inventory
from db.models import TABLES as INVENTORY_TABLES
from db.models import Base
from tests.storage.conftest import NewDatabase
from tests.storage.schema import metadata_differences, schema_of

CORE_TABLES = {
    "task_binding",
    "principal_audit",
    "task_correlation",
    "replica_lease",
    "task_runner",
    "push_notification_configs",
    "push_outbox",
}


async def table_names(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
    finally:
        await engine.dispose()


def test_config_needs_no_ini_file() -> None:
    cfg = core.alembic_config("sqlite:///x.db")
    assert cfg.config_file_name is None
    assert Path(cfg.get_main_option("script_location") or "") == core.MIGRATIONS_DIR
    assert cfg.get_main_option("version_table") == core.VERSION_TABLE == "alembic_version_core"
    for shipped in ("env.py", "script.py.mako", "alembic.ini"):
        assert (core.MIGRATIONS_DIR / shipped).is_file()
    assert core.head_revision() == "core_0005"
    assert set(TABLES) == CORE_TABLES


def test_the_revision_declares_the_columns_the_code_uses() -> None:
    """One type per column: the same type objects (UTCDateTime, not a plain DateTime), lengths,
    nullability and keys as ``agent.storage.schema``; the schema tests cannot tell those apart
    where the database stores them alike."""
    scripts = ScriptDirectory.from_config(core.alembic_config())
    revisions = [scripts.get_revision(r) for r in ("core_0001", "core_0002", "core_0005")]

    def shape(columns: Iterable[Column[Any]]) -> list[tuple[str, str, bool | None, bool]]:
        return [(c.name, repr(c.type), c.nullable, c.primary_key) for c in columns]

    declared = {
        name: shape(columns())
        for revision in revisions
        if revision is not None
        for name, (columns, _) in revision.module.TABLES.items()
    }
    added = scripts.get_revision("core_0004")
    assert added is not None
    for name, columns in added.module.ADDED.items():  # appended, in this order
        declared[name] += shape(column() for column in columns)
    assert declared == {name: shape(table.columns) for name, table in metadata.tables.items()}


def test_offline_sql_creates_every_table_and_trigger() -> None:
    """``alembic upgrade --sql`` has no database to look at: it writes a fresh schema."""
    cfg = core.alembic_config("sqlite:///unused.db")
    cfg.output_buffer = io.StringIO()
    command.upgrade(cfg, "head", sql=True)
    sql = cfg.output_buffer.getvalue()
    for table in CORE_TABLES:
        assert f"CREATE TABLE {table}" in sql
    assert sql.count("CREATE TRIGGER principal_audit_no_") == 3
    assert "INSERT INTO alembic_version_core (version_num) VALUES ('core_0001')" in sql
    assert "UPDATE alembic_version_core SET version_num='core_0002'" in sql
    assert "UPDATE alembic_version_core SET version_num='core_0003'" in sql
    assert "ALTER TABLE principal_audit ADD COLUMN projection VARCHAR(8)" in sql
    assert "UPDATE alembic_version_core SET version_num='core_0004'" in sql
    assert "UPDATE alembic_version_core SET version_num='core_0005'" in sql


async def test_upgrade_creates_the_core_tables_only(new_database: NewDatabase) -> None:
    url = new_database("core")
    assert await core.current_revision(url) is None
    await core.upgrade(url)
    assert await table_names(url) == CORE_TABLES | {core.VERSION_TABLE}
    assert await core.current_revision(url) == core.head_revision()
    assert await metadata_differences(url, metadata) == []
    before = await schema_of(url)
    await core.upgrade(url)  # idempotent
    assert await schema_of(url) == before


async def test_a_fork_without_the_inventory_keeps_bindings_and_audit(
    new_database: NewDatabase,
) -> None:
    """No db/ history ever ran: the core's upgrade alone makes working, append-only tables."""
    url = new_database("fork")
    await core.upgrade(url)
    assert await inventory.current_revision(url) is None
    engine = make_engine(url)
    try:
        bound = Binding("t-1", "acme:alice", Phase.BOUND, skill_id="s", arguments={"a": 1})
        await DatabaseBindingStore(engine).put(bound)
        assert await DatabaseBindingStore(engine).get("t-1", "acme:alice") == bound
        audit = DatabaseAuditLog(engine)
        moment = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
        await audit.write(AuditRecord("alice", "acme", "agent", "invoke", "allow", "ok", ts=moment))
        (row,) = await audit.query()
        assert (row["principal"], row["ts"]) == ("alice", moment)
        with pytest.raises(DBAPIError, match="append-only"):
            async with engine.begin() as connection:
                await connection.execute(text("DELETE FROM principal_audit"))
    finally:
        await engine.dispose()


async def test_core_and_inventory_end_the_same_in_either_order(new_database: NewDatabase) -> None:
    core_first, inventory_first = new_database("core_first"), new_database("inventory_first")
    await core.upgrade(core_first)
    await inventory.upgrade(core_first)
    await inventory.upgrade(inventory_first)
    await core.upgrade(inventory_first)
    assert await schema_of(core_first) == await schema_of(inventory_first)
    for url in (core_first, inventory_first):
        assert await table_names(url) == (
            CORE_TABLES | set(INVENTORY_TABLES) | {core.VERSION_TABLE, inventory.VERSION_TABLE}
        )
        assert await metadata_differences(url, metadata) == []
        assert await metadata_differences(url, Base.metadata) == []


async def test_a_table_of_another_shape_is_not_adopted(new_database: NewDatabase) -> None:
    url = new_database("foreign")
    engine = make_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("CREATE TABLE task_binding (task_id TEXT, note TEXT)"))
    finally:
        await engine.dispose()
    with pytest.raises(RuntimeError, match=r"table task_binding exists with columns \['task_id'"):
        await core.upgrade(url)
    assert await core.current_revision(url) is None
    assert await table_names(url) & CORE_TABLES == {"task_binding"}  # none made, none dropped


async def test_a_push_config_table_the_sdk_made_is_kept(new_database: NewDatabase) -> None:
    """The SDK's store makes its config table when asked to: core_0005 keeps it, rows and all."""
    url = new_database("sdk_push")
    await core.upgrade(url, "core_0004")
    configs = SdkBase.metadata.tables["push_notification_configs"]
    engine = make_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(lambda c: configs.create(c))
            row = {"task_id": "t", "config_id": "c", "config_data": b"{}", "owner": "o"}
            await connection.execute(configs.insert().values(row))
        await core.upgrade(url)
        async with engine.connect() as connection:
            kept = (await connection.execute(select(configs.c.task_id, configs.c.owner))).all()
        assert [tuple(r) for r in kept] == [("t", "o")]
        assert await core.current_revision(url) == core.head_revision()
    finally:
        await engine.dispose()


async def test_each_downgrade_leaves_the_other_history_alone(new_database: NewDatabase) -> None:
    url = new_database("downgrades")
    await core.upgrade(url)
    await inventory.upgrade(url)
    await inventory.downgrade(url)
    assert await table_names(url) == CORE_TABLES | {core.VERSION_TABLE, inventory.VERSION_TABLE}
    assert await core.current_revision(url) == core.head_revision()
    await core.downgrade(url)
    assert await table_names(url) == {core.VERSION_TABLE, inventory.VERSION_TABLE}
    assert await core.current_revision(url) is None
    await core.upgrade(url)  # and up again (on PostgreSQL the trigger's function was dropped)
    assert await metadata_differences(url, metadata) == []
