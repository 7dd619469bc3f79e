"""Alembic environment for the inventory tables.

``db.migrate`` hands in an open connection via ``config.attributes``; the
Alembic CLI path (``alembic -x url=... upgrade head``) opens its own async
engine instead. Only the inventory tables are considered, because the core's tables
(``agent/storage/migrations``) and the a2a-sdk task store share the database and keep their
own migration histories.
"""

from __future__ import annotations

from alembic import context

from agent.sdk import run_environment
from db.migrate import VERSION_TABLE
from db.models import Base

run_environment(context, Base.metadata, VERSION_TABLE)
