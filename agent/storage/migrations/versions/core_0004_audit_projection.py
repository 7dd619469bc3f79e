"""The audit trail names the projection a request came through: ``a2a`` or ``mcp``.

Revision ID: core_0004
Revises: core_0003
Create Date: 2026-12-03

One nullable column on ``principal_audit``. Rows written before this revision keep NULL (they
came through A2A, the only projection then, but the trail is append-only and is not rewritten);
rows not made by a request (the console's, an interrupted task's) have NULL too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "core_0004"
down_revision: str | None = "core_0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def projection_column() -> sa.Column[Any]:
    return sa.Column("projection", sa.String(8), nullable=True)


ADDED: dict[str, list[Callable[[], sa.Column[Any]]]] = {"principal_audit": [projection_column]}
"""The columns this revision adds, by table (tests/storage/test_migrate.py compares them)."""


def upgrade() -> None:
    op.add_column("principal_audit", projection_column())


def downgrade() -> None:
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35+): a batch copy would lose the table's triggers.
    op.drop_column("principal_audit", "projection")
