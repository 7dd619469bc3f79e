"""The classifier is ready before the agent serves (the routing builder, agent/app/tasks.py,
trains it or reads it from its cache): no text request waits for a training; a request naming
its skill needs no classifier at all."""

from __future__ import annotations

from pathlib import Path

import httpx

from agent.registry.loader import load_registry
from agent.routing.router import Router
from agent.security.principal import Principal
from netops.deployment import SKILLS_DIR
from tests.a2a_helpers import data_message
from tests.conftest import start_agent

REGISTRY = load_registry(SKILLS_DIR)
EVERY_SCOPE = frozenset(s for c in REGISTRY for s in c.manifest.requires_scopes)
ALICE = Principal(subject="alice", tenant="acme", scopes=EVERY_SCOPE)


def test_the_classifier_is_ready_when_the_agent_first_answers(tmp_path: Path) -> None:
    """With an empty model cache: the first answer already finds it trained, and kept."""
    cache = tmp_path / "models"
    running = start_agent(tmp_path / "home", settings_overrides={"model_cache": cache})
    try:
        health = httpx.get(f"{running.base_url}/healthz", timeout=10).json()
        assert health["classifier"] == "ready"
        assert len(list(cache.glob("*.pickle"))) == 1
    finally:
        running.stop()


def test_a_request_naming_its_skill_needs_no_trained_classifier() -> None:
    router = Router(REGISTRY)
    message = data_message({"skill": "check_link_capacity", "arguments": {}})
    decision = router.route(message, ALICE)
    assert decision.capability is not None and decision.capability.id == "check_link_capacity"
    assert not router.classifier.ready, "nothing was trained"
