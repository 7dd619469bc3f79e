"""Replica leases and task runners: how a survivor finds the tasks a dead process left running.

Revision ID: core_0002
Revises: core_0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from agent.storage.schema import UTCDateTime

revision: str = "core_0002"
down_revision: str | None = "core_0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def replica_lease_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("replica", sa.String(64), primary_key=True),
        sa.Column("started_at", UTCDateTime, nullable=False),
        sa.Column("heartbeat_at", UTCDateTime, nullable=False),
    ]


def task_runner_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("task_id", sa.String(64), primary_key=True),
        sa.Column("replica", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("principal", sa.String(255), nullable=False),
        sa.Column("tenant", sa.String(64), nullable=True),
        sa.Column("skill_id", sa.String(64), nullable=True),
        sa.Column("since", UTCDateTime, nullable=False),
    ]


def create_replica_lease() -> None:
    op.create_table("replica_lease", *replica_lease_columns())
    op.create_index("ix_replica_lease_heartbeat_at", "replica_lease", ["heartbeat_at"])


def create_task_runner() -> None:
    op.create_table("task_runner", *task_runner_columns())
    op.create_index("ix_task_runner_replica", "task_runner", ["replica"])


TABLES: dict[str, tuple[Callable[[], list[sa.Column[Any]]], Callable[[], None]]] = {
    "replica_lease": (replica_lease_columns, create_replica_lease),
    "task_runner": (task_runner_columns, create_task_runner),
}


def upgrade() -> None:
    for _columns, create in TABLES.values():
        create()


def downgrade() -> None:
    op.drop_table("task_runner")
    op.drop_table("replica_lease")
