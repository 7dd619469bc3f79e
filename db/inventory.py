"""Tenant-scoped, read-only access to the inventory for the skills.

Every statement carries the tenant predicate in its WHERE clause (through
``device.tenant_id`` / ``link.tenant_id``), so another tenant's rows never
leave the database; nothing is filtered in Python afterwards. Links are only
visible when the link *and* both end devices belong to the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, cast

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    Select,
    String,
    and_,
    bindparam,
    case,
    exists,
    func,
    literal,
    or_,
    select,
    union,
)
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import aliased

from agent.sdk import reader
from db.choices import DeviceRole, DeviceStatus, Direction, LinkStatus
from db.errors import InventoryError as InventoryError
from db.models import Device, Interface, Link, LinkUtilizationSample, MetricSample, Site, Tenant
from db.records import (
    DeviceRecord,
    HotLinkRecord,
    InterfaceRecord,
    LinkRecord,
    MetricRecord,
    SiteRecord,
    UtilizationSampleRecord,
)

Sample = LinkUtilizationSample


def _aware(name: str, value: datetime) -> datetime:
    """Reject naive datetimes: a window off by hours is worse than an error."""
    if not isinstance(value, datetime) or value.tzinfo is None or value.utcoffset() is None:
        raise InventoryError(f"{name} must be a timezone-aware datetime")
    return value


def _choice(name: str, value: str | None, allowed: type[StrEnum]) -> str | None:
    """Validate an optional filter against its choice set."""
    if value is None:
        return None
    valid = [member.value for member in allowed]
    if value not in valid:
        raise InventoryError(f"{name} must be one of {', '.join(valid)}; got {value!r}")
    return str(value)


class Inventory:
    """Read the network of one tenant (by slug); see the module docstring for the guarantee."""

    def __init__(self, engine: AsyncEngine, tenant: str) -> None:
        if not isinstance(tenant, str) or not tenant.strip():
            raise InventoryError("tenant must be a non-empty slug")
        self._reader = reader(engine)
        self._tenant = tenant

    @property
    def tenant(self) -> str:
        """Slug of the tenant every query is scoped to."""
        return self._tenant

    # ---------------------------------------------------------------- helpers

    def _tid(self) -> ColumnElement[int]:
        """The tenant id as an uncorrelated scalar subquery (evaluated once per statement)."""
        return select(Tenant.id).where(Tenant.slug == self._tenant).scalar_subquery()

    def _device_ids(self, ref: str) -> CompoundSelect[int]:
        """Ids of this tenant's devices whose resource_id or name is ``ref``."""
        if not isinstance(ref, str) or not ref:
            raise InventoryError("device reference must be a non-empty string")
        tid = self._tid()
        # A UNION rather than OR, so each branch can use its own index.
        return union(
            select(Device.id).where(Device.tenant_id == tid, Device.resource_id == ref),
            select(Device.id).where(Device.tenant_id == tid, Device.name == ref),
        )

    def _ports_of(self, ref: str) -> Select[int]:
        """Interface ids on this tenant's device ``ref``."""
        return select(Interface.id).where(Interface.device_id.in_(self._device_ids(ref)))

    async def _rows(self, statement: Select[*tuple[Any, ...]]) -> list[dict[str, Any]]:
        return await self._reader.rows(statement, {"tenant": self._tenant})

    def _link_select(self, *extra: Any) -> Select[*tuple[Any, ...]]:
        """Links with both ends resolved, restricted to this tenant's links and devices
        (the tenant is a bound parameter: ``_rows`` passes it)."""
        return _link_statement(*extra)

    # ----------------------------------------------------------------- reads

    async def exists(self) -> bool:
        """Whether the tenant is known at all."""
        return bool(await self._reader.scalar(select(exists().where(Tenant.slug == self._tenant))))

    async def sites(self, site: str | None = None, device: str | None = None) -> list[SiteRecord]:
        """Sites the tenant owns or has devices at, with its device count there; optionally
        only the one named ``site`` or the one holding ``device``."""
        tid = self._tid()
        device_count = (
            select(func.count(Device.id))
            .where(Device.site_id == Site.id, Device.tenant_id == tid)
            .scalar_subquery()
        )
        statement = (
            select(
                Site.slug,
                Site.name,
                Site.region,
                Site.status,
                # A site owned by someone else (shared facility) is reported without owner.
                case((Site.tenant_id == tid, literal(self._tenant)), else_=None).label("tenant"),
                device_count.label("device_count"),
            )
            .where(
                or_(
                    Site.tenant_id == tid,
                    exists().where(Device.site_id == Site.id, Device.tenant_id == tid),
                )
            )
            .order_by(Site.slug)
        )
        if site is not None:
            statement = statement.where(Site.slug == site)
        if device is not None:
            holding = select(Device.site_id).where(Device.id.in_(self._device_ids(device)))
            statement = statement.where(Site.id.in_(holding))
        return cast(list[SiteRecord], await self._rows(statement))

    def _device_select(self) -> Select[*tuple[Any, ...]]:
        return (
            select(
                Device.resource_id,
                Device.name,
                literal(self._tenant).label("tenant"),
                Site.slug.label("site"),
                Site.region,
                Device.role,
                Device.platform,
                Device.status,
                Device.mgmt_ip,
            )
            .join(Site, Site.id == Device.site_id)
            .where(Device.tenant_id == self._tid())
        )

    async def devices(
        self,
        site: str | None = None,
        role: str | None = None,
        status: str | None = None,
        *,
        limit: int | None = None,
    ) -> list[DeviceRecord]:
        """The tenant's devices, optionally by site slug, role and status."""
        statement = self._device_select()
        if site is not None:
            statement = statement.where(Site.slug == site)
        if (role := _choice("role", role, DeviceRole)) is not None:
            statement = statement.where(Device.role == role)
        if (status := _choice("status", status, DeviceStatus)) is not None:
            statement = statement.where(Device.status == status)
        statement = statement.order_by(Site.slug, Device.name).limit(limit)
        return cast(list[DeviceRecord], await self._rows(statement))

    async def device(self, resource_id_or_name: str) -> DeviceRecord | None:
        """One device by resource_id (preferred) or name; None if not the tenant's."""
        ref = resource_id_or_name
        statement = (
            self._device_select()
            .where(Device.id.in_(self._device_ids(ref)))
            .order_by((Device.resource_id == ref).desc(), Device.id)
            .limit(2)
        )
        rows = await self._rows(statement)
        if not rows:
            return None
        if rows[0]["resource_id"] != ref and len(rows) > 1:
            raise InventoryError(f"device name {ref!r} is ambiguous; use its resource_id")
        return cast(DeviceRecord, rows[0])

    def _interface_select(self, *, with_site: bool = False) -> Select[*tuple[Any, ...]]:
        """The tenant's interfaces with their device, LAG and link (``InterfaceRecord``'s
        columns); ``with_site`` adds the device's site slug as ``site`` for tenant-wide reads."""
        tid = self._tid()
        lag = aliased(Interface, name="lag")
        la, lb = aliased(Link, name="la"), aliased(Link, name="lb")
        site = [Site.slug.label("site")] if with_site else []
        statement = (
            select(
                Interface.resource_id,
                Device.name.label("device"),
                Device.resource_id.label("device_resource_id"),
                *site,
                Interface.name,
                Interface.type,
                Interface.enabled,
                Interface.admin_status,
                Interface.oper_status,
                Interface.speed_bps,
                Interface.mtu,
                lag.name.label("lag"),
                func.coalesce(la.link_id, lb.link_id).label("link_id"),
            )
            .join(Device, Device.id == Interface.device_id)
            .outerjoin(lag, lag.id == Interface.lag_id)
            .outerjoin(la, and_(la.a_interface_id == Interface.id, la.tenant_id == tid))
            .outerjoin(lb, and_(lb.b_interface_id == Interface.id, lb.tenant_id == tid))
            .where(Device.tenant_id == tid)
        )
        return statement.join(Site, Site.id == Device.site_id) if with_site else statement

    async def interfaces(self, device: str) -> list[InterfaceRecord]:
        """Interfaces of the tenant's device (resource_id or name), in port order."""
        statement = (
            self._interface_select()
            .where(Device.id.in_(self._device_ids(device)))
            .order_by(Device.name, Interface.id)
        )
        return cast(list[InterfaceRecord], await self._rows(statement))

    async def links(
        self,
        device: str | None = None,
        status: str | None = None,
        *,
        site: str | None = None,
        role: str | None = None,
        link: str | None = None,
        limit: int | None = None,
    ) -> list[LinkRecord]:
        """The tenant's links, optionally touching ``device``, a device at ``site`` or a
        device of ``role`` (either end), in ``status``, or the one whose id is ``link``."""
        statement = self._link_select()
        ends = []
        if device is not None:
            ends.append(self._ports_of(device))
        if site is not None:
            ends.append(self._ports_where(Site.slug == site))
        if (role := _choice("role", role, DeviceRole)) is not None:
            ends.append(self._ports_where(Device.role == role))
        for ports in ends:
            statement = statement.where(
                or_(Link.a_interface_id.in_(ports), Link.b_interface_id.in_(ports))
            )
        if link is not None:
            statement = statement.where(Link.link_id == link)
        if (status := _choice("status", status, LinkStatus)) is not None:
            statement = statement.where(Link.status == status)
        statement = statement.order_by(Link.link_id).limit(limit)
        return cast(list[LinkRecord], await self._rows(statement))

    def _ports_where(self, condition: ColumnElement[bool]) -> Select[int]:
        """Interface ids on this tenant's devices that meet ``condition`` (on Device or Site)."""
        return (
            select(Interface.id)
            .join(Device, Device.id == Interface.device_id)
            .join(Site, Site.id == Device.site_id)
            .where(Device.tenant_id == self._tid(), condition)
        )

    async def link(self, link_id: str) -> LinkRecord | None:
        """One link by public id; None if it is not this tenant's."""
        params = {"tenant": self._tenant, "link_id": link_id}
        rows = await self._reader.rows(_LINK, params)
        return cast(LinkRecord, rows[0]) if rows else None

    async def link_between(self, device_a: str, device_b: str) -> LinkRecord | None:
        """The link joining two devices in either orientation; connected ones win."""
        a_ports, b_ports = self._ports_of(device_a), self._ports_of(device_b)
        statement = (
            self._link_select()
            .where(
                or_(
                    and_(Link.a_interface_id.in_(a_ports), Link.b_interface_id.in_(b_ports)),
                    and_(Link.a_interface_id.in_(b_ports), Link.b_interface_id.in_(a_ports)),
                )
            )
            .order_by(case((Link.status == LinkStatus.CONNECTED, 0), else_=1), Link.link_id)
            .limit(1)
        )
        rows = await self._rows(statement)
        return cast(LinkRecord, rows[0]) if rows else None

    async def utilization_samples(
        self,
        link_id: str,
        since: datetime,
        until: datetime | None = None,
        direction: str | None = None,
    ) -> list[UtilizationSampleRecord]:
        """Samples of the tenant's link in ``[since, until]``, oldest first."""
        since = _aware("since", since)
        params: dict[str, Any] = {
            "tenant": self._tenant,
            "link_id": link_id,
            **self._directions(direction),
            "since": since,
        }
        statement = _SAMPLES
        if until is not None:
            if _aware("until", until) < since:
                raise InventoryError("until is before since")
            statement, params["until"] = _SAMPLES_UNTIL, until
        return cast(list[UtilizationSampleRecord], await self._reader.rows(statement, params))

    async def current_utilization(self, since: datetime, until: datetime) -> dict[str, float]:
        """Each of the tenant's links' newest ratio in ``[since, until]``, busier direction.

        One statement for every link (a network view draws them all): per link, the highest
        ratio over both directions at its newest sample time in the window. Links with no
        sample in the window are absent.
        """
        since, until = _aware("since", since), _aware("until", until)
        if until < since:
            raise InventoryError("until is before since")
        statement = (
            select(Link.link_id, Sample.observed_at, Sample.utilization_ratio)
            .join(Link, Link.id == Sample.link_id)
            .where(
                Link.tenant_id == self._tid(),
                Sample.direction.in_([d.value for d in Direction]),  # lets the PK serve it
                Sample.observed_at >= since,
                Sample.observed_at <= until,
            )
        )
        newest: dict[str, tuple[datetime, float]] = {}
        for row in await self._rows(statement):
            moment, ratio = row["observed_at"], float(row["utilization_ratio"])
            known = newest.get(row["link_id"])
            if known is None or moment > known[0] or (moment == known[0] and ratio > known[1]):
                newest[row["link_id"]] = (moment, ratio)
        return {link_id: ratio for link_id, (_, ratio) in newest.items()}

    async def resource_exists(self, resource_id: str) -> bool:
        """Whether a device or interface resource belongs to this tenant (others look absent)."""
        if not isinstance(resource_id, str) or not resource_id:
            return False
        params = {"tenant": self._tenant, "resource_id": resource_id}
        return bool(await self._reader.scalar(_RESOURCE_EXISTS, params))

    async def latest_metric(self, resource_id: str, metric: str) -> MetricRecord | None:
        """Newest ``metric`` sample of one of the tenant's devices or interfaces (links: see
        :meth:`latest_link_utilization`)."""
        params = {"tenant": self._tenant, "resource_id": resource_id, "metric": metric}
        rows = await self._reader.rows(_LATEST_METRIC, params)
        return cast(MetricRecord, rows[0]) if rows else None

    async def latest_link_utilization(self, link_id: str) -> UtilizationSampleRecord | None:
        """The newest utilisation sample of one of the tenant's links, busier direction first.

        A link is a resource too: ``evaluate_resource_condition`` compares its utilisation like
        an interface's. Callers resolve the link with :meth:`link` first (which also holds its
        ends to the tenant).
        """
        params = {"tenant": self._tenant, "link_id": link_id}
        rows = await self._reader.rows(_LATEST_SAMPLE, params)
        return cast(UtilizationSampleRecord, rows[0]) if rows else None

    async def hot_links(
        self,
        min_ratio: float,
        since: datetime,
        *,
        until: datetime | None = None,
        by: Literal["max", "avg"] = "max",
    ) -> list[HotLinkRecord]:
        """Links whose max (or avg) utilisation ratio since ``since`` exceeds ``min_ratio``.

        Statistics are per direction; each link is reported once, with its
        hotter direction's figures, hottest first.
        """
        if not 0 <= min_ratio <= 1:
            raise InventoryError("min_ratio must be within 0..1")
        if by not in ("max", "avg"):
            raise InventoryError("by must be 'max' or 'avg'")
        since = _aware("since", since)
        ratio = Sample.utilization_ratio
        window = [
            Sample.direction.in_([d.value for d in Direction]),  # lets the PK serve the range
            Sample.observed_at >= since,
        ]
        if until is not None:
            window.append(Sample.observed_at <= _aware("until", until))
        measure = func.max(ratio) if by == "max" else func.avg(ratio)
        stats = (
            select(
                Sample.link_id,
                Sample.direction,
                func.max(ratio).label("max_ratio"),
                func.avg(ratio).label("avg_ratio"),
                func.count().label("samples"),
                func.sum(case((ratio > min_ratio, 1), else_=0)).label("samples_over"),
                func.max(Sample.utilized_bps).label("peak_utilized_bps"),
                func.min(Sample.available_bps).label("min_available_bps"),
                func.min(Sample.observed_at).label("window_start"),
                func.max(Sample.observed_at).label("window_end"),
            )
            .join(Link, Link.id == Sample.link_id)
            .where(Link.tenant_id == self._tid(), *window)
            .group_by(Sample.link_id, Sample.direction)
            .having(measure > min_ratio)
            .subquery("stats")
        )
        statement = (
            self._link_select(
                stats.c.direction,
                stats.c.max_ratio,
                stats.c.avg_ratio,
                stats.c.samples,
                stats.c.samples_over,
                stats.c.peak_utilized_bps,
                stats.c.min_available_bps,
                stats.c.window_start,
                stats.c.window_end,
            )
            .join(stats, stats.c.link_id == Link.id)
            .order_by(stats.c.max_ratio.desc(), Link.link_id, stats.c.direction)
        )
        return _one_per_link(await self._rows(statement), by)

    @staticmethod
    def _directions(direction: str | None) -> dict[str, str]:
        """``_SAMPLES``'s two direction values: both directions, or the one asked twice."""
        if direction is None:
            first, second = (d.value for d in Direction)
            return {"direction_1": first, "direction_2": second}
        chosen = cast(str, _choice("direction", direction, Direction))
        return {"direction_1": chosen, "direction_2": chosen}


def _one_per_link(rows: Sequence[dict[str, Any]], by: str) -> list[HotLinkRecord]:
    """Collapse per-direction stats to one record per link (its hotter direction)."""
    merged: dict[str, dict[str, Any]] = {}
    key = "max_ratio" if by == "max" else "avg_ratio"
    for row in rows:
        row["avg_ratio"] = round(float(row["avg_ratio"]), 4)
        row["samples_over"] = int(row["samples_over"] or 0)
        current = merged.get(row["link_id"])
        if current is None:
            merged[row["link_id"]] = {**row, "hot_directions": [row["direction"]]}
            continue
        current["hot_directions"].append(row["direction"])
        if row[key] > current[key]:
            current.update({k: v for k, v in row.items() if k != "hot_directions"})
    result = sorted(merged.values(), key=lambda r: (-r[key], r["link_id"]))
    for record in result:
        record["hot_directions"].sort()
    return cast(list[HotLinkRecord], result)


# The two lookups behind every evaluate_resource_condition call, built once with bound
# parameters: building a statement costs more than running it (bench.perf --profile), and a
# prebuilt one goes straight to SQLAlchemy's compiled cache.
def _tenant_id() -> ColumnElement[int]:
    return select(Tenant.id).where(Tenant.slug == bindparam("tenant")).scalar_subquery()


def _owned() -> ColumnElement[bool]:
    tid = _tenant_id()
    resource_id: BindParameter[str] = bindparam("resource_id")
    return or_(
        exists().where(Device.resource_id == resource_id, Device.tenant_id == tid),
        exists()
        .where(Interface.resource_id == resource_id, Device.id == Interface.device_id)
        .where(Device.tenant_id == tid),
    )


_RESOURCE_EXISTS = select(_owned())
_LATEST_METRIC = (
    select(
        MetricSample.id,
        MetricSample.resource_id,
        MetricSample.metric,
        MetricSample.value,
        MetricSample.unit,
        MetricSample.observed_at,
    )
    .where(
        MetricSample.tenant_id == _tenant_id(),
        MetricSample.resource_id == bindparam("resource_id"),
        MetricSample.metric == bindparam("metric"),
        _owned(),
    )
    .order_by(MetricSample.observed_at.desc())
    .limit(1)
)


def _link_statement(*extra: Any) -> Select[*tuple[Any, ...]]:
    """Links with both ends resolved, restricted to the ``tenant`` parameter's links and
    devices; built once for the prebuilt lookups, per call for the others."""
    tid = _tenant_id()
    ia, ib = aliased(Interface, name="ia"), aliased(Interface, name="ib")
    da, db = aliased(Device, name="da"), aliased(Device, name="db")
    sa_, sb = aliased(Site, name="sa"), aliased(Site, name="sb")
    return (
        select(
            Link.link_id,
            bindparam("tenant", type_=String).label("tenant"),
            Link.kind,
            Link.status,
            Link.capacity_bps,
            Link.label,
            da.name.label("a_device"),
            da.resource_id.label("a_device_resource_id"),
            ia.name.label("a_interface"),
            ia.resource_id.label("a_interface_resource_id"),
            sa_.slug.label("a_site"),
            db.name.label("b_device"),
            db.resource_id.label("b_device_resource_id"),
            ib.name.label("b_interface"),
            ib.resource_id.label("b_interface_resource_id"),
            sb.slug.label("b_site"),
            *extra,
        )
        .join(ia, ia.id == Link.a_interface_id)
        .join(ib, ib.id == Link.b_interface_id)
        .join(da, da.id == ia.device_id)
        .join(db, db.id == ib.device_id)
        .join(sa_, sa_.id == da.site_id)
        .join(sb, sb.id == db.site_id)
        .where(Link.tenant_id == tid, da.tenant_id == tid, db.tenant_id == tid)
    )


_LINK = _link_statement().where(Link.link_id == bindparam("link_id"))


def _link_samples() -> Select[*tuple[Any, ...]]:
    """One of the tenant's links' utilisation samples (``UtilizationSampleRecord``'s columns),
    by the ``tenant`` and ``link_id`` parameters."""
    return (
        select(
            Link.link_id,
            Sample.direction,
            Sample.observed_at,
            Sample.interval_s,
            Sample.utilized_bps,
            Sample.available_bps,
            Sample.utilization_ratio,
            Link.capacity_bps,
        )
        .join(Link, Link.id == Sample.link_id)
        .where(Link.tenant_id == _tenant_id(), Link.link_id == bindparam("link_id"))
    )


_SAMPLES = (
    _link_samples()
    .where(
        # Two plain values, not an expanding IN: the reader's prepared path runs it (an
        # expanding list goes SQLAlchemy's way, a tenth of a capacity check), and the primary
        # key (link, direction, observed_at) serves it as before.
        Sample.direction.in_(
            [
                bindparam("direction_1", type_=Sample.direction.type),
                bindparam("direction_2", type_=Sample.direction.type),
            ]
        ),
        Sample.observed_at >= bindparam("since"),
    )
    .order_by(Sample.observed_at, Sample.direction)
)
_SAMPLES_UNTIL = _SAMPLES.where(Sample.observed_at <= bindparam("until"))
_LATEST_SAMPLE = (
    _link_samples()
    .order_by(Sample.observed_at.desc(), Sample.utilization_ratio.desc(), Sample.direction)
    .limit(1)
)
