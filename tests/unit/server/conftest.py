"""Fixtures for the request handler's and executor's unit tests (see harness.py)."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from a2a.server.tasks import InMemoryTaskStore
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.base.settings import Settings
from agent.edge.limits import Limits
from agent.registry.cards import CardFactory
from agent.registry.loader import Registry, load_registry
from agent.routing.router import Router
from agent.security.auth import load_or_create_signing_key
from agent.server.executor import SkillExecutor
from agent.server.request_handler import GovernedRequestHandler
from agent.server.task_run import RunBindings
from agent.storage.audit import InMemoryAuditLog
from agent.storage.bindings import InMemoryBindingStore
from agent.storage.engine import make_engine
from agent.storage.settlement import StoreTaskWriter
from db.migrate import upgrade
from db.simulator import seed
from tests.conftest import FIXED_NOW
from tests.unit.server.harness import Agent, Keys, inventory_tool

ROOT = Path(__file__).resolve().parents[3]
FIXTURE_SKILLS = ("slow_probe", "steady_probe", "broken_output")
MAX_PARTS = 4


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    """The repo's skills plus the test-only probes, loaded as the agent loads them."""
    folder = tmp_path_factory.mktemp("server-skills") / "skills"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "skills", folder, ignore=ignore)
    for name in FIXTURE_SKILLS:
        shutil.copytree(ROOT / "tests" / "fixture_skills" / name, folder / name, ignore=ignore)
    return load_registry(folder)


@pytest.fixture(scope="session")
def router(registry: Registry) -> Router:
    """One router for the session: its classifier models are trained once per candidate set."""
    return Router(registry)


@pytest.fixture(scope="session")
async def inventory(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AsyncEngine]:
    """The demo inventory (db/simulator.py), seeded once; the tool only reads it."""
    path = tmp_path_factory.mktemp("server-inventory") / "inventory.db"
    url = f"sqlite+aiosqlite:///{path}"
    await upgrade(url)
    engine = make_engine(url)
    await seed(engine, scale="small", until=FIXED_NOW)
    yield engine
    await engine.dispose()


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Keys:
    home = tmp_path_factory.mktemp("server-home")
    return Keys(Settings(home=home), load_or_create_signing_key(home))


@pytest.fixture
async def agent(
    registry: Registry, router: Router, inventory: AsyncEngine, keys: Keys
) -> AsyncIterator[Agent]:
    """A fresh agent per test (its stores, admission counts and running tasks are its own)."""
    audit = InMemoryAuditLog()
    bindings = InMemoryBindingStore()
    tasks = InMemoryTaskStore()
    executor = SkillExecutor(
        registry,
        inventory_tool(keys, inventory, audit),
        router,
        RunBindings(bindings),
        audit=audit,
        clock=lambda: FIXED_NOW,
    )
    cards = CardFactory(registry, "http://127.0.0.1:8000")
    handler = GovernedRequestHandler(
        cards=cards,
        agent_executor=executor,
        task_store=tasks,
        writer=StoreTaskWriter(tasks, audit, bindings),
        limits=Limits(max_parts=MAX_PARTS),
    )
    yield Agent(handler, tasks, bindings, audit, keys, registry)
    await handler.aclose()
