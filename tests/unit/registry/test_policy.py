"""The one entitlement decision, for every demo manifest and every kind of caller.

Each row is written out: (visible, entitled) per skill and principal, and publicly_visible
per skill. Nothing here is derived from the policy under test.
"""

from __future__ import annotations

import pytest

from agent.registry.loader import load_registry
from agent.registry.manifest import Manifest
from agent.registry.policy import entitled, publicly_visible, visible
from agent.security.principal import ANONYMOUS, Principal
from netops.deployment import SKILLS_DIR
from tests.conftest import IDENTITIES
from tests.registry_view import DEMO_SKILLS


def principal(name: str) -> Principal:
    tenant, scopes = IDENTITIES[name]
    return Principal(subject=name, tenant=tenant, scopes=frozenset(scopes))


PRINCIPALS: dict[str, Principal] = {
    "anonymous": ANONYMOUS,
    "alice": principal("alice"),  # acme: inventory.read assurance.read capacity.read
    "vic": principal("vic"),  # acme: inventory.read only
    "paula": principal("paula"),  # acme: ... capacity.plan preview
    "carl": principal("carl"),  # acme: ... capacity.plan, no preview
    "gary": principal("gary"),  # globex: everything, preview too
}

V, E = "visible", "entitled"
# skill -> principal -> set of what holds; an absent flag means False.
EXPECTED: dict[str, dict[str, set[str]]] = {
    "describe_skill": {
        "anonymous": {V, E},
        "alice": {V, E},
        "vic": {V, E},
        "paula": {V, E},
        "carl": {V, E},
        "gary": {V, E},
    },
    "lookup_inventory": {
        "anonymous": {V},  # listed so a caller learns the scope to ask for; not usable
        "alice": {V, E},
        "vic": {V, E},
        "paula": {V, E},
        "carl": {V, E},
        "gary": {V, E},
    },
    "evaluate_resource_condition": {
        "anonymous": set(),
        "alice": {V, E},
        "vic": set(),
        "paula": {V, E},
        "carl": {V, E},
        "gary": {V, E},
    },
    "check_link_capacity": {
        "anonymous": set(),
        "alice": {V, E},
        "vic": set(),
        "paula": {V, E},
        "carl": {V, E},
        "gary": {V, E},
    },
    "link_headroom": {  # deprecated, extended, capacity.read
        "anonymous": set(),
        "alice": {V, E},
        "vic": set(),
        "paula": {V, E},
        "carl": {V, E},
        "gary": {V, E},
    },
    "plan_link_upgrade": {  # preview, extended, capacity.plan, tenant acme only
        "anonymous": set(),
        "alice": set(),
        "vic": set(),
        "paula": {V, E},
        "carl": set(),  # no preview scope
        "gary": set(),  # wrong tenant, whatever the scopes
    },
    "port_report": {  # removed: never, for anyone
        "anonymous": set(),
        "alice": set(),
        "vic": set(),
        "paula": set(),
        "carl": set(),
        "gary": set(),
    },
}

PUBLIC: dict[str, bool] = {
    "describe_skill": True,
    "lookup_inventory": True,
    "evaluate_resource_condition": False,
    "check_link_capacity": False,
    "link_headroom": False,
    "plan_link_upgrade": False,
    "port_report": False,
}

MANIFESTS: dict[str, Manifest] = {m.id: m for m in load_registry(SKILLS_DIR).manifests}


def test_the_tables_cover_every_demo_manifest_and_principal() -> None:
    assert set(EXPECTED) == set(PUBLIC) == DEMO_SKILLS  # a fork's own skills are not tabled here
    assert set(MANIFESTS) >= DEMO_SKILLS
    for row in EXPECTED.values():
        assert set(row) == set(PRINCIPALS)


@pytest.mark.parametrize(
    ("skill", "who", "expected"),
    [
        pytest.param(skill, who, flags, id=f"{skill}-{who}")
        for skill, row in EXPECTED.items()
        for who, flags in row.items()
    ],
)
def test_visible_and_entitled(skill: str, who: str, expected: set[str]) -> None:
    manifest, caller = MANIFESTS[skill], PRINCIPALS[who]
    assert visible(manifest, caller) is (V in expected)
    assert entitled(manifest, caller) is (E in expected)


@pytest.mark.parametrize(("skill", "expected"), sorted(PUBLIC.items()))
def test_publicly_visible(skill: str, expected: bool) -> None:
    assert publicly_visible(MANIFESTS[skill]) is expected


def test_entitled_never_exceeds_visible() -> None:
    """Whatever a caller may run, its card lists (cards and executor cannot drift apart)."""
    for manifest in MANIFESTS.values():
        for caller in PRINCIPALS.values():
            if entitled(manifest, caller):
                assert visible(manifest, caller), (manifest.id, caller)


def test_removed_is_never_visible_even_with_every_scope_and_tenant() -> None:
    everything = Principal(
        subject="root",
        tenant="acme",
        scopes=frozenset({"inventory.read", "capacity.plan", "preview", "admin", "*"}),
    )
    port_report = MANIFESTS["port_report"]
    assert not visible(port_report, everything)
    assert not entitled(port_report, everything)


def test_an_authenticated_caller_without_scopes() -> None:
    nobody = Principal(subject="nobody", tenant="acme", scopes=frozenset())
    assert entitled(MANIFESTS["describe_skill"], nobody)
    assert visible(MANIFESTS["lookup_inventory"], nobody)
    assert not entitled(MANIFESTS["lookup_inventory"], nobody)
    assert not visible(MANIFESTS["check_link_capacity"], nobody)


def test_preview_alone_does_not_open_plan_link_upgrade() -> None:
    preview_only = Principal(subject="p", tenant="acme", scopes=frozenset({"preview"}))
    assert not visible(MANIFESTS["plan_link_upgrade"], preview_only)
    assert not entitled(MANIFESTS["plan_link_upgrade"], preview_only)


def test_the_tenant_comes_from_the_principal_only() -> None:
    """A tenant-less principal holding every scope still is not an acme caller."""
    no_tenant = Principal(subject="x", tenant=None, scopes=frozenset({"capacity.plan", "preview"}))
    assert not entitled(MANIFESTS["plan_link_upgrade"], no_tenant)
    assert not visible(MANIFESTS["plan_link_upgrade"], no_tenant)
