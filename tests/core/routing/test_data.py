"""A deployment's routing data (agent/routing/data.py): what a well-formed file gives, and every
wrong shape refused at start with the file named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.base.errors import ConfigurationError
from agent.registry.loader import load_registry
from agent.routing.classifier import BETWEEN, SkillClassifier
from agent.routing.data import RoutingData

FIXTURE_SKILLS = Path(__file__).resolve().parents[2] / "fixture_skills"
GOOD = {
    "utterances": {"order_status": ["is it paid", "due date please"]},
    "nothing_fits": {
        "change": {"note": "Nothing here makes changes.", "texts": ["pay it", "approve it"]},
        "chit_chat": {"texts": ["hello", ""]},
    },
}


def write(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "routing.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def test_none_is_no_data() -> None:
    assert RoutingData.load(None) == RoutingData()


def test_a_good_file_gives_its_utterances_reasons_and_notes(tmp_path: Path) -> None:
    data = RoutingData.load(write(tmp_path, GOOD))
    assert data.utterances == {"order_status": ("is it paid", "due date please")}
    assert data.nothing_fits["change"].note == "Nothing here makes changes."
    assert data.nothing_fits["chit_chat"].note == ""
    assert data.nothing_fits["chit_chat"].texts == ("hello",)  # blank texts dropped


@pytest.mark.parametrize(
    "document",
    [
        "{not json",
        "[]",
        {"utterances": []},
        {"utterances": {"a": "one text"}},
        {"utterances": {"a": [1, 2]}},
        {"nothing_fits": []},
        {"nothing_fits": {"change": []}},
        {"nothing_fits": {"change": {"note": "x"}}},
        {"nothing_fits": {"change": {"texts": "pay it"}}},
        {"nothing_fits": {"change": {"texts": [None]}}},
        {"ambiguous": {}},
        {"ambiguous": [[]]},
        {"ambiguous": [{"between": ["a", "b"]}]},
        {"ambiguous": [{"between": "a b", "texts": ["x"]}]},
        {"ambiguous": [{"between": ["a"], "texts": ["x"]}]},
        {"ambiguous": [{"between": ["a", "a"], "texts": ["x"]}]},
        {"ambiguous": [{"between": ["a", "b"], "texts": [3]}]},
    ],
)
def test_every_wrong_shape_fails_the_start_naming_the_file(tmp_path: Path, document: Any) -> None:
    path = write(tmp_path, document)
    with pytest.raises(ConfigurationError, match=r"routing\.json"):
        RoutingData.load(path)


def test_a_missing_file_fails_the_start_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"nowhere\.json"):
        RoutingData.load(tmp_path / "nowhere.json")


def test_each_reason_is_a_class_and_a_prediction_names_it() -> None:
    classifier = SkillClassifier(
        {
            "order_status": ["is the invoice paid", "when is the invoice due", "invoice status"],
            "vendor_info": ["vendor payment terms", "who is the vendor", "vendor contact"],
        },
        ["hello", "thanks"],
        nothing_fits={
            "change": ["pay the invoice", "approve the invoice", "put the invoice on hold"],
        },
    )
    prediction = classifier.predict("please approve and pay the invoice", {"order_status"})
    assert prediction.skill_id is None and prediction.reason == "change"
    assert classifier.predict("is the invoice paid", {"order_status"}).reason is None


def test_an_ambiguous_group_gives_its_skills_sorted_and_its_texts(tmp_path: Path) -> None:
    document = {"ambiguous": [{"between": ["vendor_info", "order_status"], "texts": ["x", " "]}]}
    (group,) = RoutingData.load(write(tmp_path, document)).ambiguous
    assert group.skills == ("order_status", "vendor_info") and group.texts == ("x",)


TWO_SKILLS = {
    "order_status": ["is the invoice paid", "when is the invoice due", "invoice status"],
    "vendor_info": ["vendor payment terms", "who is the vendor", "vendor contact"],
}
BOTH = {("order_status", "vendor_info"): ["tell me about acme", "acme details", "what about acme"]}


def test_a_request_two_skills_fit_scores_both_high() -> None:
    classifier = SkillClassifier(TWO_SKILLS, ["hello", "thanks"], ambiguous=BOTH)
    prediction = classifier.predict("acme details please", {"order_status", "vendor_info"})
    scores = dict(prediction.ranking)
    assert min(scores.values()) > 0.5  # each gets the group's probability
    assert abs(scores["order_status"] - scores["vendor_info"]) < 0.1
    # a clear request still favours its skill
    clear = dict(classifier.predict("vendor contact", {"order_status", "vendor_info"}).ranking)
    assert clear["vendor_info"] - clear["order_status"] > 0.5
    # for a caller who may use one of the two, that one is the request's skill
    alone = classifier.predict("acme details please", {"order_status"})
    assert alone.skill_id == "order_status" and alone.confidence > 0.5


def test_a_group_left_with_one_skill_is_that_skills_requests() -> None:
    data = RoutingData.from_json(
        {"ambiguous": [{"between": ["steady_probe", "gone"], "texts": ["acme details"]}]}
    )
    manifests = load_registry(FIXTURE_SKILLS).manifests
    classifier = SkillClassifier.from_manifests(manifests, data=data)
    texts, labels = classifier.training_set()
    assert not any(label.startswith(BETWEEN) for label in labels)
    assert ("acme details", "steady_probe") in zip(texts, labels, strict=True)
