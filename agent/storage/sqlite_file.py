"""The agent's SQLite file read with the standard library alone: ``netagent audit``, ``usage``
and ``chain list`` on the default home.

Those commands read a few rows, and opening the database the way ``serve`` does cost them
three times that: SQLAlchemy's asyncio extension, Alembic and a deployment's models. Here one
``sqlite3`` connection, read-only (``PRAGMA query_only``), checks in one read transaction that
every history is recorded at its ``head`` (``MigrationHistory.head``: no Alembic) and reads
the rows. A database that is not (missing, older, a history without a known head, or a newer
version's) is migrated first, as ``serve`` does, by the caller (``agent/cli.py``), which then
reads it here.

The statements and the conversions are those SQLAlchemy runs for ``DatabaseAuditLog`` and
``CorrelationStore`` on SQLite: ``UTCDateTime`` is text, written naive in UTC and read back
tagged UTC; JSON columns are JSON text. ``tests/core/storage/test_audit_contract.py`` runs the
audit trail's contract on these reads (rows written through SQLAlchemy) and
``tests/core/storage/test_sqlite_file.py`` compares the columns with ``agent.storage.tables``.

In WAL mode a reader never waits for the agent's writes. A home the process may not write (a
read-only mount) can still be read when nothing is left in a WAL file: SQLite cannot make the
shared-memory file a WAL reader needs there, so the file is opened ``immutable`` instead.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from agent.errors import ConfigurationError

if TYPE_CHECKING:
    from agent.storage.history import MigrationHistory

SQLITE_TIMEOUT_S = 30.0
"""How long a connection waits for a lock: the agent and a seeding CLI may share the file."""

AUDIT_COLUMNS = (
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
)
"""``principal_audit``'s columns, in ``agent.storage.tables``' order."""
CORRELATION_COLUMNS = (
    "id",
    "ts",
    "workflow_id",
    "upstream_agent",
    "upstream_endpoint",
    "upstream_task_id",
    "upstream_skill",
    "downstream_agent",
    "downstream_endpoint",
    "downstream_task_id",
    "downstream_skill",
)
"""``task_correlation``'s columns, in ``agent.storage.tables``' order."""
TIMES = frozenset({"ts"})
"""The ``UTCDateTime`` columns of both tables."""
JSON_LISTS = frozenset({"actor_chain", "resource_ids"})
"""The JSON columns."""
INVOCATION = ("agent", "invoke")
"""The tool and operation of an invocation's own audit row (``agent.storage.audit.AGENT_TOOL``,
a module that imports SQLAlchemy)."""

_URL = re.compile(r"sqlite(?:\+\w+)?:///(?P<path>[^?#%~]+)")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def sqlite_path(url: str) -> Path | None:
    """The file a SQLite URL names, or None for any other URL: another database, in memory, a
    ``file:`` URI, query parameters or escapes (those are opened the SQLAlchemy way)."""
    match = _URL.fullmatch(url)
    if match is None:
        return None
    path = match["path"]
    if path == ":memory:" or path.startswith("file:"):
        return None
    return Path(path)


class SqliteFile:
    """One read transaction on the file: every statement sees the same committed state."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    def recorded(self, version_table: str) -> set[str]:
        """The revisions a version table records (none: the table is not there)."""
        if not _IDENTIFIER.fullmatch(version_table):
            raise ValueError(f"not a table name: {version_table!r}")
        try:
            rows = self._connection.execute(f"SELECT version_num FROM {version_table}").fetchall()
        except sqlite3.OperationalError as exc:
            if str(exc).startswith("no such table"):
                return set()
            raise
        return {str(row[0]) for row in rows}

    def at_heads(self, histories: Sequence[MigrationHistory]) -> bool:
        """Whether each history is recorded at its head, and only there (a history without a
        known head never is)."""
        return all(
            h.head is not None and self.recorded(h.version_table) == {h.head} for h in histories
        )

    def audit(
        self,
        *,
        tenant: str | None = None,
        principal: str | None = None,
        task_id: str | None = None,
        since: datetime | None = None,
        limit: int = 200,
        exclude_tool: str | None = None,
    ) -> list[dict[str, Any]]:
        """``DatabaseAuditLog.query``: newest first, each filter an equality (``since``: at or
        after), at most ``limit`` rows."""
        where: list[str] = []
        values: list[Any] = []
        for column, value, test in (
            ("tenant", tenant, "="),
            ("principal", principal, "="),
            ("task_id", task_id, "="),
            ("ts", None if since is None else _stored_time(since), ">="),
            ("tool", exclude_tool, "!="),
        ):
            if value is not None:
                where.append(f"{column} {test} ?")
                values.append(value)
        return self._rows("principal_audit", AUDIT_COLUMNS, where, values, limit)

    def usage(self, since: datetime | None = None) -> list[dict[str, Any]]:
        """``DatabaseAuditLog.usage``: per skill and UTC day, the invocations run and refused,
        distinct callers and the last call, ordered by skill and day."""
        day = "substr(CAST(ts AS VARCHAR), 1, 10)"
        where = "tool = ? AND operation = ?"
        values: list[Any] = list(INVOCATION)
        if since is not None:
            where += " AND ts >= ?"
            values.append(_stored_time(since))
        cursor = self._connection.execute(
            f"SELECT skill_id, {day} AS day,"
            " sum(CASE WHEN decision = 'allow' THEN 1 ELSE 0 END) AS calls,"
            " sum(CASE WHEN decision = 'allow' THEN 0 ELSE 1 END) AS refused,"
            " count(DISTINCT principal) AS callers, max(ts) AS last_call"
            f" FROM principal_audit WHERE {where}"
            f" GROUP BY skill_id, {day} ORDER BY skill_id, {day}",
            values,
        )
        return [
            {
                "skill_id": skill_id,
                "day": day_,
                "calls": calls,
                "refused": refused,
                "callers": callers,
                "last_call": _read_time(last_call),
            }
            for skill_id, day_, calls, refused, callers, last_call in cursor.fetchall()
        ]

    def correlations(
        self, *, workflow_id: str | None = None, task_id: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """``CorrelationStore.query``: the links of a workflow, or those touching a task (as
        upstream or downstream), newest first."""
        where: list[str] = []
        values: list[Any] = []
        if workflow_id is not None:
            where.append("workflow_id = ?")
            values.append(workflow_id)
        if task_id is not None:
            where.append("(upstream_task_id = ? OR downstream_task_id = ?)")
            values += [task_id, task_id]
        return self._rows("task_correlation", CORRELATION_COLUMNS, where, values, limit)

    def _rows(
        self,
        table: str,
        columns: Sequence[str],
        where: Sequence[str],
        values: list[Any],
        limit: int,
    ) -> list[dict[str, Any]]:
        condition = f" WHERE {' AND '.join(where)}" if where else ""
        cursor = self._connection.execute(
            f"SELECT {', '.join(columns)} FROM {table}{condition} ORDER BY id DESC LIMIT ?",
            [*values, limit],
        )
        readers = [_READERS.get(column) for column in columns]
        return [
            {
                column: value if read is None or value is None else read(value)
                for column, read, value in zip(columns, readers, row, strict=True)
            }
            for row in cursor.fetchall()
        ]


def _stored_time(moment: datetime) -> str:
    """How ``UTCDateTime`` stores a time on SQLite: naive UTC text, with microseconds."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"naive datetime {moment.isoformat()} rejected; use a tz-aware one")
    value = moment.astimezone(UTC)
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"
    )


def _read_time(value: Any) -> datetime | None:
    """``UTCDateTime`` read back: aware, in UTC."""
    if value is None:
        return None
    moment = datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _read_json(value: Any) -> Any:
    return json.loads(value)


_READERS: dict[str, Callable[[Any], Any]] = {
    **dict.fromkeys(TIMES, _read_time),
    **dict.fromkeys(JSON_LISTS, _read_json),
}


@contextmanager
def reading(path: Path) -> Iterator[SqliteFile]:
    """A read transaction on the SQLite file at ``path``, which must exist (this never makes
    one). Raises ConfigurationError, one line, when the file cannot be read."""
    try:
        connection = _open(path)
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cannot read the database {path}: {exc}") from None
    try:
        try:
            connection.execute("BEGIN")
            yield SqliteFile(connection)
        except sqlite3.Error as exc:
            raise ConfigurationError(f"cannot read the database {path}: {exc}") from None
    finally:
        connection.close()


WRITABLE = {"task_correlation": CORRELATION_COLUMNS}
"""The tables a command may add a row to by sqlite3 alone, and their columns."""


def insert_at_heads(
    path: Path, histories: Sequence[MigrationHistory], table: str, row: dict[str, Any]
) -> bool:
    """Add ``row`` to ``table`` of the existing SQLite file at ``path`` when every history is
    recorded at its head, checked in the same write transaction; False, and nothing written,
    when one is not (the caller migrates, as ``serve`` does, and writes through SQLAlchemy).
    Values are stored as SQLAlchemy stores them on SQLite (``UTCDateTime`` as naive UTC text,
    JSON as text). Raises ConfigurationError, one line, when the file cannot be written."""
    columns = WRITABLE.get(table)
    if columns is None or not set(row) <= set(columns) - {"id"}:
        raise ValueError(f"not a row of a writable table: {table}, {sorted(row)}")
    names = [c for c in columns if c in row]
    values = [_WRITERS.get(c, _as_is)(row[c]) for c in names]
    statement = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"
    try:
        connection = _connect(f"{_file_uri(path)}?mode=rw", writes=True)
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cannot write the database {path}: {exc}") from None
    try:
        connection.execute("BEGIN IMMEDIATE")
        if not SqliteFile(connection).at_heads(histories):
            connection.execute("ROLLBACK")
            return False
        connection.execute(statement, values)
        connection.execute("COMMIT")
        return True
    except sqlite3.Error as exc:
        raise ConfigurationError(f"cannot write the database {path}: {exc}") from None
    finally:
        connection.close()


def _as_is(value: Any) -> Any:
    return value


def _write_json(value: Any) -> str:
    return json.dumps(value)


_WRITERS: dict[str, Callable[[Any], Any]] = {
    **dict.fromkeys(TIMES, _stored_time),
    **dict.fromkeys(JSON_LISTS, _write_json),
}


def _open(path: Path) -> sqlite3.Connection:
    """``mode=rw``: opened read-only where the file is, never created; ``query_only``: no write
    goes through it. Where SQLite cannot make the WAL's shared-memory file beside the database
    (a read-only folder) and no WAL is left to read, the file is read as it is (``immutable``:
    no one can be writing it there)."""
    target = _file_uri(path)
    connection = _connect(f"{target}?mode=rw")
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError:
        connection.close()
        wal = path.with_name(path.name + "-wal")
        if os.access(path.parent, os.W_OK) or wal.exists():
            raise
        connection = _connect(f"{target}?mode=ro&immutable=1")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return connection


def _file_uri(path: Path) -> str:
    return f"file:{quote(str(path.absolute()))}"


def _connect(uri: str, *, writes: bool = False) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are begun by hand) that waits for a lock;
    one that only reads refuses every write (``query_only``)."""
    connection = sqlite3.connect(uri, uri=True, timeout=SQLITE_TIMEOUT_S, isolation_level=None)
    if not writes:
        connection.execute("PRAGMA query_only=1")
    connection.execute(f"PRAGMA busy_timeout={int(SQLITE_TIMEOUT_S * 1000)}")
    return connection
