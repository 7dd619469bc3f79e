"""SQLite under SQLAlchemy's asyncio engine without a thread hop per statement.

aiosqlite runs every call (cursor, execute, fetch, commit, rollback) on a thread of its own
and wakes the event loop through its self-pipe when it is done: five to ten cross-thread
round trips per query, which measured as the largest single cost of a governed call on SQLite
(bench.perf --profile: the loop's selector and ``_read_from_self``). Reads on a SQLite file
in WAL mode never wait for a writer, and the statements here are indexed lookups that take
microseconds, so running them on the event loop's own thread is cheaper than any hand-off.

This module is a connection with aiosqlite's interface (what SQLAlchemy's aiosqlite dialect
calls) over a plain ``sqlite3`` connection, handed to ``create_async_engine(async_creator=)``:
the dialect, pool, types and every caller stay as they are. Settled task states do not come
this way: they go by the group-committing writer's own thread (agent/storage/group_commit.py),
so the loop never waits on a fsync. A write here can wait for SQLite's lock (the busy
timeout) while the writer commits; those commits are short and these writes rare (seeding,
a deployment's live samples, audit rows outside an invocation).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Any


class _Cursor:
    """aiosqlite's Cursor, done at once."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor

    @property
    def description(self) -> Any:
        """As sqlite3's."""
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        """As sqlite3's."""
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        """As sqlite3's."""
        return self._cursor.lastrowid

    @property
    def arraysize(self) -> int:
        """As sqlite3's."""
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value

    async def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> _Cursor:
        """Run it now."""
        if parameters is None:
            self._cursor.execute(sql)
        else:
            self._cursor.execute(sql, parameters)
        return self

    async def executemany(self, sql: str, parameters: Iterable[Sequence[Any]]) -> _Cursor:
        """Run it now, once per parameter set."""
        self._cursor.executemany(sql, parameters)
        return self

    async def fetchone(self) -> Any:
        """The next row."""
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        """The next rows."""
        return self._cursor.fetchmany(size if size is not None else self._cursor.arraysize)

    async def fetchall(self) -> list[Any]:
        """The remaining rows."""
        return self._cursor.fetchall()

    async def close(self) -> None:
        """Close the sqlite3 cursor."""
        self._cursor.close()

    async def __aenter__(self) -> _Cursor:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


class _CursorContext:
    """What aiosqlite's ``Connection.cursor()`` returns: entered to get the cursor."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection

    async def __aenter__(self) -> _Cursor:
        return _Cursor(self._connection.cursor())

    async def __aexit__(self, *_: object) -> None:
        return None


class _ImmediateQueue:
    """aiosqlite's call queue, as SQLAlchemy uses it to set the isolation level: run now."""

    def put_nowait(self, item: tuple[asyncio.Future[Any], Callable[[], Any]]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as error:
            future.set_exception(error)


class InlineConnection:
    """aiosqlite's Connection, over a sqlite3 connection used on the event loop's thread."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._conn: sqlite3.Connection | None = connection
        self._tx = _ImmediateQueue()

    @property
    def _connection(self) -> sqlite3.Connection | None:
        """None once closed (SQLAlchemy skips commit and rollback then)."""
        return self._conn

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ValueError("Connection closed")
        return self._conn

    @property
    def isolation_level(self) -> str | None:
        """As sqlite3's."""
        return self._live().isolation_level

    def cursor(self) -> _CursorContext:
        """A cursor, to be entered."""
        return _CursorContext(self._live())

    async def execute(self, sql: str, parameters: Sequence[Any] | None = None) -> _Cursor:
        """A cursor with the statement run."""
        return await _Cursor(self._live().cursor()).execute(sql, parameters)

    async def commit(self) -> None:
        """Commit now."""
        self._live().commit()

    async def rollback(self) -> None:
        """Roll back now."""
        self._live().rollback()

    async def create_function(self, *args: Any, **kwargs: Any) -> None:
        """As sqlite3's."""
        self._live().create_function(*args, **kwargs)

    async def close(self) -> None:
        """Close it (again is a no-op)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def stop(self) -> None:
        """SQLAlchemy's forced close on terminate."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def inline_creator(database: str, *, timeout: float, uri: bool = False) -> Callable[[], Any]:
    """An ``async_creator`` for ``create_async_engine``: one inline connection per call."""

    async def connect() -> InlineConnection:
        connection = sqlite3.connect(database, timeout=timeout, check_same_thread=False, uri=uri)
        return InlineConnection(connection)

    return connect
