"""The network agent words the core's skills as it did when the core carried its words: its
brand is its identity's slug, and describe_skill's URIs, owner, card example and utterances are
the ones its released interface (``skills/interfaces.lock.json``) and routing model were made of."""

from __future__ import annotations

import json

from agent.builtin.conformance import CONFORMANCE_SKILLS_DIR
from agent.registry.loader import load_registry
from agent.registry.manifests import builtin_words
from agent.registry.versioning import LOCK_FILE, lock_problems
from netops.deployment import SKILLS_DIR
from netops.identity import IDENTITY


def test_the_brand_is_the_identitys_slug() -> None:
    assert builtin_words(SKILLS_DIR).brand == IDENTITY.slug == "netops-agent"


def test_describe_skill_is_the_one_the_network_agent_released() -> None:
    registry = load_registry(SKILLS_DIR)
    manifest = registry.get("describe_skill").manifest  # type: ignore[union-attr]
    assert (
        manifest.interface["input"]["schema_uri"] == "urn:netops-agent:schema:describe-skill:input"
    )
    assert manifest.owner == "netops-agent maintainers"
    assert manifest.skill["examples"] == ("Describe the interface of lookup_inventory.",)
    words = json.loads((SKILLS_DIR / "builtin.json").read_text("utf-8"))
    assert manifest.utterances == tuple(words["skills"]["describe_skill"]["utterances"])
    assert len(manifest.utterances) == 45
    assert lock_problems(registry, SKILLS_DIR / LOCK_FILE) == []


def test_the_conformance_skill_keeps_its_uris() -> None:
    registry = load_registry(CONFORMANCE_SKILLS_DIR, builtin=False, words_from=SKILLS_DIR)
    manifest = registry.get("tck_conformance").manifest  # type: ignore[union-attr]
    assert (
        manifest.interface["input"]["schema_uri"] == "urn:netops-agent:schema:tck-conformance:input"
    )
