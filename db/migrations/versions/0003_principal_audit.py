"""Principal audit: one append-only row per tool call and per skill invocation.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "principal_audit",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
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
    )
    op.create_index("ix_principal_audit_ts", "principal_audit", ["ts"])
    op.create_index("ix_principal_audit_task", "principal_audit", ["task_id"])
    op.create_index(
        "ix_principal_audit_principal", "principal_audit", ["tenant", "principal", "ts"]
    )
    op.create_index("ix_principal_audit_skill", "principal_audit", ["skill_id", "ts"])
    # Append-only, enforced by the database itself.
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION principal_audit_append_only() RETURNS trigger AS $$ "
            "BEGIN RAISE EXCEPTION 'principal_audit is append-only'; END; $$ LANGUAGE plpgsql"
        )
        op.execute(
            "CREATE TRIGGER principal_audit_no_change BEFORE UPDATE OR DELETE ON principal_audit "
            "FOR EACH ROW EXECUTE FUNCTION principal_audit_append_only()"
        )
    else:
        # INSERT OR REPLACE deletes without firing delete triggers: refuse reusing an id too.
        op.execute(
            "CREATE TRIGGER principal_audit_no_replace BEFORE INSERT ON principal_audit "
            "WHEN EXISTS (SELECT 1 FROM principal_audit WHERE id = NEW.id) BEGIN "
            "SELECT RAISE(ABORT, 'principal_audit is append-only'); END"
        )
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER principal_audit_no_{event.lower()} BEFORE {event} "
                "ON principal_audit BEGIN "
                "SELECT RAISE(ABORT, 'principal_audit is append-only'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER principal_audit_no_change ON principal_audit")
        op.execute("DROP FUNCTION principal_audit_append_only()")
    op.drop_table("principal_audit")
