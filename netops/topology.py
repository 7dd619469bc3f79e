"""The console's network view: the inventory seen through the caller's tenant and scopes.

Domain-specific, so it lives with the inventory rather than in ``agent/console`` (which only
knows groups, nodes and edges). Every read goes through the tenant-scoped read layer
(``db/inventory.py``, tenant from the caller's verified token, filtered in SQL), and each read
is allowed only when the caller holds a scope the inventory gate (``db/gate.py``) would accept
for that operation: utilization needs ``capacity.read`` or ``capacity.plan`` here exactly as it
does for a skill's tool token.
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.console.topology import (
    Edge,
    EdgeDetail,
    Graph,
    Group,
    Node,
    Series,
    TopologyRefusedError,
)
from agent.console.units import bit_rate
from agent.security.principal import Principal
from db.inventory import Inventory
from db.records import LinkRecord, UtilizationSampleRecord
from netops.access import may, needs

ROLE_RANK = {"edge": 0, "core": 1, "aggregation": 2, "access": 3}
"""A site's tiers top down: the edge routers on top (their lines to other sites leave upwards,
above every other device), then core, aggregation, access."""
CURRENT_LOOKBACK = timedelta(minutes=15)
"""How far back "current" utilization looks for the newest sample (samples are 5 min apart)."""


def _bps(value: int) -> str:
    """Capacity for people: 200 Gbit/s, 1 Gbit/s, 500 Mbit/s."""
    for unit, size in (("Tbit/s", 10**12), ("Gbit/s", 10**9), ("Mbit/s", 10**6)):
        if value >= size:
            return f"{value / size:g} {unit}"
    return f"{value} bit/s"


STATS_HEADER = ("Direction", "Now", "95th percentile", "Peak", "Mean")


def percentile(values: list[int], share: float) -> int:
    """The nearest-rank percentile (``share`` 0..1) of ``values``, as NOC reports take it."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _rate(bps: float, capacity: int) -> str:
    return f"{bit_rate(bps)} ({bps / capacity * 100:.1f} %)" if capacity else bit_rate(bps)


def direction_stats(samples: list[UtilizationSampleRecord], capacity: int) -> list[tuple[str, ...]]:
    """Per direction over the window, in bit/s and percent of capacity: the newest sample, the
    95th percentile, the peak and the mean; the header first. Empty without samples."""
    by_direction: dict[str, list[UtilizationSampleRecord]] = defaultdict(list)
    for sample in samples:
        by_direction[sample["direction"]].append(sample)
    rows: list[tuple[str, ...]] = []
    for direction, own in sorted(by_direction.items()):
        used = [int(s["utilized_bps"]) for s in own]
        newest = max(own, key=lambda s: s["observed_at"])
        rows.append(
            (
                direction.replace("_", " "),
                _rate(newest["utilized_bps"], capacity),
                _rate(percentile(used, 0.95), capacity),
                _rate(max(used), capacity),
                _rate(sum(used) / len(used), capacity),
            )
        )
    return [STATS_HEADER, *rows] if rows else []


def _latest_ratio(samples: list[UtilizationSampleRecord]) -> float | None:
    """The newest sample time's highest ratio over both directions."""
    if not samples:
        return None
    newest = max(s["observed_at"] for s in samples)
    return max(float(s["utilization_ratio"]) for s in samples if s["observed_at"] == newest)


def _edge(link: LinkRecord, ratio: float | None) -> Edge:
    return Edge(
        id=link["link_id"],
        a=link["a_device_resource_id"],
        b=link["b_device_resource_id"],
        label=f"{link['a_device']} {link['a_interface']} - "
        f"{link['b_device']} {link['b_interface']}",
        status=link["status"],
        ratio=ratio,
        capacity=_bps(link["capacity_bps"]),
    )


class InventoryTopology:
    """A TopologySource over the simulated inventory."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    def _inventory(self, principal: Principal) -> Inventory:
        if not principal.authenticated or not principal.tenant:
            raise TopologyRefusedError("the network view needs an authenticated caller")
        if not may(principal, "links"):
            raise TopologyRefusedError(f"the network view needs one of: {needs('links')}")
        return Inventory(self._engine, principal.tenant)

    async def graph(self, principal: Principal, now: datetime) -> Graph:
        """Sites, devices and links of the caller's tenant, links with their current load."""
        inventory = self._inventory(principal)
        sites = await inventory.sites()
        devices = await inventory.devices()
        links = await inventory.links()
        with_load = may(principal, "utilization_samples")
        current = (
            await inventory.current_utilization(now - CURRENT_LOOKBACK, now) if with_load else {}
        )
        edges = [
            _edge(link, current.get(link["link_id"]) if link["status"] == "connected" else None)
            for link in links
        ]
        note = "" if with_load else f"Utilization needs one of: {needs('utilization_samples')}."
        return Graph(
            groups=[
                Group(
                    s["slug"],
                    f"{s['slug']} ({s['name']})",
                    f"{s['device_count']} devices",
                    s["slug"],
                    s["region"],
                )
                for s in sites
            ],
            nodes=[
                Node(
                    d["resource_id"],
                    d["name"],
                    d["site"],
                    ROLE_RANK.get(d["role"], len(ROLE_RANK)),
                    f"{d['role']}, {d['platform']}, {d['status']}, {d['resource_id']}",
                    d["role"],
                )
                for d in devices
            ],
            edges=edges,
            note=note,
        )

    async def edge(
        self, principal: Principal, edge_id: str, since: datetime, until: datetime
    ) -> EdgeDetail | None:
        """One link of the caller's tenant, with both directions' utilization in the window."""
        inventory = self._inventory(principal)
        link = await inventory.link(edge_id)
        if link is None:
            return None
        facts = [
            ("Link", link["link_id"]),
            ("Capacity", _bps(link["capacity_bps"])),
            ("Kind", link["kind"]),
            ("Status", link["status"]),
            ("A end", f"{link['a_device']} {link['a_interface']} ({link['a_site']})"),
            ("B end", f"{link['b_device']} {link['b_interface']} ({link['b_site']})"),
        ]
        if link["label"]:
            facts.append(("Label", link["label"]))
        if not may(principal, "utilization_samples"):
            note = f"Utilization needs one of: {needs('utilization_samples')}."
            return EdgeDetail(_edge(link, None), facts, note=note)
        samples = await inventory.utilization_samples(edge_id, since, until)
        by_direction: dict[str, list[tuple[datetime, float]]] = defaultdict(list)
        for sample in samples:
            by_direction[sample["direction"]].append(
                (sample["observed_at"], float(sample["utilization_ratio"]))
            )
        recent = [s for s in samples if s["observed_at"] >= until - CURRENT_LOOKBACK]
        series = [
            Series(direction.replace("_", " "), points)
            for direction, points in sorted(by_direction.items())
        ]
        note = "" if samples else "No utilization samples in this window."
        return EdgeDetail(
            _edge(link, _latest_ratio(recent)),
            facts,
            series,
            note=note,
            samples=len(samples),
            stats=direction_stats(samples, link["capacity_bps"]),
        )
