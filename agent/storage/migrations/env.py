"""Alembic environment for the core's tables (``agent.storage.tables``).

``agent.storage.migrate`` hands in an open connection via ``config.attributes``; the Alembic CLI
path (``alembic -c agent/storage/migrations/alembic.ini -x url=... upgrade head``) opens its own
async engine instead. Only the core's tables are considered: a deployment's tables and the a2a-sdk
share the database and keep their own histories.
"""

from __future__ import annotations

from alembic import context

from agent.storage.history import run_environment
from agent.storage.migrate import VERSION_TABLE
from agent.storage.tables import metadata

run_environment(context, metadata, VERSION_TABLE)
