"""Fresh databases on each backend for the core's storage tests."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import postgres_available, postgres_database

NewDatabase = Callable[[str], str]


@pytest.fixture(params=["sqlite", "postgresql"])
def new_database(request: pytest.FixtureRequest, tmp_path: Path) -> NewDatabase:
    """Makes empty databases (by name) on the parametrized backend; returns their URLs."""
    if request.param == "postgresql" and not postgres_available():
        pytest.skip("no PostgreSQL cluster in this session")

    def make(name: str) -> str:
        if request.param == "sqlite":
            return f"sqlite+aiosqlite:///{tmp_path / name}.db"
        url = postgres_database(f"{name}_{uuid.uuid4().hex[:8]}")
        assert url is not None
        return url

    return make
