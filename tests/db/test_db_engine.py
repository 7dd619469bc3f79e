"""Engine construction and the UTC timestamp type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, exc, insert, select

from agent.storage.engine import async_url, default_sqlite_url, make_engine, sqlite_file_opened
from agent.storage.schema import UTCDateTime


def test_default_sqlite_url_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_sqlite_url(tmp_path) == f"sqlite+aiosqlite:///{tmp_path}/netagent.db"
    monkeypatch.chdir(tmp_path)
    assert default_sqlite_url(Path("home")) == f"sqlite+aiosqlite:///{tmp_path}/home/netagent.db"


def test_async_drivers_are_filled_in() -> None:
    assert async_url("postgresql://u:p@db/netops").drivername == "postgresql+asyncpg"
    assert async_url("sqlite:////tmp/x.db").drivername == "sqlite+aiosqlite"
    assert async_url("postgresql+asyncpg://db/x").drivername == "postgresql+asyncpg"


async def test_postgres_engine_pings_before_use() -> None:
    engine = make_engine("postgresql://u:p@localhost:1/netops")
    try:
        assert engine.dialect.name == "postgresql"
        assert engine.dialect.driver == "asyncpg"
        assert engine.pool._pre_ping  # type: ignore[attr-defined]
    finally:
        await engine.dispose()


async def test_sqlite_pragmas_and_parent_dir(tmp_path: Path) -> None:
    engine = make_engine(default_sqlite_url(tmp_path / "new" / "home"))
    try:
        async with engine.connect() as conn:
            assert (await conn.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1
            assert (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar() == "wal"
            assert (await conn.exec_driver_sql("PRAGMA busy_timeout")).scalar() == 30000
        assert (tmp_path / "new" / "home" / "netagent.db").exists()
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    "name",
    [
        "file:{folder}/netagent.db?uri=true",
        "file://localhost{folder}/netagent.db?uri=true",
        "file:{escaped}/netagent.db?cache=private&uri=true",
        "file:{folder}/netagent.db?mode=rwc&uri=true",
        "file:{folder}/netagent.db",
    ],
)
async def test_a_file_uri_makes_its_own_folder_not_one_named_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A ``file:`` URI names a path: its folder is made there, nothing under the working
    directory (which once got a folder literally named ``file:``)."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    folder = tmp_path / "a b%" / "home"
    escaped = str(folder).replace("%", "%25").replace(" ", "%20")
    engine = make_engine(f"sqlite+aiosqlite:///{name.format(folder=folder, escaped=escaped)}")
    try:
        async with engine.connect() as conn:
            assert (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar() == "wal"
    finally:
        await engine.dispose()
    assert (folder / "netagent.db").is_file()
    assert list(cwd.iterdir()) == []


async def test_a_memory_uri_is_one_shared_connection() -> None:
    engine = make_engine("sqlite+aiosqlite:///file:netagent-mem?mode=memory&cache=shared&uri=true")
    try:
        async with engine.begin() as conn:
            await conn.exec_driver_sql("CREATE TABLE t (x INTEGER)")
        async with engine.connect() as conn:
            assert (await conn.exec_driver_sql("SELECT count(*) FROM t")).scalar() == 0
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    ("name", "opened"),
    [
        ("", None),
        (":memory:", None),
        ("file::memory:", None),
        ("file::memory:?cache=shared", None),
        ("file:shared?mode=memory&cache=shared", None),
        ("file:relative/x.db", Path("relative/x.db")),
        ("relative/x.db", Path("relative/x.db")),
        ("/abs/x.db", Path("/abs/x.db")),
    ],
)
def test_which_file_a_sqlite_name_opens(name: str, opened: Path | None) -> None:
    assert sqlite_file_opened(name) == opened


async def test_utc_datetime_round_trip(tmp_path: Path) -> None:
    meta = MetaData()
    table = Table("t", meta, Column("id", Integer, primary_key=True), Column("at", UTCDateTime))
    engine = make_engine(default_sqlite_url(tmp_path))
    try:
        async with engine.begin() as conn:
            await conn.run_sync(meta.create_all)
            tokyo = timezone(timedelta(hours=9))
            await conn.execute(
                insert(table), [{"id": 1, "at": datetime(2026, 1, 1, 9, tzinfo=tokyo)}]
            )
            stored = (await conn.exec_driver_sql("SELECT at FROM t")).scalar()
            assert stored.startswith("2026-01-01 00:00:00")  # written as UTC text
            got = (await conn.execute(select(table.c.at))).scalar_one()
            assert got == datetime(2026, 1, 1, tzinfo=UTC)
            assert got.tzinfo is UTC
            with pytest.raises(exc.StatementError, match="naive datetime"):
                await conn.execute(insert(table), [{"id": 2, "at": datetime(2026, 1, 1)}])
    finally:
        await engine.dispose()
