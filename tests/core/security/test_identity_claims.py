"""What a valid ``sub`` and ``tenant`` are (docs/security.md#identity-claims), refused as a class.

Every refusal is a TokenError whose description is one fixed sentence (it never holds the
claim); every identity the policy accepts has an owner key no other identity has.
"""

from __future__ import annotations

import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

import jwt
import pytest

from agent.base.settings import Settings
from agent.security.auth import (
    MAX_SUBJECT_CHARS,
    MAX_TENANT_CHARS,
    SIGNING_ALGORITHM,
    SigningKey,
    TokenError,
    TokenVerifier,
    load_or_create_signing_key,
)
from agent.security.principal import Principal
from agent.storage.recovery import Runner

SUBJECT_REFUSED = (
    f"token subject must be 1 to {MAX_SUBJECT_CHARS} printable characters in NFC, "
    "without surrounding whitespace"
)
TENANT_REFUSED = f"token tenant must be 1 to {MAX_TENANT_CHARS} characters of A-Z a-z 0-9 . _ -"

WHITESPACE = [
    chr(c)
    for c in range(sys.maxunicode + 1)
    if chr(c).isspace() or unicodedata.category(chr(c)) in ("Zs", "Zl", "Zp")
]
"""Every Unicode whitespace character (Python's idea of it and the Z categories')."""
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u180e", "\u00ad"]
"""Format characters that look like nothing or like a space."""
BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
BIDI += ["\u200e", "\u200f", "\u061c"]
CONTROL = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]
"""Every Cc character, NUL included."""
OTHER = ["\ud800", "\udfff", "\ue000", "\U000f0000", "\u0378", "\U000e0001"]
"""Surrogates, private use, unassigned, a tag character."""
NOT_STRINGS: list[Any] = [7, 7.5, True, [], ["alice"], {"sub": "alice"}]


def _name(char: str) -> str:
    return f"U+{ord(char):04X}"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture
def key(settings: Settings) -> SigningKey:
    return load_or_create_signing_key(settings.home)


@pytest.fixture
def verifier(settings: Settings, key: SigningKey) -> TokenVerifier:
    return TokenVerifier(settings, key)


def token(settings: Settings, key: SigningKey, **claims: Any) -> str:
    now = int(time.time())
    body = {
        "iss": settings.issuer,
        "aud": settings.audience,
        "sub": "alice",
        "tenant": "acme",
        "scope": "inventory.read",
        "iat": now,
        "exp": now + 600,
        **claims,
    }
    return jwt.encode(body, key.private_key, algorithm=SIGNING_ALGORITHM, headers={"kid": key.kid})


def refused(verifier: TokenVerifier, settings: Settings, key: SigningKey, **claims: Any) -> str:
    with pytest.raises(TokenError) as refusal:
        verifier.verify(token(settings, key, **claims))
    return refusal.value.description


def bad_subjects() -> list[Any]:
    cases: list[Any] = ["", *NOT_STRINGS, "s" * (MAX_SUBJECT_CHARS + 1), "e\u0301"]
    for char in WHITESPACE:
        cases += [char, char * 3, f"{char}alice", f"alice{char}"]
        if char != " ":
            cases.append(f"ali{char}ce")
    for char in INVISIBLE + BIDI + CONTROL + OTHER:
        cases += [char, f"ali{char}ce", f"alice{char}"]
    return cases


def bad_tenants() -> list[Any]:
    cases: list[Any] = ["", *NOT_STRINGS, "t" * (MAX_TENANT_CHARS + 1)]
    cases += ["acme:bob", "acme/bob", "acme|bob", "acme%3Abob", "acme\uff1abob", "acm\u00e9"]
    cases += ["acme bob", "acme\\bob", "acme@bob", "\u0430cme"]  # Cyrillic a
    for char in WHITESPACE + INVISIBLE + BIDI + CONTROL + OTHER:
        cases += [char, f"ac{char}me", f"acme{char}"]
    return cases


def test_the_classes_are_complete() -> None:
    """The whitespace class holds the characters the issue found and every Z character."""
    assert {" ", "\u00a0", "\u3000", "\u2028", "\u2029", "\t", "\x1f"} <= set(WHITESPACE)
    assert len(WHITESPACE) >= 25


@pytest.mark.parametrize("subject", bad_subjects(), ids=repr)
def test_a_subject_outside_the_policy_is_refused_with_a_fixed_reason(
    settings: Settings, key: SigningKey, verifier: TokenVerifier, subject: Any
) -> None:
    assert refused(verifier, settings, key, sub=subject) == SUBJECT_REFUSED


@pytest.mark.parametrize("tenant", bad_tenants(), ids=repr)
def test_a_tenant_outside_the_policy_is_refused_with_a_fixed_reason(
    settings: Settings, key: SigningKey, verifier: TokenVerifier, tenant: Any
) -> None:
    assert refused(verifier, settings, key, tenant=tenant) == TENANT_REFUSED


def test_a_missing_tenant_is_named_as_missing(
    settings: Settings, key: SigningKey, verifier: TokenVerifier
) -> None:
    assert refused(verifier, settings, key, tenant=None) == "token has no tenant claim"
    claims = jwt.decode(token(settings, key), options={"verify_signature": False})
    del claims["tenant"]
    signed = jwt.encode(
        claims, key.private_key, algorithm=SIGNING_ALGORITHM, headers={"kid": key.kid}
    )
    with pytest.raises(TokenError) as refusal:
        verifier.verify(signed)
    assert refusal.value.description == "token has no tenant claim"


GOOD_SUBJECTS = [
    "alice",
    "bob:x",
    ":x",
    "agent:peer",
    "a/b",
    "a|b",
    "100%",
    "a%3Ab",
    "bob\uff1ax",
    "Zo\u00eb",
    "alice smith",
    "user@example.com",
    "auth0|5f7c8ec7c33c6c004bbafe82",
    "\U0001f600",
    "s" * MAX_SUBJECT_CHARS,
    "\u00e9" * MAX_SUBJECT_CHARS,
]
GOOD_TENANTS = ["acme", "globex", "a", "a.b_c-D9", "-", "t" * MAX_TENANT_CHARS]


@pytest.mark.parametrize("subject", GOOD_SUBJECTS, ids=repr)
def test_a_subject_inside_the_policy_is_accepted_as_it_is(
    settings: Settings, key: SigningKey, verifier: TokenVerifier, subject: str
) -> None:
    principal = verifier.verify(token(settings, key, sub=subject))
    assert principal.subject == subject


@pytest.mark.parametrize("tenant", GOOD_TENANTS, ids=repr)
def test_a_tenant_inside_the_policy_is_accepted_as_it_is(
    settings: Settings, key: SigningKey, verifier: TokenVerifier, tenant: str
) -> None:
    assert verifier.verify(token(settings, key, tenant=tenant)).tenant == tenant


# -- the owner key ----------------------------------------------------------------------------

ADVERSARIAL = [
    "",
    ":",
    "::",
    "a",
    "a:",
    ":a",
    "a:b",
    "a:b:c",
    "1:a",
    "4:acme",
    "acme",
    "acme:bob",
    "bob:x",
    "bob",
    "x",
    "a/b",
    "a|b",
    "a%3Ab",
    "%",
    "\x00",
    "a\x00b",
    "bob\uff1ax",
    " ",
    "\u3000",
    "s" * 300,
    "\U0001f600:",
]


def test_the_owner_key_is_injective() -> None:
    """No two (tenant, subject) pairs share an owner key, whatever their characters."""
    pairs = [(tenant, subject) for tenant in ADVERSARIAL for subject in ADVERSARIAL if subject]
    keys = {Principal(subject=s, tenant=t, scopes=frozenset()).owner: (t, s) for t, s in pairs}
    assert len(keys) == len(pairs)
    assert "" not in keys, "the empty key is the anonymous caller's"


def test_the_owner_key_reads_back() -> None:
    """What a task's audit row names when no runner row says more (agent/storage/recovery.py)."""
    for tenant in ADVERSARIAL:
        for subject in ADVERSARIAL:
            if subject:
                owner = Principal(subject=subject, tenant=tenant, scopes=frozenset()).owner
                assert Runner.of_owner(owner) == Runner(subject, tenant or None), owner


def test_the_longest_identity_fits_the_owner_column() -> None:
    longest = Principal(
        subject="s" * MAX_SUBJECT_CHARS, tenant="t" * MAX_TENANT_CHARS, scopes=frozenset()
    )
    assert len(longest.owner) <= 255
