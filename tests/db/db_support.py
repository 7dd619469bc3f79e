"""Helpers shared by the db tests (a uniquely named module, unlike conftest)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from db.models import Base
from db.simulator import SeedReport

UNTIL = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
"""Fixed end of the simulated time series, so assertions do not depend on the clock."""


@dataclass
class Seeded:
    url: str
    engine: AsyncEngine
    report: SeedReport


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


async def table_digests(engine: AsyncEngine) -> dict[str, str]:
    """SHA-256 of every inventory table's rows in primary-key order."""
    digests: dict[str, str] = {}
    async with engine.connect() as conn:
        for table in Base.metadata.sorted_tables:
            h = hashlib.sha256()
            result = await conn.execute(select(table).order_by(*table.primary_key.columns))
            for row in result:
                h.update(repr(tuple(row)).encode())
            digests[table.name] = h.hexdigest()
    return digests
