"""Inventory schema: NetBox-shaped resources plus OpenConfig-style telemetry.

Tenancy lives on ``device`` and ``link`` (and optionally ``site``), as in
NetBox, so every read can filter on it inside SQL. Rates are integer bit/s in
``*_bps`` columns; metric units are stored next to the value.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from agent.sdk import UTCDateTime
from db.choices import (
    AdminStatus,
    DeviceRole,
    DeviceStatus,
    Direction,
    InterfaceType,
    LinkKind,
    LinkStatus,
    MetricUnit,
    OperStatus,
    SiteStatus,
)

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
"""Deterministic constraint names, so migrations can refer to them on any backend."""

# BIGINT is not a rowid alias on SQLite, so it would lose autoincrement there.
BigIntPK = BigInteger().with_variant(Integer(), "sqlite")


def choice_check(column: str, choices: type[StrEnum], name: str | None = None) -> CheckConstraint:
    """CHECK that ``column`` holds one of ``choices`` (portable, unlike native enums)."""
    return CheckConstraint(f"{column} IN ({quoted(choices)})", name=name or column)


def quoted(values: Iterable[str]) -> str:
    """SQL list literal of the given strings, for CHECK constraints."""
    return ", ".join(f"'{v}'" for v in values)


class Base(DeclarativeBase):
    """Declarative base carrying the naming convention."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Tenant(Base):
    """Customer that owns devices, links and samples."""

    __tablename__ = "tenant"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(50), unique=True)
    name: Mapped[str] = mapped_column(String(100))


class Site(Base):
    """A location; ``tenant_id`` is NULL for shared facilities."""

    __tablename__ = "site"
    __table_args__ = (choice_check("status", SiteStatus),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tenant_id: Mapped[int | None] = mapped_column(ForeignKey("tenant.id"), index=True)
    slug: Mapped[str] = mapped_column(String(50), unique=True)
    name: Mapped[str] = mapped_column(String(100))
    region: Mapped[str] = mapped_column(String(50))
    status: Mapped[str] = mapped_column(String(20), default=SiteStatus.ACTIVE)


class Device(Base):
    """A router or switch; always owned by exactly one tenant."""

    __tablename__ = "device"
    __table_args__ = (
        UniqueConstraint("site_id", "name"),
        choice_check("role", DeviceRole),
        choice_check("status", DeviceStatus),
        Index("ix_device_tenant_id_name", "tenant_id", "name"),
        Index("ix_device_tenant_id_site_id", "tenant_id", "site_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    resource_id: Mapped[str] = mapped_column(String(64), unique=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenant.id"))
    site_id: Mapped[int] = mapped_column(ForeignKey("site.id"))
    name: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(20))
    platform: Mapped[str] = mapped_column(String(50))
    status: Mapped[str] = mapped_column(String(20), default=DeviceStatus.ACTIVE)
    mgmt_ip: Mapped[str | None] = mapped_column(String(45))


class Interface(Base):
    """A port on a device; LAG members point at their bundle via ``lag_id``."""

    __tablename__ = "interface"
    __table_args__ = (
        UniqueConstraint("device_id", "name"),
        choice_check("type", InterfaceType),
        choice_check("admin_status", AdminStatus),
        choice_check("oper_status", OperStatus),
        CheckConstraint("speed_bps IS NULL OR speed_bps > 0", name="speed_bps_positive"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    resource_id: Mapped[str] = mapped_column(String(128), unique=True)
    device_id: Mapped[int] = mapped_column(ForeignKey("device.id"))
    name: Mapped[str] = mapped_column(String(64))
    type: Mapped[str] = mapped_column(String(32))
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    admin_status: Mapped[str] = mapped_column(String(20), default=AdminStatus.UP)
    oper_status: Mapped[str] = mapped_column(String(20), default=OperStatus.UP)
    speed_bps: Mapped[int | None] = mapped_column(BigInteger)
    mtu: Mapped[int | None] = mapped_column(Integer)
    lag_id: Mapped[int | None] = mapped_column(ForeignKey("interface.id"), index=True)


class Link(Base):
    """A connection between two interfaces, owned by a tenant.

    ``capacity_bps`` is what may be used: the lower port speed for cables, the
    member sum for LAGs, the commit rate for circuits.
    """

    __tablename__ = "link"
    __table_args__ = (
        choice_check("kind", LinkKind),
        choice_check("status", LinkStatus),
        CheckConstraint("a_interface_id <> b_interface_id", name="distinct_ends"),
        CheckConstraint("capacity_bps > 0", name="capacity_bps_positive"),
        Index("ix_link_tenant_id_status", "tenant_id", "status"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    link_id: Mapped[str] = mapped_column(String(32), unique=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenant.id"))
    a_interface_id: Mapped[int] = mapped_column(ForeignKey("interface.id"), unique=True)
    b_interface_id: Mapped[int] = mapped_column(ForeignKey("interface.id"), unique=True)
    kind: Mapped[str] = mapped_column(String(20), default=LinkKind.PHYSICAL)
    status: Mapped[str] = mapped_column(String(20), default=LinkStatus.CONNECTED)
    capacity_bps: Mapped[int] = mapped_column(BigInteger)
    label: Mapped[str | None] = mapped_column(String(100))


class LinkUtilizationSample(Base):
    """Average utilisation of one link direction over ``interval_s`` ending at ``observed_at``.

    ``available_bps`` is what could still be carried (0 while the link is down);
    ``utilization_ratio`` is 0..1 as in OTel ``hw.network.bandwidth.utilization``.
    """

    __tablename__ = "link_utilization_sample"
    __table_args__ = (
        PrimaryKeyConstraint("link_id", "direction", "observed_at"),
        choice_check("direction", Direction),
        CheckConstraint("interval_s > 0", name="interval_s_positive"),
        CheckConstraint("utilized_bps >= 0 AND available_bps >= 0", name="bps_non_negative"),
        CheckConstraint("utilization_ratio >= 0 AND utilization_ratio <= 1", name="ratio_0_1"),
        {"sqlite_with_rowid": False},
    )

    link_id: Mapped[int] = mapped_column(ForeignKey("link.id", ondelete="CASCADE"))
    direction: Mapped[str] = mapped_column(String(8))
    observed_at: Mapped[datetime] = mapped_column(UTCDateTime)
    interval_s: Mapped[int] = mapped_column(Integer)
    utilized_bps: Mapped[int] = mapped_column(BigInteger)
    available_bps: Mapped[int] = mapped_column(BigInteger)
    utilization_ratio: Mapped[float] = mapped_column(Float)


class MetricSample(Base):
    """A device or interface gauge/counter reading, addressed by ``resource_id``."""

    __tablename__ = "metric_sample"
    __table_args__ = (choice_check("unit", MetricUnit),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    tenant_id: Mapped[int] = mapped_column(ForeignKey("tenant.id"))
    resource_id: Mapped[str] = mapped_column(String(128))
    metric: Mapped[str] = mapped_column(String(32))
    value: Mapped[float] = mapped_column(Float)
    unit: Mapped[str] = mapped_column(String(16))
    observed_at: Mapped[datetime] = mapped_column(UTCDateTime)


# Newest-first per (tenant, resource, metric): serves latest_metric() with one seek.
Index(
    "ix_metric_sample_lookup",
    MetricSample.tenant_id,
    MetricSample.resource_id,
    MetricSample.metric,
    MetricSample.observed_at.desc(),
)

TABLES: tuple[str, ...] = tuple(Base.metadata.tables)
"""Names of every inventory table, in dependency order."""
