"""Keep the simulated telemetry current while the demo agent runs.

The seeded series is diurnal, so the next day looks like the last one: samples of the last
day are replayed one day later, up to now. Run at start-up and every few minutes, it keeps
"fresh telemetry" checks (``max_sample_age_seconds``) meaningful long after the first start.
Samples older than a day (such as the draft's worked example) are never copied.

A link direction whose newest sample is out of the ordinary (hot, or down) is the demo's
story: a day ago it was ordinary, so copying that day would end the story minutes after the
seed. Such a series repeats its own unusual tail instead, so a hot link stays hot and a down
link stays silent for as long as the demo runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import RowMapping, and_, func, insert, not_, or_, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from agent.sdk import claim_for_transaction
from db.models import LinkUtilizationSample, MetricSample
from db.telemetry import NORMAL_MAX_RATIO

DAY = timedelta(days=1)
MAX_DAYS_CATCH_UP = 7
LOCK_NAMESPACE = "netops-agent"
"""The network agent's advisory-lock namespace (its slug, ``netops/identity.py``): the replay's
lock key must not change between releases, whose replicas share it while they run side by side."""

LINK_COLUMNS = (
    "link_id",
    "direction",
    "observed_at",
    "interval_s",
    "utilized_bps",
    "available_bps",
    "utilization_ratio",
)
METRIC_COLUMNS = ("tenant_id", "resource_id", "metric", "value", "unit", "observed_at")

Series = tuple[int, str]
"""A link direction: (link id, direction)."""

_HOT = LinkUtilizationSample.utilization_ratio > NORMAL_MAX_RATIO
_DOWN = and_(LinkUtilizationSample.utilized_bps == 0, LinkUtilizationSample.available_bps == 0)


def _unusual(row: RowMapping) -> str | None:
    """Which story a sample tells: "hot", "down", or None for an ordinary one."""
    if row["utilization_ratio"] > NORMAL_MAX_RATIO:
        return "hot"
    if row["utilized_bps"] == 0 and row["available_bps"] == 0:
        return "down"
    return None


async def _replay(
    engine: AsyncEngine,
    model: type[LinkUtilizationSample | MetricSample],
    columns: Sequence[str],
    now: datetime,
) -> int:
    added = 0
    async with engine.begin() as connection:
        lock = f"{LOCK_NAMESPACE}:replay:{model.__tablename__}"
        if not await claim_for_transaction(connection, lock):
            return 0  # another replica is replaying right now; its rows serve us too
        latest = await connection.scalar(select(func.max(model.observed_at)))
        if latest is None or latest >= now:
            return 0
        # After a pause longer than the catch-up limit, only its last week is filled.
        oldest = max(latest, now - MAX_DAYS_CATCH_UP * DAY)
        unusual: list[Series] = []
        if model is LinkUtilizationSample:
            unusual = await _unusual_series(connection, latest)
            added += await _repeat_tails(connection, unusual, latest, oldest, now)
        # The last day is copied k days later for k = 1, 2, ...: each copy covers one day of
        # the gap, up to now, and only samples after ``oldest``.
        k = (oldest - latest) // DAY + 1
        while latest + (k - 1) * DAY < now:
            shift = k * DAY
            low, high = max(latest - DAY, oldest - shift), min(latest, now - shift)
            query = select(*[getattr(model, c) for c in columns]).where(
                model.observed_at > low, model.observed_at <= high
            )
            if unusual:
                pair = tuple_(LinkUtilizationSample.link_id, LinkUtilizationSample.direction)
                query = query.where(not_(pair.in_(unusual)))
            rows = (await connection.execute(query)).mappings().all()
            shifted = [{**row, "observed_at": row["observed_at"] + shift} for row in rows]
            if shifted:
                await connection.execute(insert(model), shifted)
                added += len(shifted)
            k += 1
    return added


async def _unusual_series(connection: AsyncConnection, latest: datetime) -> list[Series]:
    """The link directions whose newest sample (all series share one timeline) is unusual."""
    rows = await connection.execute(
        select(LinkUtilizationSample.link_id, LinkUtilizationSample.direction).where(
            LinkUtilizationSample.observed_at == latest, or_(_HOT, _DOWN)
        )
    )
    return sorted((int(link), str(direction)) for link, direction in rows.all())


async def _repeat_tails(
    connection: AsyncConnection,
    series: list[Series],
    latest: datetime,
    oldest: datetime,
    now: datetime,
) -> int:
    """Continue each unusual series with its own unusual tail, repeated, over (oldest, now]."""
    added = 0
    newest_first = (
        select(*[getattr(LinkUtilizationSample, c) for c in LINK_COLUMNS])
        .where(LinkUtilizationSample.observed_at > latest - DAY)
        .order_by(LinkUtilizationSample.observed_at.desc())
    )
    for link_id, direction in series:
        statement = newest_first.where(
            LinkUtilizationSample.link_id == link_id,
            LinkUtilizationSample.direction == direction,
        )
        recent = (await connection.execute(statement)).mappings().all()
        story = _unusual(recent[0])
        tail = []
        for row in recent:
            if _unusual(row) != story:
                break
            tail.append(row)
        tail.reverse()
        step = timedelta(seconds=int(tail[-1]["interval_s"]))
        rows = []
        k = (oldest - latest) // step + 1  # the first moment of the timeline after oldest
        while latest + step * k <= now:
            rows.append({**tail[(k - 1) % len(tail)], "observed_at": latest + step * k})
            k += 1
        if rows:
            await connection.execute(insert(LinkUtilizationSample), rows)
            added += len(rows)
    return added


async def extend_telemetry(engine: AsyncEngine, now: datetime) -> int:
    """Replay yesterday's samples up to ``now``; returns how many rows were added."""
    added = await _replay(engine, LinkUtilizationSample, LINK_COLUMNS, now)
    return added + await _replay(engine, MetricSample, METRIC_COLUMNS, now)
