"""`netagent audit`, `usage` and `chain list` on SQLite: a current database read at once,
anything else migrated first as `serve` does, and every hostile case one line.

The cases: the same output whichever way the file is named (a path, or a ``file:`` URI);
no database yet (refused, none made); an older revision (migrated before it is read,
never read with the old schema); a newer version's database (refused by name, exit 2, left
alone); a database `serve` is writing (its lock held: read at once); a read-only home (read
when current, one line when it would need writing). Each command runs in a fresh interpreter
of this checkout; an expected error never shows a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import text

from agent.storage import schema as core
from agent.storage.audit import AuditRecord, DatabaseAuditLog
from agent.storage.engine import make_engine
from agent.storage.schema import task_correlation
from db import migrate as inventory
from tests.conftest import postgres_database

ROOT = Path(__file__).resolve().parents[2]
NETAGENT = [sys.executable, "-c", "from netops.cli import main; main()"]
NOON = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
READS = (["audit"], ["usage"], ["chain", "list"])
"""The commands that only read the database."""


def netagent(
    home: Path, *args: str, prefix: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env |= {"NETAGENT_HOME": str(home), "COLUMNS": "200", "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [*prefix, *NETAGENT, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in run.stderr, run.stderr
    return run


def ok(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def one_line_error(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.startswith("error: ") and run.stderr.count("\n") == 1, run.stderr
    return run.stderr


def url_of(home: Path) -> str:
    return f"sqlite+aiosqlite:///{home / 'netagent.db'}"


def recorded(home: Path) -> dict[str, list[str]]:
    with contextlib.closing(sqlite3.connect(home / "netagent.db")) as connection:
        return {
            table: [row[0] for row in connection.execute(f"SELECT version_num FROM {table}")]
            for table in (core.VERSION_TABLE, inventory.VERSION_TABLE)
        }


AT_HEADS = {core.VERSION_TABLE: [core.HEAD], inventory.VERSION_TABLE: [inventory.HEAD]}


def migrate(home: Path, core_revision: str = "head", inventory_revision: str = "head") -> None:
    home.mkdir(parents=True, exist_ok=True)

    async def run() -> None:
        await core.upgrade(url_of(home), core_revision)
        await inventory.upgrade(url_of(home), inventory_revision)

    asyncio.run(run())


def fill(home: Path) -> None:
    """Audit rows over two days (one in another zone, one with microseconds, one without a
    skill) and two correlations, written as the agent writes them."""

    async def run() -> None:
        engine = make_engine(url_of(home))
        try:
            log = DatabaseAuditLog(engine)
            for n, (skill, decision, principal, ts) in enumerate(
                (
                    ("check_link_capacity", "allow", "alice", NOON - timedelta(days=1)),
                    ("check_link_capacity", "allow", "alice", NOON),
                    ("check_link_capacity", "deny", "carl", NOON + timedelta(microseconds=5)),
                    (None, "deny", "vic", NOON.astimezone(timezone(timedelta(hours=5)))),
                    ("lookup_inventory", "allow", "gary", NOON + timedelta(hours=1)),
                )
            ):
                await log.write(
                    AuditRecord(
                        principal=principal,
                        tenant="globex" if principal == "gary" else "acme",
                        tool="agent",
                        operation="invoke",
                        decision="allow" if decision == "allow" else "deny",
                        reason="completed" if decision == "allow" else "authorization_failed",
                        actor_chain=("netops-agent",),
                        skill_id=skill,
                        skill_version="1.0" if skill else None,
                        task_id=f"task-{n:02d}-0123456789",
                        resource_ids=("acme-lnk-00001",) if n % 2 else (),
                        projection="a2a" if n % 2 else None,
                        ts=ts,
                    )
                )
            await log.write(
                AuditRecord("alice", "acme", "inventory", "link", "allow", "ok", ts=NOON)
            )
            async with engine.begin() as connection:
                await connection.execute(
                    task_correlation.insert(),
                    [
                        {
                            "ts": NOON + timedelta(minutes=n),
                            "workflow_id": f"wf-{n}",
                            "upstream_agent": "http://127.0.0.1:8000",
                            "upstream_endpoint": "http://127.0.0.1:8000/a2a/jsonrpc",
                            "upstream_task_id": f"up-{n}",
                            "upstream_skill": "check_link_capacity",
                            "downstream_agent": "http://127.0.0.1:8000",
                            "downstream_endpoint": "http://127.0.0.1:8000/a2a/jsonrpc",
                            "downstream_task_id": f"down-{n}",
                            "downstream_skill": "plan_link_upgrade",
                        }
                        for n in range(2)
                    ],
                )
        finally:
            await engine.dispose()

    asyncio.run(run())


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    migrate(home)
    fill(home)
    return home


ARGUMENTS = [
    ["audit"],
    ["audit", "--json"],
    ["audit", "--limit", "2"],
    ["audit", "--tenant", "acme", "--json"],
    ["audit", "--principal", "carl"],
    ["audit", "--task", "task-04-0123456789", "--json"],
    ["audit", "--since", "2026-11-29T11:00:00+00:00", "--json"],
    ["audit", "--since", "2026-11-29T12:00:00.000001Z"],
    ["usage"],
    ["usage", "--since", "2026-11-29"],
    ["chain", "list"],
    ["chain", "list", "--json"],
    ["chain", "list", "--workflow", "wf-1", "--json"],
    ["chain", "list", "--task", "down-0"],
    ["chain", "list", "--limit", "1"],
]


def test_the_output_is_the_same_whichever_way_the_file_is_named(home: Path) -> None:
    """The same file, named by a ``file:`` URI: every output is byte for byte the one read
    through its path (times in UTC, whatever zone they were written in)."""
    assert recorded(home) == AT_HEADS
    by_uri = f"sqlite+aiosqlite:///file:{home / 'netagent.db'}?uri=true"
    for args in ARGUMENTS:
        fast = ok(netagent(home, *args))
        assert fast == ok(netagent(home, *args, "--database-url", by_uri)), args
    rows = [json.loads(line) for line in ok(netagent(home, "audit", "--json")).splitlines()]
    assert len(rows) == 6
    assert [row["ts"] for row in rows[2:4]] == [
        "2026-11-29 12:00:00+00:00",  # written at 17:00+05:00
        "2026-11-29 12:00:00.000005+00:00",
    ]


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_no_database_is_refused_and_none_is_made(tmp_path: Path, args: list[str]) -> None:
    """The wrong folder: an empty database made here would read as "0 rows", exit 0."""
    home, elsewhere = tmp_path / "new-home", tmp_path / "elsewhere.db"
    error = one_line_error(netagent(home, *args))
    assert f"error: no database (netagent.db) in {home} (NETAGENT_HOME)" in error
    assert not home.exists()
    named = one_line_error(
        netagent(home, *args, "--database-url", f"sqlite+aiosqlite:///{elsewhere}")
    )
    assert f"no database at {elsewhere}" in named
    assert not home.exists() and not elsewhere.exists()


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_an_older_revision_is_migrated_before_it_is_read(tmp_path: Path, args: list[str]) -> None:
    """core_0003 has no ``projection`` column: read as it is, the audit would fail or lie."""
    home = tmp_path / "old-home"
    migrate(home, "core_0003", "0003")
    with contextlib.closing(sqlite3.connect(home / "netagent.db")) as connection, connection:
        connection.execute(
            "INSERT INTO principal_audit (ts, principal, tenant, actor_chain, tool, operation,"
            " resource_ids, decision, reason, skill_id) VALUES ('2026-11-29 12:00:00.000000',"
            " 'alice', 'acme', '[]', 'agent', 'invoke', '[]', 'allow', 'completed',"
            " 'check_link_capacity')"
        )
    ok(netagent(home, *args))
    assert recorded(home) == AT_HEADS
    (row,) = map(json.loads, ok(netagent(home, "audit", "--json")).splitlines())
    assert (row["principal"], row["projection"]) == ("alice", None)


@pytest.mark.parametrize("args", READS, ids=" ".join)
@pytest.mark.parametrize("table", [core.VERSION_TABLE, inventory.VERSION_TABLE])
def test_a_newer_versions_database_is_refused_by_name_and_left_alone(
    home: Path, args: list[str], table: str
) -> None:
    with contextlib.closing(sqlite3.connect(home / "netagent.db")) as connection, connection:
        connection.execute(f"UPDATE {table} SET version_num = '9999_newer'")
    before = recorded(home)
    error = one_line_error(netagent(home, *args))
    assert f"revision '9999_newer' in {table}" in error
    assert "does not know" in error and "nothing was migrated" in error
    assert recorded(home) == before


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_a_database_being_written_is_read_at_once(home: Path, args: list[str]) -> None:
    """``serve`` holds the write lock while it commits: in WAL mode a reader does not wait for
    it (the busy timeout is 30 s) and sees what was committed before."""
    expected = ok(netagent(home, *args))
    writer = sqlite3.connect(home / "netagent.db", isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "INSERT INTO principal_audit (ts, principal, tenant, actor_chain, tool, operation,"
            " resource_ids, decision, reason) VALUES ('2026-11-30 12:00:00.000000', 'w', 'acme',"
            " '[]', 'agent', 'invoke', '[]', 'allow', 'completed')"
        )
        writer.execute(f"UPDATE {core.VERSION_TABLE} SET version_num = 'core_0001'")
        started = time.monotonic()
        assert ok(netagent(home, *args)) == expected
        assert time.monotonic() - started < 20
    finally:
        writer.rollback()
        writer.close()


# -- a read-only home ---------------------------------------------------------------------------


@pytest.fixture
def read_only() -> Iterator[_ReadOnly]:
    made = _ReadOnly()
    yield made
    made.restore()


class _ReadOnly:
    """Runs a command with a folder it may not write: a read-only bind mount in a mount
    namespace of its own (as root, whom file modes do not stop), or the folder's mode."""

    def __init__(self) -> None:
        self._chmodded: list[Path] = []

    def prefix(self, folder: Path) -> list[str]:
        if os.geteuid() != 0:
            folder.chmod(0o555)
            self._chmodded.append(folder)
            return []
        mount = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
        probe = subprocess.run(
            ["unshare", "-m", "sh", "-c", f"{mount}", str(folder), "true"],
            capture_output=True,
            check=False,
        )
        if probe.returncode != 0:
            pytest.skip("root without a mount namespace: a folder cannot be made read-only")
        return ["unshare", "-m", "sh", "-c", mount, str(folder)]

    def restore(self) -> None:
        for folder in self._chmodded:
            folder.chmod(0o755)


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_a_current_database_in_a_read_only_home_is_read(
    home: Path, read_only: _ReadOnly, args: list[str]
) -> None:
    expected = ok(netagent(home, *args))
    assert not (home / "netagent.db-wal").exists()  # the last connection checkpointed it
    assert ok(netagent(home, *args, prefix=read_only.prefix(home))) == expected
    assert sorted(p.name for p in home.iterdir()) == ["netagent.db"]


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_a_read_only_home_that_would_need_writing_is_one_line(
    tmp_path: Path, read_only: _ReadOnly, args: list[str]
) -> None:
    old, newer, empty = tmp_path / "old", tmp_path / "newer", tmp_path / "empty"
    migrate(old, "core_0003")
    migrate(newer)
    with contextlib.closing(sqlite3.connect(newer / "netagent.db")) as connection, connection:
        connection.execute(f"UPDATE {core.VERSION_TABLE} SET version_num = '9999_newer'")
    empty.mkdir()
    for folder in (old, newer):
        error = one_line_error(netagent(folder, *args, prefix=read_only.prefix(folder)))
        assert f"the database {folder / 'netagent.db'} is not at the revisions" in error
        assert f"{folder} cannot be written: it cannot be migrated here" in error
    error = one_line_error(netagent(empty, *args, prefix=read_only.prefix(empty)))
    assert f"no database (netagent.db) in {empty} (NETAGENT_HOME)" in error
    assert not (empty / "netagent.db").exists()


# -- PostgreSQL: through SQLAlchemy, migrated first, as before --------------------------------


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_postgresql_is_migrated_and_read_and_a_newer_database_refused(
    tmp_path: Path, args: list[str]
) -> None:
    url = postgres_database(f"cli_reads_{uuid.uuid4().hex[:8]}")
    if url is None:
        pytest.skip("no PostgreSQL cluster in this session (CI always has one)")
    home = tmp_path / "home"
    ok(netagent(home, *args, "--database-url", url))
    ok(netagent(home, *args, "--database-url", url))  # current: left alone

    async def newer() -> None:
        engine = make_engine(url)
        try:
            async with engine.begin() as connection:
                await connection.execute(
                    text(f"UPDATE {core.VERSION_TABLE} SET version_num = '9999_newer'")
                )
        finally:
            await engine.dispose()

    asyncio.run(newer())
    error = one_line_error(netagent(home, *args, "--database-url", url))
    assert f"revision '9999_newer' in {core.VERSION_TABLE}" in error
