"""Alembic environment for the inventory tables.

``db.migrate`` hands in an open connection via ``config.attributes``; the
Alembic CLI path (``alembic -x url=... upgrade head``) opens its own async
engine instead. Only the inventory tables are considered, because the core's tables
(``agent/storage/migrations``) and the a2a-sdk task store share the database and keep their
own migration histories.
"""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import context
from sqlalchemy import Connection

from agent.sdk import make_engine
from db.migrate import VERSION_TABLE
from db.models import Base

config = context.config
target_metadata = Base.metadata


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Ignore tables that belong to other components (the core, the a2a task store)."""
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
        raise RuntimeError("no database URL: use db.migrate.upgrade(url) or alembic -x url=...")
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
