"""Bearer tokens: what the embedded issuer signs verifies, and every forgery is refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from agent.base.settings import Settings
from agent.security.auth import (
    MAX_TOKEN_BYTES,
    SIGNING_ALGORITHM,
    SigningKey,
    TokenError,
    TokenVerifier,
    issue_token,
    load_or_create_signing_key,
)
from agent.security.identity import TENANT_REFUSED


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_json(value: Any) -> str:
    return b64url(json.dumps(value, separators=(",", ":")).encode())


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture
def key(settings: Settings) -> SigningKey:
    return load_or_create_signing_key(settings.home)


@pytest.fixture
def verifier(settings: Settings, key: SigningKey) -> TokenVerifier:
    return TokenVerifier(settings, key)


def good_claims(settings: Settings, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": settings.issuer,
        "aud": settings.audience,
        "sub": "alice",
        "tenant": "acme",
        "scope": "inventory.read",
        "iat": now,
        "nbf": now,
        "exp": now + 600,
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def sign(key: SigningKey, claims: dict[str, Any]) -> str:
    return jwt.encode(
        claims, key.private_key, algorithm=SIGNING_ALGORITHM, headers={"kid": key.kid}
    )


def refusal(verifier: TokenVerifier, token: str) -> str:
    with pytest.raises(TokenError) as caught:
        verifier.verify(token)
    assert str(caught.value) == caught.value.description
    return caught.value.description


# -- the round trip ---------------------------------------------------------------------------


def test_issued_token_verifies_into_the_principal(
    settings: Settings, key: SigningKey, verifier: TokenVerifier
) -> None:
    token = issue_token(
        key,
        settings,
        subject="alice",
        tenant="acme",
        scopes=["inventory.read", "capacity.read", "inventory.read"],
    )
    principal = verifier.verify(token)
    assert principal.subject == "alice"
    assert principal.tenant == "acme"
    assert principal.scopes == frozenset({"inventory.read", "capacity.read"})
    assert principal.authenticated
    assert principal.owner == "4:acme:alice"
    assert principal.token == token
    assert token not in repr(principal)


def test_issued_token_header_and_claims(settings: Settings, key: SigningKey) -> None:
    token = issue_token(key, settings, subject="vic", tenant="acme", scopes=[], ttl_seconds=120)
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "ES256"
    assert header["kid"] == key.kid
    claims = jwt.decode(token, options={"verify_signature": False})
    assert claims["iss"] == "netagent-embedded"
    assert claims["aud"] == "netagent"
    assert claims["scope"] == ""
    assert claims["exp"] - claims["iat"] == 120


def test_the_key_survives_a_restart(settings: Settings, key: SigningKey) -> None:
    again = load_or_create_signing_key(settings.home)
    assert again.kid == key.kid
    token = issue_token(key, settings, subject="alice", tenant="acme", scopes=["x"])
    assert TokenVerifier(settings, again).verify(token).subject == "alice"
    assert (settings.home / "signing-key.pem").stat().st_mode & 0o777 == 0o600


def test_an_empty_scope_claim_means_no_scopes(
    settings: Settings, key: SigningKey, verifier: TokenVerifier
) -> None:
    token = sign(key, good_claims(settings, scope=None))
    assert verifier.verify(token).scopes == frozenset()


# -- refusals ---------------------------------------------------------------------------------


def test_expired_token(settings: Settings, key: SigningKey, verifier: TokenVerifier) -> None:
    token = issue_token(key, settings, subject="a", tenant="acme", scopes=[], ttl_seconds=-3600)
    assert refusal(verifier, token) == "token has expired"


def test_token_signed_with_exp_in_the_past(
    settings: Settings, key: SigningKey, verifier: TokenVerifier
) -> None:
    past = int(time.time()) - 7200
    token = sign(key, good_claims(settings, iat=past - 60, nbf=past - 60, exp=past))
    assert refusal(verifier, token) == "token has expired"


def test_wrong_audience(settings: Settings, key: SigningKey, verifier: TokenVerifier) -> None:
    token = sign(key, good_claims(settings, aud="another-agent"))
    assert refusal(verifier, token) == "token is for another audience"


def test_wrong_audience_via_settings(key: SigningKey, settings: Settings) -> None:
    other = Settings(home=settings.home, audience="another-agent")
    token = issue_token(key, other, subject="a", tenant="acme", scopes=[])
    assert refusal(TokenVerifier(settings, key), token) == "token is for another audience"


def test_wrong_issuer(settings: Settings, key: SigningKey, verifier: TokenVerifier) -> None:
    token = sign(key, good_claims(settings, iss="https://evil.example.net"))
    assert refusal(verifier, token) == "token is from an unknown issuer"


def test_tampered_payload(settings: Settings, key: SigningKey, verifier: TokenVerifier) -> None:
    token = issue_token(key, settings, subject="alice", tenant="acme", scopes=["inventory.read"])
    header, payload, signature = token.split(".")
    claims = json.loads(unb64url(payload))
    claims["tenant"] = "globex"
    claims["scope"] = "inventory.read capacity.plan preview"
    forged = f"{header}.{b64url_json(claims)}.{signature}"
    assert refusal(verifier, forged) == "token signature or claims are invalid"


def test_tampered_signature(settings: Settings, key: SigningKey, verifier: TokenVerifier) -> None:
    token = issue_token(key, settings, subject="alice", tenant="acme", scopes=[])
    header, payload, signature = token.split(".")
    raw = bytearray(unb64url(signature))
    raw[0] ^= 0x01
    assert refusal(verifier, f"{header}.{payload}.{b64url(bytes(raw))}") == (
        "token signature or claims are invalid"
    )


def test_signed_by_another_key(tmp_path: Path, settings: Settings, verifier: TokenVerifier) -> None:
    stranger = load_or_create_signing_key(tmp_path / "another-home")
    token = issue_token(stranger, settings, subject="alice", tenant="acme", scopes=["x"])
    assert refusal(verifier, token) == "token signature or claims are invalid"


def test_alg_none(settings: Settings, verifier: TokenVerifier) -> None:
    token = f"{b64url_json({'alg': 'none', 'typ': 'JWT'})}.{b64url_json(good_claims(settings))}."
    assert refusal(verifier, token) == "token algorithm is not accepted"


def test_alg_none_spelled_otherwise(settings: Settings, verifier: TokenVerifier) -> None:
    for alg in ("None", "NONE", ""):
        token = f"{b64url_json({'alg': alg})}.{b64url_json(good_claims(settings))}."
        assert refusal(verifier, token) == "token algorithm is not accepted", alg


def test_hs256_signed_with_the_public_key_bytes(
    settings: Settings, key: SigningKey, verifier: TokenVerifier
) -> None:
    """Algorithm confusion: the verifier's public key used as an HMAC secret."""
    public_pem = key.private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input = (
        f"{b64url_json({'alg': 'HS256', 'typ': 'JWT', 'kid': key.kid})}."
        f"{b64url_json(good_claims(settings, scope='inventory.read capacity.plan preview'))}"
    )
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    assert refusal(verifier, f"{signing_input}.{b64url(mac)}") == "token algorithm is not accepted"


def test_no_tenant_claim(settings: Settings, key: SigningKey, verifier: TokenVerifier) -> None:
    token = sign(key, good_claims(settings, tenant=None))
    assert refusal(verifier, token) == "token has no tenant claim"


@pytest.mark.parametrize("tenant", ["", 7, ["acme"]])
def test_tenant_claim_that_is_no_slug(
    settings: Settings, key: SigningKey, verifier: TokenVerifier, tenant: Any
) -> None:
    token = sign(key, good_claims(settings, tenant=tenant))
    assert refusal(verifier, token) == TENANT_REFUSED


@pytest.mark.parametrize("scope", [["inventory.read"], 1, {"inventory.read": True}])
def test_non_string_scope(
    settings: Settings, key: SigningKey, verifier: TokenVerifier, scope: Any
) -> None:
    token = sign(key, good_claims(settings, scope=scope))
    assert refusal(verifier, token) == "token scope claim must be a space-separated string"


def test_non_string_scope_via_extra_claims(
    settings: Settings, key: SigningKey, verifier: TokenVerifier
) -> None:
    token = issue_token(
        key,
        settings,
        subject="a",
        tenant="acme",
        scopes=[],
        extra_claims={"scope": ["inventory.read", "capacity.plan"]},
    )
    assert refusal(verifier, token) == "token scope claim must be a space-separated string"


@pytest.mark.parametrize("missing", ["exp", "iss", "aud", "sub"])
def test_required_claims(
    settings: Settings, key: SigningKey, verifier: TokenVerifier, missing: str
) -> None:
    claims = good_claims(settings)
    claims.pop(missing)
    assert refusal(verifier, sign(key, claims)) == "token signature or claims are invalid"


def test_not_yet_valid(settings: Settings, key: SigningKey, verifier: TokenVerifier) -> None:
    later = int(time.time()) + 3600
    token = sign(key, good_claims(settings, nbf=later, exp=later + 600))
    assert refusal(verifier, token) == "token signature or claims are invalid"


@pytest.mark.parametrize(
    "garbage",
    ["", "garbage", "a.b.c", "....", "eyJhbGciOiJFUzI1NiJ9", "%%%.%%%.%%%", "Bearer x"],
)
def test_garbage(verifier: TokenVerifier, garbage: str) -> None:
    assert refusal(verifier, garbage) == "token is malformed"


def test_oversized_token_is_refused_before_parsing(
    settings: Settings, key: SigningKey, verifier: TokenVerifier
) -> None:
    token = issue_token(
        key,
        settings,
        subject="alice",
        tenant="acme",
        scopes=["inventory.read"],
        extra_claims={"padding": "x" * MAX_TOKEN_BYTES},
    )
    assert len(token) > MAX_TOKEN_BYTES
    assert refusal(verifier, token) == "token is too large"
    assert refusal(verifier, "x" * (MAX_TOKEN_BYTES + 1)) == "token is too large"


def test_a_token_just_under_the_size_limit_still_verifies(
    settings: Settings, key: SigningKey, verifier: TokenVerifier
) -> None:
    token = issue_token(
        key,
        settings,
        subject="alice",
        tenant="acme",
        scopes=[],
        extra_claims={"padding": "x" * (MAX_TOKEN_BYTES // 2)},
    )
    assert len(token) <= MAX_TOKEN_BYTES
    assert verifier.verify(token).subject == "alice"
