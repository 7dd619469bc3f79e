"""A deployment's routing data (agent/routing/data.py): what a well-formed file gives, and every
wrong shape refused at start with the file named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.errors import ConfigurationError
from agent.routing.classifier import SkillClassifier
from agent.routing.data import RoutingData

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
