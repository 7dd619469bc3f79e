"""The router on a held-out set of operator requests (written without reading the manifests).

The set is about the demo skills, so the router here is trained on those alone: a fork's own
skills change the classifier for every request, and a fork measures that with its own items
in eval_set.json and ``python -m bench.routing`` (the whole registry), not by breaking this.
The router is the deployed one: the network's routing data (``netops/routing.json``) included.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.registry.loader import load_registry
from agent.routing.data import RoutingData
from agent.routing.router import Action, Router
from agent.security.principal import Principal
from netops.deployment import SKILLS_DIR, network_deployment
from tests.a2a_helpers import text_message
from tests.registry_view import DEMO_SKILLS, copy_demo_skills

EVAL = json.loads((Path(__file__).parent / "eval_set.json").read_text())
EVERYTHING = Principal(
    "paula",
    "acme",
    frozenset({"inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"}),
)


@pytest.fixture(scope="module")
def router(tmp_path_factory: pytest.TempPathFactory) -> Router:
    demo = copy_demo_skills(SKILLS_DIR, tmp_path_factory.mktemp("demo") / "skills")
    deployment = network_deployment()
    return Router(
        load_registry(demo),
        data=RoutingData.load(deployment.routing_data),
    )


def routed_to(router: Router, text: str) -> str:
    decision = router.route(text_message(text), EVERYTHING)
    if decision.action in (Action.RUN, Action.ASK) and decision.capability is not None:
        return decision.capability.id
    return "clarify" if decision.action is Action.CLARIFY else decision.action.value


def test_the_set_is_big_enough_and_covers_every_routable_skill() -> None:
    routable = {c.id for c in load_registry(SKILLS_DIR) if c.interface is not None}
    assert len(EVAL["clear"]) >= 80 and len(EVAL["ambiguous"]) >= 20
    covered = {e["skill"] for e in EVAL["clear"]}
    assert covered <= routable  # no item for a skill that is not there
    assert routable & DEMO_SKILLS <= covered  # a fork's own skills: add items to measure them


def test_clear_requests_route_correctly(router: Router) -> None:
    wrong = [
        (e["text"], e["skill"], got)
        for e in EVAL["clear"]
        if (got := routed_to(router, e["text"])) != e["skill"]
    ]
    accuracy = 1 - len(wrong) / len(EVAL["clear"])
    assert accuracy >= 0.95, f"accuracy {accuracy:.3f}; wrong: {wrong}"


def test_ambiguous_requests_are_clarified(router: Router) -> None:
    guessed = [
        (e["text"], got)
        for e in EVAL["ambiguous"]
        if (got := routed_to(router, e["text"])) != "clarify"
    ]
    rate = 1 - len(guessed) / len(EVAL["ambiguous"])
    assert rate >= 0.85, f"clarified {rate:.3f}; guessed: {guessed}"


def test_classifier_is_deterministic() -> None:
    texts = [e["text"] for e in EVAL["clear"][:20]]
    first, second = Router(load_registry(SKILLS_DIR)), Router(load_registry(SKILLS_DIR))
    assert [routed_to(first, t) for t in texts] == [routed_to(second, t) for t in texts]
    ids = {c.id for c in load_registry(SKILLS_DIR) if c.interface is not None}
    a = first.classifier.predict("free bandwidth on the link", ids)
    b = second.classifier.predict("free bandwidth on the link", ids)
    assert a == b


def test_the_classifier_never_answers_outside_its_candidates(router: Router) -> None:
    for entry in EVAL["clear"][:30]:
        prediction = router.classifier.predict(entry["text"], {"lookup_inventory", "link_headroom"})
        assert prediction.skill_id in (None, "lookup_inventory", "link_headroom")
        assert {s for s, _ in prediction.ranking} <= {"lookup_inventory", "link_headroom"}
