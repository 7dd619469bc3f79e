"""Agents with test-only additions: fixture skills, slow tools, a required extension."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from a2a.types import AgentExtension

from agent.registry.loader import Capability, Registry, load_registry
from agent.security.credentials import ToolGrant
from agent.server.skill_context import ToolFactory
from tests.conftest import BACKENDS, RunningAgent, postgres_available, start_agent, use_backend

ROOT = Path(__file__).resolve().parents[2]
TEST_REQUIRED_EXTENSION = "urn:netops-agent:test:required-extension:v1"
WITHHELD = "link_headroom"  # its interface is withheld in the lab, to provoke interface_unavailable
SLOW_TOOL_SECONDS = 4.0


def lab_skills(tmp: Path) -> Path:
    """The demo skills plus the test-only fixture skills, in one folder."""
    target = tmp / "skills"
    shutil.copytree(ROOT / "skills", target, ignore=shutil.ignore_patterns("__pycache__"))
    for fixture in ("broken_output", "slow_probe"):
        shutil.copytree(
            ROOT / "tests" / "fixture_skills" / fixture,
            target / fixture,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return target


class SlowInventory:
    """Wraps the real inventory; telemetry reads take long enough to be cancelled."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if name not in (
            "utilization_samples",
            "hot_links",
            "latest_metric",
            "latest_link_utilization",
        ):
            return attribute

        async def slow(*args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(SLOW_TOOL_SECONDS)
            return await attribute(*args, **kwargs)

        return slow


def slow_tools(real: ToolFactory) -> ToolFactory:
    """Wrap the agent's real (gated) tools so telemetry reads take a while."""

    def make(name: str, grant: ToolGrant) -> Any:
        return SlowInventory(real(name, grant))

    return make


BACKEND_FREE = "backend_free"
"""The marker of an integration test that reaches no agent database (a usage error, help, a
token minted from the home's key, nothing listening, a process started on the embedded
default): its PostgreSQL round would run the same thing again, so only its SQLite one runs."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, dropped = [], []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        twice = item.get_closest_marker(BACKEND_FREE) and params.get("backend") == "postgresql"
        (dropped if twice else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The whole integration suite runs once on SQLite and once on PostgreSQL."""
    if request.param == "postgresql" and not postgres_available():
        pytest.skip("no PostgreSQL cluster in this session (CI always has one)")
    # Set here, not only per module: session-scoped agents are built before module fixtures.
    use_backend(str(request.param))
    return str(request.param)


@pytest.fixture(scope="session")
def lab_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """Demo + fixture skills, slow telemetry tools, and one skill's interface withheld."""
    home = tmp_path_factory.mktemp("lab-home")
    registry = load_registry(lab_skills(home))
    capabilities = [
        Capability(c.manifest, c.handler, None) if c.id == WITHHELD else c for c in registry
    ]
    running = start_agent(home, registry=Registry(capabilities), tools=slow_tools, backend=backend)
    yield running
    running.stop()


@pytest.fixture(scope="session")
def strict_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """An agent whose card declares a required (test-only) extension."""
    required = AgentExtension(
        uri=TEST_REQUIRED_EXTENSION, description="test-only required extension", required=True
    )
    running = start_agent(
        tmp_path_factory.mktemp("strict-home"), extra_extensions=[required], backend=backend
    )
    yield running
    running.stop()


FAULTY_SKILL = "faulty_handler"


def enforcement_skills(tmp: Path) -> Path:
    """The demo skills plus the test-only faulty handler, in one folder."""
    target = tmp / "skills"
    shutil.copytree(ROOT / "skills", target, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        ROOT / "tests" / "fixture_skills" / FAULTY_SKILL,
        target / FAULTY_SKILL,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return target


@pytest.fixture(scope="session")
def enforce_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """Demo skills + the faulty handler, with the real gated tools and every interface."""
    home = tmp_path_factory.mktemp("enforce-home")
    running = start_agent(home, registry=load_registry(enforcement_skills(home)), backend=backend)
    yield running
    running.stop()
