"""Deterministic network topology for the simulator: rows for tenant..link.

The structure depends only on the scale profile, never on the random seed, so
link ids, device names and the special links (hot, down, planned, LAG) are
stable and can be quoted in docs and tests. Randomness is for telemetry only.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from itertools import count
from typing import Any

from db.choices import (
    AdminStatus,
    DeviceRole,
    DeviceStatus,
    InterfaceType,
    LinkKind,
    LinkStatus,
    OperStatus,
    SiteStatus,
)
from db.scales import ScaleProfile

Row = dict[str, Any]

G = 1_000_000_000
"""One gigabit per second, in bit/s."""

WORKED_EXAMPLE_DEVICE = "nyc1-edge-02"
WORKED_EXAMPLE_RESOURCE_ID = "network-resource-123"
"""The acme device of the documented example; every other device is numbered from 1001."""


@dataclass(frozen=True, slots=True)
class City:
    """A place sites are named after; ``utc_offset_h`` phases the diurnal curve."""

    code: str
    name: str
    region: str
    utc_offset_h: float
    tenant: str


TENANTS: dict[str, str] = {"acme": "Acme Corp", "globex": "Globex Corporation"}

# Site order interleaves tenants so even a truncated network has both of them.
CITIES: tuple[City, ...] = (
    City("nyc", "New York", "us-east", -5, "acme"),
    City("fra", "Frankfurt", "eu-central", 1, "globex"),
    City("lon", "London", "eu-west", 0, "acme"),
    City("sfo", "San Francisco", "us-west", -8, "globex"),
    City("sin", "Singapore", "ap-southeast", 8, "acme"),
)

PLATFORMS: dict[tuple[str, DeviceRole], str] = {
    ("acme", DeviceRole.CORE): "juniper-junos",
    ("acme", DeviceRole.EDGE): "juniper-junos",
    ("acme", DeviceRole.AGGREGATION): "arista-eos",
    ("acme", DeviceRole.ACCESS): "arista-eos",
    ("globex", DeviceRole.CORE): "cisco-iosxr",
    ("globex", DeviceRole.EDGE): "cisco-iosxr",
    ("globex", DeviceRole.AGGREGATION): "cisco-nxos",
    ("globex", DeviceRole.ACCESS): "cisco-nxos",
}

LAG = "lag"
MGMT = "mgmt"
PortKind = int | str
"""A port speed in bit/s, or ``LAG``/``MGMT``."""

# platform -> port kind -> (counter, name template, first number)
PORT_NAMES: dict[str, dict[PortKind, tuple[str, str, int]]] = {
    "juniper-junos": {
        1 * G: ("ge", "ge-0/0/{n}", 0),
        10 * G: ("xe", "xe-0/0/{n}", 0),
        100 * G: ("et0", "et-0/0/{n}", 0),
        400 * G: ("et1", "et-0/1/{n}", 0),
        LAG: ("ae", "ae{n}", 0),
        MGMT: ("fxp", "fxp0", 0),
    },
    "arista-eos": {
        1 * G: ("eth", "Ethernet{n}", 1),
        10 * G: ("eth", "Ethernet{n}", 1),
        100 * G: ("eth", "Ethernet{n}", 1),
        400 * G: ("eth", "Ethernet{n}", 1),
        LAG: ("po", "Port-Channel{n}", 1),
        MGMT: ("ma", "Management1", 1),
    },
    "cisco-iosxr": {
        1 * G: ("gi", "GigabitEthernet0/0/0/{n}", 0),
        10 * G: ("te", "TenGigE0/0/0/{n}", 0),
        100 * G: ("hu", "HundredGigE0/0/1/{n}", 0),
        400 * G: ("fh", "FourHundredGigE0/0/2/{n}", 0),
        LAG: ("be", "Bundle-Ether{n}", 1),
        MGMT: ("mg", "MgmtEth0/RP0/CPU0/0", 0),
    },
    "cisco-nxos": {
        1 * G: ("eth", "Ethernet1/{n}", 1),
        10 * G: ("eth", "Ethernet1/{n}", 1),
        100 * G: ("eth", "Ethernet1/{n}", 1),
        400 * G: ("eth", "Ethernet1/{n}", 1),
        LAG: ("po", "port-channel{n}", 1),
        MGMT: ("mg", "mgmt0", 0),
    },
}

INTERFACE_TYPES: dict[PortKind, InterfaceType] = {
    1 * G: InterfaceType.GE_1000BASE_T,
    10 * G: InterfaceType.XE_10GBASE_X_SFPP,
    100 * G: InterfaceType.CE_100GBASE_X_QSFP28,
    400 * G: InterfaceType.XE_400GBASE_X_QSFPDD,
    LAG: InterfaceType.LAG,
    MGMT: InterfaceType.GE_1000BASE_T,
}

CIRCUIT_PORT_BPS = 100 * G
CIRCUIT_COMMIT_BPS = 50 * G
"""Inter-site circuits ride 100G ports but the provider commits 50G: capacity is the commit."""


class Special(StrEnum):
    """Designated links that exercise conditions in the skills."""

    HOT = "hot"
    DOWN = "down"
    DECOMMISSIONING = "decommissioning"


SPECIAL_LINKS: dict[tuple[str, str], Special] = {
    ("nyc1-core-01", "nyc1-edge-01"): Special.HOT,
    ("nyc1-agg-01", "nyc1-access-01"): Special.HOT,
    ("nyc1-edge-01", "lon1-edge-01"): Special.HOT,
    ("fra1-core-01", "fra1-agg-01"): Special.HOT,
    ("nyc1-agg-02", "nyc1-access-03"): Special.DOWN,
    ("fra1-agg-02", "fra1-access-04"): Special.DECOMMISSIONING,
}
"""(A device, B device) -> behaviour; the keys are stable device names."""

LAG_SITE = "nyc1"
PLANNED_SITE = "nyc1"
REQUIRED_SITES = 2
"""The specials above (bar the lon1 circuit) live in the first two sites."""


@dataclass(slots=True)
class _Device:
    """A device row plus its port counters while the topology is being built."""

    row: Row
    utc_offset_h: float
    counters: dict[str, Iterator[int]] = field(default_factory=dict)


@dataclass(slots=True)
class Topology:
    """Rows ready for bulk insert, plus what the telemetry generator needs to know."""

    tenants: list[Row] = field(default_factory=list)
    sites: list[Row] = field(default_factory=list)
    devices: list[Row] = field(default_factory=list)
    interfaces: list[Row] = field(default_factory=list)
    links: list[Row] = field(default_factory=list)
    special: dict[int, Special] = field(default_factory=dict)
    """link.id -> designated behaviour."""
    link_offset_h: dict[int, float] = field(default_factory=dict)
    """link.id -> UTC offset of the A end's site, to phase the diurnal curve."""
    device_offset_h: dict[int, float] = field(default_factory=dict)
    """device.id -> UTC offset of its site."""

    def link_ids(self, special: Special) -> list[str]:
        """Public ids of the links designated ``special``."""
        return [row["link_id"] for row in self.links if self.special.get(row["id"]) == special]


class _Builder:
    """Accumulates rows; stops adding links once the profile's count is reached."""

    def __init__(self, profile: ScaleProfile) -> None:
        self.profile = profile
        self.topo = Topology()
        self.tenant_ids: dict[str, int] = {}
        self.device_seq = count(1)
        self.interface_seq = count(1)
        self.link_seq: dict[str, Iterator[int]] = {}
        self.tenant_device_seq: dict[str, Iterator[int]] = {}

    @property
    def full(self) -> bool:
        """True once the requested number of links exists."""
        limit = self.profile.links
        return limit is not None and len(self.topo.links) >= limit

    def tenant(self, slug: str) -> int:
        """Create the tenant on first use."""
        if slug not in self.tenant_ids:
            tenant_id = len(self.tenant_ids) + 1
            self.tenant_ids[slug] = tenant_id
            self.topo.tenants.append({"id": tenant_id, "slug": slug, "name": TENANTS[slug]})
            self.link_seq[slug] = count(1)
            self.tenant_device_seq[slug] = count(1)
        return self.tenant_ids[slug]

    def site(self, city: City, number: int) -> Row:
        """A tenant-owned site such as ``nyc1``."""
        row = {
            "id": len(self.topo.sites) + 1,
            "tenant_id": self.tenant(city.tenant),
            "slug": f"{city.code}{number}",
            "name": f"{city.name} DC{number}",
            "region": city.region,
            "status": SiteStatus.ACTIVE,
        }
        self.topo.sites.append(row)
        return row

    def device(
        self,
        site: Row,
        city: City,
        role: DeviceRole,
        short: str,
        status: DeviceStatus = DeviceStatus.ACTIVE,
    ) -> _Device:
        """A device named ``<site>-<short>`` with a management port."""
        ordinal = next(self.device_seq)
        name = f"{site['slug']}-{short}"
        tenant_base = ipaddress.IPv4Address("10.0.0.0") + (self.tenant_ids[city.tenant] - 1) * 2**23
        resource_id = (
            WORKED_EXAMPLE_RESOURCE_ID
            if city.tenant == "acme" and name == WORKED_EXAMPLE_DEVICE
            else f"network-resource-{1000 + ordinal}"
        )
        row = {
            "id": ordinal,
            "resource_id": resource_id,
            "tenant_id": site["tenant_id"],
            "site_id": site["id"],
            "name": name,
            "role": role,
            "platform": PLATFORMS[(city.tenant, role)],
            "status": status,
            "mgmt_ip": str(tenant_base + next(self.tenant_device_seq[city.tenant])),
        }
        self.topo.devices.append(row)
        self.topo.device_offset_h[ordinal] = city.utc_offset_h
        dev = _Device(row, city.utc_offset_h)
        self.port(dev, MGMT, mtu=1500)
        return dev

    def port(
        self,
        dev: _Device,
        kind: PortKind,
        *,
        mtu: int = 9216,
        lag_id: int | None = None,
        speed_bps: int | None = None,
        up: bool = True,
    ) -> Row:
        """Allocate the next free port of ``kind`` using the platform's naming."""
        counter, template, first = PORT_NAMES[dev.row["platform"]][kind]
        seq = dev.counters.setdefault(counter, count(first))
        name = template.format(n=next(seq))
        if isinstance(kind, int):
            speed_bps = kind
        elif kind == MGMT:
            speed_bps = 1 * G
        row = {
            "id": next(self.interface_seq),
            "resource_id": f"{dev.row['resource_id']}:{name}",
            "device_id": dev.row["id"],
            "name": name,
            "type": INTERFACE_TYPES[kind],
            "enabled": up,
            "admin_status": AdminStatus.UP if up else AdminStatus.DOWN,
            "oper_status": OperStatus.UP if up else OperStatus.DOWN,
            "speed_bps": speed_bps,
            "mtu": mtu,
            "lag_id": lag_id,
        }
        self.topo.interfaces.append(row)
        return row

    def link(
        self,
        a: _Device,
        b: _Device,
        speed_bps: int,
        *,
        kind: LinkKind = LinkKind.PHYSICAL,
        status: LinkStatus = LinkStatus.CONNECTED,
        capacity_bps: int | None = None,
        label: str | None = None,
        a_port: Row | None = None,
        b_port: Row | None = None,
    ) -> Row | None:
        """Connect ``a`` to ``b`` (A = upstream end); None once the network is full."""
        if self.full:
            return None
        special = SPECIAL_LINKS.get((a.row["name"], b.row["name"]))
        if special is Special.DOWN:
            status = LinkStatus.DOWN
        elif special is Special.DECOMMISSIONING:
            status = LinkStatus.DECOMMISSIONING
        up = status is not LinkStatus.PLANNED
        a_port = a_port or self.port(a, speed_bps, up=up)
        b_port = b_port or self.port(b, speed_bps, up=up)
        if status is LinkStatus.DOWN:
            a_port["oper_status"] = b_port["oper_status"] = OperStatus.DOWN
        slug = self.topo.tenants[a.row["tenant_id"] - 1]["slug"]
        row = {
            "id": len(self.topo.links) + 1,
            "link_id": f"{slug}-lnk-{next(self.link_seq[slug]):05d}",
            "tenant_id": a.row["tenant_id"],
            "a_interface_id": a_port["id"],
            "b_interface_id": b_port["id"],
            "kind": kind,
            "status": status,
            "capacity_bps": capacity_bps or speed_bps,
            "label": label,
        }
        self.topo.links.append(row)
        self.topo.link_offset_h[row["id"]] = a.utc_offset_h
        if special is not None:
            self.topo.special[row["id"]] = special
        return row

    def lag(self, a: _Device, b: _Device, members: int, member_bps: int) -> Row | None:
        """A LAG link between bundle interfaces whose members are ``members`` x ``member_bps``."""
        if self.full:
            return None
        bundle_bps = members * member_bps
        ends = []
        for dev in (a, b):
            bundle = self.port(dev, LAG, speed_bps=bundle_bps)
            for _ in range(members):
                self.port(dev, member_bps, lag_id=bundle["id"])
            ends.append(bundle)
        return self.link(
            a, b, bundle_bps, kind=LinkKind.LAG, label="core bundle", a_port=ends[0], b_port=ends[1]
        )


def _site_devices(
    b: _Builder, site: Row, city: City
) -> tuple[list[_Device], list[_Device], list[list[_Device]]]:
    """Cores, edges and per-pod (aggregation + access) devices of one site."""
    cores = [b.device(site, city, DeviceRole.CORE, f"core-{i:02d}") for i in (1, 2)]
    edges = [b.device(site, city, DeviceRole.EDGE, f"edge-{i:02d}") for i in (1, 2)]
    pods: list[list[_Device]] = []
    access_no = count(1)
    for pod in range(b.profile.pods_per_site):
        aggs = [
            b.device(site, city, DeviceRole.AGGREGATION, f"agg-{2 * pod + i:02d}") for i in (1, 2)
        ]
        access = [
            b.device(site, city, DeviceRole.ACCESS, f"access-{next(access_no):02d}")
            for _ in range(b.profile.access_per_pod)
        ]
        pods.append(aggs + access)
    if site["slug"] == PLANNED_SITE:
        planned = b.device(
            site, city, DeviceRole.ACCESS, f"access-{next(access_no):02d}", DeviceStatus.PLANNED
        )
        pods[0].append(planned)
    return cores, edges, pods


def _build_site(b: _Builder, site: Row, city: City) -> list[_Device]:
    """Two cores, two edges, pods of two aggregation switches with dual-homed access."""
    cores, edges, pods = _site_devices(b, site, city)
    if site["slug"] == LAG_SITE:
        b.lag(cores[0], cores[1], members=2, member_bps=100 * G)
    else:
        b.link(cores[0], cores[1], 400 * G)
    for core in cores:
        for edge in edges:
            b.link(core, edge, 100 * G)
    for pod in pods:
        aggs, access = pod[:2], pod[2:]
        for core in cores:
            for agg in aggs:
                b.link(core, agg, 100 * G)
        for number, switch in enumerate(access, start=1):
            if switch.row["status"] == DeviceStatus.PLANNED:
                b.link(aggs[1], switch, 10 * G, status=LinkStatus.PLANNED)
                continue
            _uplink(b, aggs, switch, number)
    return edges


def _uplink(b: _Builder, aggs: list[_Device], switch: _Device, number: int) -> None:
    """The access switch ``number`` of its pod, dual-homed to the pod's aggregation pair."""
    uplink = 1 * G if number % 4 == 0 else 10 * G  # every 4th is a legacy 1G switch
    for agg in aggs:
        b.link(agg, switch, uplink)
    for _ in range(2):  # host-facing ports, not cabled to anything we model
        b.port(switch, 1 * G, mtu=1500)


def _build_last_site(b: _Builder, site: Row, city: City, upstream: list[_Device]) -> None:
    """The site the link budget ends in, built so that it ends connected.

    A whole site would run out of links part way and leave devices with none (and the site
    without its circuits, which come last): an operator reads that as an outage. Here a device
    is made only when a link to what is already connected fits: the edges over their circuits
    to ``upstream`` (the tenant's previous site's edges) first, then the cores, then pod by pod
    the aggregation pairs and their access switches.
    """
    edges: list[_Device] = []
    for number, left in enumerate(upstream, start=1):
        if b.full:
            return
        edges.append(b.device(site, city, DeviceRole.EDGE, f"edge-{number:02d}"))
        _circuit(b, left, edges[-1])
    cores: list[_Device] = []
    for number in (1, 2):
        if b.full:
            return
        cores.append(b.device(site, city, DeviceRole.CORE, f"core-{number:02d}"))
        for edge in edges:
            b.link(cores[-1], edge, 100 * G)
    b.link(cores[0], cores[1], 400 * G)
    access_no = count(1)
    for pod in range(b.profile.pods_per_site):
        aggs: list[_Device] = []
        for i in (1, 2):
            if b.full:
                return
            aggs.append(b.device(site, city, DeviceRole.AGGREGATION, f"agg-{2 * pod + i:02d}"))
            for core in cores:
                b.link(core, aggs[-1], 100 * G)
        for number in range(1, b.profile.access_per_pod + 1):
            if b.full:
                return
            switch = b.device(site, city, DeviceRole.ACCESS, f"access-{next(access_no):02d}")
            _uplink(b, aggs, switch, number)


def _circuits(b: _Builder, older: list[_Device], newer: list[_Device]) -> None:
    """Provider circuits between the edge routers of two sites of one tenant."""
    for left, right in zip(older, newer, strict=True):
        _circuit(b, left, right)


def _circuit(b: _Builder, left: _Device, right: _Device) -> None:
    """One provider circuit between two edge routers."""
    b.link(
        left,
        right,
        CIRCUIT_PORT_BPS,
        kind=LinkKind.CIRCUIT,
        capacity_bps=CIRCUIT_COMMIT_BPS,
        label=f"{left.row['name']} <> {right.row['name']} (commit 50G)",
    )


def _site_sequence() -> Iterator[tuple[City, int]]:
    """nyc1, fra1, lon1, sfo1, sin1, nyc2, fra2, ..."""
    for number in count(1):
        for city in CITIES:
            yield city, number


def _left(b: _Builder) -> int | float:
    """Links the budget still allows (no limit: infinitely many)."""
    limit = b.profile.links
    return math.inf if limit is None else limit - len(b.topo.links)


def _site_links(profile: ScaleProfile, city: City, number: int) -> int:
    """Links a whole site takes, its circuits not counted (built aside, nothing kept)."""
    probe = _Builder(replace(profile, links=None))
    _build_site(probe, probe.site(city, number), city)
    return len(probe.topo.links)


def minimum_links(profile: ScaleProfile) -> int:
    """Smallest link count that still contains every required special link."""
    probe = _Builder(replace(profile, links=None))
    for index, (city, number) in enumerate(_site_sequence()):
        if index == REQUIRED_SITES:
            break
        _build_site(probe, probe.site(city, number), city)
    return len(probe.topo.links)


def build_topology(profile: ScaleProfile) -> Topology:
    """All topology rows for ``profile`` (five sites, or enough for ``profile.links``)."""
    if profile.links is not None and profile.links < (floor := minimum_links(profile)):
        raise ValueError(
            f"links={profile.links} is too few: at least {floor} are needed to hold the "
            "hot, down, planned and LAG examples"
        )
    b = _Builder(profile)
    edges_by_tenant: dict[str, list[list[_Device]]] = {}
    for index, (city, number) in enumerate(_site_sequence()):
        if profile.links is None and index == len(CITIES):
            break
        if b.full:
            break
        previous = edges_by_tenant.setdefault(city.tenant, [])
        upstream = previous[-1] if previous else []
        if _left(b) < _site_links(profile, city, number) + len(upstream):
            _build_last_site(b, b.site(city, number), city, upstream)
            break
        site = b.site(city, number)
        edges = _build_site(b, site, city)
        if previous:
            _circuits(b, previous[-1], edges)
        previous.append(edges)
    for rings in edges_by_tenant.values():
        if len(rings) >= 3:  # close the ring so every site has two ways out
            _circuits(b, rings[-1], rings[0])
    return b.topo
