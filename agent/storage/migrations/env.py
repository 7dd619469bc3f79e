"""Alembic environment for the core's tables (``agent.storage.tables``).

``agent.storage.migrate`` hands in an open connection via ``config.attributes``; the Alembic
CLI path (``alembic -c agent/storage/migrations/alembic.ini -x url=... upgrade head``) opens its
own async engine instead. Only the core's tables are considered: the inventory and the a2a-sdk
share the database and keep their own histories.
"""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import context
from sqlalchemy import Connection

from agent.storage.engine import make_engine
from agent.storage.migrate import VERSION_TABLE
from agent.storage.tables import metadata

config = context.config
target_metadata = metadata


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Ignore tables that belong to other components (the inventory, the a2a-sdk)."""
    if type_ == "table":
        return name in target_metadata.tables
    return True


def _configure(**kwargs: Any) -> None:
    context.configure(
        target_metadata=target_metadata,
        version_table=config.get_main_option("version_table") or VERSION_TABLE,
        include_name=include_name,
        compare_type=True,
        **kwargs,
    )


def _url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise RuntimeError(
            "no database URL: use agent.storage.migrate.upgrade(url) or alembic -x url=..."
        )
    return url


def run_migrations_offline() -> None:
    """Emit SQL to stdout instead of executing it."""
    _configure(url=_url(), literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    """Run the migrations on a synchronous connection (inside ``run_sync``)."""
    _configure(connection=connection, render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    """CLI path: open an async engine and hop into sync code with ``run_sync``."""
    engine = make_engine(_url())
    try:
        async with engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
            await connection.commit()
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    """Use the caller's connection when there is one, else open our own."""
    connection = config.attributes.get("connection")
    if connection is not None:
        do_run_migrations(connection)
    else:
        asyncio.run(run_async_migrations())


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
