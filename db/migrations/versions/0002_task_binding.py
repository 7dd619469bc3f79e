"""Task bindings: which skill a task belongs to, so follow-up messages go back to it.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "task_binding",
        sa.Column("task_id", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("phase", sa.String(16), nullable=False),
        sa.Column("skill_id", sa.String(64), nullable=True),
        sa.Column("candidates", sa.JSON, nullable=False),
        sa.Column("arguments", sa.JSON, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("task_binding")
