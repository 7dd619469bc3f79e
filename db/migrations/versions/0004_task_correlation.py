"""Task correlation (no-op since the core owns the table).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29

This revision used to create ``task_correlation``. The core's own history creates it now
(``agent/storage/migrations``, version table ``alembic_version_core``) and adopts the table
where this revision had already made it. The revision stays, empty, so that a database recorded
at it (or past it) still finds its place in this history.
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Nothing: see the module docstring."""


def downgrade() -> None:
    """Nothing: the table is the core's, and so is dropping it."""
