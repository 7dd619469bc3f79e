"""Read-only statements (agent/storage/reads.py): on a SQLite file a synchronous reader on the
loop's thread, otherwise the asyncio engine; the same rows either way.

What it promises: the inline reader returns exactly what the engine returns for the same
statement (types processed by the same SQLAlchemy column types), sees what another connection
committed and nothing it has not, is never held up by a write transaction holding the async
engine's one connection, and refuses to write.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, bindparam, select
from sqlalchemy.exc import OperationalError

from agent.storage.engine import make_engine
from agent.storage.reads import EngineReader, InlineSqliteReader, close_reader, reader
from agent.storage.reads_postgres import AsyncpgReader
from agent.storage.schema import UTCDateTime

metadata = MetaData()
things = Table(
    "things",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(40)),
    Column("seen_at", UTCDateTime()),
    Column("naive", DateTime()),
)
BY_NAME = select(things).where(things.c.name == bindparam("name")).order_by(things.c.id)


async def test_a_sqlite_file_reads_inline_and_gives_the_engines_rows(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        async with engine.begin() as conn:
            await conn.run_sync(metadata.create_all)
            await conn.execute(
                things.insert(),
                [
                    {
                        "name": "a",
                        "seen_at": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                        "naive": None,
                    },
                    {"name": "a", "seen_at": None, "naive": datetime(2026, 1, 1)},
                    {"name": "b\x00c", "seen_at": None, "naive": None},
                ],
            )
        inline = reader(engine)
        assert isinstance(inline, InlineSqliteReader)
        assert reader(engine) is inline
        for name in ("a", "b\x00c", "absent"):
            expected = await EngineReader(engine).rows(BY_NAME, {"name": name})
            assert await inline.rows(BY_NAME, {"name": name}) == expected
        rows = await inline.rows(BY_NAME, {"name": "a"})
        assert rows[0]["seen_at"] == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
        assert rows[0]["seen_at"].tzinfo is not None
        assert rows[1]["naive"] == datetime(2026, 1, 1)
        count = select(things.c.id).where(things.c.name == "b\x00c")
        assert await inline.scalar(count) == await EngineReader(engine).scalar(count) == 3
        assert await inline.scalar(select(things.c.id).where(things.c.name == "zz")) is None
    finally:
        await engine.dispose()


async def test_the_inline_reader_sees_commits_only_and_never_waits_for_a_writer(
    tmp_path: Path,
) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'w.db'}")
    try:
        async with engine.begin() as conn:
            await conn.run_sync(metadata.create_all)
        inline = reader(engine)
        async with engine.begin() as conn:  # holds the async engine's only connection
            await conn.execute(things.insert(), [{"name": "pending"}])
            # The engine's pool has one connection and it is taken: a read through the
            # engine would wait here; the inline reader answers at once, without the row.
            rows = await asyncio.wait_for(inline.rows(BY_NAME, {"name": "pending"}), 1.0)
            assert rows == []
        assert len(await inline.rows(BY_NAME, {"name": "pending"})) == 1
    finally:
        await engine.dispose()


async def test_the_inline_reader_refuses_to_write(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'q.db'}")
    try:
        async with engine.begin() as conn:
            await conn.run_sync(metadata.create_all)
        with pytest.raises(OperationalError, match="readonly"):
            await reader(engine).rows(things.insert().values(name="x").returning(things.c.id))
        assert await reader(engine).rows(BY_NAME, {"name": "x"}) == []
    finally:
        await engine.dispose()


async def test_in_memory_sqlite_reads_through_the_engine_and_postgresql_its_own_pool() -> None:
    memory = make_engine("sqlite://")
    try:
        assert isinstance(reader(memory), EngineReader)
        assert await reader(memory).scalar(select(bindparam("x", 7))) == 7
    finally:
        await memory.dispose()
    postgres = make_engine("postgresql://nobody@127.0.0.1:1/none")
    try:
        assert isinstance(reader(postgres), AsyncpgReader)  # tests/db/test_db_postgres.py
        assert reader(postgres) is reader(postgres)  # one per engine: one pool per loop
    finally:
        await close_reader(postgres)
        await postgres.dispose()
