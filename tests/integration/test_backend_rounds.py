"""Each backend round of the integration suite really runs on its backend."""

from __future__ import annotations


def test_every_shared_agent_runs_on_the_rounds_backend(
    backend, agent, lab_agent, strict_agent, enforce_agent
) -> None:
    """The suite's session agents are built on the backend of the round they serve."""
    scheme = "postgresql+asyncpg://" if backend == "postgresql" else "sqlite+aiosqlite:///"
    for running in (agent, lab_agent, strict_agent, enforce_agent):
        assert running.settings.resolved_database_url.startswith(scheme), running.settings
