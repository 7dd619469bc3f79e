"""The router never picks a capability the caller may not use, whatever the caller holds."""

from __future__ import annotations

import pytest
from a2a.types import ContentTypeNotSupportedError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.registry.loader import load_registry
from agent.registry.policy import entitled
from agent.routing.decision import Action
from agent.routing.questions import MAX_VALUE_SHOWN, MAX_VALUES_SHOWN, expected_text
from agent.routing.router import Router
from agent.security.principal import Principal
from netops.deployment import SKILLS_DIR
from tests.a2a_helpers import data_message, text_message

REGISTRY = load_registry(SKILLS_DIR)
ROUTER = Router(REGISTRY)
SCOPES = sorted(
    {s for c in REGISTRY for s in c.manifest.requires_scopes} | {"preview", "other.scope"}
)
SKILL_IDS = [c.id for c in REGISTRY] + ["no_such_skill"]
TEXTS = [
    "is cpu on nyc1-core-01 above 90%",
    "how much bandwidth is free on acme-lnk-00002",
    "which links should be upgraded",
    "list the routers in lon1",
    "headroom of acme-lnk-00001 in percent",
    "describe check_link_capacity",
    "hello",
    "check acme-lnk-00002",
]

principals = st.builds(
    Principal,
    subject=st.sampled_from(["", "alice", "bob"]),
    tenant=st.sampled_from([None, "acme", "globex", "initech"]),
    scopes=st.frozensets(st.sampled_from(SCOPES)),
)


def messages():
    text = st.sampled_from(TEXTS).map(text_message)
    explicit = st.sampled_from(SKILL_IDS).map(lambda s: data_message({"skill": s, "arguments": {}}))

    def hinted(pair):
        message = text_message(pair[0])
        message.metadata.update({"skill_id": pair[1]})
        return message

    hint = st.tuples(st.sampled_from(TEXTS), st.sampled_from(SKILL_IDS)).map(hinted)
    return st.one_of(text, explicit, hint)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(principal=principals, message=messages())
def test_router_never_picks_an_unentitled_capability(principal, message) -> None:
    try:
        decision = ROUTER.route(message, principal)
    except ContentTypeNotSupportedError:
        return
    if decision.action in (Action.RUN, Action.ASK):
        assert decision.capability is not None
        assert entitled(decision.capability.manifest, principal)
    if decision.action is Action.CLARIFY:
        assert decision.candidates
        assert all(entitled(c.manifest, principal) for c in decision.candidates)


@pytest.mark.parametrize("skill", [c.id for c in REGISTRY if c.interface is not None])
def test_unentitled_metadata_hint_is_ignored_not_an_error(skill: str) -> None:
    nobody = Principal("eve", "acme", frozenset())
    message = text_message("hello there")
    message.metadata.update({"skill_id": skill})
    decision = ROUTER.route(message, nobody)
    assert decision.stage.value != "metadata_hint" or entitled(REGISTRY.get(skill).manifest, nobody)


@pytest.mark.parametrize(
    ("node", "said"),
    [
        ({"enum": ["sites", "devices"]}, 'one of: "sites", "devices"'),
        ({"enum": [1, None, {"a": 2}]}, 'one of: 1, null, {"a": 2}'),
        ({"const": "links"}, 'exactly "links"'),
        ({"type": "integer"}, "a integer"),
        ({}, "a value"),
        ({"enum": []}, "a value"),  # (no value to offer: as if it listed none)
    ],
)
def test_a_missing_member_with_no_description_is_told_by_its_values(node, said) -> None:
    assert expected_text(node) == said


def test_a_long_enum_is_shown_in_part_never_whole() -> None:
    said = expected_text({"enum": [f"v{i}" * 50 for i in range(1000)]})
    assert said.endswith("(1000 in all)") and said.count(",") == MAX_VALUES_SHOWN - 1
    assert len(said) < (MAX_VALUE_SHOWN + 2) * MAX_VALUES_SHOWN + 40
