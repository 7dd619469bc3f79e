"""The read path: ``Reader``, one interface for read-only statements, and ``reader(engine)``,
which picks the backend's form.

- A SQLite file: ``InlineSqliteReader``. There the asyncio engine costs more than the
  statement: each ``connect()`` is an async pool checkout (a queue wait under a timeout), each
  ``execute`` a greenlet switch, each close a shielded task (more than the statement itself, a
  few microseconds). In WAL mode a reader never waits for the writer, so a plain synchronous
  connection on the event loop's thread reads the committed state at once. Writes never come
  this way (the connection is ``query_only``).
- PostgreSQL on asyncpg: ``AsyncpgReader`` (agent/storage/reads_postgres.py, a module of its
  own so that a SQLite agent never imports asyncpg).
- Anything else (SQLite in memory: one connection, owned by the async engine):
  ``EngineReader``, the asyncio engine.

Same statements, same SQLAlchemy types and compiled cache, same rows, whichever form reads.
"""

from __future__ import annotations

import sqlite3
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import Dialect, Engine, Executable, Select, create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql.compiler import SQLCompiler

from agent.storage.engine import sqlite_in_memory

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

        # By statement, weakly: a statement built per call is prepared on its second use only
        # (never, in practice) and its entry goes with it; a module-level one stays.
        self._prepared: weakref.WeakKeyDictionary[Executable, _Prepared | None] = (
            weakref.WeakKeyDictionary()
        )
        self._seen: weakref.WeakSet[Executable] = weakref.WeakSet()
        self._raw: sqlite3.Connection | None = None

    async def rows(
        self, statement: Executable, params: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Every row, read now (no await: nothing here waits)."""
        prepared = self._prepare(statement)
        if prepared is not None and prepared.covers(params):
            return prepared.rows(self._connection(), params or {})
        with self._sync.connect() as conn:
            return [dict(row) for row in conn.execute(statement, params).mappings()]

    async def scalar(self, statement: Executable, params: Mapping[str, Any] | None = None) -> Any:
        """The first column of the first row, read now."""
        prepared = self._prepare(statement)
        if prepared is not None and prepared.covers(params):
            return prepared.scalar(self._connection(), params or {})
        with self._sync.connect() as conn:
            return conn.scalar(statement, params)

    def close(self) -> None:
        """Close the reader's connection."""
        self._raw = None
        self._sync.dispose()

    def _connection(self) -> sqlite3.Connection:
        """The reader's sqlite3 connection itself (StaticPool: the one SQLAlchemy uses too)."""
        if self._raw is None:
            with self._sync.connect() as conn:
                driver = conn.connection.driver_connection
            assert isinstance(driver, sqlite3.Connection)
            self._raw = driver
        return self._raw

    def _prepare(self, statement: Executable) -> _Prepared | None:
        """The statement compiled once, from its second use, if the plain path can run it."""
        try:
            return self._prepared[statement]
        except KeyError:
            pass
        except TypeError:  # not weakly referenceable or not hashable: SQLAlchemy's way
            return None
        if statement not in self._seen:
            self._seen.add(statement)
            return None
        prepared = _Prepared.of(statement, self._sync.dialect)
        self._prepared[statement] = prepared
        return prepared


class Parameters:
    """How a compiled SELECT's positional parameters are filled from a call's values: each
    through its type's own bind processor (through ``dialect_impl``: the dialect's own type,
    e.g. SQLite's DATETIME), unset ones from the statement's defaults. Shared by the plain
    paths of both backends (``_Prepared`` here, ``reads_postgres._Statement``)."""

    def __init__(self, compiled: SQLCompiler, dialect: Dialect) -> None:
        binds = compiled.binds
        self._names = list(compiled.positiontup or [])
        self._defaults = {name: b.value for name, b in binds.items() if not b.required}
        self._required = frozenset(name for name, b in binds.items() if b.required)
        self._binds = {
            name: binds[name].type.dialect_impl(dialect).bind_processor(dialect)
            for name in set(self._names)
        }

    @staticmethod
    def plain(compiled: SQLCompiler) -> bool:
        """Whether every parameter is a plain value: not an IN list (expanding), not
        literal-rendered, not computed by a callable (SQLAlchemy's way runs those)."""
        return not any(
            b.expanding or b.literal_execute or b.callable is not None
            for b in compiled.binds.values()
        )

    def covers(self, params: Mapping[str, Any] | None) -> bool:
        """Whether ``params`` give every required value (else SQLAlchemy says what is missing)."""
        return self._required <= set(params or ())

    def values(self, params: Mapping[str, Any]) -> list[Any]:
        """The positional values, processed."""
        values = {**self._defaults, **params}
        arguments = []
        for name in self._names:
            process = self._binds[name]
            value = values[name]
            arguments.append(value if process is None else process(value))
        return arguments


class _Prepared:
    """A SELECT compiled once and run on the sqlite3 connection directly, with the column
    types' own bind and result processors: SQLAlchemy's rows without its per-execution
    machinery (the compiled cache lookup, the execution context, Row and RowMapping objects),
    which cost more than the indexed lookups themselves (bench.perf --profile). Only for
    statements used again (the prebuilt lookups) whose parameters are all plain: an IN list
    (expanding), a literal-rendered or callable one, or a missing value go the SQLAlchemy way.
    tests/core/storage/test_reads.py compares both ways row for row.
    """

    def __init__(
        self,
        sql: str,
        parameters: Parameters,
        keys: list[str],
        results: list[Callable[[Any], Any] | None],
    ) -> None:
        self._sql = sql
        self._parameters = parameters
        self._keys = keys
        self._results = results

    @classmethod
    def of(cls, statement: Executable, dialect: Dialect) -> _Prepared | None:
        if not isinstance(statement, Select):
            return None
        compiled = statement.compile(dialect=dialect)
        if not Parameters.plain(compiled):
            return None
        keys = list(statement.selected_columns.keys())
        if len(set(keys)) != len(keys):
            return None
        return cls(
            str(compiled),
            Parameters(compiled, dialect),
            keys,
            [
                c.type.dialect_impl(dialect).result_processor(dialect, None)
                for c in statement.selected_columns
            ],
        )

    def covers(self, params: Mapping[str, Any] | None) -> bool:
        """Whether ``params`` give every required value (else SQLAlchemy says what is missing)."""
        return self._parameters.covers(params)

    def _execute(self, connection: sqlite3.Connection, params: Mapping[str, Any]) -> Any:
        return connection.execute(self._sql, self._parameters.values(params))

    def rows(
        self, connection: sqlite3.Connection, params: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        cursor = self._execute(connection, params)
        keys, results = self._keys, self._results
        return [
            {
                key: value if process is None else process(value)
                for key, process, value in zip(keys, results, row, strict=True)
            }
            for row in cursor.fetchall()
        ]

    def scalar(self, connection: sqlite3.Connection, params: Mapping[str, Any]) -> Any:
        row = self._execute(connection, params).fetchone()
        if row is None:
            return None
        process = self._results[0]
        return row[0] if process is None else process(row[0])


def _read_only_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA query_only=1")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={READ_BUSY_TIMEOUT_MS}")
    finally:
        cursor.close()


_READERS: weakref.WeakKeyDictionary[AsyncEngine, InlineSqliteReader] = weakref.WeakKeyDictionary()
_PG_READERS: weakref.WeakKeyDictionary[AsyncEngine, Reader] = weakref.WeakKeyDictionary()


def reader(engine: AsyncEngine) -> Reader:
    """The reader for ``engine``: for a SQLite file one inline reader per engine, made on
    first use and closed with the engine; on PostgreSQL over asyncpg one reader with its own
    connections (agent/storage/reads_postgres.py), closed by ``close_reader``; otherwise the
    engine itself."""
    if engine.dialect.name == "postgresql" and engine.dialect.driver == "asyncpg":
        found_pg = _PG_READERS.get(engine)
        if found_pg is None:
            from agent.storage.reads_postgres import AsyncpgReader

            found_pg = _PG_READERS[engine] = AsyncpgReader(engine)
        return found_pg
    if engine.dialect.name != "sqlite" or sqlite_in_memory(engine.url):
        return EngineReader(engine)
    found = _READERS.get(engine)
    if found is None:
        found = _READERS[engine] = InlineSqliteReader(engine)
        weakref.finalize(engine, found.close)
    return found


async def close_reader(engine: AsyncEngine) -> None:
    """Close what ``reader(engine)`` opened on this event loop (before ``engine.dispose()``)."""
    found = _PG_READERS.get(engine)
    if found is not None:
        from agent.storage.reads_postgres import AsyncpgReader

        assert isinstance(found, AsyncpgReader)
        await found.close()
