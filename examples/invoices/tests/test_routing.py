"""The invoice agent's router, with no routing code: what it learns from the manifests and the
deployment's routing data (examples/invoices/routing.json) is all it knows."""

from __future__ import annotations

import pytest

from agent.registry.loader import load_registry
from agent.routing.data import RoutingData
from agent.routing.decision import Action
from agent.routing.questions import clarification_text
from agent.routing.router import Router
from agent.security.principal import Principal
from examples.invoices.deployment import DEMO_CALLERS, ROUTING_DATA, invoice_deployment
from tests.a2a_helpers import text_message

CALLERS = {c.subject: Principal(c.subject, c.tenant, frozenset(c.scopes)) for c in DEMO_CALLERS}
DATA = RoutingData.load(ROUTING_DATA)


@pytest.fixture(scope="module")
def router() -> Router:
    deployment = invoice_deployment()
    return Router(load_registry(deployment.skills_dir), data=DATA)


@pytest.mark.parametrize(
    "text",
    [
        "pay invoice INV-20931 now",
        "approve INV-20931 please, it's been waiting for a week",
        "change the bank details of vendor V-1001",
        "put INV-20931 on hold",
    ],
)
def test_a_request_to_change_something_is_asked_back_with_why(router: Router, text: str) -> None:
    """No skill makes changes: the caller is told so, then what it can do, never run a reader."""
    decision = router.route(text_message(text), CALLERS["ann"])
    assert decision.action is Action.CLARIFY, decision
    assert decision.note == DATA.nothing_fits["change"].note
    assert not decision.matched
    question = clarification_text(decision.candidates, decision.note, matched=False)
    assert question.startswith(DATA.nothing_fits["change"].note)
    assert {c.id for c in decision.candidates} == {c.id for c in router.candidates(CALLERS["ann"])}


@pytest.mark.parametrize(
    "text",
    [
        "reconcile invoice INV-20931 against PO-5512",
        "does INV-20931 match its purchase order?",
    ],
)
def test_a_request_for_a_skill_the_caller_may_not_use_is_not_given_another(
    router: Router, text: str
) -> None:
    """ben may not reconcile: his request is not run as the nearest skill he may use."""
    assert router.route(text_message(text), CALLERS["ann"]).capability is not None
    decision = router.route(text_message(text), CALLERS["ben"])
    assert decision.action is Action.CLARIFY, decision
    assert "reconcile_invoice" not in {c.id for c in decision.candidates}
