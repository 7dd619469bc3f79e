"""The router's stages, one by one, on the network deployment's real registry and data.

Each test names the stage it is about and checks ``Decision.stage`` (the task's
``metadata.routing.stage``) as well as the outcome, so a request decided by the wrong stage
fails even when it lands on the right skill.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest
from a2a.types import ContentTypeNotSupportedError

from agent.interfaces import ErrorCode
from agent.registry.loader import Capability, load_registry
from agent.routing.data import RoutingData
from agent.routing.decision import Action, Decision, Stage
from agent.routing.model_cache import ModelCache, default_directory
from agent.routing.names import named
from agent.routing.questions import clarification_text
from agent.routing.router import Router
from agent.routing.text_stages import FITS, MAX_ROUTE_TEXT
from agent.security.principal import Principal
from agent.storage.bindings import Binding, Phase
from netops.deployment import SKILLS_DIR, network_deployment
from tests.a2a_helpers import data_message, text_message

DATA = RoutingData.load(network_deployment().routing_data)
EVERYTHING = Principal(
    "paula",
    "acme",
    frozenset({"inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"}),
)
READER = Principal("rita", "acme", frozenset({"inventory.read"}))


@pytest.fixture(scope="module")
def router() -> Router:
    # the agent's own model cache: the model the servers of the suite train is trained once
    built = Router(load_registry(SKILLS_DIR), data=DATA, cache=ModelCache(default_directory()))
    built.warm()
    return built


def _route(router: Router, text: str, caller: Principal = EVERYTHING) -> Decision:
    return router.route(text_message(text), caller)


def _offered(decision: Decision) -> set[str]:
    return {c.id for c in decision.candidates}


def test_an_explicit_request_is_decided_by_its_stage(router: Router) -> None:
    message = data_message({"skill": "lookup_inventory", "arguments": {"kind": "sites"}})
    decision = router.route(message, EVERYTHING)
    assert (decision.action, decision.stage) == (Action.RUN, Stage.EXPLICIT)
    assert decision.routing_metadata()["routing"]["stage"] == "explicit_request"


@pytest.mark.parametrize(
    ("skill", "code"),
    [("no_such_skill", ErrorCode.SKILL_NOT_ADVERTISED), ("plan_link_upgrade", None)],
)
def test_an_explicit_request_for_a_skill_not_yours_is_refused(
    router: Router, skill: str, code: ErrorCode | None
) -> None:
    decision = router.route(data_message({"skill": skill, "arguments": {}}), READER)
    assert (decision.action, decision.stage) == (Action.REFUSE, Stage.EXPLICIT)
    assert decision.error is not None
    assert decision.error.code in ({code} if code else {ErrorCode.SKILL_NOT_ADVERTISED})


def test_a_metadata_hint_is_honoured_for_an_entitled_caller_only(router: Router) -> None:
    message = text_message("anything at all")
    message.metadata.update({"skill_id": "lookup_inventory"})
    assert router.route(message, EVERYTHING).stage is Stage.METADATA_HINT
    hinted = text_message("anything at all")
    hinted.metadata.update({"skill_id": "plan_link_upgrade"})
    assert router.route(hinted, READER).stage is not Stage.METADATA_HINT


def test_a_media_type_no_skill_accepts_is_the_protocols_error(router: Router) -> None:
    message = text_message("list the sites")
    message.parts[0].media_type = "image/png"
    with pytest.raises(ContentTypeNotSupportedError):
        router.route(message, EVERYTHING)


def test_one_candidate_left_runs_without_the_model(router: Router) -> None:
    decision = _route(router, "hello there", Principal("i", "acme", frozenset({"nothing"})))
    assert decision.stage is Stage.SINGLE_CANDIDATE  # describe_skill needs no scope
    assert decision.capability is not None and decision.capability.id == "describe_skill"


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("list every device at site nyc1", "lookup_inventory"),
        ("is the cpu of nyc1-core-01 above 90%?", "evaluate_resource_condition"),
        ("should acme-lnk-00002 be upgraded, and to what?", "plan_link_upgrade"),
    ],
)
def test_a_clear_request_is_decided_by_the_model(router: Router, text: str, skill: str) -> None:
    decision = _route(router, text)
    assert decision.capability is not None and decision.capability.id == skill
    assert decision.stage in (Stage.MODEL, Stage.DESCRIPTION)
    assert decision.confidence is not None and decision.confidence >= 0.7


@pytest.mark.parametrize("text", ["lookup_inventory", "check_link_capacity?", "link-headroom"])
def test_a_skill_id_alone_is_asked_back_describe_or_run(router: Router, text: str) -> None:
    decision = _route(router, text)
    assert (decision.action, decision.stage) == (Action.CLARIFY, Stage.CLARIFICATION)
    named = text.strip("?").replace("-", "_")
    assert _offered(decision) == {named, "describe_skill"}


def test_a_skill_named_with_its_argument_runs_by_name(router: Router) -> None:
    decision = _route(router, "link_headroom('acme-lnk-00002')")
    assert decision.stage is Stage.NAMED
    assert decision.capability is not None and decision.capability.id == "link_headroom"
    assert decision.arguments.get("link_id") == "acme-lnk-00002"


def test_the_description_layer_reads_a_text_without_the_ids_it_names(router: Router) -> None:
    """An id said in the text is the named-skill rule's to weigh: the description layer reads
    the rest, so the id of the skill whose schema is asked for does not lift that skill a
    second time; the same words said as words still count."""
    named = _route(router, "plan_link_upgrade の入力スキーマを教えてください")
    assert {s.skill_id: s.description for s in named.scores}["plan_link_upgrade"] == 0.0
    worded = _route(router, "which upgrade speed do you recommend for the plan of link 17")
    assert {s.skill_id: s.description for s in worded.scores}["plan_link_upgrade"] > 0.0


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("plan_link_upgradeの入力スキーマを見せてください", "plan_link_upgrade"),
        ("link_headroom的输入参数是什么", "link_headroom"),
        ("lookup_inventory의 출력 스키마를 알려 주세요", "lookup_inventory"),
        ("«check_link_capacity»", "check_link_capacity"),
    ],
)
def test_an_id_ends_where_its_ascii_characters_end(router: Router, text: str, skill: str) -> None:
    """A letter of a script written without spaces between words ends an id as a space
    would: the id is named, not read as part of a longer word."""
    assert [c.id for c in named(text, load_registry(SKILLS_DIR))] == [skill]


def test_a_schema_request_written_against_the_id_goes_to_describe_skill(router: Router) -> None:
    decision = _route(router, "plan_link_upgradeの入力スキーマを見せてください")
    assert decision.capability is not None and decision.capability.id == "describe_skill"
    assert decision.arguments.get("skill_id") == "plan_link_upgrade"


def test_a_skill_named_for_another_skills_request_is_asked_between_the_two(
    router: Router,
) -> None:
    decision = _route(router, "use link_headroom to list every device at site nyc1")
    assert decision.action is Action.CLARIFY
    assert _offered(decision) == {"link_headroom", "lookup_inventory"}


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("please reboot nyc1-core-01, it is stuck", "change"),
        ("what is the BGP session state between nyc1-edge-01 and its peer?", "unobserved"),
    ],
)
def test_nothing_fits_says_why_and_offers_everything(
    router: Router, text: str, reason: str
) -> None:
    decision = _route(router, text)
    assert (decision.action, decision.matched) == (Action.CLARIFY, False)
    assert decision.reason == reason and decision.note == DATA.nothing_fits[reason].note
    assert _offered(decision) == {c.id for c in router.candidates(EVERYTHING)}
    assert decision.routing_metadata()["routing"]["nothing_fits"] == reason
    question = clarification_text(decision.candidates, decision.note, matched=False)
    assert question.startswith(decision.note) and "What I can do for you:" in question


def test_a_request_two_skills_fit_is_asked_between_them(router: Router) -> None:
    decision = _route(router, "spare capacity on acme-lnk-00002")
    assert decision.action is Action.CLARIFY and decision.stage is Stage.CLARIFICATION
    assert _offered(decision) == {"check_link_capacity", "link_headroom"}


UNREACHED = 0.99
"""A run threshold no lone, half-sure candidate reaches."""


def _beside_a_stranger(router: Router) -> list[Capability]:
    """``lookup_inventory`` and a candidate neither the model nor the descriptions know (its
    score is 0): whatever the text, one candidate at most scores above nothing."""
    inventory = next(c for c in router.candidates(EVERYTHING) if c.id == "lookup_inventory")
    stranger = replace(inventory, manifest=replace(inventory.manifest, id="stranger_skill"))
    return [inventory, stranger]


def test_a_lone_candidate_below_the_threshold_is_no_fit_not_a_one_skill_offer(
    router: Router,
) -> None:
    # a threshold well above the text's score: the rule under test, not the model's numbers
    stages = copy.copy(router.text_stages)
    stages.threshold = UNREACHED
    verdict = stages.decide("where is nyc1-core-01", _beside_a_stranger(router))
    (best, other) = verdict.scores
    assert other.score == 0 and FITS <= best.score < stages.threshold
    assert (verdict.chosen, verdict.offered) == (None, ())


def test_a_lone_candidate_that_fits_is_chosen_not_offered(router: Router) -> None:
    """Chosen, the router asks for its missing arguments: the only one-skill question."""
    verdict = router.text_stages.decide(
        "list the devices of site nyc1 from the inventory", _beside_a_stranger(router)
    )
    assert verdict.scores[0].score >= router.text_stages.threshold
    assert verdict.chosen is not None and verdict.chosen.id == "lookup_inventory"
    assert verdict.offered == ()


def test_a_request_for_a_skill_the_caller_may_not_use_is_not_given_another(
    router: Router,
) -> None:
    text = "should acme-lnk-00002 be upgraded, and to what speed?"
    assert _route(router, text).capability is not None
    decision = _route(router, text, READER)
    assert decision.action is not Action.RUN
    assert "plan_link_upgrade" not in _offered(decision)


def test_a_clarification_reply_picks_an_offered_skill(router: Router) -> None:
    binding = Binding(
        "t1",
        EVERYTHING.owner,
        Phase.CLARIFY,
        candidates=("link_headroom", "check_link_capacity"),
        text="room on acme-lnk-00002?",
    )
    offered = [c.id for c in router.candidates(EVERYTHING) if c.id in binding.candidates]
    number = str(offered.index("check_link_capacity") + 1)
    for reply in (number, "check_link_capacity", "Check link capacity"):
        decision = router.route(text_message(reply), EVERYTHING, binding)
        assert decision.stage is Stage.TASK_BINDING, reply
        assert decision.capability is not None and decision.capability.id == ("check_link_capacity")
    again = router.route(text_message("hmm"), EVERYTHING, binding)
    assert (again.action, again.stage) == (Action.CLARIFY, Stage.CLARIFICATION)


_INVENTORY_OR_CAPACITY = Binding(
    "t2",
    EVERYTHING.owner,
    Phase.CLARIFY,
    candidates=("lookup_inventory", "check_link_capacity"),
    text="what about nyc1-core-01?",
)


@pytest.mark.parametrize(
    "reply",
    [
        "LOOKUP_INVENTORY",
        "Lookup-Inventory please",
        "go with lookup_inventory.",
        "\u3000lookup_inventory\u2003",
        "use\u00a0lookup_inventory\u202f",
        "\x00lookup_inventory\x00",
        "lookup_inventoryでお願いします",
    ],
)
def test_a_clarification_reply_naming_an_offered_id_picks_it(router: Router, reply: str) -> None:
    decision = router.route(text_message(reply), EVERYTHING, _INVENTORY_OR_CAPACITY)
    assert decision.stage is Stage.TASK_BINDING, reply
    assert decision.capability is not None and decision.capability.id == "lookup_inventory"


@pytest.mark.parametrize(
    "reply",
    [
        "not_lookup_inventory_x",
        "xlookup_inventoryx",
        "lookup_inventory_x",
        "mylookup_inventory",
        "lookup_inventory-2",
        "NOT-LOOKUP_INVENTORY",
        "lookup_inventory, not check_link_capacity",
    ],
)
def test_a_clarification_reply_with_an_id_inside_another_word_picks_nothing(
    router: Router, reply: str
) -> None:
    """An offered id inside a longer identifier is another name, not the id: asked again."""
    decision = router.route(text_message(reply), EVERYTHING, _INVENTORY_OR_CAPACITY)
    assert (decision.action, decision.stage) == (Action.CLARIFY, Stage.CLARIFICATION), reply


def test_the_text_stages_read_a_bounded_prefix(router: Router) -> None:
    """A request buried past ``MAX_ROUTE_TEXT`` characters is not read: noise before it."""
    text = "x " * MAX_ROUTE_TEXT + "list every device at site nyc1"
    assert _route(router, text).action is not Action.RUN
