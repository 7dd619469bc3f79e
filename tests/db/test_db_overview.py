"""The overview reads (db/overview.py) on the demo network: ports that are not up, search by
name and a device's metric series, each held to the caller's tenant, hostile text included."""

from __future__ import annotations

from datetime import timedelta

import pytest
from db_support import UNTIL, Seeded

from db.inventory import InventoryError
from db.overview import Overview

DOWN_ENDS = {("nyc1-agg-02", "Ethernet5"), ("nyc1-access-03", "Ethernet2")}
"""The two ends of the demo's down link (acme-lnk-00015)."""


async def test_ports_not_up_are_the_ends_of_the_down_link_and_no_port_shut_on_purpose(
    demo: Seeded,
) -> None:
    ports = await Overview(demo.engine, "acme").interfaces_not_up()
    assert {(p["device"], p["name"]) for p in ports} == DOWN_ENDS
    assert {p["link_id"] for p in ports} == {"acme-lnk-00015"}
    assert all(p["admin_status"] == "UP" and p["oper_status"] == "DOWN" for p in ports)
    assert {p["site"] for p in ports} == {"nyc1"}
    # planned links' ports are admin DOWN: shut on purpose, not a fault
    assert await Overview(demo.engine, "acme").interfaces_not_up(site="lon1") == []
    assert await Overview(demo.engine, "globex").interfaces_not_up() == []


async def test_search_finds_each_kind_by_part_of_its_name_in_any_case(demo: Seeded) -> None:
    acme = Overview(demo.engine, "acme")
    hits = await acme.search("NYC1-CORE")
    assert [d["name"] for d in hits["devices"]] == ["nyc1-core-01", "nyc1-core-02"]
    assert hits["sites"] == []
    assert all("nyc1-core" in f"{k['a_device']} {k['b_device']}" for k in hits["links"])
    assert [s["slug"] for s in (await acme.search("lon"))["sites"]] == ["lon1"]
    assert [k["link_id"] for k in (await acme.search("lnk-00015"))["links"]] == ["acme-lnk-00015"]
    # a link is found by its ends' device names too
    at_lon1 = (await acme.search("lon1-edge-01"))["links"]
    assert at_lon1 and all("lon1-edge-01" in (k["a_device"], k["b_device"]) for k in at_lon1)
    assert "acme-lnk-00036" in {k["link_id"] for k in at_lon1}
    ports = (await acme.search("ethernet5"))["interfaces"]
    assert ports and all(p["name"] == "Ethernet5" for p in ports)
    assert len((await acme.search("e", limit=3))["devices"]) == 3


@pytest.mark.parametrize("text", ["%", "_", "\\", "' OR 1=1 --", "nyc1\u00a0core", "é" * 300])
async def test_search_takes_wildcards_and_quotes_literally(demo: Seeded, text: str) -> None:
    hits = await Overview(demo.engine, "acme").search(text)
    assert hits == {"sites": [], "devices": [], "interfaces": [], "links": []}


async def test_search_never_finds_another_tenants_things(demo: Seeded) -> None:
    globex = await Overview(demo.engine, "globex").search("nyc1")
    assert globex == {"sites": [], "devices": [], "interfaces": [], "links": []}
    assert (await Overview(demo.engine, "globex").search("fra1"))["devices"]
    with pytest.raises(InventoryError):
        await Overview(demo.engine, "acme").search("   ")


async def test_a_devices_metric_series_is_its_tenants_only(demo: Seeded) -> None:
    acme = Overview(demo.engine, "acme")
    device = await acme.device("nyc1-core-01")
    assert device is not None
    since = UNTIL - timedelta(hours=24)
    cpu = await acme.metric_series(device["resource_id"], "cpu", since, UNTIL)
    assert len(cpu) >= 24
    assert [p["observed_at"] for p in cpu] == sorted(p["observed_at"] for p in cpu)
    assert all(0 <= p["value"] <= 100 for p in cpu)
    other = Overview(demo.engine, "globex")
    assert await other.metric_series(device["resource_id"], "cpu", since, UNTIL) == []
