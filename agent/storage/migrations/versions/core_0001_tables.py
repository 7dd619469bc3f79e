"""The core's tables: task bindings, the principal audit trail, task correlation.

Revision ID: core_0001
Revises:
Create Date: 2026-12-01

Until this history existed, the first deployment's revisions 0002-0004 created these tables
(with these columns, indexes and triggers; they are no-ops now). Each table is therefore
created only when it is missing, and adopted as it is when it is there, after checking that
its columns are the ones below. One old revision made a table with its indexes and triggers in
one transaction, so an adopted table has them too. A fresh database, one migrated by the
deployment before the split (its history at 0002, 0003 or 0004) and one whose deployment
never had that history all end with the same schema.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import context, op

from agent.storage.schema import UTCDateTime

revision: str = "core_0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = "principal_audit is append-only"


def task_binding_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("task_id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("phase", sa.String(16), nullable=False),
        sa.Column("skill_id", sa.String(64), nullable=True),
        sa.Column("candidates", sa.JSON, nullable=False),
        sa.Column("arguments", sa.JSON, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("updated_at", UTCDateTime, nullable=False),
    ]


def principal_audit_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ts", UTCDateTime, nullable=False),
        sa.Column("tenant", sa.String(64), nullable=True),
        sa.Column("principal", sa.String(255), nullable=False),
        sa.Column("actor_chain", sa.JSON, nullable=False),
        sa.Column("skill_id", sa.String(64), nullable=True),
        sa.Column("skill_version", sa.String(16), nullable=True),
        sa.Column("interface_digest", sa.String(80), nullable=True),
        sa.Column("task_id", sa.String(64), nullable=True),
        sa.Column("tool", sa.String(64), nullable=False),
        sa.Column("operation", sa.String(64), nullable=False),
        sa.Column("resource_ids", sa.JSON, nullable=False),
        sa.Column("decision", sa.String(8), nullable=False),
        sa.Column("reason", sa.String(255), nullable=False),
        sa.Column("token_id", sa.String(64), nullable=True),
    ]


def task_correlation_columns() -> list[sa.Column[Any]]:
    return [
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ts", UTCDateTime, nullable=False),
        sa.Column("workflow_id", sa.String(64), nullable=False),
        sa.Column("upstream_agent", sa.String(512), nullable=False),
        sa.Column("upstream_endpoint", sa.String(512), nullable=False),
        sa.Column("upstream_task_id", sa.String(64), nullable=False),
        sa.Column("upstream_skill", sa.String(64), nullable=False),
        sa.Column("downstream_agent", sa.String(512), nullable=False),
        sa.Column("downstream_endpoint", sa.String(512), nullable=False),
        sa.Column("downstream_task_id", sa.String(64), nullable=False),
        sa.Column("downstream_skill", sa.String(64), nullable=False),
    ]


def create_task_binding() -> None:
    op.create_table("task_binding", *task_binding_columns())


def create_principal_audit() -> None:
    op.create_table("principal_audit", *principal_audit_columns())
    op.create_index("ix_principal_audit_ts", "principal_audit", ["ts"])
    op.create_index("ix_principal_audit_task", "principal_audit", ["task_id"])
    op.create_index(
        "ix_principal_audit_principal", "principal_audit", ["tenant", "principal", "ts"]
    )
    op.create_index("ix_principal_audit_skill", "principal_audit", ["skill_id", "ts"])
    # Append-only, enforced by the database itself.
    if op.get_context().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION principal_audit_append_only() RETURNS trigger AS $$ "
            f"BEGIN RAISE EXCEPTION '{APPEND_ONLY}'; END; $$ LANGUAGE plpgsql"
        )
        op.execute(
            "CREATE TRIGGER principal_audit_no_change BEFORE UPDATE OR DELETE ON principal_audit "
            "FOR EACH ROW EXECUTE FUNCTION principal_audit_append_only()"
        )
        return
    # INSERT OR REPLACE deletes without firing delete triggers: refuse reusing an id too.
    op.execute(
        "CREATE TRIGGER principal_audit_no_replace BEFORE INSERT ON principal_audit "
        "WHEN EXISTS (SELECT 1 FROM principal_audit WHERE id = NEW.id) BEGIN "
        f"SELECT RAISE(ABORT, '{APPEND_ONLY}'); END"
    )
    for event in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER principal_audit_no_{event.lower()} BEFORE {event} "
            f"ON principal_audit BEGIN SELECT RAISE(ABORT, '{APPEND_ONLY}'); END"
        )


def create_task_correlation() -> None:
    op.create_table("task_correlation", *task_correlation_columns())
    op.create_index("ix_task_correlation_workflow", "task_correlation", ["workflow_id"])
    op.create_index("ix_task_correlation_upstream", "task_correlation", ["upstream_task_id"])
    op.create_index("ix_task_correlation_downstream", "task_correlation", ["downstream_task_id"])


TABLES: dict[str, tuple[Callable[[], list[sa.Column[Any]]], Callable[[], None]]] = {
    "task_binding": (task_binding_columns, create_task_binding),
    "principal_audit": (principal_audit_columns, create_principal_audit),
    "task_correlation": (task_correlation_columns, create_task_correlation),
}


def adopt(inspector: sa.Inspector, name: str, columns: list[sa.Column[Any]]) -> None:
    """Keep an existing table (and its rows) if it has exactly the expected columns."""
    found = [c["name"] for c in inspector.get_columns(name)]
    expected = [c.name for c in columns]
    if sorted(found) != sorted(expected):
        raise RuntimeError(
            f"table {name} exists with columns {found}, expected {expected}: "
            "it was not made by this project's migrations; move it aside or migrate it by hand"
        )


def upgrade() -> None:
    # Offline (SQL to stdout) there is no database to look at: emit the SQL for a fresh one.
    inspector = None if context.is_offline_mode() else sa.inspect(op.get_bind())
    present = set(inspector.get_table_names()) if inspector is not None else set()
    for name, (columns, create) in TABLES.items():
        if inspector is not None and name in present:
            adopt(inspector, name, columns())
        else:
            create()


def downgrade() -> None:
    op.drop_table("task_correlation")
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP TRIGGER principal_audit_no_change ON principal_audit")
        op.execute("DROP FUNCTION principal_audit_append_only()")
    op.drop_table("principal_audit")
    op.drop_table("task_binding")
