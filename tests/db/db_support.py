"""Helpers shared by the db tests (a uniquely named module, unlike conftest)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from db.inventory import Inventory
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


IDS = ["network-resource-1001", "acme-lnk-00002", "globex-lnk-00006", "nope", "a\x00b", "", "%"]


PG_IDS = [ref for ref in IDS if "\x00" not in ref]
"""PostgreSQL's driver refuses NUL in text (either way); agent.edge.strings keeps it away."""


async def every_read(inventory: Inventory, ids: list[str] = IDS) -> list[Any]:
    """Every inventory read, for ids that exist, do not, or are hostile; for comparing
    two ways of reading."""
    since = UNTIL - timedelta(hours=2)
    answers: list[Any] = [await inventory.exists(), await inventory.sites()]
    for ref in ids:
        answers += [
            await inventory.resource_exists(ref),
            await inventory.latest_metric(ref, "cpu_utilization"),
            await inventory.latest_metric(ref, "utilization"),
            await inventory.link(ref),
            await inventory.utilization_samples(ref, since),
            await inventory.utilization_samples(ref, since, UNTIL),
            await inventory.utilization_samples(ref, since, UNTIL, direction="b_to_a"),
        ]
    answers.append(await inventory.hot_links(0.5, since))
    return answers
