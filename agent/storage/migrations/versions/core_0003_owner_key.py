"""Owner keys: ``tenant:subject`` becomes ``<len(tenant)>:tenant:subject`` in every stored row.

Revision ID: core_0003
Revises: core_0002
Create Date: 2026-12-02

Up to core_0002 a task's owner was ``f"{tenant}:{subject}"``: both claims could hold ``:``,
so ``("acme:bob", "x")`` and ``("acme", "bob:x")`` owned the same tasks. The key is
now ``agent.security.identity.owner_key``: the tenant's length in front, then the old key
unchanged. This revision rewrites the owner of every row that has one (the SDK's ``tasks``,
and ``task_events``, ``task_versions``, ``push_notification_configs`` where a database has
them; the core's ``task_binding`` and ``task_runner``) in the database, one UPDATE each:

- an old key is read with its tenant up to the first ``:``. That is the only reading an
  identity can have now (a tenant may no longer hold ``:``), and it is exact for every row
  whose tenant had none; a row made by a token whose tenant held ``:`` (only possible before
  this change) cannot be told apart and goes to the identity this reading gives;
- a key with no ``:`` (``""``, the anonymous caller's) and NULL are left as they are;
- a row whose new key would not fit the 255-character owner columns is kept, owned by no one:
  ``~`` and its old key, cut to 255 (``owner_key`` never makes a key starting with ``~``). Its
  subject is over 187 characters, which the edge now refuses, so no caller could read it.

``downgrade`` removes the length again (exact for every rewritten row; ``~`` rows stay).
Offline (``--sql``) there is no database to rewrite: a fresh schema has no rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op

revision: str = "core_0003"
down_revision: str | None = "core_0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OWNER_TABLES = (
    "tasks",
    "task_events",
    "task_versions",
    "push_notification_configs",
    "task_binding",
    "task_runner",
)
OWNER_CHARS = 255
ORPHAN = "~"


def _tables() -> list[str]:
    inspector = sa.inspect(op.get_bind())
    return [
        table
        for table in OWNER_TABLES
        if inspector.has_table(table)
        and "owner" in {column["name"] for column in inspector.get_columns(table)}
    ]


def _position() -> str:
    """SQL for the position of the first ':' in ``owner`` (1-based, 0 if none), in characters."""
    postgresql = op.get_bind().dialect.name == "postgresql"
    return "strpos(owner, ':')" if postgresql else "instr(owner, ':')"


def upgrade() -> None:
    if context.is_offline_mode():
        return
    position = _position()
    length = f"CAST({position} - 1 AS VARCHAR(8))"
    for table in _tables():
        op.execute(
            f"UPDATE {table} SET owner = CASE "
            f"WHEN length({length}) + 1 + length(owner) <= {OWNER_CHARS} "
            f"THEN {length} || ':' || owner "
            f"ELSE '{ORPHAN}' || substr(owner, 1, {OWNER_CHARS - 1}) END "
            f"WHERE {position} > 0"
        )


def downgrade() -> None:
    if context.is_offline_mode():
        return
    position = _position()
    digits = (
        f"substr(owner, 1, {position} - 1) ~ '^[0-9]+$'"
        if op.get_bind().dialect.name == "postgresql"
        else f"substr(owner, 1, {position} - 1) NOT GLOB '*[^0-9]*'"
    )
    for table in _tables():
        op.execute(
            f"UPDATE {table} SET owner = substr(owner, {position} + 1) "
            f"WHERE {position} > 1 AND {digits}"
        )
