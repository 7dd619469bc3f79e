"""Every inventory read gives the same records through the SQLite reader's plain path
(agent/storage/reads.py ``_Prepared``) as through SQLAlchemy's asyncio engine, on the demo
network: each call is made three times (the plain path starts on a statement's second use)
and compared with the engine's answer, for both tenants and for absent and hostile ids."""

from __future__ import annotations

import pytest
from db_support import Seeded, every_read

from agent.storage.reads import EngineReader, InlineSqliteReader
from db import inventory as inventory_module
from db.inventory import Inventory


@pytest.mark.parametrize("tenant", ["acme", "globex"])
async def test_the_plain_path_reads_what_the_engine_reads(demo: Seeded, tenant: str) -> None:
    fast = Inventory(demo.engine, tenant)
    assert isinstance(fast._reader, InlineSqliteReader)
    slow = Inventory(demo.engine, tenant)
    slow._reader = EngineReader(demo.engine)
    expected = await every_read(slow)
    for _ in range(3):
        assert await every_read(fast) == expected
    assert fast._reader._prepared, "the plain path was never taken"


PREBUILT = ["_RESOURCE_EXISTS", "_LATEST_METRIC", "_LINK", "_SAMPLES", "_SAMPLES_UNTIL"]


@pytest.mark.parametrize("name", PREBUILT)
async def test_every_prebuilt_lookup_takes_the_plain_path(demo: Seeded, name: str) -> None:
    """A prebuilt statement that falls back to SQLAlchemy (an expanding IN did, for the
    samples behind every capacity check) costs more than the lookup itself."""
    fast = Inventory(demo.engine, "acme")
    assert isinstance(fast._reader, InlineSqliteReader)
    for _ in range(2):
        await every_read(fast)
    assert fast._reader._prepared.get(getattr(inventory_module, name)) is not None
