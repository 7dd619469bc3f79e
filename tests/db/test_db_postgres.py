"""The same guarantees on PostgreSQL; runs only when NETOPS_TEST_POSTGRES_URL is set.

Point it at a throwaway database: the inventory tables there are dropped and
re-created (other tables are left alone).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from db_support import PG_IDS, UNTIL, Seeded, every_read, table_digests
from sqlalchemy import Connection, delete, insert, select

from agent.storage.engine import make_engine
from agent.storage.reads import EngineReader, close_reader
from agent.storage.reads_postgres import AsyncpgReader
from db.inventory import Inventory
from db.migrate import current_revision, downgrade, head_revision, upgrade
from db.models import TABLES, Base, Tenant
from db.simulator import SeedError, seed

PG_URL = os.environ.get("NETOPS_TEST_POSTGRES_URL", "")
pytestmark = pytest.mark.skipif(not PG_URL, reason="NETOPS_TEST_POSTGRES_URL not set")


@pytest.fixture(scope="module")
async def pg_demo() -> AsyncIterator[Seeded]:
    await downgrade(PG_URL)
    await upgrade(PG_URL)
    engine = make_engine(PG_URL)
    report = await seed(engine, until=UNTIL)
    yield Seeded(PG_URL, engine, report)
    await engine.dispose()


async def test_schema_matches_models(pg_demo: Seeded) -> None:
    assert await current_revision(PG_URL) == head_revision()

    def diff(conn: Connection) -> list[object]:
        ctx = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "include_name": lambda name, type_, _: type_ != "table" or name in TABLES,
            },
        )
        return list(compare_metadata(ctx, Base.metadata))

    async with pg_demo.engine.connect() as conn:
        assert await conn.run_sync(diff) == []


async def test_rows_identical_to_sqlite(pg_demo: Seeded, demo: Seeded) -> None:
    assert pg_demo.report.counts == demo.report.counts
    assert await table_digests(pg_demo.engine) == await table_digests(demo.engine)


async def test_read_layer(pg_demo: Seeded) -> None:
    acme = Inventory(pg_demo.engine, "acme")
    latest = await acme.latest_metric("network-resource-123", "utilization")
    assert latest is not None and latest["value"] == 42.0
    assert latest["observed_at"].isoformat() == "2026-08-11T12:00:01+00:00"
    assert await acme.link("globex-lnk-00006") is None
    hot = await acme.hot_links(0.8, UNTIL - timedelta(hours=1))
    assert {h["link_id"] for h in hot} == {"acme-lnk-00002", "acme-lnk-00010", "acme-lnk-00036"}
    lag = await acme.link_between("nyc1-core-02", "nyc1-core-01")
    assert lag is not None and lag["capacity_bps"] == 200_000_000_000


async def test_reseed_and_sequences(pg_demo: Seeded) -> None:
    with pytest.raises(SeedError):
        await seed(pg_demo.engine, until=UNTIL)
    async with pg_demo.engine.begin() as conn:  # serial sequences were moved past seeded ids
        new_id = await conn.scalar(
            insert(Tenant).values(slug="initech", name="Initech").returning(Tenant.id)
        )
        assert new_id == 3
        await conn.execute(delete(Tenant).where(Tenant.slug == "initech"))
        assert await conn.scalar(select(Tenant.id).where(Tenant.slug == "acme")) == 1


@pytest.mark.parametrize("tenant", ["acme", "globex"])
async def test_the_asyncpg_reader_reads_what_the_engine_reads(pg_demo: Seeded, tenant: str) -> None:
    """Row for row, types included (datetimes, numerics), for present, absent and hostile ids;
    three rounds, since a statement takes the asyncpg way from its second use."""
    fast = Inventory(pg_demo.engine, tenant)
    assert isinstance(fast._reader, AsyncpgReader)
    slow = Inventory(pg_demo.engine, tenant)
    slow._reader = EngineReader(pg_demo.engine)
    expected = await every_read(slow, PG_IDS)
    for _ in range(3):
        answers = await every_read(fast, PG_IDS)
        assert answers == expected
        assert [type(a) for a in answers] == [type(e) for e in expected]
    assert fast._reader._statements, "the asyncpg way was never taken"
    await close_reader(pg_demo.engine)


async def test_the_asyncpg_reader_survives_a_dropped_connection(pg_demo: Seeded) -> None:
    """What pool_pre_ping guaranteed: a server that closed the reader's connections (a restart)
    fails no read; the read is retried on a fresh connection."""
    inventory = Inventory(pg_demo.engine, "acme")
    reader = inventory._reader
    assert isinstance(reader, AsyncpgReader)
    for _ in range(2):
        assert await inventory.link("acme-lnk-00002") is not None
    async with pg_demo.engine.connect() as conn:
        await conn.exec_driver_sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND datname = current_database() "
            "AND backend_type = 'client backend'"
        )
    assert await inventory.link("acme-lnk-00002") is not None
    await close_reader(pg_demo.engine)
