"""Tenant-wide reads for an operator's overview: what is not up, and finding things by name.

The same guarantee as :mod:`db.inventory` (this class is an :class:`~db.inventory.Inventory`):
every statement carries the tenant predicate, so another tenant's rows never leave the
database. Text is matched in SQL, case-insensitively, as a substring with ``%`` and ``_``
taken literally.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict, cast

from sqlalchemy import ColumnElement, func, or_, select

from db.choices import AdminStatus, OperStatus
from db.inventory import Inventory, InventoryError
from db.models import Device, Interface, Link, MetricSample, Site
from db.records import DeviceRecord, InterfaceRecord, LinkRecord, SiteRecord

SEARCH_LIMIT = 25
"""At most this many hits of each kind: a search names things, it does not list them all."""


class InterfaceStateRecord(InterfaceRecord):
    site: str


class SearchHits(TypedDict):
    sites: list[SiteRecord]
    devices: list[DeviceRecord]
    interfaces: list[InterfaceStateRecord]
    links: list[LinkRecord]


class MetricPoint(TypedDict):
    observed_at: datetime
    value: float


def _containing(column: Any, text: str) -> ColumnElement[bool]:
    """``column`` holds ``text``, in any case (``%`` and ``_`` are literal)."""
    return func.lower(column).contains(text.casefold(), autoescape=True)


class Overview(Inventory):
    """The tenant's overview reads (see the module docstring)."""

    async def interfaces_not_up(self, site: str | None = None) -> list[InterfaceStateRecord]:
        """Interfaces meant to be up (admin UP) that are not (oper status other than UP),
        optionally at one site; an interface an operator shut is no fault."""
        statement = self._interface_select(with_site=True).where(
            Interface.admin_status == AdminStatus.UP, Interface.oper_status != OperStatus.UP
        )
        if site is not None:
            statement = statement.where(Site.slug == site)
        statement = statement.order_by(Site.slug, Device.name, Interface.name)
        return cast(list[InterfaceStateRecord], await self._rows(statement))

    async def search(self, text: str, limit: int = SEARCH_LIMIT) -> SearchHits:
        """Sites, devices, interfaces and links whose name or id holds ``text`` (a link also
        when an end's device name does)."""
        if not isinstance(text, str) or not text.strip():
            raise InventoryError("search text must be a non-empty string")
        needle = text.strip()
        sites = [
            s
            for s in await self.sites()
            if needle.casefold() in f"{s['slug']} {s['name']}".casefold()
        ][:limit]
        devices = self._device_select().where(
            or_(_containing(Device.name, needle), _containing(Device.resource_id, needle))
        )
        ports = self._interface_select(with_site=True).where(
            or_(_containing(Interface.name, needle), _containing(Interface.resource_id, needle))
        )
        ends = self._ports_where(_containing(Device.name, needle))
        links = self._link_select().where(
            or_(
                _containing(Link.link_id, needle),
                _containing(func.coalesce(Link.label, ""), needle),
                Link.a_interface_id.in_(ends),
                Link.b_interface_id.in_(ends),
            )
        )
        return {
            "sites": sites,
            "devices": cast(
                list[DeviceRecord],
                await self._rows(devices.order_by(Site.slug, Device.name).limit(limit)),
            ),
            "interfaces": cast(
                list[InterfaceStateRecord],
                await self._rows(ports.order_by(Device.name, Interface.name).limit(limit)),
            ),
            "links": cast(
                list[LinkRecord], await self._rows(links.order_by(Link.link_id).limit(limit))
            ),
        }

    async def metric_series(
        self, resource_id: str, metric: str, since: datetime, until: datetime
    ) -> list[MetricPoint]:
        """One of the tenant's devices' ``metric`` samples in ``[since, until]``, oldest first."""
        owned = select(Device.resource_id).where(
            Device.tenant_id == self._tid(), Device.resource_id == resource_id
        )
        statement = (
            select(MetricSample.observed_at, MetricSample.value)
            .where(
                MetricSample.tenant_id == self._tid(),
                MetricSample.resource_id.in_(owned),
                MetricSample.metric == metric,
                MetricSample.observed_at >= since,
                MetricSample.observed_at <= until,
            )
            .order_by(MetricSample.observed_at)
        )
        return cast(list[MetricPoint], await self._rows(statement))
