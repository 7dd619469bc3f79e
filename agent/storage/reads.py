"""Read-only statements without the asyncio engine's machinery where it buys nothing.

On a SQLite file the asyncio engine costs more than the statement: each ``connect()`` is an
async pool checkout (a queue wait under a timeout), each ``execute`` a greenlet switch, each
close a shielded task (bench.perf --profile: a third of an inventory lookup, the statement
itself a few microseconds). In WAL mode a reader never waits for the writer, so a plain
synchronous connection on the event loop's thread reads the committed state at once. That is
what ``reader(engine)`` gives for a SQLite file; for PostgreSQL (a network round trip the loop
must not wait on) and in-memory SQLite (one connection, owned by the async engine) it is the
asyncio engine as before. Same statements, same SQLAlchemy types and compiled cache, same rows.
Writes never come this way (the connection is ``query_only``).
"""

from __future__ import annotations

import sqlite3
import weakref
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine, Executable, create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import StaticPool

from agent.storage.group_commit import sqlite_in_memory

READ_BUSY_TIMEOUT_MS = 1000
"""How long a read may wait on a lock. In WAL mode that only happens while another
connection recovers the WAL index (after a crash); the loop waits at most this long."""


class Reader(ABC):
    """Rows of read-only statements."""

    @abstractmethod
    async def rows(
        self, statement: Executable, params: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Every row, as a dict keyed by column label."""

    @abstractmethod
    async def scalar(self, statement: Executable, params: Mapping[str, Any] | None = None) -> Any:
        """The first column of the first row (None if there is none)."""


class EngineReader(Reader):
    """Through the asyncio engine: PostgreSQL, in-memory SQLite."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def rows(
        self, statement: Executable, params: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Every row, as a dict keyed by column label."""
        async with self._engine.connect() as conn:
            result = await conn.execute(statement, params)
            return [dict(row) for row in result.mappings()]

    async def scalar(self, statement: Executable, params: Mapping[str, Any] | None = None) -> Any:
        """The first column of the first row (None if there is none)."""
        async with self._engine.connect() as conn:
            return await conn.scalar(statement, params)


class InlineSqliteReader(Reader):
    """A synchronous connection to the same SQLite file, used on the calling thread (it
    keeps no reference to the async engine, so caching it per engine keeps nothing alive)."""

    def __init__(self, engine: AsyncEngine) -> None:
        database = engine.url.database or ""
        uri = database.startswith("file:")
        self._sync: Engine = create_engine(
            engine.url.set(drivername="sqlite"),
            poolclass=StaticPool,
            creator=lambda: sqlite3.connect(
                database, check_same_thread=False, uri=uri, isolation_level=None
            ),
        )
        event.listen(self._sync, "connect", _read_only_pragmas)

    async def rows(
        self, statement: Executable, params: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Every row, read now (no await: nothing here waits)."""
        with self._sync.connect() as conn:
            return [dict(row) for row in conn.execute(statement, params).mappings()]

    async def scalar(self, statement: Executable, params: Mapping[str, Any] | None = None) -> Any:
        """The first column of the first row, read now."""
        with self._sync.connect() as conn:
            return conn.scalar(statement, params)

    def close(self) -> None:
        """Close the reader's connection."""
        self._sync.dispose()


def _read_only_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA query_only=1")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={READ_BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


_READERS: weakref.WeakKeyDictionary[AsyncEngine, InlineSqliteReader] = weakref.WeakKeyDictionary()


def reader(engine: AsyncEngine) -> Reader:
    """The reader for ``engine``: for a SQLite file one inline reader per engine, made on
    first use and closed with the engine; otherwise the engine itself."""
    if engine.dialect.name != "sqlite" or sqlite_in_memory(engine.url):
        return EngineReader(engine)
    found = _READERS.get(engine)
    if found is None:
        found = _READERS[engine] = InlineSqliteReader(engine)
        weakref.finalize(engine, found.close)
    return found
