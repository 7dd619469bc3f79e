"""The app trains the classifier in a worker thread after start-up (agent/app.py): a text
request arriving meanwhile waits for that training and is routed as it would be after it; a
request naming its skill needs no classifier at all."""

from __future__ import annotations

import asyncio
import threading

from agent.registry.loader import load_registry
from agent.routing.router import Action, Router
from agent.security.principal import Principal
from netops.deployment import SKILLS_DIR
from tests.a2a_helpers import data_message, text_message

REGISTRY = load_registry(SKILLS_DIR)
EVERY_SCOPE = frozenset(s for c in REGISTRY for s in c.manifest.requires_scopes)
ALICE = Principal(subject="alice", tenant="acme", scopes=EVERY_SCOPE)
TEXT = "how much bandwidth is free on acme-lnk-00002"


async def test_a_text_request_during_training_waits_for_it_and_is_routed() -> None:
    expected = Router(REGISTRY).route(text_message(TEXT), ALICE)
    router = Router(REGISTRY)
    warming = threading.Thread(target=router.warm)
    warming.start()  # as the app does once it serves
    decision = await asyncio.wait_for(router.route_async(text_message(TEXT), ALICE), 120)
    warming.join()
    assert decision.action is expected.action is Action.RUN
    assert decision.capability is not None and expected.capability is not None
    assert decision.capability.id == expected.capability.id
    assert decision.error is None


def test_a_request_naming_its_skill_needs_no_trained_classifier() -> None:
    router = Router(REGISTRY)
    message = data_message({"skill": "check_link_capacity", "arguments": {}})
    decision = router.route(message, ALICE)
    assert decision.capability is not None and decision.capability.id == "check_link_capacity"
    assert not router.classifier.trained(c.id for c in REGISTRY), "nothing was trained"
