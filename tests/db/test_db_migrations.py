"""Alembic migrations: they create the schema the models describe, and nothing else."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect

from agent.storage.engine import make_engine
from db.migrate import (
    MIGRATIONS_DIR,
    VERSION_TABLE,
    alembic_config,
    current_revision,
    downgrade,
    head_revision,
    upgrade,
)
from db.models import TABLES, Base

EXPECTED_TABLES = {
    "tenant",
    "site",
    "device",
    "interface",
    "link",
    "link_utilization_sample",
    "metric_sample",
}


def url_for(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


async def table_names(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
    finally:
        await engine.dispose()


def test_config_needs_no_ini_file() -> None:
    cfg = alembic_config("sqlite:///x.db")
    assert cfg.config_file_name is None
    assert Path(cfg.get_main_option("script_location") or "") == MIGRATIONS_DIR
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert head_revision() == "0004"
    assert set(TABLES) == EXPECTED_TABLES


async def test_upgrade_creates_every_table(tmp_path: Path) -> None:
    url = url_for(tmp_path / "db.sqlite")
    assert await current_revision(url) is None
    await upgrade(url)
    # Only the inventory's: 0002-0004 no longer make the core's tables (agent/storage/migrations).
    assert await table_names(url) == EXPECTED_TABLES | {VERSION_TABLE}
    assert await current_revision(url) == head_revision()
    await upgrade(url)  # idempotent
    assert await current_revision(url) == head_revision()


async def test_models_match_migration(tmp_path: Path) -> None:
    url = url_for(tmp_path / "db.sqlite")
    await upgrade(url)

    def diff(conn: Connection) -> list[object]:
        ctx = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "include_name": lambda name, type_, _: type_ != "table" or name in TABLES,
            },
        )
        return list(compare_metadata(ctx, Base.metadata))

    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(diff) == []
    finally:
        await engine.dispose()


async def test_shares_database_with_other_alembic_histories(tmp_path: Path) -> None:
    """The a2a-sdk task store keeps its own tables and version table in the same file."""
    url = url_for(tmp_path / "db.sqlite")
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.exec_driver_sql("CREATE TABLE a2a_alembic_version (version_num TEXT)")
            await conn.exec_driver_sql("INSERT INTO a2a_alembic_version VALUES ('abc123')")
            await conn.exec_driver_sql("CREATE TABLE tasks (id TEXT PRIMARY KEY)")
    finally:
        await engine.dispose()
    await upgrade(url)
    assert {"tasks", "a2a_alembic_version", VERSION_TABLE} <= await table_names(url)
    assert "alembic_version" not in await table_names(url)
    await downgrade(url)
    assert await table_names(url) == {"tasks", "a2a_alembic_version", VERSION_TABLE}
    assert await current_revision(url) is None
