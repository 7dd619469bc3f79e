"""Shapes of the plain dicts the inventory read layer returns.

They are ``TypedDict``s, so callers get type checking while the values stay
JSON-friendly (str, int, float, bool, None) apart from tz-aware ``datetime``s.
Rates are bit/s, ratios 0..1.
"""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict


class SiteRecord(TypedDict):
    slug: str
    name: str
    region: str
    status: str
    tenant: str | None
    """Owning tenant slug; None for a shared facility."""
    device_count: int
    """Devices of the caller's tenant at this site."""


class DeviceRecord(TypedDict):
    resource_id: str
    name: str
    tenant: str
    site: str
    region: str
    role: str
    platform: str
    status: str
    mgmt_ip: str | None


class InterfaceRecord(TypedDict):
    resource_id: str
    device: str
    device_resource_id: str
    name: str
    type: str
    enabled: bool
    admin_status: str
    oper_status: str
    speed_bps: int | None
    mtu: int | None
    lag: str | None
    """Name of the LAG this interface is a member of."""
    link_id: str | None
    """Public id of the tenant link cabled to this interface."""


class LinkRecord(TypedDict):
    link_id: str
    tenant: str
    kind: str
    status: str
    capacity_bps: int
    label: str | None
    a_device: str
    a_device_resource_id: str
    a_interface: str
    a_interface_resource_id: str
    a_site: str
    b_device: str
    b_device_resource_id: str
    b_interface: str
    b_interface_resource_id: str
    b_site: str


class UtilizationSampleRecord(TypedDict):
    link_id: str
    direction: str
    observed_at: datetime
    interval_s: int
    utilized_bps: int
    available_bps: int
    utilization_ratio: float
    capacity_bps: int


class MetricRecord(TypedDict):
    id: int
    """Row id of the sample: a stable handle for evidence records."""
    resource_id: str
    metric: str
    value: float
    unit: str
    observed_at: datetime


class HotLinkRecord(LinkRecord):
    direction: str
    """The hotter direction of the link over the window."""
    hot_directions: list[str]
    """Every direction that crossed the threshold."""
    max_ratio: float
    avg_ratio: float
    samples: int
    samples_over: int
    """Samples in the window whose ratio exceeded ``min_ratio``."""
    peak_utilized_bps: int
    min_available_bps: int
    window_start: datetime
    window_end: datetime
    """First and last sample time seen in the window."""
