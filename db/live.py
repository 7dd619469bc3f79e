"""Keep the simulated telemetry current while the demo agent runs.

The seeded series is diurnal, so the next day looks like the last one: samples of the last
day are replayed one day later, up to now. Run at start-up and every few minutes, it keeps
"fresh telemetry" checks (``max_sample_age_seconds``) meaningful long after the first start.
Samples older than a day (such as the draft's worked example) are never copied.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.sdk import claim_for_transaction
from db.models import LinkUtilizationSample, MetricSample

DAY = timedelta(days=1)
MAX_DAYS_CATCH_UP = 7


async def _replay(
    engine: AsyncEngine,
    model: type[LinkUtilizationSample | MetricSample],
    columns: list[str],
    now: datetime,
) -> int:
    added = 0
    async with engine.begin() as connection:
        if not await claim_for_transaction(connection, f"replay:{model.__tablename__}"):
            return 0  # another replica is replaying right now; its rows serve us too
        latest = await connection.scalar(select(func.max(model.observed_at)))
        if latest is None or latest >= now:
            return 0
        latest = max(latest, now - MAX_DAYS_CATCH_UP * DAY)
        while latest < now:
            window_end = min(latest + DAY, now)
            rows = (
                (
                    await connection.execute(
                        select(*[getattr(model, c) for c in columns]).where(
                            model.observed_at > latest - DAY, model.observed_at <= window_end - DAY
                        )
                    )
                )
                .mappings()
                .all()
            )
            shifted = [{**row, "observed_at": row["observed_at"] + DAY} for row in rows]
            if shifted:
                await connection.execute(insert(model), shifted)
                added += len(shifted)
            latest = window_end
    return added


async def extend_telemetry(engine: AsyncEngine, now: datetime) -> int:
    """Replay yesterday's samples up to ``now``; returns how many rows were added."""
    link_columns = [
        "link_id",
        "direction",
        "observed_at",
        "interval_s",
        "utilized_bps",
        "available_bps",
        "utilization_ratio",
    ]
    metric_columns = ["tenant_id", "resource_id", "metric", "value", "unit", "observed_at"]
    added = await _replay(engine, LinkUtilizationSample, link_columns, now)
    return added + await _replay(engine, MetricSample, metric_columns, now)
