"""Card projections: what the public card lists, what each extended card lists, and versions.

They are about the demo skills, so they load a copy of skills/ holding only those: a fork's
own skills neither appear here nor shift anything (the committed public-card snapshot is the
guard that notices them, tests/unit/registry/test_public_card_snapshot.py).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from agent.interfaces import EXTENSION_URI, INTERFACE_VERSION
from agent.registry.cards import CardFactory, card_to_json
from agent.registry.loader import Registry, load_registry
from agent.security.principal import Principal
from netops.deployment import IDENTITY, SKILLS_DIR
from tests.registry_view import copy_demo_skills, identity

BASE = "https://netops.example.net/agent"
PUBLIC_IDS = ["describe_skill", "lookup_inventory"]
EXTENDED_ONLY = [
    "check_link_capacity",
    "evaluate_resource_condition",
    "link_headroom",
    "plan_link_upgrade",
    "port_report",
]


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return load_registry(copy_skills(tmp_path_factory.mktemp("demo")))


@pytest.fixture(scope="module")
def factory(registry: Registry) -> CardFactory:
    return CardFactory(registry, BASE + "/", identity=IDENTITY)


def copy_skills(tmp_path: Path) -> Path:
    return copy_demo_skills(SKILLS_DIR, tmp_path / "skills")


def edit_skill_block(root: Path, skill: str, **members: Any) -> None:
    path = root / skill / "manifest.json"
    data = json.loads(path.read_text())
    data["skill"].update(members)
    path.write_text(json.dumps(data, indent=2))


def skill_ids(card: dict[str, Any]) -> list[str]:
    return [s["id"] for s in card["skills"]]


def bindings(card: dict[str, Any]) -> list[dict[str, str]]:
    (extension,) = [e for e in card["capabilities"]["extensions"] if e["uri"] == EXTENSION_URI]
    assert extension["params"]["interface_version"] == INTERFACE_VERSION
    return extension["params"]["skills"]


def registry_bindings(registry: Registry, ids: list[str]) -> list[dict[str, str]]:
    result = []
    for skill_id in ids:
        capability = registry.get(skill_id)
        assert capability is not None and capability.interface is not None
        result.append(
            {
                "skill_id": skill_id,
                "skill_version": capability.interface.skill_version,
                "interface_digest": capability.interface.interface_digest,
            }
        )
    return result


# -- the public card --------------------------------------------------------------------------


def test_public_card_lists_exactly_the_public_skills(factory: CardFactory) -> None:
    card = card_to_json(factory.public_card)
    assert skill_ids(card) == PUBLIC_IDS


def test_public_extension_binds_exactly_the_listed_skills(
    factory: CardFactory, registry: Registry
) -> None:
    card = card_to_json(factory.public_card)
    assert bindings(card) == registry_bindings(registry, PUBLIC_IDS)
    (extension,) = card["capabilities"]["extensions"]
    assert extension.get("required", False) is False


def test_nothing_extended_leaks_into_the_public_card(factory: CardFactory) -> None:
    """No id (or scope) of a skill the public card does not list appears anywhere in it."""
    text = json.dumps(card_to_json(factory.public_card))
    secrets = [*EXTENDED_ONLY, "assurance.read", "capacity.read", "capacity.plan", "preview"]
    leaked = [word for word in secrets if word in text]
    assert leaked == []


def test_public_card_capabilities_and_security(factory: CardFactory) -> None:
    card = card_to_json(factory.public_card)
    assert card["capabilities"]["extendedAgentCard"] is True
    assert card["capabilities"]["streaming"] is True
    assert card["securitySchemes"] == {
        "bearer": {
            "httpAuthSecurityScheme": {
                "scheme": "bearer",
                "bearerFormat": "JWT",
                "description": "JWT with sub, tenant and scope (space-separated) claims.",
            }
        }
    }
    by_id = {s["id"]: s for s in card["skills"]}
    assert "securityRequirements" not in by_id["describe_skill"]
    assert by_id["lookup_inventory"]["securityRequirements"] == [
        {"schemes": {"bearer": {"list": ["inventory.read"]}}}
    ]


def test_both_interfaces_carry_the_public_url(factory: CardFactory) -> None:
    card = card_to_json(factory.public_card)
    assert card["supportedInterfaces"] == [
        {"url": f"{BASE}/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": f"{BASE}/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ]
    assert card["provider"] == {"organization": "netops-agent", "url": BASE}


def test_public_card_skill_blocks_come_from_the_manifests(
    factory: CardFactory, registry: Registry
) -> None:
    card = card_to_json(factory.public_card)
    for block in card["skills"]:
        manifest = registry.get(block["id"]).manifest  # type: ignore[union-attr]
        assert block["name"] == manifest.skill["name"]
        assert block["description"] == manifest.skill["description"]
        assert block["tags"] == list(manifest.skill["tags"])
        assert block["examples"] == list(manifest.skill["examples"])


@pytest.mark.parametrize("who", [None, "alice", "paula"])
def test_the_card_renders_as_the_sdks_agent_card_to_dict(
    factory: CardFactory, registry: Registry, who: str | None
) -> None:
    """card_to_json renders without the SDK's server side (agent/registry/cards.py): the same
    document as the SDK's own agent_card_to_dict, with a gRPC interface too."""
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict

    from agent.edge.json_numbers import integral_numbers

    with_grpc = CardFactory(registry, BASE, identity=IDENTITY, grpc_url="h:50051")
    for source in (factory, with_grpc):
        card = source.public_card if who is None else source.extended_card(identity(who))
        assert card_to_json(card) == integral_numbers(agent_card_to_dict(card))


def test_a_card_with_a_v0_3_interface_gets_the_sdks_v0_3_fields(factory: CardFactory) -> None:
    """Only a card of ours speaks 1.0 alone; any other goes through the SDK's rendering, which
    merges the v0.3 layout (url, preferredTransport, ...) in."""
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.types import AgentCard, AgentInterface

    card = AgentCard()
    card.CopyFrom(factory.public_card)
    card.supported_interfaces.insert(
        0, AgentInterface(url=f"{BASE}/v03", protocol_binding="JSONRPC", protocol_version="0.3")
    )
    rendered = card_to_json(card)
    assert rendered == agent_card_to_dict(card)
    assert rendered["url"] == f"{BASE}/v03"


# -- extended cards ---------------------------------------------------------------------------

EXTENDED_IDS = {
    "alice": [
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
    ],
    "vic": ["describe_skill", "lookup_inventory"],
    "paula": [
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
        "plan_link_upgrade",
    ],
    "carl": [
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
    ],
    "gary": [
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
    ],
}


@pytest.mark.parametrize(("who", "expected"), sorted(EXTENDED_IDS.items()))
def test_extended_card_per_caller(
    factory: CardFactory, registry: Registry, who: str, expected: list[str]
) -> None:
    card = card_to_json(factory.extended_card(identity(who)))
    assert skill_ids(card) == expected
    assert bindings(card) == registry_bindings(registry, expected)
    assert "port_report" not in json.dumps(card)


def test_deprecated_skill_names_its_replacement_and_is_tagged(factory: CardFactory) -> None:
    card = card_to_json(factory.extended_card(identity("alice")))
    by_id = {s["id"]: s for s in card["skills"]}
    headroom = by_id["link_headroom"]
    assert headroom["description"].startswith("Deprecated: use 'check_link_capacity' instead. ")
    assert headroom["tags"] == ["capacity", "links", "deprecated"]
    for skill_id, block in by_id.items():
        if skill_id != "link_headroom":
            assert "deprecated" not in block["tags"], skill_id
            assert not block["description"].startswith("Deprecated"), skill_id
        assert "preview" not in block["tags"], skill_id


def test_preview_skill_is_tagged_preview(factory: CardFactory) -> None:
    card = card_to_json(factory.extended_card(identity("paula")))
    plan = next(s for s in card["skills"] if s["id"] == "plan_link_upgrade")
    assert plan["tags"] == ["capacity", "planning", "upgrade", "preview"]
    assert plan["securityRequirements"] == [{"schemes": {"bearer": {"list": ["capacity.plan"]}}}]


def test_the_extended_card_of_a_public_only_caller_equals_the_public_card(
    factory: CardFactory,
) -> None:
    vic = card_to_json(factory.extended_card(identity("vic")))
    assert vic == card_to_json(factory.public_card)


def test_extended_cards_are_cached_per_identity_shape(factory: CardFactory) -> None:
    first = factory.extended_card(identity("alice"))
    twin = Principal(subject="alice2", tenant="acme", scopes=identity("alice").scopes)
    assert factory.extended_card(twin) is first
    assert factory.extended_card(identity("carl")) is not first


# -- card versions ----------------------------------------------------------------------------


def test_card_version_is_stable_for_an_identical_registry(
    tmp_path: Path, factory: CardFactory
) -> None:
    copy = CardFactory(
        load_registry(copy_skills(tmp_path)), "http://127.0.0.1:8000", identity=IDENTITY
    )
    assert copy.public_card.version == factory.public_card.version
    assert copy.public_card.version.startswith("0.1.0+skills.")
    alice = identity("alice")
    assert copy.extended_card(alice).version == factory.extended_card(alice).version


@pytest.mark.parametrize("distribution", [None, "no-such-distribution"])
def test_the_release_is_the_identitys_distributions(
    registry: Registry, factory: CardFactory, distribution: str | None
) -> None:
    """The network agent's card begins with its distribution's version; an identity naming
    none, or one not installed (a fork run from its folder), begins with 0.0.0."""
    fork = CardFactory(registry, BASE, identity=replace(IDENTITY, distribution=distribution))
    assert factory.public_card.version.startswith(version("netops-agent") + "+skills.")
    assert fork.public_card.version.startswith("0.0.0+skills.")
    assert fork.release == "0.0.0"


def test_card_version_changes_with_a_public_skill(tmp_path: Path, factory: CardFactory) -> None:
    root = copy_skills(tmp_path)
    edit_skill_block(root, "lookup_inventory", description="Lists inventory, differently.")
    changed = CardFactory(load_registry(root), BASE, identity=IDENTITY)
    assert changed.public_card.version != factory.public_card.version
    assert changed.public_card.skills[1].description == "Lists inventory, differently."


def test_card_version_changes_with_a_public_skills_schema(
    tmp_path: Path, factory: CardFactory
) -> None:
    root = copy_skills(tmp_path)
    schema_path = root / "lookup_inventory" / "input.schema.json"
    schema = json.loads(schema_path.read_text())
    schema["properties"]["limit"]["maximum"] = 400
    schema_path.write_text(json.dumps(schema, indent=2))
    changed = CardFactory(load_registry(root), BASE, identity=IDENTITY)
    old_digest = bindings(card_to_json(factory.public_card))[1]["interface_digest"]
    new_digest = bindings(card_to_json(changed.public_card))[1]["interface_digest"]
    assert new_digest != old_digest
    assert changed.public_card.version != factory.public_card.version


def test_an_extended_only_change_leaves_the_public_card_alone(
    tmp_path: Path, factory: CardFactory
) -> None:
    root = copy_skills(tmp_path)
    edit_skill_block(root, "evaluate_resource_condition", description="Checks thresholds anew.")
    changed = CardFactory(load_registry(root), BASE + "/", identity=IDENTITY)
    assert card_to_json(changed.public_card) == card_to_json(factory.public_card)
    alice = identity("alice")
    assert changed.extended_card(alice).version != factory.extended_card(alice).version


def test_extended_card_version_differs_from_the_public_one(factory: CardFactory) -> None:
    assert factory.extended_card(identity("alice")).version != factory.public_card.version
    assert (
        factory.extended_card(identity("paula")).version
        != factory.extended_card(identity("alice")).version
    )


def test_a_registry_without_extended_skills_offers_no_extended_card(tmp_path: Path) -> None:
    root = copy_skills(tmp_path)
    for skill in ("check_link_capacity", "evaluate_resource_condition", "link_headroom"):
        shutil.rmtree(root / skill)
    shutil.rmtree(root / "plan_link_upgrade")
    card = card_to_json(CardFactory(load_registry(root), BASE, identity=IDENTITY).public_card)
    assert skill_ids(card) == PUBLIC_IDS
    assert card["capabilities"].get("extendedAgentCard", False) is False
