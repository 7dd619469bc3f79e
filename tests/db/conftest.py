"""Fixtures for the db package tests: real SQLite files, migrated with Alembic."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from db_support import UNTIL, Seeded, sqlite_url
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.engine import make_engine
from db.migrate import upgrade
from db.simulator import seed


@pytest.fixture
async def migrated(tmp_path: Path) -> AsyncIterator[tuple[str, AsyncEngine]]:
    """A fresh, migrated, empty database."""
    url = sqlite_url(tmp_path / "netagent.db")
    await upgrade(url)
    engine = make_engine(url)
    yield url, engine
    await engine.dispose()


@pytest.fixture
async def scratch(migrated: tuple[str, AsyncEngine]) -> Seeded:
    """A minimal seeded database (35 links) that a test may modify."""
    url, engine = migrated
    report = await seed(engine, links=35, until=UNTIL)
    return Seeded(url, engine, report)


@pytest.fixture(scope="session")
async def demo(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Seeded]:
    """The small demo network, seeded once per session; tests must not modify it."""
    url = sqlite_url(tmp_path_factory.mktemp("demo") / "netagent.db")
    await upgrade(url)
    engine = make_engine(url)
    report = await seed(engine, until=UNTIL)
    yield Seeded(url, engine, report)
    await engine.dispose()
