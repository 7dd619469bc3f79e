"""Alembic environment for the core's tables (``agent.storage.schema``).

``agent.storage.schema`` hands in an open connection via ``config.attributes``; the Alembic CLI
path (``alembic -c agent/storage/migrations/alembic.ini -x url=... upgrade head``) opens its own
async engine instead. Only the core's tables are considered: a deployment's tables and the a2a-sdk
share the database and keep their own histories.
"""

from __future__ import annotations

from alembic import context

from agent.storage.schema import VERSION_TABLE, metadata, run_environment

run_environment(context, metadata, VERSION_TABLE)
