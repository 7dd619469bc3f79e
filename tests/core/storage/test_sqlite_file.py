"""The CLI's reads of a SQLite file with sqlite3 alone (``agent/storage/sqlite_file.py``).

The audit trail's reads also run the whole AuditLog contract (test_audit_contract.py, form
``sqlite3``); here: the columns and their conversions are the tables', the correlations read
as ``CorrelationStore.query`` reads them, the version check, and a reader beside a writer.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import JSON
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.client.correlation import CorrelationStore
from agent.errors import ConfigurationError
from agent.storage import migrate as core
from agent.storage.audit import AGENT_TOOL
from agent.storage.engine import make_engine
from agent.storage.history import MigrationHistory
from agent.storage.sqlite_file import (
    AUDIT_COLUMNS,
    CORRELATION_COLUMNS,
    INVOCATION,
    JSON_LISTS,
    SQLITE_TIMEOUT_S,
    TIMES,
    insert_at_heads,
    reading,
    sqlite_path,
)
from agent.storage.tables import principal_audit, task_correlation
from agent.storage.types import UTCDateTime

NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_the_columns_and_their_conversions_are_the_tables() -> None:
    for table, columns in (
        (principal_audit, AUDIT_COLUMNS),
        (task_correlation, CORRELATION_COLUMNS),
    ):
        assert tuple(table.c.keys()) == columns
        times = {c.name for c in table.c if isinstance(c.type, UTCDateTime)}
        lists = {c.name for c in table.c if isinstance(c.type, JSON)}
        assert times <= TIMES and lists <= JSON_LISTS
        assert times == TIMES & set(columns) and lists == JSON_LISTS & set(columns)
    assert INVOCATION == (AGENT_TOOL, "invoke")


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite+aiosqlite:////home/a/netagent.db", "/home/a/netagent.db"),
        ("sqlite:////home/a/netagent.db", "/home/a/netagent.db"),
        ("sqlite:///relative.db", "relative.db"),
        ("sqlite+aiosqlite:///:memory:", None),
        ("sqlite://", None),
        ("sqlite:///file:shared?mode=memory&uri=true", None),
        ("sqlite:////home/a/x.db?timeout=5", None),
        ("sqlite:////home/a/x%20y.db", None),
        ("postgresql+asyncpg://u:p@host/db", None),
    ],
)
def test_only_a_plain_file_url_is_read_by_sqlite3(url: str, path: str | None) -> None:
    assert sqlite_path(url) == (None if path is None else Path(path))


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[tuple[Path, AsyncEngine]]:
    """A file with the core's tables at their head, and an engine writing it."""
    path = tmp_path / "netagent.db"
    await core.upgrade(f"sqlite+aiosqlite:///{path}")
    engine = make_engine(f"sqlite+aiosqlite:///{path}")
    yield path, engine
    await engine.dispose()


async def test_correlations_read_as_the_store_reads_them(
    database: tuple[Path, AsyncEngine],
) -> None:
    path, engine = database
    rows: list[dict[str, Any]] = [
        {
            "ts": NOON + timedelta(minutes=n, microseconds=n * 7),
            "workflow_id": f"wf-{n % 2}",
            "upstream_agent": "http://a",
            "upstream_endpoint": "http://a/a2a/jsonrpc",
            "upstream_task_id": f"up-{n}",
            "upstream_skill": "check_link_capacity",
            "downstream_agent": "http://b",
            "downstream_endpoint": "http://b/a2a/jsonrpc",
            "downstream_task_id": f"down-{n}",
            "downstream_skill": "plan_link_upgrade",
        }
        for n in range(5)
    ]
    rows[3]["ts"] = NOON.astimezone(timezone(timedelta(hours=-7)))
    async with engine.begin() as connection:
        await connection.execute(task_correlation.insert(), rows)
    store = CorrelationStore(engine)
    for filters in (
        {},
        {"limit": 2},
        {"limit": 0},
        {"workflow_id": "wf-1"},
        {"task_id": "up-2"},
        {"task_id": "down-3"},
        {"workflow_id": "wf-0", "task_id": "up-2"},
        {"workflow_id": "wf-0", "task_id": "up-1"},
        {"task_id": "up-"},
    ):
        with reading(path) as file:
            read = file.correlations(**filters)
        assert read == await store.query(**filters), filters
        assert all(row["ts"].utcoffset() == timedelta(0) for row in read)
    with reading(path) as file:
        assert [r["upstream_task_id"] for r in file.correlations()] == [
            f"up-{n}" for n in (4, 3, 2, 1, 0)
        ]


def _link(n: int, ts: datetime) -> dict[str, Any]:
    return {
        "ts": ts,
        "workflow_id": f"wf-{n}",
        "upstream_agent": "http://a",
        "upstream_endpoint": "http://a/a2a/jsonrpc",
        "upstream_task_id": f"up-{n}",
        "upstream_skill": "check_link_capacity",
        "downstream_agent": "http://b'; DROP TABLE task_correlation; --",
        "downstream_endpoint": "http://b/a2a/jsonrpc\u0000",
        "downstream_task_id": f"down-{n}",
        "downstream_skill": "plan_\N{SNOWMAN}",
    }


@pytest.mark.parametrize(
    "ts",
    [NOON, NOON.astimezone(timezone(timedelta(hours=5, minutes=30))), NOON.replace(microsecond=1)],
)
async def test_a_link_written_by_sqlite3_is_the_one_sqlalchemy_writes(
    database: tuple[Path, AsyncEngine], ts: datetime
) -> None:
    """``chain``'s link by sqlite3 alone: stored byte for byte as SQLAlchemy stores it, and
    read back alike by both readers."""
    path, engine = database
    assert insert_at_heads(path, [core.CORE], "task_correlation", _link(1, ts))
    await CorrelationStore(engine).insert(_link(2, ts))
    with sqlite3.connect(path) as connection:
        stored = connection.execute(
            f"SELECT {', '.join(CORRELATION_COLUMNS[1:])} FROM task_correlation ORDER BY id"
        ).fetchall()
    ours, theirs = (dict(zip(CORRELATION_COLUMNS[1:], row, strict=True)) for row in stored)
    for name in ("workflow_id", "upstream_task_id", "downstream_task_id"):
        ours.pop(name), theirs.pop(name)
    assert ours == theirs
    with reading(path) as file:
        read = file.correlations()
    assert [r["ts"] for r in read] == [ts, ts]
    assert read == await CorrelationStore(engine).query()


async def test_a_link_is_not_written_by_sqlite3_to_a_file_off_its_heads(
    database: tuple[Path, AsyncEngine], tmp_path: Path
) -> None:
    path, _ = database
    other = MigrationHistory(tmp_path, "alembic_version_other", "0001")
    assert not insert_at_heads(path, [core.CORE, other], "task_correlation", _link(1, NOON))
    with reading(path) as file:
        assert file.correlations() == []
    with pytest.raises(ValueError, match="not a row of a writable table"):
        insert_at_heads(path, [core.CORE], "principal_audit", {"tool": "x"})
    with pytest.raises(ValueError, match="not a row of a writable table"):
        insert_at_heads(path, [core.CORE], "task_correlation", {"id": 5})
    with pytest.raises(ValueError, match="naive datetime"):
        insert_at_heads(path, [core.CORE], "task_correlation", _link(1, NOON.replace(tzinfo=None)))
    with reading(path) as file:
        assert file.correlations() == []  # nothing half-written


def test_a_link_to_a_file_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "netagent.db"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ConfigurationError, match="cannot write the database"):
        insert_at_heads(junk, [core.CORE], "task_correlation", _link(1, NOON))
    with pytest.raises(ConfigurationError, match="cannot write the database"):
        insert_at_heads(tmp_path / "missing.db", [core.CORE], "task_correlation", _link(1, NOON))
    assert not (tmp_path / "missing.db").exists()


async def test_the_file_store_falls_back_when_the_file_left_its_heads(
    database: tuple[Path, AsyncEngine], tmp_path: Path
) -> None:
    """A file migrated by a newer agent between the check and the write: the link goes
    through the fallback (which migrates first) instead of being lost."""
    from types import SimpleNamespace

    from agent.client.correlation import FileCorrelationStore

    path, _ = database
    fallen: list[dict[str, Any]] = []

    async def fallback(row: dict[str, Any]) -> None:
        fallen.append(row)

    invocation: Any = SimpleNamespace(
        endpoint="http://a/a2a/jsonrpc", task_id="t", interface=SimpleNamespace(skill_id="s")
    )
    current = FileCorrelationStore(path, [core.CORE], fallback)
    await current.record("wf", invocation, "http://a", invocation, "http://a")
    other = MigrationHistory(tmp_path, "alembic_version_other", "0001")
    moved = FileCorrelationStore(path, [core.CORE, other], fallback)
    await moved.record("wf-2", invocation, "http://a", invocation, "http://a")
    with reading(path) as file:
        assert [r["workflow_id"] for r in file.correlations()] == ["wf"]
    assert [r["workflow_id"] for r in fallen] == ["wf-2"]


async def test_the_heads_are_what_the_version_tables_record(
    database: tuple[Path, AsyncEngine], tmp_path: Path
) -> None:
    path, _ = database
    other = MigrationHistory(tmp_path, "alembic_version_other", "0001")
    with reading(path) as file:
        assert file.recorded(core.VERSION_TABLE) == {core.HEAD}
        assert file.at_heads([core.CORE])
        assert file.recorded("alembic_version_other") == set()  # that history never ran
        assert not file.at_heads([core.CORE, other])
        assert not file.at_heads([MigrationHistory(tmp_path, core.VERSION_TABLE)])  # no head
        with pytest.raises(ValueError, match="not a table name"):
            file.recorded("x; DROP TABLE principal_audit")
    with sqlite3.connect(path) as connection:
        connection.execute(f"UPDATE {core.VERSION_TABLE} SET version_num = 'core_0003'")
    with reading(path) as file:
        assert not file.at_heads([core.CORE])  # older
    with sqlite3.connect(path) as connection:
        connection.execute(f"INSERT INTO {core.VERSION_TABLE} VALUES ('{core.HEAD}')")
    with reading(path) as file:
        assert not file.at_heads([core.CORE])  # two heads recorded: not this history's state


async def test_a_reader_never_writes(database: tuple[Path, AsyncEngine]) -> None:
    path, _ = database
    with pytest.raises(ConfigurationError, match="readonly"), reading(path) as file:
        file._connection.execute(f"DELETE FROM {core.VERSION_TABLE}")
    with reading(path) as file:
        assert file.at_heads([core.CORE])


def test_a_missing_file_is_not_made(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    with (
        pytest.raises(ConfigurationError, match=f"cannot read the database {missing}"),
        reading(missing),
    ):
        pass
    assert not missing.exists()


def test_a_file_that_is_not_a_database_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "netagent.db"
    path.write_bytes(b"not a database, only some bytes" * 100)
    with pytest.raises(ConfigurationError, match="file is not a database"), reading(path):
        pass


async def test_a_reader_beside_a_writer_holding_its_lock_reads_at_once(
    database: tuple[Path, AsyncEngine],
) -> None:
    """WAL: ``serve`` writing (a transaction open, its lock held) never makes a reader wait;
    the reader sees what was committed before it began."""
    path, engine = database
    async with engine.begin() as connection:
        await connection.execute(principal_audit.insert(), [_row("committed")])
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "INSERT INTO principal_audit (ts, principal, actor_chain, tool, operation,"
            " resource_ids, decision, reason) VALUES"
            " ('2026-11-29 12:00:00.000000', 'w', '[]', 't', 'pending', '[]', 'allow', 'ok')"
        )
        started = time.monotonic()
        with reading(path) as file:
            assert [r["operation"] for r in file.audit()] == ["committed"]
            assert file.at_heads([core.CORE])
        assert time.monotonic() - started < 2.0  # not the 30 s busy timeout
    finally:
        writer.rollback()
        writer.close()


async def test_a_reader_among_many_commits_reads_a_consistent_state(
    database: tuple[Path, AsyncEngine],
) -> None:
    """A writer commits row after row while readers come and go: none fails, and each sees
    a prefix of the writes (ids without gaps, newest first)."""
    path, _ = database
    stop = threading.Event()
    written = threading.Event()  # reads start after the first commit: a loaded machine can run
    # all fifty before the writer thread is first scheduled, and then check nothing

    def write() -> None:
        connection = sqlite3.connect(path, isolation_level=None, timeout=SQLITE_TIMEOUT_S)
        try:
            n = 0
            while not stop.is_set():
                connection.execute(
                    "INSERT INTO principal_audit (ts, principal, actor_chain, tool, operation,"
                    " resource_ids, decision, reason) VALUES"
                    " (?, 'w', '[]', 't', ?, '[]', 'allow', 'ok')",
                    ("2026-11-29 12:00:00.000000", f"op-{n}"),
                )
                n += 1
                written.set()
        finally:
            connection.close()

    thread = threading.Thread(target=write)
    thread.start()
    try:
        written.wait(timeout=30)
        seen = 0
        for _ in range(50):
            with reading(path) as file:
                ids = [row["id"] for row in file.audit(limit=-1)]
                assert file.at_heads([core.CORE])
            assert ids == list(range(len(ids), 0, -1))
            seen = max(seen, len(ids))
    finally:
        stop.set()
        thread.join()
    assert seen > 0


def _row(operation: str) -> dict[str, Any]:
    return {
        "ts": NOON,
        "principal": "alice",
        "actor_chain": [],
        "tool": "inventory",
        "operation": operation,
        "resource_ids": [],
        "decision": "allow",
        "reason": "ok",
    }


def test_a_copy_of_a_database_is_read_like_the_original(tmp_path: Path) -> None:
    """No state of its own: a file copied (a backup) reads the same, and stays as it was."""
    source = tmp_path / "a.db"
    with sqlite3.connect(source) as connection:
        connection.execute(f"CREATE TABLE {core.VERSION_TABLE} (version_num VARCHAR(32))")
        connection.execute(f"INSERT INTO {core.VERSION_TABLE} VALUES ('{core.HEAD}')")
    copy = tmp_path / "b.db"
    shutil.copyfile(source, copy)
    before = copy.read_bytes()
    with reading(copy) as file:
        assert file.at_heads([core.CORE])
    assert copy.read_bytes() == before
