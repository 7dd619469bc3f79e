"""Push notifications: the a2a-sdk's config table and the outbox of undelivered notifications.

Revision ID: core_0005
Revises: core_0004
Create Date: 2026-12-07

The outbox is filled by triggers on the SDK's task table, which the SDK creates after the core's
migrations have run: agent/push/outbox.py installs them at start-up, once that table exists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

from agent.storage.schema import UTCDateTime

revision: str = "core_0005"
down_revision: str | None = "core_0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def push_config_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("task_id", sa.String(36), primary_key=True),
        sa.Column("config_id", sa.String(255), primary_key=True),
        sa.Column("config_data", sa.LargeBinary, nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("protocol_version", sa.String(16), nullable=True),
    ]


def push_outbox_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("task_id", sa.String(36), nullable=False),
        sa.Column("config_id", sa.String(255), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("status", sa.JSON, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("due_at", UTCDateTime, nullable=True),
        sa.Column("claimed_until", UTCDateTime, nullable=True),
    ]


def create_push_configs() -> None:
    op.create_table("push_notification_configs", *push_config_columns())
    op.create_index("ix_push_notification_configs_owner", "push_notification_configs", ["owner"])


def create_push_outbox() -> None:
    op.create_table("push_outbox", *push_outbox_columns())
    op.create_index("ix_push_outbox_task_id", "push_outbox", ["task_id", "config_id"])


TABLES: dict[str, tuple[Callable[[], list[sa.Column[Any]]], Callable[[], None]]] = {
    "push_notification_configs": (push_config_columns, create_push_configs),
    "push_outbox": (push_outbox_columns, create_push_outbox),
}


def upgrade() -> None:
    # The SDK's store makes its config table itself when asked to (create_table=True): a
    # database it already made one in keeps it. (Offline, as SQL text, there is no database
    # to ask: every table is created.)
    offline = op.get_context().as_sql
    present = None if offline else sa.inspect(op.get_bind())
    for name, (_columns, create) in TABLES.items():
        if present is None or not present.has_table(name):
            create()


def downgrade() -> None:
    op.drop_table("push_outbox")
    op.drop_table("push_notification_configs")
