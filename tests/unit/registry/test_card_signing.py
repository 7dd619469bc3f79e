"""Cards signed by ``CardSigner``: each distinct content signed once, a changed card anew.

The signatures are checked with a2a-sdk's verifier and the signer's public key; what the served
cards carry, on every binding, is tests/integration/test_signed_cards.py's.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jwt
import pytest
from a2a.types import AgentCard
from a2a.utils.signing import InvalidSignaturesError, create_signature_verifier

from agent.registry.cards import CardFactory
from agent.registry.loader import load_registry
from agent.security.auth import SigningKey, load_or_create_signing_key
from agent.security.card_signatures import CardSigner
from netops.deployment import IDENTITY, SKILLS_DIR
from tests.registry_view import copy_demo_skills, identity

BASE = "https://agent.example.net"
JWKS = BASE + "/.well-known/jwks.json"


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> SigningKey:
    return load_or_create_signing_key(tmp_path_factory.mktemp("key"))


def verify(card: AgentCard, key: SigningKey) -> None:
    public = jwt.PyJWK(key.public_jwk)
    create_signature_verifier(lambda kid, jku: public, ["ES256"])(card)


def factory(root: Path, key: SigningKey) -> CardFactory:
    return CardFactory(load_registry(root), BASE, identity=IDENTITY, signer=CardSigner(key, JWKS))


def edit_manifest(root: Path, skill: str, **members: Any) -> None:
    path = root / skill / "manifest.json"
    data = json.loads(path.read_text())
    data.update(members)
    path.write_text(json.dumps(data, indent=2))


def test_a_card_is_signed_once_and_left_as_it_was(key: SigningKey) -> None:
    signer = CardSigner(key, JWKS)
    unsigned = CardFactory(load_registry(SKILLS_DIR), BASE, identity=IDENTITY).public_card
    signed = signer(unsigned)
    assert not unsigned.signatures  # the factory's card is not changed
    assert len(signed.signatures) == 1
    verify(signed, key)
    copy = AgentCard()
    copy.CopyFrom(unsigned)
    assert signer(copy) is signed  # the same content: the same signature (ES256 is randomized)
    assert signer(signed) is signed  # a signed card is not signed twice


@pytest.mark.parametrize(
    "change",
    ["skill removed", "skill deprecated", "skill now public", "description changed"],
)
def test_a_changed_registry_gets_cards_signed_anew(
    tmp_path: Path, key: SigningKey, change: str
) -> None:
    before = factory(copy_demo_skills(SKILLS_DIR, tmp_path / "before"), key)
    root = copy_demo_skills(SKILLS_DIR, tmp_path / "after")
    if change == "skill removed":
        shutil.rmtree(root / "plan_link_upgrade")
    elif change == "skill deprecated":
        edit_manifest(
            root, "plan_link_upgrade", state="deprecated", replacement="check_link_capacity"
        )
    elif change == "skill now public":
        edit_manifest(root, "check_link_capacity", visibility="public")
    else:
        path = root / "lookup_inventory" / "manifest.json"
        data = json.loads(path.read_text())
        data["skill"]["description"] = "Lists the inventory, in other words."
        path.write_text(json.dumps(data, indent=2))
    after = factory(root, key)
    paula = identity("paula")
    pairs = [(before.public_card, after.public_card)]
    pairs.append((before.extended_card(paula), after.extended_card(paula)))
    changed = [(old, new) for old, new in pairs if old.version != new.version]
    assert changed, "the change shows in a card"
    for old, new in changed:
        verify(new, key)
        assert new.signatures != old.signatures
        stale = AgentCard()
        stale.CopyFrom(new)
        stale.ClearField("signatures")
        stale.signatures.extend(old.signatures)  # the old card's signature on the new card
        with pytest.raises(InvalidSignaturesError):
            verify(stale, key)


def test_callers_whose_cards_list_the_same_skills_share_one_signature(key: SigningKey) -> None:
    cards = factory(SKILLS_DIR, key)
    alice, carl = cards.extended_card(identity("alice")), cards.extended_card(identity("carl"))
    assert alice.signatures == carl.signatures
    assert cards.extended_card(identity("vic")).signatures != alice.signatures
