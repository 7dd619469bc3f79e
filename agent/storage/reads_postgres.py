"""PostgreSQL reads on asyncpg connections of their own, without a transaction per read.

Through SQLAlchemy's asyncio engine one read on PostgreSQL is four round trips,
not one: the pool's pre-ping, ``BEGIN``, the statement, and the ``ROLLBACK`` of the reset on
return; and at 32 concurrent callers the pool (5 + 10 overflow) opens and closes an overflow
connection, SSL negotiation included, for most checkouts. A read-only
SELECT needs none of that: in autocommit it is its own snapshot. So a statement used again
(the prebuilt lookups) is compiled once with the engine's own dialect and run with asyncpg's
``fetch`` on a pool of this reader's connections, through asyncpg's prepared-statement cache,
with the column types' own bind and result processors: the rows SQLAlchemy gives, row for
row (tests/db/test_db_postgres.py compares both ways). A connection the server dropped (a
restart) fails no call: the read is retried once on a fresh connection, which is what
``pool_pre_ping`` guaranteed. Anything else (a statement used once, an IN list, a JSON column,
a missing value) goes SQLAlchemy's way.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import asyncpg
from sqlalchemy import JSON, Dialect, Executable, Select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.reads import EngineReader, Parameters, Reader

POOL_SIZE = 8
"""Connections per event loop. Reads are short; more would only add server processes."""
_SQLALCHEMY_ONLY = (
    "async_creator_fn",
    "prepared_statement_cache_size",
    "prepared_statement_name_func",
)
_DROPPED = (
    asyncpg.ConnectionDoesNotExistError,  # closed under it
    asyncpg.PostgresConnectionError,  # class 08: the connection failed
    asyncpg.AdminShutdownError,  # 57P01: terminated by the server (a restart, an operator)
    asyncpg.CannotConnectNowError,  # 57P03: the server is starting up
    asyncpg.InterfaceError,
    asyncpg.exceptions.InternalClientError,  # a terminated connection's protocol state
    OSError,
)
"""What a connection the server dropped raises: the read is tried once more, fresh."""


class AsyncpgReader(Reader):
    """See the module docstring. One pool per event loop (a pool belongs to its loop)."""

    def __init__(self, engine: AsyncEngine, size: int = POOL_SIZE) -> None:
        self._dialect = engine.dialect
        args, kwargs = engine.dialect.create_connect_args(engine.url)
        for key in _SQLALCHEMY_ONLY:
            kwargs.pop(key, None)
        self._connect_args: tuple[list[Any], dict[str, Any]] = (list(args), dict(kwargs))
        self._size = size
        self._engine = weakref.ref(engine)  # the reader is cached per engine, weakly
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncpg.Pool] = (
            weakref.WeakKeyDictionary()
        )
        self._opening: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Future[asyncpg.Pool]
        ] = weakref.WeakKeyDictionary()
        self._statements: weakref.WeakKeyDictionary[Executable, _Statement | None] = (
            weakref.WeakKeyDictionary()
        )
        self._seen: weakref.WeakSet[Executable] = weakref.WeakSet()

    async def rows(
        self, statement: Executable, params: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Every row, as a dict keyed by column label."""
        compiled = self._compiled(statement, params)
        if compiled is None:
            return await self._fallback().rows(statement, params)
        return compiled.rows(await self._fetch(compiled, params or {}))

    async def scalar(self, statement: Executable, params: Mapping[str, Any] | None = None) -> Any:
        """The first column of the first row (None if there is none)."""
        compiled = self._compiled(statement, params)
        if compiled is None:
            return await self._fallback().scalar(statement, params)
        return compiled.scalar(await self._fetch(compiled, params or {}))

    def _fallback(self) -> EngineReader:
        engine = self._engine()
        if engine is None:  # pragma: no cover - the engine owns the reader's cache entry
            raise RuntimeError("the engine behind this reader is gone")
        return EngineReader(engine)

    async def close(self) -> None:
        """Close this loop's pool (the engine's own connections are the engine's)."""
        loop = asyncio.get_running_loop()
        pool = self._pools.pop(loop, None)
        if pool is not None:
            await pool.close()

    def _compiled(
        self, statement: Executable, params: Mapping[str, Any] | None
    ) -> _Statement | None:
        try:
            compiled = self._statements[statement]
        except KeyError:
            if statement not in self._seen:  # used once so far: maybe built per call
                self._seen.add(statement)
                return None
            compiled = self._statements[statement] = _Statement.of(statement, self._dialect)
        except TypeError:  # not weakly referenceable or not hashable
            return None
        if compiled is None or not compiled.covers(params):
            return None
        return compiled

    async def _fetch(self, compiled: _Statement, params: Mapping[str, Any]) -> list[Any]:
        arguments = compiled.arguments(params)
        for attempt in (1, 2):
            pool = await self._pool()
            try:
                async with pool.acquire() as connection:
                    if compiled.results is None:
                        prepared = await connection.prepare(compiled.sql)
                        compiled.learn([a.type.oid for a in prepared.get_attributes()])
                    return list(await connection.fetch(compiled.sql, *arguments))
            except _DROPPED:
                if attempt == 2:
                    raise
                await self._discard(pool)  # the server went away: every connection is gone
        raise AssertionError("unreachable")  # pragma: no cover

    async def _pool(self) -> asyncpg.Pool:
        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is not None:
            return pool
        opening = self._opening.get(loop)
        if opening is None:  # the first caller opens it; the others wait for the same pool
            opening = self._opening[loop] = loop.create_future()
            args, kwargs = self._connect_args
            try:
                made: asyncpg.Pool = await asyncpg.create_pool(
                    *args, min_size=1, max_size=self._size, **kwargs
                )
            except BaseException as error:
                del self._opening[loop]
                opening.set_exception(error)
                opening.exception()  # retrieved: the waiters, if any, raise it too
                raise
            self._pools[loop] = made
            del self._opening[loop]
            opening.set_result(made)
            return made
        return await asyncio.shield(opening)

    async def _discard(self, pool: asyncpg.Pool) -> None:
        loop = asyncio.get_running_loop()
        if self._pools.get(loop) is pool:
            del self._pools[loop]
        pool.terminate()


def _json(kind: Any) -> bool:
    return isinstance(kind, JSON) or isinstance(getattr(kind, "impl", None), JSON)


class _Statement:
    """A SELECT compiled once for asyncpg: its SQL ($n parameters), how to bind each value,
    and (from its first run, which learns the columns' type OIDs) how to read each column."""

    def __init__(self, statement: Select[Any], dialect: Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        self.sql = str(compiled)
        self._dialect = dialect
        self._parameters = Parameters(compiled, dialect)
        self._columns = list(statement.selected_columns)
        self._keys = list(statement.selected_columns.keys())
        self.results: list[Callable[[Any], Any] | None] | None = None

    @classmethod
    def of(cls, statement: Executable, dialect: Dialect) -> _Statement | None:
        """None where SQLAlchemy's own way must run it."""
        if not isinstance(statement, Select):
            return None
        compiled = statement.compile(dialect=dialect)
        if not Parameters.plain(compiled):
            return None
        keys = list(statement.selected_columns.keys())
        types = [b.type for b in compiled.binds.values()]
        types += [c.type for c in statement.selected_columns]
        if len(set(keys)) != len(keys) or any(_json(t) for t in types):
            return None  # JSON: SQLAlchemy's connections carry codecs these have not
        return cls(statement, dialect)

    def covers(self, params: Mapping[str, Any] | None) -> bool:
        """Whether ``params`` give every required value (else SQLAlchemy says what is missing)."""
        return self._parameters.covers(params)

    def arguments(self, params: Mapping[str, Any]) -> list[Any]:
        """The positional values, processed."""
        return self._parameters.values(params)

    def learn(self, oids: list[int]) -> None:
        """The result processors, which on asyncpg depend on the column's type OID."""
        dialect = self._dialect
        self.results = [
            column.type.dialect_impl(dialect).result_processor(dialect, oid)
            for column, oid in zip(self._columns, oids, strict=True)
        ]

    def rows(self, records: list[Any]) -> list[dict[str, Any]]:
        keys, results = self._keys, self.results
        assert results is not None
        return [
            {
                key: value if process is None else process(value)
                for key, process, value in zip(keys, results, record, strict=True)
            }
            for record in records
        ]

    def scalar(self, records: list[Any]) -> Any:
        if not records:
            return None
        assert self.results is not None
        process, value = self.results[0], records[0][0]
        return value if process is None else process(value)
