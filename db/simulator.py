"""Seed a migrated database with the simulated network and its telemetry.

``seed()`` refuses to touch a database that already holds inventory rows
unless ``reset=True``; the demo data must never silently mix with real data.
Rows go in in chunks, committed as they go (PostgreSQL's COPY on asyncpg, Core
``insert()`` executemany elsewhere), so the large profile streams instead of
building one huge transaction.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from sqlalchemy import Float, Integer, String, Table, delete, exists, inspect, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.types import TypeDecorator, TypeEngine

from agent.sdk import ConfigurationError, UTCDateTime
from db.models import Base, Site, Tenant
from db.scales import resolve_profile
from db.telemetry import LinkTelemetry, MetricTelemetry, floor_time
from db.topology import Row, build_topology

CHUNK_ROWS = 50_000
"""Rows per executemany call: large enough to amortise round trips, small enough for RAM."""
DEFAULT_SEED = 7
UNTIL_STEP_S = 300


class SeedError(ConfigurationError, RuntimeError):
    """The database is not in a state that can be seeded (no schema, or not empty)."""


@dataclass(frozen=True, slots=True)
class SeedReport:
    """What ``seed()`` wrote and how long it took."""

    scale: str
    seed: int
    until: datetime
    counts: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0

    @property
    def total_rows(self) -> int:
        """All rows written, across every table."""
        return sum(self.counts.values())

    @property
    def samples(self) -> int:
        """Link utilisation plus metric samples."""
        return self.counts.get("link_utilization_sample", 0) + self.counts.get("metric_sample", 0)


async def is_seeded(engine: AsyncEngine) -> bool:
    """True if the inventory tables exist and hold at least one tenant or site."""
    async with engine.connect() as conn:
        if not await _has_schema(conn):
            return False
        query = select(exists(select(Tenant.id)) | exists(select(Site.id)))
        return bool(await conn.scalar(query))


async def seed(
    engine: AsyncEngine,
    *,
    scale: str = "small",
    links: int | None = None,
    until: datetime | None = None,
    seed: int = DEFAULT_SEED,
    progress: bool = False,
    reset: bool = False,
) -> SeedReport:
    """Write the simulated network; same ``seed`` and ``until`` give identical rows.

    ``until`` (tz-aware, default now floored to 5 minutes) is the newest sample
    time. ``links`` overrides the profile's link count. ``reset`` deletes all
    inventory rows first instead of refusing a non-empty database.
    """
    started = time.perf_counter()
    profile = resolve_profile(scale, links)
    end = _resolve_until(until)
    topology = build_topology(profile)
    link_telemetry = LinkTelemetry(topology, profile, end)
    metric_telemetry = MetricTelemetry(topology, profile, end)
    batches: list[tuple[Table, Iterable[Row], int]] = [
        (_table("tenant"), topology.tenants, len(topology.tenants)),
        (_table("site"), topology.sites, len(topology.sites)),
        (_table("device"), topology.devices, len(topology.devices)),
        (_table("interface"), topology.interfaces, len(topology.interfaces)),
        (_table("link"), topology.links, len(topology.links)),
    ]
    rng = random.Random(seed)  # one stream, consumed in a fixed order: links, then metrics
    batches += [
        (_table("link_utilization_sample"), link_telemetry.rows(rng), link_telemetry.count()),
        (_table("metric_sample"), metric_telemetry.rows(rng), metric_telemetry.count()),
    ]
    counts: dict[str, int] = {}
    async with engine.connect() as conn:
        await _prepare(conn, reset=reset)
        with _progress(progress, sum(n for _, _, n in batches)) as bar:
            for table, rows, _expected in batches:
                counts[table.name] = await _insert(conn, table, rows, bar)
        await _sync_sequences(conn)
        await _analyze(conn)
        await conn.commit()
    return SeedReport(profile.name, seed, end, counts, time.perf_counter() - started)


def _resolve_until(until: datetime | None) -> datetime:
    """Default to now floored to 5 minutes; insist on an aware value otherwise."""
    if until is None:
        return floor_time(datetime.now(UTC), UNTIL_STEP_S)
    if until.tzinfo is None or until.utcoffset() is None:
        raise ValueError("until must be timezone-aware (e.g. datetime(..., tzinfo=UTC))")
    return until.astimezone(UTC)


def _table(name: str) -> Table:
    """The Core table behind a model, for bulk inserts."""
    return Base.metadata.tables[name]


async def _has_schema(conn: AsyncConnection) -> bool:
    """Whether the migrations have run (checked on the tenant table)."""
    return await conn.run_sync(lambda sync: inspect(sync).has_table("tenant"))


async def _prepare(conn: AsyncConnection, *, reset: bool) -> None:
    """Refuse unmigrated or non-empty databases; with ``reset``, empty them first."""
    if not await _has_schema(conn):
        raise SeedError("inventory schema missing: run db.migrate.upgrade(url) before seeding")
    populated = await conn.scalar(select(exists(select(Tenant.id)) | exists(select(Site.id))))
    if populated and not reset:
        tenants = (await conn.scalars(select(Tenant.slug).order_by(Tenant.slug))).all()
        raise SeedError(
            "database already holds inventory data "
            f"(tenants: {', '.join(tenants) or 'none'}); pass reset=True to replace it"
        )
    if populated:
        for table in reversed(Base.metadata.sorted_tables):
            await conn.execute(delete(table))
        await conn.commit()


class _Bar:
    """Progress sink; a no-op unless a rich ``Progress`` is attached."""

    def __init__(self, progress: Progress | None, task: TaskID | None) -> None:
        self.progress = progress
        self.task = task

    def phase(self, name: str) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, description=f"seeding {name}")

    def advance(self, rows: int) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.advance(self.task, rows)


def _progress(enabled: bool, total: int) -> AbstractContextManager[_Bar]:
    """A rich progress bar over all rows, or a silent stand-in."""
    if not enabled:
        return nullcontext(_Bar(None, None))
    return _RichBar(total)


class _RichBar(AbstractContextManager[_Bar]):
    """Context manager that owns the rich ``Progress`` display."""

    def __init__(self, total: int) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description:<34}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        )
        self.total = total

    def __enter__(self) -> _Bar:
        self.progress.start()
        return _Bar(self.progress, self.progress.add_task("seeding", total=self.total))

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()


def _chunks(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    """Consecutive lists of at most ``size`` rows."""
    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        yield chunk


async def _insert(conn: AsyncConnection, table: Table, rows: Iterable[Row], bar: _Bar) -> int:
    """Bulk insert in chunks, committing each: COPY on asyncpg, Core executemany elsewhere."""
    bar.phase(table.name)
    written = 0
    statement = table.insert()
    copying = conn.dialect.driver == "asyncpg" and _copyable(table)
    for chunk in _chunks(rows, CHUNK_ROWS):
        if copying:
            await _copy(conn, table, chunk)
        else:
            await conn.execute(statement, chunk)
        await conn.commit()
        written += len(chunk)
        bar.advance(len(chunk))
    return written


_COPYABLE_TYPES = (Integer, Float, String, UTCDateTime)
"""Column types whose bound value asyncpg's COPY encodes as executemany would send it."""


def _copyable(table: Table) -> bool:
    return all(isinstance(column.type, _COPYABLE_TYPES) for column in table.columns)


async def _copy(conn: AsyncConnection, table: Table, chunk: list[Row]) -> None:
    """One chunk through PostgreSQL's COPY: the demo seeds about three times faster than
    through executemany's batched INSERTs (20.8 s to 5.6-8.4 s), which a first start on
    PostgreSQL and ``seed --scale large`` wait for. Values are bound as the column types bind
    them."""
    names = list(chunk[0])
    binders = [_binder(table.columns[name].type, conn) for name in names]
    records = [
        tuple(bind(row[name]) for bind, name in zip(binders, names, strict=True)) for row in chunk
    ]
    driver = (await conn.get_raw_connection()).driver_connection
    assert driver is not None, "a connection checked out of the pool has its driver's"
    await driver.copy_records_to_table(table.name, records=records, columns=names)


def _binder(column_type: TypeEngine[Any], conn: AsyncConnection) -> Callable[[Any], Any]:
    if isinstance(column_type, TypeDecorator):
        dialect = conn.dialect
        return lambda value: column_type.process_bind_param(value, dialect)
    return _same


def _same(value: Any) -> Any:
    return value


async def _sync_sequences(conn: AsyncConnection) -> None:
    """PostgreSQL: move serial sequences past the explicit ids the seeder wrote."""
    if conn.dialect.name != "postgresql":
        return
    for name in ("tenant", "site", "device", "interface", "link"):
        await conn.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence('{name}', 'id'), "
                f"COALESCE((SELECT max(id) FROM {name}), 1))"
            )
        )


async def _analyze(conn: AsyncConnection) -> None:
    """Refresh planner statistics: without them SQLite picks the tenant index for everything."""
    if conn.dialect.name == "sqlite":
        await conn.exec_driver_sql("PRAGMA analysis_limit=1000")
        await conn.exec_driver_sql("ANALYZE")
    elif conn.dialect.name == "postgresql":
        await conn.exec_driver_sql(f"ANALYZE {', '.join(Base.metadata.tables)}")
