"""The demo's telemetry stays current: yesterday replayed up to now, nothing older copied."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.engine import make_engine
from agent.storage.reads import close_reader
from db import live
from db.inventory import Inventory
from db.live import extend_telemetry
from db.migrate import upgrade
from db.models import LinkUtilizationSample
from db.simulator import seed
from db.telemetry import NORMAL_MAX_RATIO
from tests.conftest import FIXED_NOW, postgres_available, seeded_copy


async def test_replay_fills_the_gap_once_and_keeps_the_worked_example(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'live.db'}"
    await upgrade(url)
    engine = make_engine(url)
    try:
        await seed(engine, until=FIXED_NOW)
        later = FIXED_NOW + timedelta(hours=3, minutes=2)
        assert await extend_telemetry(engine, later) > 0
        assert await extend_telemetry(engine, later) == 0  # idempotent
        acme = Inventory(engine, "acme")
        # an ordinary link: the hot ones (acme-lnk-00002) repeat their own tail instead
        fresh = await acme.utilization_samples(
            "acme-lnk-00003", since=later - timedelta(minutes=10), until=later
        )
        assert fresh and max(s["observed_at"] for s in fresh) > later - timedelta(minutes=5)
        day_before = await acme.utilization_samples(
            "acme-lnk-00003",
            since=FIXED_NOW - timedelta(hours=21),
            until=FIXED_NOW - timedelta(hours=21),
        )
        same_time = await acme.utilization_samples(
            "acme-lnk-00003",
            since=FIXED_NOW + timedelta(hours=3),
            until=FIXED_NOW + timedelta(hours=3),
        )
        assert [s["utilized_bps"] for s in same_time] == [s["utilized_bps"] for s in day_before]
        latest = await acme.latest_metric("network-resource-123", "utilization")
        assert latest is not None and latest["value"] == 42
        assert latest["observed_at"].isoformat() == "2026-08-11T12:00:01+00:00"
    finally:
        await engine.dispose()


# --- the demo's story survives the replay ------------------------------------------------------
# Seeding makes a few link directions hot (and one link down) in its last stretch only; a day
# earlier they were ordinary. Copying that day ended the story minutes after the seed: the
# README's "is acme-lnk-00010 above 80 percent utilization?" turned condition_not_met.

Story = dict[tuple[int, str], str]


def story_of(row: Any) -> str:
    if row.utilization_ratio > NORMAL_MAX_RATIO:
        return "hot"
    if row.utilized_bps == 0 and row.available_bps == 0:
        return "down"
    return "ordinary"


async def samples_between(engine: AsyncEngine, after: datetime, until: datetime) -> list[Any]:
    async with engine.connect() as connection:
        result = await connection.execute(
            select(LinkUtilizationSample).where(
                LinkUtilizationSample.observed_at > after,
                LinkUtilizationSample.observed_at <= until,
            )
        )
        return list(result.all())


async def stories_at(engine: AsyncEngine, moment: datetime) -> Story:
    rows = await samples_between(engine, moment - timedelta(microseconds=1), moment)
    return {(r.link_id, r.direction): story_of(r) for r in rows if story_of(r) != "ordinary"}


@pytest.fixture(params=["sqlite", "postgresql"])
async def seeded(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """A copy of the demo seeded up to FIXED_NOW, on each backend."""
    if request.param == "postgresql" and not postgres_available():
        pytest.skip("no PostgreSQL cluster in this session (CI always has one)")
    url = await asyncio.to_thread(seeded_copy, tmp_path / "home", str(request.param))
    engine = make_engine(url)
    try:
        yield engine
    finally:
        await close_reader(engine)
        await engine.dispose()


@pytest.mark.parametrize(
    ("pause", "catch_up_days"),
    [
        (timedelta(minutes=7), live.MAX_DAYS_CATCH_UP),
        (timedelta(hours=3, minutes=2), live.MAX_DAYS_CATCH_UP),
        (timedelta(days=1, hours=5), live.MAX_DAYS_CATCH_UP),
        # Beyond the days the replay catches up on. With the week it has, that is 300,000
        # rows and a minute of the suite; a limit of one day tests the same arithmetic.
        (timedelta(days=3, minutes=13), 1),
    ],
    ids=["minutes", "hours", "a-day", "over-the-limit"],
)
async def test_hot_and_down_links_stay_so_after_any_pause(
    seeded: AsyncEngine,
    pause: timedelta,
    catch_up_days: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live, "MAX_DAYS_CATCH_UP", catch_up_days)
    before = await stories_at(seeded, FIXED_NOW)
    assert {"hot", "down"} <= set(before.values()), before  # the seed tells the story
    later = FIXED_NOW + pause
    assert await extend_telemetry(seeded, later) > 0
    assert await extend_telemetry(seeded, later) == 0  # idempotent

    added = await samples_between(seeded, FIXED_NOW, later)
    times: dict[tuple[int, str], list[datetime]] = {}
    for row in added:
        series = (row.link_id, row.direction)
        times.setdefault(series, []).append(row.observed_at)
        # every sample the replay made for a story series tells the same story
        assert story_of(row) == before.get(series, "ordinary"), (series, row.observed_at)
    # the story series are continued on the same timeline as every other series
    timelines = {tuple(sorted(t)) for t in times.values()}
    assert len(timelines) == 1, "story series and ordinary series disagree on their timestamps"
    (timeline,) = timelines
    assert later - timedelta(minutes=15) < timeline[-1] <= later
    assert timeline[0] >= later - timedelta(days=catch_up_days, minutes=15)

    every_series = {
        (r.link_id, r.direction)
        for r in await samples_between(seeded, FIXED_NOW - timedelta(microseconds=1), FIXED_NOW)
    }
    assert set(times) == every_series  # no series is left behind, ordinary or not
    newest = max(timeline)
    assert await stories_at(seeded, newest) == before
    # device metrics are replayed over the same pause
    acme = Inventory(seeded, "acme")
    device = await acme.device("nyc1-core-01")
    assert device is not None
    cpu = await acme.latest_metric(device["resource_id"], "cpu")
    assert cpu is not None and later - timedelta(minutes=15) < cpu["observed_at"] <= later


async def test_the_readmes_hot_link_question_stays_true(seeded: AsyncEngine) -> None:
    """The tour's link is above 80 % now, and an hour from now, as the agent reads it."""
    acme = Inventory(seeded, "acme")
    for pause in (timedelta(0), timedelta(minutes=20), timedelta(hours=1, minutes=1)):
        later = FIXED_NOW + pause
        await extend_telemetry(seeded, later)
        sample = await acme.latest_link_utilization("acme-lnk-00010")
        assert sample is not None
        assert sample["utilization_ratio"] > 0.8, (pause, sample)
        hot = await acme.hot_links(0.8, since=later - timedelta(minutes=15), until=later)
        assert "acme-lnk-00010" in {h["link_id"] for h in hot}, pause
