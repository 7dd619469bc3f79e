"""Work that exactly one replica may do at a time: migrations, seeding, table creation, replay.

Replicas share one PostgreSQL and start together, so each of them would otherwise run the
migrations, create the SDK's task tables and seed a deployment's demo data at the same moment (and
the loser fails with "relation already exists" or duplicates the seed). A PostgreSQL advisory
lock serialises them without a table of our own. A SQLite file serves one process, whose own
file lock is enough, so there the lock is a no-op.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine


def lock_key(name: str) -> int:
    """A stable signed 64-bit key per name (advisory locks are keyed by bigint).

    A name starts with its owner's namespace, the deployment's slug (``<slug>:prepare-storage``):
    the key must stay the same from one release to the next, since replicas of two releases
    share the lock while they run side by side.
    """
    return zlib.crc32(name.encode()) - 2**31


def _is_postgresql(engine: AsyncEngine) -> bool:
    return engine.dialect.name == "postgresql"


@asynccontextmanager
async def exclusively(engine: AsyncEngine, name: str) -> AsyncIterator[None]:
    """Hold the named cluster-wide lock for the duration of the block (waits for it)."""
    if not _is_postgresql(engine):
        yield
        return
    key = lock_key(name)
    async with engine.connect() as connection:
        await connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": key})
        await connection.commit()
        try:
            yield
        finally:
            await connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
            await connection.commit()


async def claim_for_transaction(connection: AsyncConnection, name: str) -> bool:
    """True when this transaction may do the named work; False when another replica is.

    The claim ends with the transaction, so a replica that dies mid-way frees it.
    """
    if connection.dialect.name != "postgresql":
        return True
    claimed = await connection.scalar(
        text("SELECT pg_try_advisory_xact_lock(:key)"), {"key": lock_key(name)}
    )
    return bool(claimed)
