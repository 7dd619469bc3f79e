"""Query plans of the inventory reads the two measured skills make, as the database runs them.

The statements are captured from the read layer itself (db/inventory.py, through SQLAlchemy's
``before_cursor_execute``), with their parameters, so the plans are those of the real queries,
not hand-copied SQL: EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL.

    .venv/bin/python -m bench.perf.plans DATABASE_URL
    .venv/bin/python -m bench.perf.plans --postgresql [--scale small|medium|large]

The second form starts a private PostgreSQL on loopback (as the tests do), migrates and seeds
it at that scale, prints the plans (after ANALYZE, as autovacuum would have run by then), and
removes it.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import event, func, select

from agent.storage.engine import make_engine
from bench.perf.scenarios import CAPACITY, WORKED
from db.inventory import Inventory
from db.migrate import upgrade
from db.models import LinkUtilizationSample
from db.simulator import seed


async def _captured(url: str) -> list[tuple[str, str, Any]]:
    """(operation, statement, parameters) for each read evaluate and check_link_capacity make."""
    engine = make_engine(url)
    found: list[tuple[str, str, Any]] = []
    current = [""]

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            found.append((current[0], statement, parameters))

    try:
        async with engine.connect() as connection:  # the end of the seeded link series
            end = await connection.scalar(select(func.max(LinkUtilizationSample.observed_at)))
        end = min(end or datetime.now(UTC), datetime.now(UTC))
        event.listen(engine.sync_engine, "before_cursor_execute", record)
        inventory = Inventory(engine, "acme")
        resource = WORKED["resource_id"]
        calls = [
            ("resource_exists", inventory.resource_exists(resource)),
            ("latest_metric", inventory.latest_metric(resource, "utilization")),
            ("link", inventory.link(CAPACITY["link_id"])),
            (
                "utilization_samples",
                inventory.utilization_samples(
                    CAPACITY["link_id"], since=end - timedelta(hours=1), until=end
                ),
            ),
        ]
        for name, call in calls:
            current[0] = name
            await call
    finally:
        await engine.dispose()
    return found


async def print_plans(url: str) -> None:
    """Print each captured statement's plan; a full scan shows as ``SCAN <table>`` on SQLite
    (``SCAN ... USING COVERING INDEX`` and ``SEARCH`` are index access) and ``Seq Scan`` on
    PostgreSQL."""
    statements = await _captured(url)
    engine = make_engine(url)
    sqlite = engine.dialect.name == "sqlite"
    try:
        async with engine.connect() as connection:
            for operation, statement, parameters in statements:
                prefix = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN "
                result = await connection.exec_driver_sql(prefix + statement, parameters)
                rows = result.all()
                print(f"-- {operation}")
                print("   " + " ".join(statement.split()))
                for row in rows:
                    print("   | " + (f"{row[1]:>3} {row[3]}" if sqlite else str(row[0])))
    finally:
        await engine.dispose()


async def _seeded(url: str, scale: str) -> None:
    await upgrade(url)
    engine = make_engine(url)
    try:
        started = time.perf_counter()
        await seed(engine, scale=scale)
        print(f"(seeded {scale} in {time.perf_counter() - started:.0f} s)")
        async with engine.connect() as connection:
            await connection.execution_options(isolation_level="AUTOCOMMIT")
            await connection.exec_driver_sql("ANALYZE")
    finally:
        await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", help="a seeded database")
    parser.add_argument("--postgresql", action="store_true", help="a private, freshly seeded one")
    parser.add_argument("--scale", default="small", choices=["small", "medium", "large"])
    args = parser.parse_args()
    if not args.postgresql:
        asyncio.run(print_plans(args.url))
        return
    from tests.pg_cluster import PostgresCluster

    cluster = PostgresCluster()
    try:
        url = cluster.database("plans")
        asyncio.run(_seeded(url, args.scale))
        asyncio.run(print_plans(url))
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
