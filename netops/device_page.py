"""The console's device page and its search: find a site, device, interface or link by name,
and read one device as an operator does (what it is, its ports, its links, its CPU and memory).

Every read is the caller's tenant's (``db/overview.py``, filtered in SQL) and needs the scope
the inventory gate would want for it: topology reads for the page, ``assurance.read`` for the
device's CPU and memory, utilization samples for its links' current load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.console.pages import PageAnswer
from agent.console.topology import polyline
from agent.console.units import bit_rate
from agent.security.principal import Principal
from db.choices import MetricName
from db.inventory import InventoryError
from db.overview import MetricPoint, Overview
from db.records import DeviceRecord, LinkRecord
from netops.access import may, needs, overview_for
from netops.problems import device_href, link_href
from netops.topology import CURRENT_LOOKBACK

SOFTWARE = {
    "juniper-junos": ("Juniper", "Junos OS"),
    "arista-eos": ("Arista", "EOS"),
    "cisco-iosxr": ("Cisco", "IOS XR"),
    "cisco-nxos": ("Cisco", "NX-OS"),
}
"""Vendor and operating system of each platform slug the inventory uses."""
METRIC_WINDOW = timedelta(hours=24)
GAUGES = (MetricName.CPU, MetricName.MEMORY)


@dataclass(frozen=True)
class Gauge:
    """A device metric: its newest value, and its last day as chart points."""

    name: str
    value: float | None
    observed_at: datetime | None
    points: str
    low: float
    high: float


@dataclass(frozen=True)
class LinkRow:
    link: LinkRecord
    href: str
    far_device: str
    far_href: str
    far_interface: str
    capacity: str
    ratio: float | None


def _gauge(name: str, series: list[MetricPoint], since: datetime, until: datetime) -> Gauge:
    points = [(p["observed_at"], float(p["value"]) / 100) for p in series]
    values = [float(p["value"]) for p in series]
    newest = series[-1] if series else None
    return Gauge(
        name,
        float(newest["value"]) if newest else None,
        newest["observed_at"] if newest else None,
        polyline(points, since, until),
        min(values, default=0.0),
        max(values, default=0.0),
    )


def _link_row(link: LinkRecord, device: DeviceRecord, ratio: float | None) -> LinkRow:
    near_a = link["a_device_resource_id"] == device["resource_id"]
    end = "b" if near_a else "a"
    far_id = link["b_device_resource_id"] if near_a else link["a_device_resource_id"]
    return LinkRow(
        link,
        link_href(link["link_id"]),
        str(link[f"{end}_device"]),  # type: ignore[literal-required]
        device_href(far_id),
        str(link[f"{end}_interface"]),  # type: ignore[literal-required]
        bit_rate(link["capacity_bps"]),
        ratio if link["status"] == "connected" else None,
    )


class DevicePage:
    """``/console/device?id=<resource id or name>`` (``agent.console.pages.PageSource``)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def __call__(
        self, principal: Principal, query: Mapping[str, str], now: datetime
    ) -> PageAnswer:
        overview = overview_for(self._engine, principal)
        ref = query.get("id", "")
        try:
            device = await overview.device(ref) if ref else None
        except InventoryError as exc:  # a name two sites share: say so, and what to use
            return PageAnswer({"device": None, "ref": ref, "problem": str(exc)}, (ref,), True)
        if device is None:
            return PageAnswer({"device": None, "ref": ref, "problem": ""}, (ref,), bool(ref))
        context: dict[str, object] = {"device": device, "ref": ref, "problem": ""}
        context |= await self._details(overview, principal, device, now)
        return PageAnswer(context, named=(device["resource_id"],))

    async def _details(
        self, overview: Overview, principal: Principal, device: DeviceRecord, now: datetime
    ) -> dict[str, object]:
        rid = device["resource_id"]
        interfaces = await overview.interfaces(rid)
        links = await overview.links(device=rid)
        current: dict[str, float] = {}
        notes = []
        if may(principal, "utilization_samples"):
            current = await overview.current_utilization(now - CURRENT_LOOKBACK, now)
        else:
            notes.append(f"Link load needs one of: {needs('utilization_samples')}.")
        gauges: list[Gauge] = []
        if may(principal, "latest_metric"):
            since = now - METRIC_WINDOW
            for metric in GAUGES:
                series = await overview.metric_series(rid, metric.value, since, now)
                gauges.append(_gauge(metric.value, series, since, now))
        else:
            notes.append(f"CPU and memory need one of: {needs('latest_metric')}.")
        vendor, software = SOFTWARE.get(device["platform"], ("", ""))
        return {
            "interfaces": interfaces,
            "speed": lambda bps: bit_rate(bps) if bps else "—",
            "link_href": link_href,
            "links": [_link_row(k, device, current.get(k["link_id"])) for k in links],
            "gauges": gauges,
            "vendor": vendor,
            "software": software,
            "notes": notes,
            "since": (now - METRIC_WINDOW).strftime("%Y-%m-%d %H:%M"),
            "until": now.strftime("%Y-%m-%d %H:%M"),
            "down_ports": sum(
                1 for i in interfaces if i["admin_status"] == "UP" and i["oper_status"] != "UP"
            ),
        }


class SearchPage:
    """``/console/search?q=<text>``: sites, devices, interfaces and links by name or id."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def __call__(
        self, principal: Principal, query: Mapping[str, str], now: datetime
    ) -> PageAnswer:
        overview = overview_for(self._engine, principal)
        text = query.get("q", "")
        hits = await overview.search(text) if text else None
        return PageAnswer(
            {"text": text, "hits": hits, "device_href": device_href, "link_href": link_href}
        )
