"""The tenant-scoped read layer, against the seeded demo network."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from db_support import UNTIL, Seeded, sqlite_url
from sqlalchemy import insert, select

from agent.storage.engine import make_engine
from db.inventory import Inventory, InventoryError
from db.migrate import upgrade
from db.models import Device, Interface, Link, MetricSample, Site, Tenant
from db.simulator import seed

G = 1_000_000_000
HOT_ACME = {"acme-lnk-00002", "acme-lnk-00010", "acme-lnk-00036"}
HOT_GLOBEX = {"globex-lnk-00006"}
EXAMPLE_AT = datetime(2026, 8, 11, 12, 0, 1, tzinfo=UTC)


@pytest.fixture
def acme(demo: Seeded) -> Inventory:
    return Inventory(demo.engine, "acme")


@pytest.fixture
def globex(demo: Seeded) -> Inventory:
    return Inventory(demo.engine, "globex")


# ------------------------------------------------------------ worked example


async def test_worked_example_row_is_exact(demo: Seeded, acme: Inventory) -> None:
    async with demo.engine.connect() as conn:
        rows = (
            await conn.execute(
                select(MetricSample.value, MetricSample.unit, MetricSample.observed_at, Tenant.slug)
                .join(Tenant, Tenant.id == MetricSample.tenant_id)
                .where(
                    MetricSample.resource_id == "network-resource-123",
                    MetricSample.metric == "utilization",
                )
                .order_by(MetricSample.observed_at.desc())
            )
        ).all()
    assert rows[0] == (42.0, "percent", EXAMPLE_AT, "acme")
    assert all(at <= EXAMPLE_AT for _, _, at, _ in rows)
    latest = await acme.latest_metric("network-resource-123", "utilization")
    assert latest is not None and isinstance(latest.pop("id"), int)
    assert latest == {
        "resource_id": "network-resource-123",
        "metric": "utilization",
        "value": 42.0,
        "unit": "percent",
        "observed_at": EXAMPLE_AT,
    }
    device = await acme.device("network-resource-123")
    assert device is not None and device["tenant"] == "acme"


async def test_worked_example_holds_for_any_until(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "early.db")
    await upgrade(url)
    engine = make_engine(url)
    try:
        await seed(engine, links=35, until=datetime(2026, 8, 1, tzinfo=UTC))
        latest = await Inventory(engine, "acme").latest_metric(
            "network-resource-123", "utilization"
        )
        assert latest is not None
        assert (latest["value"], latest["observed_at"]) == (42.0, EXAMPLE_AT)
    finally:
        await engine.dispose()


async def test_latest_metric_is_newest_sample(acme: Inventory) -> None:
    cpu = await acme.latest_metric("network-resource-123", "cpu")
    assert cpu is not None and cpu["observed_at"] == UNTIL and cpu["unit"] == "percent"
    assert await acme.latest_metric("network-resource-123", "no-such-metric") is None
    assert await acme.latest_metric("network-resource-999999", "cpu") is None


async def test_interface_error_metric(acme: Inventory) -> None:
    down = (await acme.links(status="down"))[0]
    errors = await acme.latest_metric(down["a_interface_resource_id"], "errors")
    assert errors is not None and errors["unit"] == "count" and errors["value"] == 0


# ---------------------------------------------------------- tenant isolation


async def test_tenants_see_only_their_sites_devices_and_links(
    acme: Inventory, globex: Inventory
) -> None:
    assert [s["slug"] for s in await acme.sites()] == ["lon1", "nyc1", "sin1"]
    assert [s["slug"] for s in await globex.sites()] == ["fra1", "sfo1"]
    acme_devices = await acme.devices()
    globex_devices = await globex.devices()
    assert {d["tenant"] for d in acme_devices} == {"acme"}
    assert {d["site"] for d in acme_devices} == {"nyc1", "lon1", "sin1"}
    assert not {d["resource_id"] for d in acme_devices} & {d["resource_id"] for d in globex_devices}
    acme_links = await acme.links()
    assert acme_links and all(link["link_id"].startswith("acme-lnk-") for link in acme_links)
    assert all(link["link_id"].startswith("globex-lnk-") for link in await globex.links())


async def test_acme_cannot_reach_any_globex_row(acme: Inventory, globex: Inventory) -> None:
    since = UNTIL - timedelta(days=8)
    for link in await globex.links():
        assert await acme.link(link["link_id"]) is None
        assert await acme.utilization_samples(link["link_id"], since) == []
        assert await acme.link_between(link["a_device"], link["b_device"]) is None
    for device in await globex.devices():
        for ref in (device["resource_id"], device["name"]):
            assert await acme.device(ref) is None
            assert await acme.interfaces(ref) == []
            assert await acme.links(device=ref) == []
        assert await acme.latest_metric(device["resource_id"], "cpu") is None
    assert await globex.latest_metric("network-resource-123", "utilization") is None
    hot = {h["link_id"] for h in await acme.hot_links(0.0, UNTIL - timedelta(hours=1))}
    assert hot and all(link_id.startswith("acme-") for link_id in hot)


async def test_unknown_tenant_sees_nothing(demo: Seeded) -> None:
    nobody = Inventory(demo.engine, "initech")
    assert not await nobody.exists()
    assert await nobody.sites() == []
    assert await nobody.devices() == []
    assert await nobody.links() == []
    assert await nobody.link("acme-lnk-00001") is None
    assert await nobody.hot_links(0.0, UNTIL - timedelta(hours=1)) == []
    assert await Inventory(demo.engine, "acme").exists()


async def test_isolation_is_enforced_in_sql_even_for_inconsistent_rows(scratch: Seeded) -> None:
    """Rows that break the ownership rules still never leak across tenants."""
    async with scratch.engine.begin() as conn:
        acme_id = await conn.scalar(select(Tenant.id).where(Tenant.slug == "acme"))
        globex_iface = (
            await conn.execute(
                select(Interface.id, Interface.resource_id)
                .join(Device, Device.id == Interface.device_id)
                .where(Device.name == "fra1-core-01", Interface.type == "1000base-t")
            )
        ).one()
        acme_iface = await conn.scalar(
            select(Interface.id)
            .join(Device, Device.id == Interface.device_id)
            .where(Device.name == "nyc1-access-01", Interface.type == "1000base-t")
            .order_by(Interface.id.desc())
        )
        # An acme-owned link whose far end is a globex device ...
        await conn.execute(
            insert(Link).values(
                link_id="acme-lnk-99999",
                tenant_id=acme_id,
                a_interface_id=acme_iface,
                b_interface_id=globex_iface.id,
                kind="physical",
                status="connected",
                capacity_bps=G,
            )
        )
        # ... and an acme-tagged sample about a globex interface.
        await conn.execute(
            insert(MetricSample).values(
                tenant_id=acme_id,
                resource_id=globex_iface.resource_id,
                metric="errors",
                value=1.0,
                unit="count",
                observed_at=UNTIL,
            )
        )
        # A shared facility hosting one device of each tenant.
        shared = await conn.scalar(
            insert(Site)
            .values(slug="ams1", name="Amsterdam IX", region="eu-west", status="active")
            .returning(Site.id)
        )
        globex_id = await conn.scalar(select(Tenant.id).where(Tenant.slug == "globex"))
        for tenant_id, name, rid in (
            (acme_id, "ams1-edge-01", "r-a"),
            (globex_id, "ams1-edge-02", "r-g"),
        ):
            await conn.execute(
                insert(Device).values(
                    resource_id=rid,
                    tenant_id=tenant_id,
                    site_id=shared,
                    name=name,
                    role="edge",
                    platform="x",
                    status="active",
                )
            )
    acme = Inventory(scratch.engine, "acme")
    assert await acme.link("acme-lnk-99999") is None
    assert all(link["link_id"] != "acme-lnk-99999" for link in await acme.links())
    assert await acme.latest_metric(globex_iface.resource_id, "errors") is None
    ams1 = [s for s in await acme.sites() if s["slug"] == "ams1"]
    assert ams1 == [
        {
            "slug": "ams1",
            "name": "Amsterdam IX",
            "region": "eu-west",
            "status": "active",
            "tenant": None,
            "device_count": 1,
        }
    ]
    assert [d["name"] for d in await acme.devices(site="ams1")] == ["ams1-edge-01"]


# ----------------------------------------------------- topology and statuses


async def test_lag_is_two_by_100g(acme: Inventory) -> None:
    lag = await acme.link("acme-lnk-00001")
    assert lag is not None
    assert (lag["kind"], lag["capacity_bps"]) == ("lag", 200 * G)
    ports = await acme.interfaces("nyc1-core-01")
    bundle = next(p for p in ports if p["name"] == lag["a_interface"])
    members = [p for p in ports if p["lag"] == bundle["name"]]
    assert bundle["type"] == "lag" and bundle["speed_bps"] == 200 * G
    assert bundle["link_id"] == "acme-lnk-00001"
    assert [m["speed_bps"] for m in members] == [100 * G, 100 * G]
    assert all(m["link_id"] is None for m in members)


async def test_every_speed_class_is_present(acme: Inventory, globex: Inventory) -> None:
    capacities = {link["capacity_bps"] for link in await acme.links() + await globex.links()}
    assert {1 * G, 10 * G, 100 * G, 400 * G, 200 * G} <= capacities


async def test_hot_links(acme: Inventory, globex: Inventory) -> None:
    since = UNTIL - timedelta(hours=1)
    hot = await acme.hot_links(0.8, since)
    assert {h["link_id"] for h in hot} == HOT_ACME
    for record in hot:
        assert record["direction"] == "a_to_b" and record["hot_directions"] == ["a_to_b"]
        assert record["max_ratio"] > 0.8 and record["avg_ratio"] > 0.8
        assert record["samples"] == 13 and record["samples_over"] == 13
        assert record["window_end"] == UNTIL and record["window_start"] == since
    assert [h["max_ratio"] for h in hot] == sorted((h["max_ratio"] for h in hot), reverse=True)
    assert {h["link_id"] for h in await acme.hot_links(0.8, since, by="avg")} == HOT_ACME
    assert {h["link_id"] for h in await globex.hot_links(0.8, since)} == HOT_GLOBEX
    # Over a week the averages are ordinary; only the recent peak stands out.
    assert await acme.hot_links(0.8, UNTIL - timedelta(days=7), by="avg") == []
    earlier = await acme.hot_links(0.8, UNTIL - timedelta(days=1), until=UNTIL - timedelta(hours=3))
    assert earlier == []


async def test_current_utilization_is_each_links_newest_busier_direction(
    acme: Inventory, globex: Inventory
) -> None:
    since = UNTIL - timedelta(minutes=15)
    current = await acme.current_utilization(since, UNTIL)
    links = await acme.links()
    assert set(current) == {lnk["link_id"] for lnk in links if lnk["status"] != "planned"}
    # The same figure as one read per link, for every link (newest time, busier direction).
    for link in links:
        samples = await acme.utilization_samples(link["link_id"], since, UNTIL)
        if samples:
            newest = max(s["observed_at"] for s in samples)
            expected = max(s["utilization_ratio"] for s in samples if s["observed_at"] == newest)
            assert current[link["link_id"]] == pytest.approx(float(expected)), link["link_id"]
    assert {k for k, v in current.items() if v >= 0.8} == HOT_ACME
    assert not set(current) & set(await globex.current_utilization(since, UNTIL))
    with pytest.raises(InventoryError):
        await acme.current_utilization(UNTIL, since)


async def test_exactly_one_down_link_with_zero_recent_traffic(
    acme: Inventory, globex: Inventory
) -> None:
    down = await acme.links(status="down")
    assert [link["link_id"] for link in down] == ["acme-lnk-00015"]
    assert await globex.links(status="down") == []
    link = down[0]
    recent = await acme.utilization_samples(link["link_id"], UNTIL - timedelta(minutes=55))
    assert len(recent) == 24
    assert all(s["utilized_bps"] == 0 and s["utilization_ratio"] == 0 for s in recent)
    assert all(s["available_bps"] == 0 for s in recent)
    before = await acme.utilization_samples(
        link["link_id"], UNTIL - timedelta(hours=3), UNTIL - timedelta(hours=2)
    )
    assert any(s["utilized_bps"] > 0 for s in before)
    ports = {p["name"]: p for p in await acme.interfaces(link["a_device"])}
    assert ports[link["a_interface"]]["oper_status"] == "DOWN"
    assert ports[link["a_interface"]]["admin_status"] == "UP"


async def test_one_planned_link_without_samples(acme: Inventory, globex: Inventory) -> None:
    planned = await acme.links(status="planned")
    assert [link["link_id"] for link in planned] == ["acme-lnk-00018"]
    assert await globex.links(status="planned") == []
    assert await acme.utilization_samples("acme-lnk-00018", UNTIL - timedelta(days=30)) == []
    device = await acme.device(planned[0]["b_device"])
    assert device is not None and device["status"] == "planned"


async def test_decommissioning_link_is_drained(globex: Inventory) -> None:
    [link] = await globex.links(status="decommissioning")
    samples = await globex.utilization_samples(link["link_id"], UNTIL - timedelta(days=1))
    assert max(s["utilization_ratio"] for s in samples) < 0.05


# ------------------------------------------------------------ query surface


async def test_devices_filters(acme: Inventory) -> None:
    cores = await acme.devices(site="nyc1", role="core")
    assert [d["name"] for d in cores] == ["nyc1-core-01", "nyc1-core-02"]
    assert [d["name"] for d in await acme.devices(status="planned")] == ["nyc1-access-05"]
    assert len(await acme.devices(limit=3)) == 3
    assert await acme.devices(site="fra1") == []


async def test_device_by_name_or_resource_id(acme: Inventory) -> None:
    by_name = await acme.device("nyc1-edge-02")
    assert by_name is not None and by_name["resource_id"] == "network-resource-123"
    assert await acme.device("network-resource-123") == by_name
    assert await acme.device("nope") is None


async def test_ambiguous_device_name(scratch: Seeded) -> None:
    async with scratch.engine.begin() as conn:
        dev = (await conn.execute(select(Device).where(Device.name == "nyc1-core-01"))).one()
        other_site = await conn.scalar(
            insert(Site)
            .values(tenant_id=dev.tenant_id, slug="bos1", name="Boston", region="us-east")
            .returning(Site.id)
        )
        await conn.execute(
            insert(Device).values(
                resource_id="dup-1",
                tenant_id=dev.tenant_id,
                site_id=other_site,
                name="nyc1-core-01",
                role="core",
                platform="x",
                status="active",
            )
        )
    acme = Inventory(scratch.engine, "acme")
    with pytest.raises(InventoryError, match="ambiguous"):
        await acme.device("nyc1-core-01")
    dup = await acme.device("dup-1")
    assert dup is not None and dup["site"] == "bos1"


async def test_link_between_either_orientation(acme: Inventory) -> None:
    forward = await acme.link_between("nyc1-core-01", "nyc1-edge-01")
    backward = await acme.link_between("nyc1-edge-01", "network-resource-1001")
    assert forward is not None and forward == backward
    assert forward["link_id"] == "acme-lnk-00002"
    assert await acme.link_between("nyc1-core-01", "sin1-core-01") is None


async def test_links_of_a_device(acme: Inventory) -> None:
    links = await acme.links(device="nyc1-core-01")
    assert links and all("nyc1-core-01" in (link["a_device"], link["b_device"]) for link in links)
    by_port = {p["link_id"] for p in await acme.interfaces("nyc1-core-01") if p["link_id"]}
    assert by_port == {link["link_id"] for link in links}


async def test_utilization_samples_window_and_order(acme: Inventory) -> None:
    since, until = UNTIL - timedelta(hours=1), UNTIL - timedelta(minutes=30)
    samples = await acme.utilization_samples("acme-lnk-00003", since, until)
    assert len(samples) == 14  # 7 per direction, both ends of the window included
    assert [s["observed_at"] for s in samples] == sorted(s["observed_at"] for s in samples)
    assert samples[0]["observed_at"] == since and samples[-1]["observed_at"] == until
    assert all(s["observed_at"].tzinfo is UTC for s in samples)
    one_way = await acme.utilization_samples("acme-lnk-00003", since, until, direction="b_to_a")
    assert {s["direction"] for s in one_way} == {"b_to_a"} and len(one_way) == 7
    sample = one_way[0]
    assert sample["utilized_bps"] + sample["available_bps"] == sample["capacity_bps"]
    assert sample["interval_s"] == 300


async def test_misuse_raises_inventory_error(demo: Seeded, acme: Inventory) -> None:
    with pytest.raises(InventoryError):
        Inventory(demo.engine, "")
    with pytest.raises(InventoryError, match="role"):
        await acme.devices(role="spine")
    with pytest.raises(InventoryError, match="status"):
        await acme.links(status="up")
    with pytest.raises(InventoryError, match="timezone-aware"):
        await acme.utilization_samples("acme-lnk-00001", datetime(2026, 1, 1))
    with pytest.raises(InventoryError, match="before since"):
        await acme.utilization_samples("acme-lnk-00001", UNTIL, UNTIL - timedelta(hours=1))
    with pytest.raises(InventoryError, match="direction"):
        await acme.utilization_samples("acme-lnk-00001", UNTIL, direction="up")
    with pytest.raises(InventoryError, match="min_ratio"):
        await acme.hot_links(1.5, UNTIL)
    with pytest.raises(InventoryError, match="device"):
        await acme.interfaces("")


async def test_resource_exists_is_tenant_scoped(acme: Inventory, globex: Inventory) -> None:
    assert await acme.resource_exists("network-resource-123")
    assert await acme.resource_exists("network-resource-1001:ae0")  # an interface resource
    assert not await globex.resource_exists("network-resource-123")
    assert not await acme.resource_exists("network-resource-999999")
    assert not await acme.resource_exists("")
