"""Each store's forms side by side: in memory, and its table on SQLite and on PostgreSQL.

The contract tests take a ``form`` and run once per form, so the in-memory seam the server's
unit tests stand on cannot drift from the database the agent runs on. Every test gets an
empty, migrated database: a copy of one migrated per session (the audit table refuses the
deletes that clearing it would need).
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.engine import make_engine
from agent.storage.schema import upgrade
from tests.conftest import postgres_database

FORMS = ("memory", "sqlite", "postgresql")


@pytest.fixture(scope="session")
async def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file to copy."""
    path = tmp_path_factory.mktemp("storage-template") / "template.db"
    await upgrade(f"sqlite+aiosqlite:///{path}")
    return path


@pytest.fixture(scope="session")
async def migrated_postgres() -> str | None:
    """A migrated PostgreSQL database to use as a template, or None without a cluster."""
    url = postgres_database("storage_template")
    if url is None:
        return None
    await upgrade(url)
    return str(make_url(url).database)


@pytest.fixture(params=FORMS)
def form(request: pytest.FixtureRequest) -> str:
    """Which form of the store a contract test runs against."""
    return str(request.param)


@pytest.fixture
async def engine_for(
    form: str,
    tmp_path: Path,
    migrated_sqlite: Path,
    migrated_postgres: str | None,
) -> AsyncIterator[Callable[[], AsyncEngine]]:
    """A fresh migrated database for a database form (skipped without PostgreSQL)."""
    engines: list[AsyncEngine] = []

    def make() -> AsyncEngine:
        if form.startswith("sqlite"):
            target = tmp_path / "store.db"
            shutil.copyfile(migrated_sqlite, target)
            url = f"sqlite+aiosqlite:///{target}"
        else:
            if migrated_postgres is None:
                pytest.skip("no PostgreSQL cluster in this session (CI always has one)")
            made = postgres_database(f"store_{uuid.uuid4().hex[:12]}", template=migrated_postgres)
            assert made is not None
            url = made
        engines.append(make_engine(url))
        return engines[-1]

    yield make
    for engine in engines:
        await engine.dispose()
