"""The demo's telemetry stays current: yesterday replayed up to now, nothing older copied."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from agent.storage.engine import make_engine
from db.inventory import Inventory
from db.live import extend_telemetry
from db.migrate import upgrade
from db.simulator import seed
from tests.conftest import FIXED_NOW


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
        fresh = await acme.utilization_samples(
            "acme-lnk-00002", since=later - timedelta(minutes=10), until=later
        )
        assert fresh and max(s["observed_at"] for s in fresh) > later - timedelta(minutes=5)
        day_before = await acme.utilization_samples(
            "acme-lnk-00002",
            since=FIXED_NOW - timedelta(hours=21),
            until=FIXED_NOW - timedelta(hours=21),
        )
        same_time = await acme.utilization_samples(
            "acme-lnk-00002",
            since=FIXED_NOW + timedelta(hours=3),
            until=FIXED_NOW + timedelta(hours=3),
        )
        assert [s["utilized_bps"] for s in same_time] == [s["utilized_bps"] for s in day_before]
        latest = await acme.latest_metric("network-resource-123", "utilization")
        assert latest is not None and latest["value"] == 42
        assert latest["observed_at"].isoformat() == "2026-08-11T12:00:01+00:00"
    finally:
        await engine.dispose()
