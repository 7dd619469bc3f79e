"""Issue 19: requests as a newcomer sends them, and hostile variants, through the deployed
router (the network's routing features included)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from a2a.helpers import new_data_part, new_text_part
from a2a.types import Message, Role

from agent.interfaces import ErrorCode
from agent.registry.loader import load_registry
from agent.routing.data import RoutingData
from agent.routing.features import TextFeatures
from agent.routing.router import (
    MAX_OFFERED,
    Action,
    Decision,
    Layer,
    Router,
    Score,
    clarification_text,
    names_only,
    names_skill,
    says_too_little,
    spelled_out,
)
from agent.security.principal import Principal
from netops.deployment import SKILLS_DIR, network_deployment
from tests.a2a_helpers import text_message

ALICE = Principal("alice", "acme", frozenset({"inventory.read", "assurance.read", "capacity.read"}))
PAULA = Principal(
    "paula",
    "acme",
    frozenset({"inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"}),
)
VIC = Principal("vic", "acme", frozenset({"inventory.read"}))
FULLWIDTH = "".join(
    chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c
    for c in "IS acme-lnk-00001 ABOVE 80% utilization"
)


@pytest.fixture(scope="module")
def router() -> Router:
    deployment = network_deployment()
    return Router(
        load_registry(SKILLS_DIR),
        features=deployment.routing_features,
        data=RoutingData.load(deployment.routing_data),
    )


def mixed(*parts: Any) -> Message:
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[
            new_text_part(p, media_type="text/plain")
            if isinstance(p, str)
            else new_data_part(p, media_type="application/json")
            for p in parts
        ],
    )


def route(router: Router, text: str, who: Principal = ALICE) -> Decision:
    return router.route(text_message(text), who)


# -- the newcomer's requests ----------------------------------------------------------------


def test_plan_an_upgrade_without_the_scope_is_a_question_not_a_describe_rejection(
    router: Router,
) -> None:
    """alice may not use plan_link_upgrade (nor see it): the text is about its work, so
    describe_skill (whose extractor would name the hidden skill) is no match. She is asked,
    among her own skills close to the best, never told of the hidden one."""
    decision = route(router, "plan an upgrade of acme-lnk-00002")
    assert decision.action is Action.CLARIFY
    offered = [c.id for c in decision.candidates]
    assert "describe_skill" not in offered and "plan_link_upgrade" not in offered
    assert 1 <= len(offered) <= MAX_OFFERED
    assert "plan_link_upgrade" not in str(decision.routing_metadata())


def test_plan_an_upgrade_with_the_scope_goes_to_the_planner(router: Router) -> None:
    decision = route(router, "plan an upgrade of acme-lnk-00002", PAULA)
    assert decision.capability is not None and decision.capability.id == "plan_link_upgrade"
    assert decision.arguments["link_id"] == "acme-lnk-00002"


def test_how_busy_is_a_link_is_an_evaluation_that_asks_for_the_threshold(router: Router) -> None:
    decision = route(router, "how busy is acme-lnk-00002?")
    assert decision.action is Action.ASK
    assert decision.capability is not None
    assert decision.capability.id == "evaluate_resource_condition"
    assert decision.arguments["resource_id"] == "acme-lnk-00002"
    assert decision.arguments["condition"]["metric"] == "utilization"
    pointers = {m["pointer"] for m in decision.missing}
    assert "/resource_id" not in pointers and "/condition/threshold" in pointers
    assert decision.confidence is not None and decision.confidence >= router.threshold


def test_a_link_id_is_the_resource_of_an_evaluation(router: Router) -> None:
    decision = route(router, "is acme-lnk-00010 above 80 percent utilization?")
    assert decision.action is Action.RUN, decision.missing
    assert decision.capability is not None
    assert decision.capability.id == "evaluate_resource_condition"
    assert decision.arguments == {
        "resource_id": "acme-lnk-00010",
        "condition": {
            "metric": "utilization",
            "operator": "gt",
            "threshold": 80,
            "unit": "percent",
        },
    }


def test_spare_room_for_gigabits_runs_the_replacement_not_the_deprecated_skill(
    router: Router,
) -> None:
    for text in (
        "is there spare room on acme-lnk-00002 for 10 more gigabits?",
        "headroom for 10G more on acme-lnk-00002",
    ):
        decision = route(router, text)
        assert decision.capability is not None and decision.capability.id == "check_link_capacity"
        assert decision.arguments["requested_bps"] == 10_000_000_000


def test_the_deprecated_skill_still_runs_when_it_is_named(router: Router) -> None:
    for text in (
        "use link_headroom on acme-lnk-00005",
        "what is the link headroom of acme-lnk-00003",
    ):
        decision = route(router, text)
        assert decision.capability is not None and decision.capability.id == "link_headroom"
        assert decision.replaced is None


def test_a_replacement_chosen_over_its_replaced_skill_says_so(router: Router) -> None:
    decision = route(router, "headroom for 10G more on acme-lnk-00002")
    routing = decision.routing_metadata()["routing"]
    assert routing["replaced"] == "link_headroom"
    assert routing["skill_id"] == "check_link_capacity"


def test_names_skill() -> None:
    headroom = load_registry(SKILLS_DIR).get("link_headroom")
    assert headroom is not None
    assert names_skill("run link-headroom, please", headroom.manifest)
    assert names_skill("the Link Headroom skill?", headroom.manifest)
    assert not names_skill("how much headroom is left", headroom.manifest)


# -- explainability -------------------------------------------------------------------------


def test_the_routing_metadata_carries_the_top_three_and_the_layer(router: Router) -> None:
    routing = route(router, "does a 20G flow fit on acme-lnk-00002?").routing_metadata()["routing"]
    assert routing["layer"] in {"classifier", "description", "domain_features"}
    assert routing["skill_id"] == "check_link_capacity"
    top = routing["scores"]
    assert len(top) == 3 and top[0]["skill_id"] == "check_link_capacity"
    assert [t["score"] for t in top] == sorted((t["score"] for t in top), reverse=True)
    assert set(top[0]) == {"skill_id", "score", "classifier", "description", "features"}
    assert "capacity" in routing["signals"]


def test_a_clarification_offers_only_candidates_close_to_the_best(router: Router) -> None:
    decision = route(router, "does a 20G flow fit on acme-lnk-00002?", VIC)
    assert decision.action is Action.CLARIFY
    offered = [c.id for c in decision.candidates]
    assert offered and set(offered) <= {"describe_skill", "lookup_inventory"}
    best = decision.scores[0].score
    by_id = {s.skill_id: s.score for s in decision.scores}
    assert all(by_id[c] >= best / 2 for c in offered)
    routing = decision.routing_metadata()["routing"]
    assert routing["layer"] == "clarification" and routing["candidates"] == offered


@pytest.mark.parametrize("text", ["errors", "cpu nyc1-core-01", "upgrade", "latency"])
def test_a_topic_without_a_request_is_asked_about(router: Router, text: str) -> None:
    assert says_too_little(text)
    assert route(router, text, PAULA).action is Action.CLARIFY


@pytest.mark.parametrize(
    "text", ["how busy is acme-lnk-00002?", "list devices", "show sites", "is cpu high"]
)
def test_a_short_request_is_not_too_little(text: str) -> None:
    assert not says_too_little(text)


# -- hostile variants -----------------------------------------------------------------------


@pytest.mark.parametrize("arguments", [[1, 2], "text", 5, None, True])
def test_a_data_part_whose_arguments_are_not_an_object_beside_text_is_a_client_error(
    router: Router, arguments: Any
) -> None:
    message = mixed(
        "is acme-lnk-00010 above 80 percent utilization?",
        {"skill": "evaluate_resource_condition", "arguments": arguments},
    )
    decision = router.route(message, ALICE)
    assert decision.action is Action.REFUSE
    assert decision.error is not None and decision.error.code is ErrorCode.INPUT_INVALID
    assert "arguments" in str(decision.error)


def test_a_data_part_of_arguments_beside_text_is_laid_over_the_text(router: Router) -> None:
    message = mixed("is acme-lnk-00010 above 80 percent utilization?", {"resource_id": "x-1"})
    decision = router.route(message, ALICE)
    assert decision.action is Action.RUN and decision.arguments["resource_id"] == "x-1"


@pytest.mark.parametrize(
    "text",
    [
        "is acme-lnk-00010 above 80 percent utilization? " * 2000,
        "how busy\x00 is acme-lnk-00002?\x00",
        "\x00" * 100,
        "ist die Auslastung von acme-lnk-00010 über 80 %? ünïcödé ☃ 🚀 \u202e\u200b",
        FULLWIDTH,
        "",
        " \n\t ",
    ],
)
def test_hostile_text_is_routed_or_asked_about_never_an_exception(
    router: Router, text: str
) -> None:
    decision = route(router, text)
    assert decision.action in (Action.RUN, Action.ASK, Action.CLARIFY, Action.REFUSE)
    assert decision.routing_metadata()["routing"]["layer"] in {layer.value for layer in Layer}


def test_a_replacement_that_fits_runs_on_its_replaced_skills_lead(router: Router) -> None:
    """Scores fixed by hand: link_headroom leads (0.9), check_link_capacity fits (0.4)."""

    class Fixed(Router):
        def score(self, text: str, candidates: Any) -> Any:
            fixed = [
                Score("link_headroom", 0.9, 0.9, 0.0, 0.0),
                Score("check_link_capacity", 0.4, 0.4, 0.0, 0.0),
            ]
            rest = [
                Score(c, 0.0, 0.0, 0.0, 0.0)
                for c in candidates
                if c not in {"link_headroom", "check_link_capacity"}
            ]
            return fixed + rest, TextFeatures()

    fixed = Fixed.__new__(Fixed)
    fixed.__dict__.update(router.__dict__)
    decision = fixed.route(text_message("how much room is on acme-lnk-00002"), ALICE)
    assert decision.action is Action.RUN
    assert decision.capability is not None and decision.capability.id == "check_link_capacity"
    assert decision.replaced == "link_headroom" and decision.confidence == 0.4
    named = fixed.route(text_message("link headroom of acme-lnk-00002"), ALICE)
    assert named.capability is not None and named.capability.id == "link_headroom"


def _fixed_scores(router: Router, fixed: list[Score]) -> Router:
    """``router`` with the text layers' scores fixed by hand (the rest of the candidates 0)."""

    class Fixed(Router):
        def score(self, text: str, candidates: Any) -> Any:
            ids = {s.skill_id for s in fixed}
            rest = [Score(c, 0.0, 0.0, 0.0, 0.0) for c in candidates if c not in ids]
            return list(fixed) + rest, TextFeatures()

    copy = Fixed.__new__(Fixed)
    copy.__dict__.update(router.__dict__)
    return copy


@pytest.mark.parametrize(
    "signals", [(), ("resource:device",), ("resource:link", "resource:interface")]
)
def test_the_classifier_alone_below_unsupported_is_asked_about_whatever_was_named(
    router: Router, signals: tuple[str, ...]
) -> None:
    """A thing named (a signal) with no vote from the domain supports no skill: the
    classifier's choice alone, under UNSUPPORTED, is asked about; a vote supports it."""
    fixed = [Score("plan_link_upgrade", 0.7, 0.7, 0.0, 0.0)]

    class Named(Router):
        def score(self, text: str, candidates: Any) -> Any:
            rest = [Score(c, 0.0, 0.0, 0.0, 0.0) for c in candidates if c != fixed[0].skill_id]
            return fixed + rest, TextFeatures(signals=signals)

    named = Named.__new__(Named)
    named.__dict__.update(router.__dict__)
    decision = named.route(text_message("what goes in the quarterly deck for nyc1-core-01"), PAULA)
    assert decision.action is Action.CLARIFY
    fixed[0] = Score("plan_link_upgrade", 0.7, 0.7, 0.0, 0.3)
    decision = named.route(text_message("what goes in the quarterly deck for nyc1-core-01"), PAULA)
    assert decision.capability is not None and decision.capability.id == "plan_link_upgrade"


def test_a_replaced_skill_loses_to_its_replacement_however_little_the_replacement_scores(
    router: Router,
) -> None:
    """The deprecated skill's own utterances are why it leads ("headroom on <link>"); its
    replacement, in other words, scores next to nothing for them, and still runs."""
    fixed = _fixed_scores(
        router,
        [
            Score("link_headroom", 0.99, 0.99, 0.0, 0.0),
            Score("check_link_capacity", 0.04, 0.0, 0.05, 0.0),
        ],
    )
    decision = fixed.route(text_message("headroom on acme-lnk-00011?"), ALICE)
    assert decision.capability is not None and decision.capability.id == "check_link_capacity"
    assert decision.replaced == "link_headroom"


def test_a_replaced_skill_keeps_a_request_the_domain_votes_for_it(router: Router) -> None:
    """A positive domain vote for the replaced skill (what only it answers) keeps it."""
    fixed = _fixed_scores(
        router,
        [
            Score("link_headroom", 0.99, 0.9, 0.0, 0.6),
            Score("check_link_capacity", 0.04, 0.0, 0.05, 0.0),
        ],
    )
    decision = fixed.route(text_message("headroom in percent on acme-lnk-00011?"), ALICE)
    assert decision.capability is not None and decision.capability.id == "link_headroom"
    assert decision.replaced is None


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("headroom on acme-lnk-00011?", "check_link_capacity"),
        ("how much headroom does acme-lnk-00003 have", "check_link_capacity"),
        ("what's the headroom on acme-lnk-00002 in percent?", "link_headroom"),
        ("run the link headroom check on acme-lnk-00005", "link_headroom"),
    ],
)
def test_a_bare_headroom_is_a_capacity_question_in_percent_the_old_skills(
    router: Router, text: str, skill: str
) -> None:
    decision = route(router, text)
    assert decision.capability is not None and decision.capability.id == skill


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("interfaces on lon1-agg-02", "lookup_inventory"),
        ("links from sin1-edge-01", "lookup_inventory"),
        ("uplift acme-lnk-00003?", "plan_link_upgrade"),
    ],
)
def test_a_few_words_of_a_strong_domain_vote_are_a_request(
    router: Router, text: str, skill: str
) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == skill


# -- describing a skill, or running it; two requests in one -----------------------------------


@pytest.mark.parametrize("text", ["evaluate_resource_condition", "and plan_link_upgrade?"])
def test_a_skill_named_and_nothing_else_asks_whether_to_describe_or_run_it(
    router: Router, text: str
) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY
    offered = {c.id for c in decision.candidates}
    assert "describe_skill" in offered and len(offered) == 2


@pytest.mark.parametrize(
    "text",
    [
        "lookup_inventory, quick question",
        "hmm, plan_link_upgrade",
        "a question about check_link_capacity",
        "um, evaluate_resource_condition?",
        "well... the upgrade planner, I wonder",
        "check_link_capacity, thoughts?",
        "lookup_inventory eh?",
    ],
)
def test_a_skill_named_beside_fillers_asks_nothing_of_it(router: Router, text: str) -> None:
    """Fillers and asides ("quick question", "hmm", "I wonder") say nothing of what is wanted:
    the skill is named and nothing asked of it, so describing it and running it fit alike."""
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY
    assert "describe_skill" in {c.id for c in decision.candidates}


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("tell me about lookup_inventory for nyc1-core-01", "lookup_inventory"),
        ("what about check_link_capacity on acme-lnk-00002?", "check_link_capacity"),
        ("a question about plan_link_upgrade for acme-lnk-00003", "plan_link_upgrade"),
    ],
)
def test_a_skill_asked_about_on_a_thing_asks_whether_to_describe_or_run_it(
    router: Router, text: str, skill: str
) -> None:
    """The skill is what the text is about (its description), the thing where it would run (its
    answer there): both fit, so the router asks; a bid to run it there still runs it."""
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY
    assert {c.id for c in decision.candidates} == {"describe_skill", skill}
    ran = route(router, f"run {skill} {text.split(skill)[1].rstrip('?')}", PAULA)
    assert ran.capability is not None and ran.capability.id == skill


def test_names_only() -> None:
    registry = load_registry(SKILLS_DIR)
    inventory = registry.get("lookup_inventory")
    assert inventory is not None
    assert names_only("lookup_inventory?", inventory)
    assert names_only("what about the inventory lookup", inventory)
    assert names_only("re: lookup_inventory", inventory)  # a message's channel asks nothing
    assert names_only("handover - lookup_inventory, the old one", inventory)
    # a wish, an offer of time, where the name came up: nothing asked of it yet
    assert names_only("I'd like lookup_inventory please", inventory)
    assert names_only("got a minute for lookup_inventory?", inventory)
    assert names_only("lookup_inventory?? someone mentioned it in standup", inventory)
    assert not names_only("how do I call lookup_inventory", inventory)
    assert not names_only("describe lookup_inventory", inventory)
    assert not names_only("lookup_inventory nyc1", inventory)
    assert not names_only("list the sites", inventory)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("use lookup_inventory to get the software version of nyc1-core-01", "lookup_inventory"),
        ("run lookup_inventory: which release is lon1-agg-02 on?", "lookup_inventory"),
        ("lookup_inventory: which release are we running in prod", "describe_skill"),
        ("what release of check_link_capacity is deployed?", "describe_skill"),
    ],
)
def test_a_version_or_release_is_the_named_things_not_the_skills(
    router: Router, text: str, skill: str
) -> None:
    """Beside a thing named by an identifier, a version or a release is that thing's (the
    skill is bid to look it up); with no such thing, it is the named skill's own."""
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == skill


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("what fields does the threshold-checking skill require", "evaluate_resource_condition"),
        ("the capacity-checking skill: which arguments?", "check_link_capacity"),
        ("what fields do inventory lookups take?", "lookup_inventory"),
    ],
)
def test_a_skill_named_in_an_inflected_form_is_named(router: Router, text: str, skill: str) -> None:
    """A name's words in another inflection ("threshold-checking" for "threshold check") still
    name the skill: its interface asked about is describe_skill's."""
    registry = load_registry(SKILLS_DIR)
    capability = registry.get(skill)
    assert capability is not None and names_skill(text, capability.manifest)
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == "describe_skill"
    assert decision.arguments.get("skill_id") == skill


@pytest.mark.parametrize(
    "text",
    [
        "which fields does the condition evaluator want",
        "what does the upgrade planner give as output?",
    ],
)
def test_a_named_skills_interface_asked_about_is_described(router: Router, text: str) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == "describe_skill"


def test_an_interface_of_a_device_beside_a_skills_alias_is_no_description(
    router: Router,
) -> None:
    decision = route(router, "threshold check: input errors over 5 on interface xe-0/0/2")
    assert decision.capability is not None
    assert decision.capability.id == "evaluate_resource_condition"


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        (
            "how much is free on acme-lnk-00003, then recommend an upgrade",
            {"check_link_capacity", "plan_link_upgrade"},
        ),
        (
            "call evaluate_resource_condition for cpu above 80 on nyc1-core-01 and show me its "
            "schema",
            {"describe_skill", "evaluate_resource_condition"},
        ),
    ],
)
def test_two_requests_in_one_text_are_asked_about(
    router: Router, text: str, offered: set[str]
) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY
    assert {c.id for c in decision.candidates} == offered


def test_describe_takes_the_standing_of_the_skill_whose_interface_is_asked_about(
    router: Router,
) -> None:
    """The layers matched the planner's name, not its work: the text asks of its fields."""
    fixed = _fixed_scores(
        router,
        [
            Score("plan_link_upgrade", 0.75, 0.56, 0.54, 0.0),
            Score("describe_skill", 0.34, 0.34, 0.0, 0.0),
        ],
    )
    decision = fixed.route(text_message("which fields should I post to the upgrade planner"), PAULA)
    assert decision.capability is not None and decision.capability.id == "describe_skill"
    assert decision.confidence == 0.75


def test_a_second_request_naming_a_skill_counts_however_low_the_skill_ranks(
    router: Router,
) -> None:
    fixed = _fixed_scores(
        router,
        [
            Score("describe_skill", 0.85, 0.85, 0.0, 0.0),
            Score("plan_link_upgrade", 0.2, 0.0, 0.2, 0.0),
            Score("link_headroom", 0.1, 0.0, 0.1, 0.0),
            Score("check_link_capacity", 0.05, 0.05, 0.0, 0.0),
        ],
    )
    text = "run check_link_capacity on acme-lnk-00016 and then tell me its inputs"
    decision = fixed.route(text_message(text), PAULA)
    assert decision.action is Action.CLARIFY
    assert {c.id for c in decision.candidates} == {"check_link_capacity", "describe_skill"}


@pytest.mark.parametrize(
    "text",
    [
        "acme-lnk-00003 keeps dropping packets, what should we do?",
        "fcs errors??",
        "is the sin1 site saturated",
        "is acme-lnk-00003 maxed out",
        "what's the difference between BGP and OSPF",
    ],
)
def test_what_no_one_skill_answers_is_asked_about(router: Router, text: str) -> None:
    assert route(router, text, PAULA).action is Action.CLARIFY


def test_two_requests_the_domain_tells_apart_are_asked_about(router: Router) -> None:
    class Seen:
        def features(self, text: str) -> TextFeatures:
            return TextFeatures(asks=("lookup_inventory", "evaluate_resource_condition"))

    seen = Router(load_registry(SKILLS_DIR), classifier=router.classifier, features=Seen())
    decision = seen.route(text_message("list the devices in lon1"), PAULA)
    assert decision.action is Action.CLARIFY
    offered = {c.id for c in decision.candidates}
    assert offered == {"lookup_inventory", "evaluate_resource_condition"}
    plain = Router(load_registry(SKILLS_DIR), classifier=router.classifier)
    assert plain.route(text_message("list the devices in lon1"), PAULA).action is Action.RUN


@pytest.mark.parametrize(
    "text",
    [
        "memory on sin1-core-01 and its serial number",
        "acme-lnk-00005 spare capacity plus an upgrade plan",
        "list every circuit and whether it needs an upgrade",
    ],
)
def test_two_requests_in_other_words_are_asked_about(router: Router, text: str) -> None:
    assert route(router, text, PAULA).action is Action.CLARIFY


@pytest.mark.parametrize(
    "text",
    ["use the legacy headroom check on acme-lnk-00002", "run the old headroom skill for it"],
)
def test_the_old_skill_named_in_words_runs(router: Router, text: str) -> None:
    decision = route(router, text)
    assert decision.capability is not None and decision.capability.id == "link_headroom"


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("run lookup_inventory for sin1", "lookup_inventory"),
        ("please execute check_link_capacity on acme-lnk-00004", "check_link_capacity"),
        ("how do I call evaluate_resource_condition", "describe_skill"),
    ],
)
def test_a_bid_to_run_a_named_skill_runs_it(router: Router, text: str, skill: str) -> None:
    """An id is what most of describe_skill's utterances have: a bid to run the skill it
    names is the skill's, as good as a request; asking how to call it is a description."""
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == skill


def test_two_skills_named_and_nothing_else_asks_which(router: Router) -> None:
    decision = route(router, "lookup_inventory or evaluate_resource_condition?", PAULA)
    assert decision.action is Action.CLARIFY
    offered = {c.id for c in decision.candidates}
    assert offered == {"lookup_inventory", "evaluate_resource_condition"}


@pytest.mark.parametrize("text", ["hi", "hello, what can you do?", "good morning", "?"])
def test_a_text_that_scores_nothing_is_never_offered_the_replaced_skill(
    router: Router, text: str
) -> None:
    """With nothing scoring, every candidate ties; the deprecated link_headroom was offered
    while its replacement, check_link_capacity, is alice's too."""
    decision = route(router, text)
    assert decision.action is Action.CLARIFY
    offered = [c.id for c in decision.candidates]
    assert offered, decision
    assert "link_headroom" not in offered, offered


def test_the_replaced_skill_is_still_offered_when_the_text_names_it(router: Router) -> None:
    decision = route(router, "link_headroom?")
    offered = [c.id for c in decision.candidates]
    assert decision.action is Action.RUN or "link_headroom" in offered, decision


def test_the_domains_note_is_said_before_the_question(router: Router) -> None:
    """A provider's ``note`` (what no skill does for the text) is carried to the clarification
    and said first; a decision that runs a skill carries none."""

    class Noting:
        def features(self, text: str) -> TextFeatures:
            votes = dict.fromkeys(("lookup_inventory", "evaluate_resource_condition"), -0.6)
            return TextFeatures(votes=votes, signals=("odd",), note="Nobody here bakes bread.")

    noting = Router(load_registry(SKILLS_DIR), classifier=router.classifier, features=Noting())
    decision = noting.route(text_message("list the devices in lon1"), PAULA)
    assert decision.action is Action.CLARIFY and decision.note == "Nobody here bakes bread."
    question = clarification_text(decision.candidates, decision.note)
    assert question.splitlines()[0] == "Nobody here bakes bread."
    assert all(c.id in question for c in decision.candidates)
    assert clarification_text(decision.candidates).startswith(("Which of these", "Did you mean"))
    ran = route(router, "list the devices in lon1", PAULA)
    assert ran.action is Action.RUN and ran.note == ""


@pytest.mark.parametrize(
    "text",
    [
        "is packet loss on acme-lnk-00002 worse than 0.2%?",
        "sfo1-edge-01 inlet temp above 40C?",
        "what does lon1-core-01 draw in watts",
    ],
)
def test_a_metric_no_skill_observes_is_asked_about_with_a_note(router: Router, text: str) -> None:
    """evaluate_resource_condition reads utilization, cpu, memory and errors only: it must not
    run (and refuse the metric); the caller is asked, told which metric is not observed."""
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert "not a metric this agent observes" in decision.note


@pytest.mark.parametrize(
    "text",
    [
        "Add an ospf area 0 adjacency between lon1-core-01 and lon1-core-02",
        "Update the firmware of sfo1-access-01 after hours.",
        "please modify the cmdb entry of nyc1-agg-02: new rack",
        "forward the monthly capacity digest to all the site leads",
    ],
)
def test_a_change_request_runs_no_skill(router: Router, text: str) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert "no changes" in decision.note


@pytest.mark.parametrize(
    "text",
    ["should we upgrade acme-lnk-00021 to 100G?", "plan an upgrade of acme-lnk-00021 to 400G"],
)
def test_an_upgrade_of_a_link_asked_about_is_still_a_plan(router: Router, text: str) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == "plan_link_upgrade"


@pytest.mark.parametrize(
    "text",
    [
        "nyc1-agg-02 - is it a cisco or a juniper box?",
        "fra1-core-01: huawei or nokia",
        "what model is the lon1 core router",
        "what os does the sin1 edge router run",
        "is globex-lnk-00002 up or down",
        "the firmware version loaded on each device at sfo1",
    ],
)
def test_an_attribute_of_the_inventory_is_looked_up(router: Router, text: str) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None, decision
    assert decision.capability.id == "lookup_inventory"


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("what version of lookup_inventory is live, and what is its interface digest?", None),
        ("input schema of the capacity skill, please", "check_link_capacity"),
        ("what does the lookup skill send back?", "lookup_inventory"),
    ],
)
def test_a_skills_version_digest_or_schema_is_described(
    router: Router, text: str, skill: str | None
) -> None:
    """Two questions of one description are one request; a word of one skill's id, called a
    skill ('the capacity skill'), names it for describe_skill."""
    decision = route(router, text, PAULA)
    assert decision.capability is not None, decision
    assert decision.capability.id == "describe_skill"
    assert decision.arguments["skill_id"] == (skill or "lookup_inventory")


def test_a_bid_to_run_a_named_skill_after_a_sentence_runs_it(router: Router) -> None:
    """The bid is the first word of a sentence, not only of the text: the skill runs however
    describe_skill scores (its utterances have ids)."""
    fixed = _fixed_scores(
        router,
        [
            Score("describe_skill", 0.7, 0.7, 0.0, 0.0),
            Score("link_headroom", 0.3, 0.2, 0.1, 0.0),
        ],
    )
    text = "Context: our dashboard still reads link_headroom; run it on acme-lnk-00012 for me."
    decision = fixed.route(text_message(text), PAULA)
    assert decision.capability is not None and decision.capability.id == "link_headroom"


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        ("the upgrade skill", {"describe_skill", "plan_link_upgrade"}),
        ("is check_link_capacity the right one?", {"describe_skill", "check_link_capacity"}),
        ("should I use lookup_inventory here?", {"describe_skill", "lookup_inventory"}),
    ],
)
def test_a_skill_only_mentioned_asks_whether_to_describe_or_run_it(
    router: Router, text: str, offered: set[str]
) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert {c.id for c in decision.candidates} == offered


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        ("fra1-agg-01 interface drops", {"evaluate_resource_condition", "lookup_inventory"}),
        ("state of acme-lnk-00044?", {"evaluate_resource_condition", "lookup_inventory"}),
        ("would 100G be enough for acme-lnk-00005", {"check_link_capacity", "plan_link_upgrade"}),
        (
            "do we need more capacity on acme-lnk-00018?",
            {"check_link_capacity", "plan_link_upgrade"},
        ),
    ],
)
def test_one_request_two_skills_fit_alike_asks_between_them(
    router: Router, text: str, offered: set[str]
) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert {c.id for c in decision.candidates} == offered


@pytest.mark.parametrize(
    "text",
    [
        "is the link between lon1-core-01 and lon1-edge-02 fine",
        "the link between sfo1-core-01 and sfo1-edge-02 - is it ok?",
        "keep an eye on the link between nyc1-core-01 and nyc1-agg-01",
    ],
)
def test_a_health_or_a_watch_runs_no_skill(router: Router, text: str) -> None:
    assert route(router, text, PAULA).action is Action.CLARIFY


def test_a_rate_an_upgrade_moves_to_is_the_planners(router: Router) -> None:
    decision = route(router, "is a jump to 400G justified for acme-lnk-00040?", PAULA)
    assert decision.capability is not None and decision.capability.id == "plan_link_upgrade"


@pytest.mark.parametrize(
    "text",
    [
        # a device of the aggregation role named as the inventory's extractor reads it
        "what software is ams1-dist-05 running",
        # what a device is, however short: its maker, its serial
        "lon1-edge-03 manufacturer pls",
        "fra1-core-02 serial #",
        # its record itself
        "the inventory for sin1-agg-04, please",
        # the rates the records give a link are its recorded speed, no traffic to fit
        "is acme-lnk-00071 a 40G or a 100G circuit per the inventory?",
        # spares are parts kept for a failure, no room on anything
        "which chassis type is nyc1-access-05? it is for the spares shelf",
    ],
)
def test_what_a_named_thing_is_or_is_recorded_as_is_looked_up(router: Router, text: str) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None, decision
    assert decision.capability.id == "lookup_inventory"


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # a named skill's version asked: its description
        ("which version of link_headroom do we run now", "link_headroom"),
        # describe_skill's own interface: it describes itself
        ("the parameters describe_skill takes?", "describe_skill"),
        # describe_skill called for another skill: that one is described
        (
            "please call describe_skill on evaluate_resource_condition",
            "evaluate_resource_condition",
        ),
    ],
)
def test_a_skills_version_or_describe_skill_itself_is_described(
    router: Router, text: str, skill: str
) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None, decision
    assert decision.capability.id == "describe_skill"
    assert decision.arguments["skill_id"] == skill


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # rates offered as choices beside an upgrade are its targets, no traffic to fit
        ("acme-lnk-00052 - 10G or 40G upgrade?", "plan_link_upgrade"),
        # "whether and how far" is one question, not two requests joined
        (
            "5G did not fit on acme-lnk-00031 yesterday, so advise whether and how far to "
            "upgrade it",
            "plan_link_upgrade",
        ),
        # a skill's name right before a thing named by an identifier: a bid to run it there
        ("plan_link_upgrade on acme-lnk-00090", "plan_link_upgrade"),
        ("lookup_inventory for sfo1-core-02", "lookup_inventory"),
    ],
)
def test_an_upgrade_asked_among_rates_or_a_skill_named_for_a_thing_runs(
    router: Router, text: str, skill: str
) -> None:
    """The rule for ``<skill> for <thing>``: a skill's name followed by ``for``, ``on``,
    ``against`` or ``of`` and an identifier is a bid to run the skill on that thing, as
    ``run <skill> for <thing>`` is (describing a skill needs no thing); a skill that needs more
    than the thing then asks for it (input-required). heldout_v4 disagrees with itself here: it
    labels ``plan_link_upgrade for <link>`` a run and ``evaluate_resource_condition for
    <device>`` ambiguous; by this rule the second runs (and asks for its metric and
    threshold), and is counted a miss there."""
    decision = route(router, text, PAULA)
    assert decision.capability is not None, decision
    assert decision.capability.id == skill


@pytest.mark.parametrize(
    "text",
    [
        # a device's cpu or memory said to be full is a condition of that metric
        "is the processor on fra1-agg-03 pegged",
        "sin1-core-04 memory full?",
        # a rate compared with what an interface or a link carries: its utilization
        "is acme-lnk-00044 passing over 30 Gbps of traffic right now?",
        "ge-0/0/7 on lon1-edge-02 carrying under 1 Gbps these days?",
    ],
)
def test_a_full_device_metric_or_a_carried_rate_threshold_is_evaluated(
    router: Router, text: str
) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None, decision
    assert decision.capability.id == "evaluate_resource_condition"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        # a change bid after a ticket's label
        ("INC-7781: disable port ge-0/0/3 on sfo1-edge-01", "makes no changes"),
        # a change whose object is a named thing ("in the inventory" is no noun's)
        ("could you decommission sin1-agg-02 in the inventory tonight", "makes no changes"),
        ("roll out the new syslog config to all edge routers at ams1", "makes no changes"),
        # a test run on the network
        ("traceroute from nyc1-core-01 to the far side of acme-lnk-00009", "runs no tests"),
    ],
)
def test_a_change_or_a_test_on_the_network_is_no_skills_and_the_caller_is_told(
    router: Router, text: str, says: str
) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert says in decision.note


@pytest.mark.parametrize(
    "text",
    [
        "could sin1-agg-01 take on more?",
        "any room on acme-lnk-00066?",
        "will acme-lnk-00012 cope",
        "is lon1-core-02 ready for additional traffic?",
    ],
)
def test_more_of_no_size_asks_between_the_capacity_check_and_the_evaluation(
    router: Router, text: str
) -> None:
    """Whether a thing can take more, of no size: a rate to fit, or its load against a
    threshold? Neither skill can answer without the caller's figure."""
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert {"check_link_capacity", "evaluate_resource_condition"} <= {
        c.id for c in decision.candidates
    }


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        # the link between two devices, and no more: its record, or its room?
        (
            "the circuit between ams1-edge-01 and ams1-core-02",
            {"lookup_inventory", "check_link_capacity"},
        ),
        # a resource's usage told as a story: against a threshold, or the room left?
        (
            "give me the rundown on acme-lnk-00081 utilization",
            {"evaluate_resource_condition", "check_link_capacity"},
        ),
    ],
)
def test_a_bare_link_between_two_devices_or_a_usage_story_is_asked_about(
    router: Router, text: str, offered: set[str]
) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert offered <= {c.id for c in decision.candidates}


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        # two named skills offered as alternatives: the caller's choice, asked
        (
            "plan_link_upgrade or check_link_capacity on acme-lnk-00073?",
            {"plan_link_upgrade", "check_link_capacity"},
        ),
        (
            "lookup_inventory vs evaluate_resource_condition for nyc1-core-02, which?",
            {"lookup_inventory", "evaluate_resource_condition"},
        ),
        # a replaced skill beside its successor
        (
            "use link_headroom on acme-lnk-00074, or its replacement",
            {"link_headroom", "check_link_capacity"},
        ),
    ],
)
def test_named_skills_offered_as_alternatives_are_asked_between(
    router: Router, text: str, offered: set[str]
) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert {c.id for c in decision.candidates} == offered


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        # a skill's interface asked and a run of it on a thing bid, in one text
        (
            "the parameters of lookup_inventory and a go of lookup_inventory for sin1-agg-04",
            {"describe_skill", "lookup_inventory"},
        ),
        # consent alone bids nothing of a named skill: describe it, or run it?
        ("check_link_capacity - sure, proceed", {"describe_skill", "check_link_capacity"}),
        ("lookup_inventory, go ahead", {"describe_skill", "lookup_inventory"}),
    ],
)
def test_an_interface_and_a_run_or_consent_alone_asks_which(
    router: Router, text: str, offered: set[str]
) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert {c.id for c in decision.candidates} == offered


@pytest.mark.parametrize(
    ("text", "action", "skill"),
    [
        # a removed skill's interface or version: describe_skill says why it is gone
        ("which release is port_report at?", Action.RUN, "describe_skill"),
        ("the arguments port_report took, please", Action.RUN, "describe_skill"),
        # a bid to run a skill on a thing is the run, whatever it says of its output
        (
            "could you run check_link_capacity for acme-lnk-00075? my script parses its output.",
            Action.RUN,
            "check_link_capacity",
        ),
    ],
)
def test_a_removed_skills_interface_is_described_and_a_run_bid_runs(
    router: Router, text: str, action: Action, skill: str
) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is action, decision
    assert decision.capability is not None
    assert decision.capability.id == skill


@pytest.mark.parametrize(
    "text",
    [
        "thinking about lookup_inventory",
        "maybe check_link_capacity later",
        "plan_link_upgrade again, perhaps?",
        "and evaluate_resource_condition as well, too",
        "check_link_capacity - cheers, ty",
        "lookup_inventory next, I guess",
        "let's try plan_link_upgrade",
    ],
)
def test_a_skill_named_beside_hedges_or_sign_offs_asks_nothing_of_it(
    router: Router, text: str
) -> None:
    """Hedges ("I guess", "maybe"), sequencing ("next", "again", "too") and sign-offs ("thx",
    "cheers") bid nothing of the skill named beside them: describe it, or run it?"""
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert "describe_skill" in {c.id for c in decision.candidates}


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # what the skill is or does, and a request of it on a thing, joined
        ("what can lookup_inventory do, and list the ports of sin1-agg-04", "lookup_inventory"),
        (
            "explain check_link_capacity and then check acme-lnk-00081 with it",
            "check_link_capacity",
        ),
        (
            "the input schema of evaluate_resource_condition plus is nyc1-core-01 cpu over 80?",
            "evaluate_resource_condition",
        ),
        ("describe_skill plan_link_upgrade, then do acme-lnk-00082", "plan_link_upgrade"),
        ("what does lookup_inventory return and what's on fra1", "lookup_inventory"),
        # a skill explained for a thing: its description, or its answer there?
        (
            "explain evaluate_resource_condition for lon1-agg-02 memory",
            "evaluate_resource_condition",
        ),
        ("describe plan_link_upgrade on acme-lnk-00083", "plan_link_upgrade"),
    ],
)
def test_a_skill_described_and_run_on_a_thing_in_one_text_asks_which(
    router: Router, text: str, skill: str
) -> None:
    """A text asking what a skill is and, joined to it, asking it of a thing (or explaining it
    for a thing) holds two asks, describing it and running it: the router asks which."""
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert {c.id for c in decision.candidates} == {"describe_skill", skill}


@pytest.mark.parametrize(
    "text",
    [
        # a ticket id is no thing the skill runs on
        "CR-5120: what can check_link_capacity do and what does it return?",
        "describe lookup_inventory and its output schema, ref TKT-9001",
        "explain plan_link_upgrade and then the inputs it takes",
    ],
)
def test_a_skill_described_with_no_thing_to_run_on_is_described(router: Router, text: str) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.RUN, decision
    assert decision.capability is not None and decision.capability.id == "describe_skill"


@pytest.mark.parametrize(
    "text",
    [
        "check_link_capacity - anyone?",
        "evaluate_resource_condition, see the ticket",
        "lookup_inventory fyi",
        "plan_link_upgrade, note below",
    ],
)
def test_a_skill_named_beside_an_aside_or_a_pointer_asks_nothing_of_it(
    router: Router, text: str
) -> None:
    """An aside (``anyone?``) or a pointer (``see the ticket``, ``fyi``) bids nothing of the
    skill named beside it: describe it, or run it?"""
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert "describe_skill" in {c.id for c in decision.candidates}


@pytest.mark.parametrize(
    "text",
    [
        "what was port_report? an old runbook mentions it",
        "explain port_report for our migration notes",
        "port_report's interface, please",
        "about the port_report skill: is it gone?",
    ],
)
def test_a_removed_skill_asked_about_is_described(router: Router, text: str) -> None:
    decision = route(router, text, PAULA)
    assert decision.action is Action.RUN, decision
    assert decision.capability is not None and decision.capability.id == "describe_skill"


@pytest.mark.parametrize(
    "text",
    [
        # room of a device with no link named; a link's load named by its devices
        "is there headroom on lon1-aggr-04",
        "is the ams1-core-02 to ams1-dist-01 link busy",
        # the condition of a thing, everything on it
        "what condition is sin1-edge-03 in?",
        "show everything about tok1-dist-02",
        # up beside a fit
        "is acme-lnk-00320 up and could it carry 4G?",
    ],
)
def test_room_of_a_device_a_load_by_ends_a_condition_or_two_asks_are_asked_about(
    router: Router, text: str
) -> None:
    assert route(router, text, PAULA).action is Action.CLARIFY


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        (
            "does acme-lnk-00321 have at least 2 Gbps available for the traffic we move?",
            "check_link_capacity",
        ),
        ("recommend a speed tier for acme-lnk-00322 after the merger", "plan_link_upgrade"),
        # (the newcomer's question keeps its evaluation, which asks for a threshold)
        ("how busy is acme-lnk-00002?", "evaluate_resource_condition"),
    ],
)
def test_a_rate_available_or_a_speed_recommended_runs_its_skill(
    router: Router, text: str, skill: str
) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == skill, decision


@pytest.mark.parametrize(
    "text",
    [
        "port_report on nyc1-edge-02 plus the input schema of check_link_capacity",
        "the port_report for sin1-core-01, and what arguments does plan_link_upgrade take?",
        "what are the fields of check_link_capacity and the port_report of lon1-edge-01",
    ],
)
def test_a_removed_skills_run_beside_another_skills_interface_asks_which(
    router: Router, text: str
) -> None:
    """A removed skill's work on a thing (its replacement's) and another skill's interface in
    one text are two asks: the replacement's run, or the description?"""
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert {c.id for c in decision.candidates} == {"describe_skill", "lookup_inventory"}


@pytest.mark.parametrize(
    "text", ["what's the weather in Oslo tomorrow?", "hello, what can you do?", "hi", "?"]
)
def test_a_text_that_matches_nothing_is_told_what_the_caller_can_ask(
    router: Router, text: str
) -> None:
    """No layer found anything of any skill: the question lists what the caller can ask for
    (the replaced skill aside), where it offered the noise's winner alone ("Which of these
    did you mean? 1. lookup_inventory" to a question about the weather)."""
    decision = route(router, text)
    assert decision.action is Action.CLARIFY and not decision.matched
    offered = [c.id for c in decision.candidates]
    mine = [c.id for c in router.candidates(ALICE) if c.id != "link_headroom"]
    assert sorted(offered) == sorted(mine)
    assert decision.routing_metadata()["routing"]["matched"] is False
    question = clarification_text(decision.candidates, decision.note, matched=False)
    # what the deployment's data says of such requests ("outside what this agent does"), if
    # it says anything, then the list
    lead = decision.note or "I could not match this to anything I do."
    assert question.startswith(lead) and "What I can do:" in question
    assert all(f"{c}" in question for c in offered)


def test_a_metric_no_skill_observes_is_said_so_with_what_the_caller_can_do(
    router: Router,
) -> None:
    """Latency is observed by no skill: the caller is told so (the deployment's note), and
    offered every skill it may use, not the ones that read other metrics of the link."""
    decision = route(router, "latency on acme-lnk-00002?")
    assert decision.action is Action.CLARIFY and not decision.matched
    assert "not a metric this agent observes" in decision.note
    assert {c.id for c in decision.candidates} >= {"lookup_inventory", "check_link_capacity"}


@pytest.mark.parametrize("text", ["check acme-lnk-00002", "is acme-lnk-00015 ok?"])
def test_a_vague_text_about_the_network_is_matched_and_offers_the_close_ones(
    router: Router, text: str
) -> None:
    decision = route(router, text)
    assert decision.action is Action.CLARIFY and decision.matched
    assert len(decision.candidates) <= 3
    assert "matched" not in decision.routing_metadata()["routing"]


def test_one_candidate_is_asked_about_as_one(router: Router) -> None:
    registry = load_registry(SKILLS_DIR)
    capacity = registry.get("check_link_capacity")
    assert capacity is not None
    assert clarification_text([capacity]).startswith("Did you mean this?\n1. check_link_capacity")
    assert clarification_text([capacity], "A note.").startswith("A note.\nOr did you mean this?")


def assert_runs(decision: Decision, skill: str) -> None:
    """The decision runs ``skill`` (or asks for its arguments): no clarification."""
    assert decision.action in (Action.RUN, Action.ASK), decision
    assert decision.capability is not None and decision.capability.id == skill


FRAMINGS = (
    "Subject: {}",
    "Step 6: {}.",
    "{} (see section 4).",
    "{}, as discussed",
    "{}, whenever you have a sec",
    "right, and {} after that?",
    "Re: {} (see thread)",
    "page 12, {}",
)


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize(
    "skill", ["lookup_inventory", "evaluate_resource_condition", "check_link_capacity"]
)
def test_a_skill_named_in_a_messages_framing_alone_asks_which(
    router: Router, framing: str, skill: str
) -> None:
    """A subject line, a step of a runbook, a pointer to a section or a thread, and when it is
    wanted, say nothing of what is wanted of the skill: describe it, or run it?"""
    decision = route(router, framing.format(skill))
    assert decision.action is Action.CLARIFY, decision
    assert {c.id for c in decision.candidates} == {"describe_skill", skill}


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # the same framing around a request is the request
        ("Step 6: run lookup_inventory for ams3.", "lookup_inventory"),
        ("Subject: check_link_capacity for acme-lnk-00002", "check_link_capacity"),
        ("lookup_inventory schema (see section 4)", "describe_skill"),
        # a thing named after the place: the run on it
        ("Step 6: lookup_inventory for nyc1-core-01", "lookup_inventory"),
    ],
)
def test_a_request_in_that_framing_runs(router: Router, text: str, skill: str) -> None:
    assert_runs(route(router, text), skill)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        ("eval_resource_condition schema pls", "describe_skill"),
        ("eval_resource_condition - which metric names are valid?", "describe_skill"),
        ("lookup_inv for ams3", "lookup_inventory"),
        ("run Lookup_Inv for ams3", "lookup_inventory"),
        ("check_link_cap for acme-lnk-00002", "check_link_capacity"),
    ],
)
def test_a_shortened_skill_id_is_the_skill(router: Router, text: str, skill: str) -> None:
    assert_runs(route(router, text, PAULA), skill)


def test_spelled_out_writes_only_an_unambiguous_shortening_in_full() -> None:
    ids = frozenset({"lookup_inventory", "link_headroom", "link_health", "check_link_capacity"})
    assert spelled_out("lookup_inv for x", ids) == "lookup_inventory for x"
    assert spelled_out("LOOKUP_INVENTORY", ids) == "LOOKUP_INVENTORY"  # already whole
    assert spelled_out("link_hea", ids) == "link_hea"  # two ids start so: neither
    assert spelled_out("link_headr", ids) == "link_headroom"
    assert spelled_out("lo_inventory", ids) == "lo_inventory"  # too short a start
    assert spelled_out("check_capacity", ids) == "check_capacity"  # a word missing
    assert spelled_out("my_lookup_inv", ids) == "my_lookup_inv"  # a word more
    assert spelled_out("lookup_inv-2 lookup_inv_x", ids) == "lookup_inv-2 lookup_inv_x"
    assert spelled_out("no underscores here", ids) == "no underscores here"
    hostile = "_".join(["a"] * 5000) + " " + "lookup_inv " * 2000
    assert spelled_out(hostile, ids).count("lookup_inventory") == 2000


@pytest.mark.parametrize(
    "text",
    [
        "port_report for nce1-leaf-03 pls",
        "port_report for core-rtr-01",
        "run port_report on acc-sw-33 pls",
        "port_report on sin1-access-04?",
    ],
)
def test_a_removed_skill_bid_on_a_thing_runs_its_replacement(router: Router, text: str) -> None:
    assert_runs(route(router, text), "lookup_inventory")


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # the singular "arg" asks of the interface as "args" does
        (
            "what does check_link_capacity want for the bandwidth arg, Gbps or bps?",
            "describe_skill",
        ),
        # arguments given with a bid to run: the run, whatever their word
        (
            "Invoke link_headroom with the following parameters: link=acme-lnk-06123, window=24h.",
            "link_headroom",
        ),
        ("call check_link_capacity with link_id=acme-lnk-00002", "check_link_capacity"),
        # no bid: the parameters are asked
        ("check_link_capacity with the following parameters?", "describe_skill"),
    ],
)
def test_an_argument_asked_or_given(router: Router, text: str, skill: str) -> None:
    assert_runs(route(router, text, PAULA), skill)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # a skill named to run it runs, whatever the rest of the text would route to; a
        # replaced one too (the replacement wins only when the text does not name it)
        ("use link_headroom to see if 3 Gbit/s fits on acme-lnk-00003", "link_headroom"),
        (
            "Ticket: run link_headroom on acme-lnk-00005, customer wants an extra 500 Mb/s",
            "link_headroom",
        ),
        ("run plan_link_upgrade on acme-lnk-00001, can it take another 10G?", "plan_link_upgrade"),
        (
            "please use the inventory lookup skill for nyc1-core-01, is its cpu high?",
            "lookup_inventory",
        ),
        # without the name, the text's words decide as ever
        ("can acme-lnk-00003 take another 3 Gbit/s?", "check_link_capacity"),
    ],
)
def test_a_skill_named_to_run_it_is_the_one_that_runs(
    router: Router, text: str, skill: str
) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == skill, decision


def test_a_skills_result_used_is_no_bid_to_run_it(router: Router) -> None:
    text = (
        "Upgrade planning: use the capacity check result of acme-lnk-00002 as input and obtain "
        "a recommendation."
    )
    decision = route(router, text, PAULA)
    assert decision.capability is None or decision.capability.id != "check_link_capacity"


@pytest.mark.parametrize(
    "text",
    ["how busy is globex-lnk-3301", "rate of umbrella-lnk-77?", "endpoints of initech-lnk-1?"],
)
def test_a_link_id_of_any_number_routes_as_a_link(router: Router, text: str) -> None:
    """Operators' ids vary; one the inventory lacks is then not found by the skill."""
    decision = route(router, text, PAULA)
    assert decision.action is not Action.CLARIFY, decision


@pytest.mark.parametrize(
    "text",
    [
        "what does link_headroom return?",
        "Hello, is there an example request for check_link_capacity I could copy? Regards, Tim",
        "The error codes returned by lookup_inventory are listed in its description.",
    ],
)
def test_what_a_skill_returns_fails_with_or_is_called_with_is_its_description(
    router: Router, text: str
) -> None:
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == "describe_skill"


def test_a_speed_tier_to_move_to_is_a_plan(router: Router) -> None:
    text = "which standard speed tier should acme-lnk-00002 be moved to"
    decision = route(router, text, PAULA)
    assert decision.capability is not None and decision.capability.id == "plan_link_upgrade"


@pytest.mark.parametrize(
    "text",
    [
        "what skills do you have?",
        "list your skills",
        "Step 0: list the skills the agent exposes.",
        "Ask: full list of agent skills with descriptions",
    ],
)
def test_the_agents_skills_asked_for_are_all_offered(router: Router, text: str) -> None:
    """No skill answers it (describe_skill describes one, by id): the caller is offered
    every skill it may use, under "What I can do for you"."""
    decision = route(router, text, PAULA)
    assert decision.action is Action.CLARIFY and decision.catalogue
    offered = {c.id for c in decision.candidates}
    assert offered == {c.id for c in router.candidates(PAULA)} - {"link_headroom"}
    assert decision.routing_metadata()["routing"]["catalogue"] is True
    lead = clarification_text(decision.candidates, catalogue=True).splitlines()[0]
    assert lead == "What I can do for you:"


def test_one_skill_asked_for_by_what_it_does_is_no_catalogue(router: Router) -> None:
    decision = route(router, "which of your skills tells me free bandwidth?", PAULA)
    assert not decision.catalogue


def assert_asks_back(router: Router, text: str) -> Decision:
    """The text is asked back (which skill, or describe or run?), not run."""
    decision = router.route(text_message(text), PAULA)
    assert decision.action is Action.CLARIFY, decision
    return decision


def assert_chosen(router: Router, text: str, skill: str) -> None:
    """The text's one ask picks ``skill``: run, or its arguments asked for."""
    decision = router.route(text_message(text), PAULA)
    assert decision.action in (Action.RUN, Action.ASK), decision
    assert decision.capability is not None and decision.capability.id == skill, decision


# -- round 20 (from heldout_v22's misses; measured on heldout_v23) ---------------------------


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        # what a thing is, beside a measure or its room, in a second clause or a list
        (
            "is lon1-core-02 over 70% memory, and which EOS is it on?",
            {"evaluate_resource_condition", "lookup_inventory"},
        ),
        (
            "REQ-881: (1) confirm model of sin1-edge-01; (2) check cpu > 85% for the last hour.",
            {"evaluate_resource_condition", "lookup_inventory"},
        ),
        (
            "crc errors on acme-lnk-00012 above 50 today? also what sits at its other end",
            {"evaluate_resource_condition", "lookup_inventory"},
        ),
        (
            "acme-lnk-00044: (a) confirm its A/Z ends (b) confirm 2 Gbps fits",
            {"check_link_capacity", "lookup_inventory"},
        ),
        (
            "two asks on acme-lnk-00021 - ends of the circuit for the field team, and an "
            "upgrade recommendation",
            {"lookup_inventory", "plan_link_upgrade"},
        ),
        # a link's size asked in a unit: its record, or its room?
        ("acme-lnk-00017 bandwidth in Gbps?", {"check_link_capacity", "lookup_inventory"}),
    ],
)
def test_round_20_two_asks_or_a_size_in_a_unit_asks_which(
    router: Router, text: str, offered: set[str]
) -> None:
    decision = assert_asks_back(router, text)
    assert {c.id for c in decision.candidates} == offered, decision


@pytest.mark.parametrize(
    "text",
    [
        # a skill named where a request is filed, and nothing else: describe it, or run it?
        "Ticket OPS-5521: plan_link_upgrade",
        "CHG-40012: lookup_inventory",
        "Playbook: check_link_capacity.",
        "Handover: evaluate_resource_condition - still pending.",
        # a form with no ask in it: the "Description" field is no attribute asked
        "Ticket INC-9001\nLink: acme-lnk-00008\nDescription: please look",
        # a look for a purpose, of a thing or a set of things, in no measure
        "evaluate lon1-edge-02 for the hardware refresh",
        "we need a view on acme-lnk-00015 for the vendor renegotiation",
        "review the nyc1 core routers before the contract renewal",
    ],
)
def test_round_20_a_skill_filed_a_bare_form_or_a_look_for_a_purpose_asks_which(
    router: Router, text: str
) -> None:
    assert_asks_back(router, text)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # a link id cut short is a thing named, not a ticket's key
        ("link_headroom lnk-3305 please", "link_headroom"),
        # a reason before a semicolon, then the one ask
        (
            "customer reports congestion; what's the spare bandwidth on acme-lnk-00002 over "
            "the last hour?",
            "check_link_capacity",
        ),
        # a rate to upgrade to, asked beside the upgrade, is its target, no second ask
        (
            "please advise whether acme-lnk-00012 needs an upgrade and to which speed",
            "plan_link_upgrade",
        ),
        # a rate to fit, after the room asked for a link
        (
            "query the available bandwidth of acme-lnk-00006 over 7 days and check that the "
            "service rate of 4 Gbps fits",
            "check_link_capacity",
        ),
        # a listing wanted for a review, which is its purpose, not a look asked
        ("Need the list of links that are down, for the weekly review.", "lookup_inventory"),
        # an attribute asked, its word no purpose's modifier
        ("which hardware is nyc1-core-01?", "lookup_inventory"),
    ],
)
def test_round_20_the_one_ask_still_runs(router: Router, text: str, skill: str) -> None:
    assert_chosen(router, text, skill)


@pytest.mark.parametrize(
    "text",
    [
        "how do I use plan_link_upgrade?",
        "how would one call the capacity check",
        "How can we use lookup_inventory",
    ],
)
def test_how_a_skill_is_used_is_its_description(router: Router, text: str) -> None:
    decision = router.route(text_message(text), PAULA)
    assert decision.action is Action.RUN and decision.capability is not None, decision
    assert decision.capability.id == "describe_skill", decision


def test_whether_a_skill_applies_still_asks_describe_or_run(router: Router) -> None:
    decision = router.route(text_message("can I use plan_link_upgrade here?"), PAULA)
    assert decision.action is Action.CLARIFY, decision


# -- round 21 (from heldout_v23's misses; measured on heldout_v24) ---------------------------


@pytest.mark.parametrize(
    "text",
    [
        # whether a thing will do for an event, in no measure and no rate
        "can acme-lnk-00009 cope with the Black Friday sale?",
        "is acme-lnk-00004 ready for the datacentre migration?",
        "OPS-778: is acme-lnk-00014 fit for the go-live next week?",
        "make sure acme-lnk-00016 is able to take the traffic from the other path",
        # a skill named in framing only: an example, a reference, who it came from
        "Sample: plan_link_upgrade.",
        "See also: check_link_capacity, per the team.",
        "INC0099123: lookup_inventory, as per the template, please assist",
        # the agent's skills as a list
        "could someone post the agent's capability list in the channel?",
        "is there a list of what this agent can do?",
        # a look of no measure, or all there is
        "please validate lon1-edge-02 before the maintenance window",
        "send over whatever you have on acme-lnk-00011",
    ],
)
def test_round_21_a_thing_fit_for_an_event_a_skill_in_framing_or_a_look_asks_which(
    router: Router, text: str
) -> None:
    assert_asks_back(router, text)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # room said, or a rate to fit, is the capacity check's, whatever the event
        ("is there room on acme-lnk-00009 for the migration traffic?", "check_link_capacity"),
        ("can acme-lnk-00009 take another 3 Gbps during the sale?", "check_link_capacity"),
        # a measure with an event is a threshold asked
        ("is acme-lnk-00009 over 80% utilization at the peak?", "evaluate_resource_condition"),
        # an upgrade asked for the event is the planner's
        ("should acme-lnk-00009 be upgraded before the holiday season?", "plan_link_upgrade"),
        # a ticket key with no hyphen and a skill run on a thing
        ("INC0099123: run lookup_inventory for nyc1", "lookup_inventory"),
    ],
)
def test_round_21_the_one_ask_still_runs(router: Router, text: str, skill: str) -> None:
    assert_chosen(router, text, skill)


# -- round 22 (from heldout_v24's misses; measured on heldout_v25) ---------------------------


@pytest.mark.parametrize(
    "text",
    [
        # a skill named between a greeting and a sign-off, or as a pointer, asks nothing of it
        "Hey Sam, about check_link_capacity. Cheers, Priya",
        "Morning all - re lookup_inventory. Kind regards, Tomas",
        "Related tooling: the plan_link_upgrade skill.",
        "OPS-312 references plan_link_upgrade; ask the requester what they want.",
        # the agent's commands, or everything it does, as a list
        "show me your commands",
        "we need a list of everything this bot can do",
        # a link's capacity checked, with no room, no figure and no window
        "could someone check the bandwidth on acme-lnk-00012 before the review?",
        "acme-lnk-00013 capacity - please check",
        # what a thing is, and a measure of it, joined by a sign or a capital
        "lon1-core-01 vendor & memory above 70%?",
        "need the serial of lon1-edge-02 AND whether its cpu passed 90",
        "two things on acme-lnk-00015: errors above 0 in the last hour, and the committed rate",
        # a device asked to take what another carried
        "can lon1-core-02 take the extra traffic once the old box is gone?",
        # a link upgrade carried out, or a device taken to a release
        "please upgrade acme-lnk-00016 to 40G as approved",
        "bump acme-lnk-00017 to 100G on Sunday",
        "upgrade lon1-edge-02 to 21.3R2 please",
    ],
)
def test_round_22_a_skill_in_a_letter_two_asks_or_a_change_asks_back(
    router: Router, text: str
) -> None:
    assert_asks_back(router, text)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # a skill bid to run after a greeting's comma
        ("Hello NOC, run link_headroom for acme-lnk-00018 please", "link_headroom"),
        # what a skill does, asked of it by name
        ("what does link_headroom do again?", "describe_skill"),
        ("what does lookup_inventory do", "describe_skill"),
        # a rate compared over a time gone by is a threshold of what the link carried
        ("did acme-lnk-00019 stay under 4 Gbps over the past day?", "evaluate_resource_condition"),
        ("acme-lnk-00020 peaked above 7G overnight?", "evaluate_resource_condition"),
        # a hyphenated word is no room word: "carry-over" carries nothing
        (
            "carry-over from last shift: memory on lon1-core-01 above 75%?",
            "evaluate_resource_condition",
        ),
        # a device's cpu against a threshold, its room only the reason
        (
            "is cpu on lon1-edge-02 under 30%? we want to know if it can take more customers",
            "evaluate_resource_condition",
        ),
        # a move from one rate to another with an arrow, or a stay or a move up
        ("worth going 10G -> 25G on acme-lnk-00021?", "plan_link_upgrade"),
        ("acme-lnk-00022: stay at 40G or move up?", "plan_link_upgrade"),
        # room said, a figure, or a window still make the capacity check
        ("check the free bandwidth on acme-lnk-00023", "check_link_capacity"),
        ("check capacity acme-lnk-00024 past 30m", "check_link_capacity"),
        ("can acme-lnk-00025 carry 2 Gbps more?", "check_link_capacity"),
        # a link's upgrade asked, not bid for a time, is the planner's
        ("should we upgrade acme-lnk-00026 to 100G?", "plan_link_upgrade"),
    ],
)
def test_round_22_the_one_ask_still_runs(router: Router, text: str, skill: str) -> None:
    assert_chosen(router, text, skill)


# -- round 23 (from heldout_v25's misses; measured on heldout_v26) ---------------------------


@pytest.mark.parametrize(
    "text",
    [
        # a state looked at, of no record and no measure
        "please check the status of lon1-edge-02",
        "quick status on acme-lnk-00031 pls",
        "lon1-core-02 threw alarms overnight, what's its current state?",
        "Step 4: gather the state of lon1-access-03.",
        # what a thing is, and a measure or a plan of it, in two asks
        "(1) vendor of lon1-core-01 (2) is its memory above 80%?",
        "is acme-lnk-00032 above 70 and should we upgrade it?",
        "how loaded is lon1-edge-02 and what role does it play",
        "check whether 2G fits on acme-lnk-00033, and tell me which model the far end is.",
        "confirm the A/Z routers of acme-lnk-00034 and whether their cpu is below 60%",
        # a skill described and run, either way round
        "plan an upgrade for acme-lnk-00035 and then explain the schema of plan_link_upgrade",
        "give me lookup_inventory's schema and then list the devices",
        "describe plan_link_upgrade, or just run it on acme-lnk-00036?",
        "lookup_inventory or describe_skill for this one?",
        # the agent's operations, figures for a deck
        "which operations does this agent support?",
        "some link figures for the board pack please, acme-lnk-00037",
        "for the monthly report: headroom and rates for acme-lnk-00038",
        # a change: an upgrade approved, a release applied; a part running hot
        "upgrade acme-lnk-00039 to 40G, the CR was approved",
        "apply the EOS 4.30 upgrade to lon1-core-01 this weekend",
        "is the optic on xe-0/0/3 of lon1-edge-02 too hot?",
    ],
)
def test_round_23_a_state_looked_at_two_asks_or_a_change_asks_back(
    router: Router, text: str
) -> None:
    assert_asks_back(router, text)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # a link past a percent, said or not, is its utilization
        ("acme-lnk-00040 running above 75%?", "evaluate_resource_condition"),
        ("is acme-lnk-00041 over 60 right now?", "evaluate_resource_condition"),
        ("how saturated is acme-lnk-00042", "evaluate_resource_condition"),
        # a threshold after its number
        ("lon1-core-01 cpu 90+?", "evaluate_resource_condition"),
        ("memory on lon1-edge-02 85% or more?", "evaluate_resource_condition"),
        # what the record says of a state, or a rate on record
        ("status of acme-lnk-00043 in the inventory", "lookup_inventory"),
        ("is acme-lnk-00044 up or down?", "lookup_inventory"),
        ("what rate is acme-lnk-00045 provisioned at", "lookup_inventory"),
        ("role of lon1-access-03", "lookup_inventory"),
        # spare bandwidth said short
        ("spare b/w acme-lnk-00046", "check_link_capacity"),
        # rates offered as a list are an upgrade's choices
        ("should we upgrade acme-lnk-00047, and to 25G, 40G or 100G?", "plan_link_upgrade"),
    ],
)
def test_round_23_the_one_ask_still_runs(router: Router, text: str, skill: str) -> None:
    assert_chosen(router, text, skill)


@pytest.mark.parametrize(
    "text",
    [
        "ospf cost on acme-lnk-00049 over 100?",  # another thing's number
        "is acme-lnk-00048 over 10G?",  # a rate, no percent
        "is acme-lnk-00048 over 90 days old?",  # a number with its unit
    ],
)
def test_round_23_a_number_no_percent_could_be_is_no_links_utilization(
    router: Router, text: str
) -> None:
    assert "metric:utilization" not in router.text_features(text).signals


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        # a link fit for an event: its room, its load, or its upgrade (not the classifier's
        # lean alone, which the domain voted against)
        (
            "can acme-lnk-00050 handle the rollout?",
            {"check_link_capacity", "evaluate_resource_condition", "plan_link_upgrade"},
        ),
        (
            "is lon1-core-01 fit for the cutover?",
            {"check_link_capacity", "evaluate_resource_condition"},
        ),
        # a state looked at: the record's, or how it runs
        ("check the status of lon1-edge-02", {"lookup_inventory", "evaluate_resource_condition"}),
        ("quick status on acme-lnk-00051 pls", {"lookup_inventory", "evaluate_resource_condition"}),
    ],
)
def test_a_question_the_domain_vetoed_offers_what_it_saw_asked(
    router: Router, text: str, offered: set[str]
) -> None:
    decision = assert_asks_back(router, text)
    assert {c.id for c in decision.candidates} == offered, decision


# -- round 24 (from heldout_v26's misses; measured on heldout_v27) ---------------------------


@pytest.mark.parametrize(
    "text",
    [
        # a state asked, and an upgrade: two asks (a state said is the upgrade's reason)
        "is acme-lnk-00052 running hot, and does it need a bigger pipe?",
        # a skill described and run, joined by a plus or in sequence
        "run lookup_inventory for lon1 + show lookup_inventory's input schema",
        "lookup_inventory's schema + run it for lon1",
        "list the devices and then describe lookup_inventory",
        # the agent's functions, its skills list
        "where is the list of functions this assistant has?",
        "skills list pls",
    ],
)
def test_round_24_a_state_asked_a_plus_or_a_sequence_asks_back(router: Router, text: str) -> None:
    assert_asks_back(router, text)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # headroom required in percent is a room to check; a percent asked is the old answer
        ("make sure acme-lnk-00053 keeps at least 30% headroom", "check_link_capacity"),
        ("does acme-lnk-00054 have headroom for 15% more traffic?", "check_link_capacity"),
        ("headroom % on acme-lnk-00055", "link_headroom"),
        # a load past a figure in its own words, of a link or a port
        ("is acme-lnk-00056 running hotter than 75%?", "evaluate_resource_condition"),
        ("is acme-lnk-00057 hitting 95% in the evenings?", "evaluate_resource_condition"),
        ("is the uplink xe-0/0/2 on lon1-edge-02 over 65% at peak?", "evaluate_resource_condition"),
        # a replaced skill bid by name does its replacement's work in one ask
        (
            "please run link_headroom on acme-lnk-00058 and give me the free bandwidth",
            "link_headroom",
        ),
        # an upgrade's rate in other words
        ("next step up for acme-lnk-00059?", "plan_link_upgrade"),
        ("is 400G overkill for acme-lnk-00060?", "plan_link_upgrade"),
        ("should we go 100g on acme-lnk-00061", "plan_link_upgrade"),
        ("what speed for acme-lnk-00062 in 2 years", "plan_link_upgrade"),
        # a state said is the upgrade's reason: one ask
        ("acme-lnk-00063 keeps running hot at peak, should we upgrade it?", "plan_link_upgrade"),
    ],
)
def test_round_24_the_one_ask_still_runs(router: Router, text: str, skill: str) -> None:
    assert_chosen(router, text, skill)


def test_round_24_a_ports_other_figure_is_no_utilization(router: Router) -> None:
    text = "the ospf cost of xe-1/0/1 on lon1-core-01 is above 100?"
    assert "metric:utilization" not in router.text_features(text).signals


# -- round 25 (from heldout_v27's misses; measured on heldout_v28) ---------------------------


@pytest.mark.parametrize(
    "text",
    [
        # a link named by its sites, its capacity said with no room: its size, or its room?
        "bandwidth of the lon1-par2 circuit?",
        "lnk-lon1-par2-03 capacity please",
        # two things weighed by a measure
        "which circuit is hotter, acme-lnk-00064 or acme-lnk-00065?",
        # what a link is and a measure of it, joined, or two questions in a row
        "the ends of acme-lnk-00066 and whether it's over 60% utilisation",
        "lon1-core-01: vendor? cpu above 80?",
    ],
)
def test_round_25_a_link_by_its_sites_a_comparison_or_two_questions_asks_back(
    router: Router, text: str
) -> None:
    assert_asks_back(router, text)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # a replaced skill named to run: as an instrument, in the passive, after "kindly"
        ("Using link_headroom, see if acme-lnk-00067 can absorb 1 Gbps.", "link_headroom"),
        ("the link_headroom check must be run on acme-lnk-00068 for 4 Gbps", "link_headroom"),
        ("Kindly run link_headroom on acme-lnk-00069 for 2 Gbps.", "link_headroom"),
        # a link named by another convention routes as a link
        ("should lnk-lon1-par2-03 go 40G or 100G?", "plan_link_upgrade"),
        ("upgrade recommendation for lnk-lon1-par2-04", "plan_link_upgrade"),
        # an upgrade's rate in other words
        ("should we double the rate on acme-lnk-00070?", "plan_link_upgrade"),
        ("is a 10G-to-40G move worth it on acme-lnk-00071?", "plan_link_upgrade"),
        # the devices of a site, or what they are
        ("lon1 devices", "lookup_inventory"),
        ("which vendor are the firewalls at lon1", "lookup_inventory"),
        ("serials for everything in lon1 please", "lookup_inventory"),
        ("is lon1-edge-02 an edge or a core device?", "lookup_inventory"),
    ],
)
def test_round_25_the_one_ask_still_runs(router: Router, text: str, skill: str) -> None:
    assert_chosen(router, text, skill)


@pytest.mark.parametrize("text", ["check the tok1 links", "how are the lon1 links"])
def test_round_25_a_sites_links_looked_at_still_ask_which(router: Router, text: str) -> None:
    assert_asks_back(router, text)


# -- round 26 (from heldout_v28's misses; measured on heldout_v29) ---------------------------


@pytest.mark.parametrize(
    "text",
    [
        # the agent's skills, in other words
        "list each skill this agent offers",
        "what is the assistant capable of?",
        "which operations does the network bot expose?",
        # a choice between named skills, in other words
        "choose between lookup_inventory and evaluate_resource_condition for lon1-core-01",
        "we use link_headroom and check_link_capacity; which applies to acme-lnk-00072?",
        # a second ask on the first's answer
        "does 3G fit on acme-lnk-00073? if not, which rate should it move to?",
    ],
)
def test_round_26_the_agents_skills_a_choice_or_a_conditional_ask_asks_back(
    router: Router, text: str
) -> None:
    assert_asks_back(router, text)


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # what a skill is for, or its version under a ticket key
        ("what is the lookup_inventory skill for?", "describe_skill"),
        ("CHG-1234 needs the version of plan_link_upgrade", "describe_skill"),
        # the difference of two skills' interfaces is described, not chosen between
        (
            "the difference in outputs between check_link_capacity and link_headroom?",
            "describe_skill",
        ),
        # an upgrade misspelt, a new line rate recommended
        ("should acme-lnk-00074 be upgarded to 40G?", "plan_link_upgrade"),
        ("recommend a new line rate for acme-lnk-00075", "plan_link_upgrade"),
        # what the devices of a role at a site are
        ("the software versions on all lon1 PEs please", "lookup_inventory"),
    ],
)
def test_round_26_the_one_ask_still_runs(router: Router, text: str, skill: str) -> None:
    assert_chosen(router, text, skill)


def test_round_26_tell_me_about_a_skill_still_asks_describe_or_run(router: Router) -> None:
    assert_asks_back(router, "tell me about plan_link_upgrade")


# -- round 27 (from heldout_v29's misses; measured on heldout_v30 and heldout_v31) -----------


@pytest.mark.parametrize(
    "text",
    [
        # things weighed by no measure: by their records, their load, or their room?
        "compare the two uplinks of par2-edge-03",
        "which of the fra2 firewalls is in the better shape?",
        "lon4-pe-01 or lon4-pe-02, which one is healthier",
        "weigh up the ams3 links, which is the best",
        "please compare the two mil1 spine switches",
        # the vendor as who asks, not its name asked
        "the vendor asked for the current condition of ber1-core-02",
        "Vendor TAC: we need info on osl2-fw-03",
    ],
)
def test_round_27_things_weighed_by_no_measure_ask_back(router: Router, text: str) -> None:
    assert_asks_back(router, text)


@pytest.mark.parametrize(
    ("text", "offered"),
    [
        # information asked of a thing, of no kind: its record or its load (a link's room too),
        # not whatever skills the noise scored highest
        ("we need info on osl2-fw-03", {"evaluate_resource_condition", "lookup_inventory"}),
        (
            "any information about acme-lnk-00080?",
            {"check_link_capacity", "evaluate_resource_condition", "lookup_inventory"},
        ),
    ],
)
def test_round_27_information_of_no_kind_offers_the_checks_that_read_it(
    router: Router, text: str, offered: set[str]
) -> None:
    decision = router.route(text_message(text), PAULA)
    assert decision.action is Action.CLARIFY, decision
    assert {c.id for c in decision.candidates} == offered


@pytest.mark.parametrize(
    "text",
    [
        "fire off link_headroom on acme-lnk-00081, need a baseline",
        "run link_headroom on acme-lnk-00082 to validate the turn-up",
    ],
)
def test_round_27_a_skill_run_for_a_look_still_runs(router: Router, text: str) -> None:
    assert_chosen(router, text, "link_headroom")


@pytest.mark.parametrize(
    ("text", "skill"),
    [
        # a skill named to run: its name before the verb, a call's parentheses, "it" after it
        ("we'd like check_link_capacity run for acme-lnk-00076 with 2 Gbps", "check_link_capacity"),
        ("link_headroom executed on acme-lnk-00077 for 500M, please", "link_headroom"),
        ("exec link_headroom(acme-lnk-00078, demand=3G)", "link_headroom"),
        (
            "link_headroom needs a link and a demand. run it on acme-lnk-00079 with 4G",
            "link_headroom",
        ),
        # weighed by a measure said, or by a record: still the one skill
        ("compare the cpu of lon4-pe-01 against 80%", "evaluate_resource_condition"),
        ("what vendor is lon4-pe-02", "lookup_inventory"),
        ("compare the software of lon4-pe-01 and lon4-pe-02", "lookup_inventory"),
    ],
)
def test_round_27_the_one_ask_still_runs(router: Router, text: str, skill: str) -> None:
    assert_chosen(router, text, skill)


@pytest.mark.parametrize("pronoun", ["it", "this", "that"])
def test_round_27_many_pronoun_bids_read_the_names_once(
    router: Router, pronoun: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile text of many "run it for <thing>" bids reads the skills' names at the first
    only: once per bid, a 2,000-character text cost about 0.13 s of CPU to route."""
    import agent.routing.router as routing

    calls = 0
    real = routing.names_skill

    def counted(text: str, manifest: Any) -> bool:
        nonlocal calls
        calls += 1
        return real(text, manifest)

    monkeypatch.setattr(routing, "names_skill", counted)
    fitting = router.candidates(PAULA)
    text = f"link_headroom and plan_link_upgrade. run {pronoun} for acme-lnk-00083. " * 40
    assert routing._named_run(text.lower(), fitting) is None  # two named: neither is "it"
    assert 0 < calls <= len(fitting)
