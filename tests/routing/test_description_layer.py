"""The description layer: a skill with no routing utterances routes from its manifest alone.

A fresh ``netagent new-skill`` (``netops/scaffold.py``) in a temporary copy of ``skills/``, its
utterances and examples removed and its name, description and tags rewritten as a fork would:
requests phrased from that description reach it, and the shipped skills still get theirs.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import skills
from agent.registry.loader import load_registry
from agent.routing.decision import Action, Stage
from agent.routing.descriptions import DescriptionIndex, stem, tokens
from agent.routing.router import Router
from agent.security.principal import Principal
from netops.scaffold import new_skill
from tests.a2a_helpers import text_message

ROOT = Path(__file__).resolve().parents[2]
SKILL = "config_backup"
CALLER = Principal(
    "paula",
    "acme",
    frozenset({"inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"}),
)


@pytest.fixture(scope="module")
def router(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Router]:
    root = tmp_path_factory.mktemp("repo")
    shutil.copytree(ROOT / "skills", root / "skills", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "tests").mkdir()
    before = set(sys.modules)
    saved = list(skills.__path__)
    skills.__path__.append(str(root / "skills"))
    try:
        new_skill(SKILL, root / "skills", root / "tests", name="Configuration backup")
        path = root / "skills" / SKILL / "manifest.json"
        manifest = json.loads(path.read_text())
        manifest["skill"]["description"] = (
            "Fetches the most recent saved running configuration of one device from the "
            "configuration backup archive, with the time the backup was taken."
        )
        manifest["skill"]["tags"] = ["configuration", "backup", "archive"]
        manifest["skill"]["examples"] = []
        manifest["routing"] = {"utterances": [], "aliases": []}
        path.write_text(json.dumps(manifest, indent=2))
        yield Router(load_registry(root / "skills"))
    finally:
        skills.__path__[:] = saved
        for name in sorted(set(sys.modules) - before, reverse=True):
            if name.startswith("skills."):
                del sys.modules[name]
        importlib.invalidate_caches()


def _routed(router: Router, text: str) -> tuple[str, str]:
    decision = router.route(text_message(text), CALLER)
    if decision.action in (Action.RUN, Action.ASK) and decision.capability is not None:
        return decision.capability.id, decision.stage.value
    return decision.action.value, decision.stage.value


@pytest.mark.parametrize(
    "text",
    [
        "fetch the saved running configuration of nyc1-core-01 from the backup archive",
        "when was the last configuration backup of lon1-agg-01 taken?",
        "get me the archived config backup for sin1-edge-01",
        "show the most recent backup of the running configuration on nyc1-edge-02",
    ],
)
def test_a_skill_without_utterances_is_picked_from_its_description(
    router: Router, text: str
) -> None:
    capability = next(c for c in router.candidates(CALLER) if c.id == SKILL)
    assert capability.manifest.utterances == ()
    skill, layer = _routed(router, text)
    assert skill == SKILL, (text, skill, layer)
    assert layer in (Stage.DESCRIPTION.value, Stage.MODEL.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("list the devices at site nyc1", "lookup_inventory"),
        ("does a 20G flow fit on acme-lnk-00002?", "check_link_capacity"),
        ("is nyc1-core-01 cpu above 90%?", "evaluate_resource_condition"),
    ],
)
def test_the_shipped_skills_keep_their_requests(router: Router, text: str, expected: str) -> None:
    assert _routed(router, text)[0] == expected


def test_the_description_layer_reads_manifests_not_utterances(router: Router) -> None:
    text = "saved running configuration backup"
    scores = router.text_stages.descriptions.scores(text, [SKILL, "lookup_inventory"])
    assert scores[SKILL] > 0.5 > scores["lookup_inventory"]


def test_bm25_basics() -> None:
    index = DescriptionIndex({"a": "upgrade links to a faster rate", "b": "list devices at a site"})
    assert stem("upgrades") == stem("upgrading") == stem("upgraded") == "upgrad"
    assert tokens("the acme-lnk-00002 link_id") == ["acme", "lnk", "link", "id"]
    scores = index.scores("which devices are at the site", ["a", "b"])
    assert scores["b"] > scores["a"] == 0.0
    assert index.scores("", ["a", "b"]) == {"a": 0.0, "b": 0.0}
    assert index.scores("devices", ["zzz"]) == {}
