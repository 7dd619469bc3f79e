"""Task correlation: which downstream task a composed invocation created, from which upstream.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "task_correlation",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("ts", sa.DateTime(timezone=True), nullable=False),
        sa.Column("workflow_id", sa.String(64), nullable=False),
        sa.Column("upstream_agent", sa.String(512), nullable=False),
        sa.Column("upstream_endpoint", sa.String(512), nullable=False),
        sa.Column("upstream_task_id", sa.String(64), nullable=False),
        sa.Column("upstream_skill", sa.String(64), nullable=False),
        sa.Column("downstream_agent", sa.String(512), nullable=False),
        sa.Column("downstream_endpoint", sa.String(512), nullable=False),
        sa.Column("downstream_task_id", sa.String(64), nullable=False),
        sa.Column("downstream_skill", sa.String(64), nullable=False),
    )
    op.create_index("ix_task_correlation_workflow", "task_correlation", ["workflow_id"])
    op.create_index("ix_task_correlation_upstream", "task_correlation", ["upstream_task_id"])
    op.create_index("ix_task_correlation_downstream", "task_correlation", ["downstream_task_id"])


def downgrade() -> None:
    op.drop_table("task_correlation")
