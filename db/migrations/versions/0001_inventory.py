"""Inventory schema: tenants, sites, devices, interfaces, links and telemetry.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Frozen copies of the choice sets: a migration must not change when code does.
SITE_STATUS = ("planned", "staging", "active", "decommissioning", "retired")
DEVICE_ROLE = ("core", "aggregation", "edge", "access")
DEVICE_STATUS = ("active", "planned", "offline", "failed", "decommissioning")
INTERFACE_TYPE = (
    "1000base-t",
    "10gbase-x-sfpp",
    "25gbase-x-sfp28",
    "100gbase-x-qsfp28",
    "400gbase-x-qsfpdd",
    "lag",
    "virtual",
)
ADMIN_STATUS = ("UP", "DOWN")
OPER_STATUS = ("UP", "DOWN", "TESTING", "LOWER_LAYER_DOWN")
LINK_KIND = ("physical", "lag", "circuit")
LINK_STATUS = ("connected", "planned", "down", "decommissioning")
DIRECTION = ("a_to_b", "b_to_a")
METRIC_UNIT = ("percent", "count")


def _in(column: str, values: Sequence[str], table: str) -> sa.CheckConstraint:
    listed = ", ".join(f"'{v}'" for v in values)
    return sa.CheckConstraint(f"{column} IN ({listed})", name=f"ck_{table}_{column}")


def utc_datetime() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tenant",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("slug", sa.String(50), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_tenant"),
        sa.UniqueConstraint("slug", name="uq_tenant_slug"),
    )
    op.create_table(
        "site",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tenant_id", sa.Integer(), nullable=True),
        sa.Column("slug", sa.String(50), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("region", sa.String(50), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_site"),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"], name="fk_site_tenant_id_tenant"),
        sa.UniqueConstraint("slug", name="uq_site_slug"),
        _in("status", SITE_STATUS, "site"),
    )
    op.create_index("ix_site_tenant_id", "site", ["tenant_id"])
    op.create_table(
        "device",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.String(64), nullable=False),
        sa.Column("tenant_id", sa.Integer(), nullable=False),
        sa.Column("site_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("platform", sa.String(50), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("mgmt_ip", sa.String(45), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_device"),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"], name="fk_device_tenant_id_tenant"),
        sa.ForeignKeyConstraint(["site_id"], ["site.id"], name="fk_device_site_id_site"),
        sa.UniqueConstraint("resource_id", name="uq_device_resource_id"),
        sa.UniqueConstraint("site_id", "name", name="uq_device_site_id_name"),
        _in("role", DEVICE_ROLE, "device"),
        _in("status", DEVICE_STATUS, "device"),
    )
    op.create_index("ix_device_tenant_id_name", "device", ["tenant_id", "name"])
    op.create_index("ix_device_tenant_id_site_id", "device", ["tenant_id", "site_id"])
    op.create_table(
        "interface",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.String(128), nullable=False),
        sa.Column("device_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("admin_status", sa.String(20), nullable=False),
        sa.Column("oper_status", sa.String(20), nullable=False),
        sa.Column("speed_bps", sa.BigInteger(), nullable=True),
        sa.Column("mtu", sa.Integer(), nullable=True),
        sa.Column("lag_id", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_interface"),
        sa.ForeignKeyConstraint(["device_id"], ["device.id"], name="fk_interface_device_id_device"),
        sa.ForeignKeyConstraint(["lag_id"], ["interface.id"], name="fk_interface_lag_id_interface"),
        sa.UniqueConstraint("resource_id", name="uq_interface_resource_id"),
        sa.UniqueConstraint("device_id", "name", name="uq_interface_device_id_name"),
        _in("type", INTERFACE_TYPE, "interface"),
        _in("admin_status", ADMIN_STATUS, "interface"),
        _in("oper_status", OPER_STATUS, "interface"),
        sa.CheckConstraint(
            "speed_bps IS NULL OR speed_bps > 0", name="ck_interface_speed_bps_positive"
        ),
    )
    op.create_index("ix_interface_lag_id", "interface", ["lag_id"])
    op.create_table(
        "link",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("link_id", sa.String(32), nullable=False),
        sa.Column("tenant_id", sa.Integer(), nullable=False),
        sa.Column("a_interface_id", sa.Integer(), nullable=False),
        sa.Column("b_interface_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("capacity_bps", sa.BigInteger(), nullable=False),
        sa.Column("label", sa.String(100), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_link"),
        sa.ForeignKeyConstraint(["tenant_id"], ["tenant.id"], name="fk_link_tenant_id_tenant"),
        sa.ForeignKeyConstraint(
            ["a_interface_id"], ["interface.id"], name="fk_link_a_interface_id_interface"
        ),
        sa.ForeignKeyConstraint(
            ["b_interface_id"], ["interface.id"], name="fk_link_b_interface_id_interface"
        ),
        sa.UniqueConstraint("link_id", name="uq_link_link_id"),
        sa.UniqueConstraint("a_interface_id", name="uq_link_a_interface_id"),
        sa.UniqueConstraint("b_interface_id", name="uq_link_b_interface_id"),
        _in("kind", LINK_KIND, "link"),
        _in("status", LINK_STATUS, "link"),
        sa.CheckConstraint("a_interface_id <> b_interface_id", name="ck_link_distinct_ends"),
        sa.CheckConstraint("capacity_bps > 0", name="ck_link_capacity_bps_positive"),
    )
    op.create_index("ix_link_tenant_id_status", "link", ["tenant_id", "status"])
    op.create_table(
        "link_utilization_sample",
        sa.Column("link_id", sa.Integer(), nullable=False),
        sa.Column("direction", sa.String(8), nullable=False),
        sa.Column("observed_at", utc_datetime(), nullable=False),
        sa.Column("interval_s", sa.Integer(), nullable=False),
        sa.Column("utilized_bps", sa.BigInteger(), nullable=False),
        sa.Column("available_bps", sa.BigInteger(), nullable=False),
        sa.Column("utilization_ratio", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint(
            "link_id", "direction", "observed_at", name="pk_link_utilization_sample"
        ),
        sa.ForeignKeyConstraint(
            ["link_id"],
            ["link.id"],
            name="fk_link_utilization_sample_link_id_link",
            ondelete="CASCADE",
        ),
        _in("direction", DIRECTION, "link_utilization_sample"),
        sa.CheckConstraint("interval_s > 0", name="ck_link_utilization_sample_interval_s_positive"),
        sa.CheckConstraint(
            "utilized_bps >= 0 AND available_bps >= 0",
            name="ck_link_utilization_sample_bps_non_negative",
        ),
        sa.CheckConstraint(
            "utilization_ratio >= 0 AND utilization_ratio <= 1",
            name="ck_link_utilization_sample_ratio_0_1",
        ),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "metric_sample",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("tenant_id", sa.Integer(), nullable=False),
        sa.Column("resource_id", sa.String(128), nullable=False),
        sa.Column("metric", sa.String(32), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("unit", sa.String(16), nullable=False),
        sa.Column("observed_at", utc_datetime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_metric_sample"),
        sa.ForeignKeyConstraint(
            ["tenant_id"], ["tenant.id"], name="fk_metric_sample_tenant_id_tenant"
        ),
        _in("unit", METRIC_UNIT, "metric_sample"),
    )
    op.create_index(
        "ix_metric_sample_lookup",
        "metric_sample",
        ["tenant_id", "resource_id", "metric", sa.text("observed_at DESC")],
    )


def downgrade() -> None:
    op.drop_index("ix_metric_sample_lookup", table_name="metric_sample")
    op.drop_table("metric_sample")
    op.drop_table("link_utilization_sample")
    op.drop_index("ix_link_tenant_id_status", table_name="link")
    op.drop_table("link")
    op.drop_index("ix_interface_lag_id", table_name="interface")
    op.drop_table("interface")
    op.drop_index("ix_device_tenant_id_site_id", table_name="device")
    op.drop_index("ix_device_tenant_id_name", table_name="device")
    op.drop_table("device")
    op.drop_index("ix_site_tenant_id", table_name="site")
    op.drop_table("site")
    op.drop_table("tenant")
