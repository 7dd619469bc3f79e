"""The simulator: deterministic, refuses to clobber data, and plants the documented cases."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from db_support import UNTIL, Seeded, sqlite_url, table_digests
from sqlalchemy import func, select

from agent.storage.engine import make_engine
from db.migrate import upgrade
from db.models import Base, Device, Interface, Link, LinkUtilizationSample, MetricSample
from db.scales import SCALES, resolve_profile
from db.simulator import SeedError, is_seeded, seed
from db.telemetry import LinkTelemetry, MetricTelemetry
from db.topology import build_topology, minimum_links


async def fresh(path: Path):
    url = sqlite_url(path)
    await upgrade(url)
    return make_engine(url)


async def counts(engine) -> dict[str, int]:
    async with engine.connect() as conn:
        return {
            t.name: (await conn.execute(select(func.count()).select_from(t))).scalar_one()
            for t in Base.metadata.sorted_tables
        }


async def test_report_matches_database(demo: Seeded) -> None:
    report = demo.report
    assert report.counts == await counts(demo.engine)
    assert report.until == UNTIL
    assert report.counts["tenant"] == 2
    assert report.counts["site"] == 5
    assert report.counts["link_utilization_sample"] == (report.counts["link"] - 1) * 2 * 2016
    assert report.samples > 300_000
    assert report.elapsed_s > 0


async def test_same_seed_same_rows(tmp_path: Path) -> None:
    """At a size that reads back quickly: the rows come from one seeded stream whatever the size
    (the demo's own rows are compared across backends in test_db_postgres)."""
    one, two = await fresh(tmp_path / "one.db"), await fresh(tmp_path / "two.db")
    try:
        await seed(one, links=35, until=UNTIL, seed=7)
        await seed(two, links=35, until=UNTIL, seed=7)
        assert await table_digests(one) == await table_digests(two)
    finally:
        await one.dispose()
        await two.dispose()


async def test_other_seed_changes_values_not_topology(tmp_path: Path) -> None:
    one, two = await fresh(tmp_path / "one.db"), await fresh(tmp_path / "two.db")
    try:
        await seed(one, links=35, until=UNTIL, seed=1)
        await seed(two, links=35, until=UNTIL, seed=2)
        a, b = await table_digests(one), await table_digests(two)
        for table in ("tenant", "site", "device", "interface", "link"):
            assert a[table] == b[table]
        assert a["link_utilization_sample"] != b["link_utilization_sample"]
        assert a["metric_sample"] != b["metric_sample"]
    finally:
        await one.dispose()
        await two.dispose()


async def test_refuses_non_empty_database_unless_reset(scratch: Seeded) -> None:
    before = await table_digests(scratch.engine)
    with pytest.raises(SeedError, match="reset=True"):
        await seed(scratch.engine, links=35, until=UNTIL)
    assert await table_digests(scratch.engine) == before
    report = await seed(scratch.engine, links=40, until=UNTIL, reset=True)
    assert report.counts == await counts(scratch.engine)
    assert report.counts["link"] == 40


async def test_is_seeded(tmp_path: Path, migrated) -> None:
    unmigrated = make_engine(sqlite_url(tmp_path / "bare.db"))
    try:
        assert not await is_seeded(unmigrated)
        with pytest.raises(SeedError, match="upgrade"):
            await seed(unmigrated)
    finally:
        await unmigrated.dispose()
    _, engine = migrated
    assert not await is_seeded(engine)
    await seed(engine, links=35, until=UNTIL)
    assert await is_seeded(engine)


async def test_arguments_are_validated(migrated) -> None:
    _, engine = migrated
    with pytest.raises(ValueError, match="unknown scale"):
        await seed(engine, scale="huge")
    with pytest.raises(ValueError, match="too few"):
        await seed(engine, links=minimum_links(SCALES["small"]) - 1)
    with pytest.raises(ValueError, match="timezone-aware"):
        await seed(engine, links=35, until=datetime(2026, 1, 1))
    assert not await is_seeded(engine)


async def test_default_until_is_now_floored_and_progress_renders(migrated, capsys) -> None:
    _, engine = migrated
    before = datetime.now(UTC)
    report = await seed(engine, links=35, progress=True)
    assert report.until.tzinfo is UTC
    assert report.until.minute % 5 == 0 and report.until.second == 0
    assert before - timedelta(minutes=5) < report.until <= before
    async with engine.connect() as conn:
        newest = await conn.scalar(select(func.max(LinkUtilizationSample.observed_at)))
    assert newest == report.until
    assert "seeding" in capsys.readouterr().out


async def test_series_shape(demo: Seeded) -> None:
    async with demo.engine.connect() as conn:
        rows = (
            await conn.execute(
                select(
                    LinkUtilizationSample.link_id,
                    LinkUtilizationSample.direction,
                    func.count(),
                    func.min(LinkUtilizationSample.observed_at),
                    func.max(LinkUtilizationSample.observed_at),
                ).group_by(LinkUtilizationSample.link_id, LinkUtilizationSample.direction)
            )
        ).all()
        ratios = (
            await conn.execute(
                select(
                    func.min(LinkUtilizationSample.utilization_ratio),
                    func.max(LinkUtilizationSample.utilization_ratio),
                    func.max(
                        func.abs(
                            LinkUtilizationSample.utilized_bps
                            + LinkUtilizationSample.available_bps
                            - Link.capacity_bps
                        )
                    ),
                )
                .join(Link, Link.id == LinkUtilizationSample.link_id)
                .where(Link.status != "down")
            )
        ).one()
    for _, _, n, first, last in rows:
        assert n == 2016  # 7 days of 5-minute samples
        assert last == UNTIL
        assert last - first == timedelta(minutes=5) * 2015
    assert ratios[0] >= 0 and ratios[1] <= 1
    assert ratios[2] == 0  # utilized + available == capacity on working links


async def test_device_metrics_cover_a_week_hourly(demo: Seeded) -> None:
    async with demo.engine.connect() as conn:
        rows = (
            await conn.execute(
                select(MetricSample.metric, MetricSample.unit, func.count())
                .join(Device, Device.resource_id == MetricSample.resource_id)
                .where(Device.name == "nyc1-core-01")
                .group_by(MetricSample.metric, MetricSample.unit)
            )
        ).all()
    assert sorted(rows) == [
        ("cpu", "percent", 168),
        ("memory", "percent", 168),
        ("utilization", "percent", 168),
    ]


def test_large_profile_meets_the_brief() -> None:
    profile = resolve_profile("large")
    topology = build_topology(profile)
    until = datetime(2026, 11, 29, tzinfo=UTC)
    samples = LinkTelemetry(topology, profile, until).count()
    samples += MetricTelemetry(topology, profile, until).count()
    assert len(topology.links) == 100_000
    assert samples >= 10_000_000


def _cut_off(
    devices: list[dict[str, Any]], ports: dict[int, int], links: list[dict[str, Any]]
) -> dict[int, set[str]]:
    """Per tenant, the devices not reachable from its first device over ``links``."""
    neighbours: dict[int, set[int]] = {d["id"]: set() for d in devices}
    for link in links:
        a, b = ports[link["a_interface_id"]], ports[link["b_interface_id"]]
        neighbours[a].add(b)
        neighbours[b].add(a)
    names = {d["id"]: d["name"] for d in devices}
    found: dict[int, set[str]] = {}
    for tenant in sorted({d["tenant_id"] for d in devices}):
        members = {d["id"] for d in devices if d["tenant_id"] == tenant}
        reached, stack = {min(members)}, [min(members)]
        while stack:
            for other in neighbours[stack.pop()] & members:
                if other not in reached:
                    reached.add(other)
                    stack.append(other)
        found[tenant] = {names[i] for i in members - reached}
    return found


def _assert_connected(
    devices: list[dict[str, Any]], ports: dict[int, int], links: list[dict[str, Any]]
) -> None:
    """Each tenant's network is one piece: every device over its links, and every active device
    over its connected links (the designated specials, a down or decommissioning link and a
    planned device on a planned link, take out only themselves)."""
    assert devices and links
    everything = _cut_off(devices, ports, links)
    assert everything == {tenant: set() for tenant in everything}
    active = [d for d in devices if d["status"] == "active"]
    carrying = [x for x in links if x["status"] == "connected"]
    in_service = _cut_off(active, ports, _between(carrying, active, ports))
    assert in_service == {tenant: set() for tenant in in_service}


def _between(
    links: list[dict[str, Any]], devices: list[dict[str, Any]], ports: dict[int, int]
) -> list[dict[str, Any]]:
    """The links whose two ends are among ``devices``."""
    ids = {d["id"] for d in devices}
    return [x for x in links if {ports[x["a_interface_id"]], ports[x["b_interface_id"]]} <= ids]


def _topology_rows(profile: Any) -> tuple[list[dict[str, Any]], dict[int, int], list[Any]]:
    topology = build_topology(profile)
    ports = {row["id"]: row["device_id"] for row in topology.interfaces}
    return topology.devices, ports, topology.links


@pytest.mark.parametrize("scale", sorted(SCALES))
def test_every_scale_seeds_a_connected_network(scale: str) -> None:
    _assert_connected(*_topology_rows(resolve_profile(scale)))


@pytest.mark.parametrize("extra", [0, 1, 2, 3, 7, 40, 41, 45, 46, 47, 113, 500, 1957])
def test_any_link_budget_seeds_a_connected_network(extra: int) -> None:
    """Wherever the budget ends (in a site's circuits, its cores, a pod, between sites)."""
    links = minimum_links(resolve_profile("medium")) + extra
    devices, ports, rows = _topology_rows(resolve_profile("medium", links=links))
    assert len(rows) == links
    _assert_connected(devices, ports, rows)


async def test_the_seeded_database_is_connected(demo: Seeded) -> None:
    """The rows as the database holds them, not only as they were built."""
    async with demo.engine.connect() as connection:
        devices = [dict(r._mapping) for r in await connection.execute(select(Device))]
        interfaces = await connection.execute(select(Interface.id, Interface.device_id))
        links = [dict(r._mapping) for r in await connection.execute(select(Link))]
    ports = {port_id: device_id for port_id, device_id in interfaces}
    _assert_connected(devices, ports, links)
