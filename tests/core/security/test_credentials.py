"""Token exchange: what a tool token says, what the exchange refuses, what the tool refuses."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from starlette.applications import Starlette
from starlette.routing import Route

from agent.base.settings import Settings
from agent.security.auth import (
    SIGNING_ALGORITHM,
    SigningKey,
    TokenError,
    TokenVerifier,
    issue_token,
)
from agent.security.auth import load_or_create_signing_key as load_key
from agent.security.credentials import (
    AGENT_SUBJECT,
    EXCHANGE_AUDIENCE,
    TOOL_ISSUER,
    TOOL_TOKEN_TTL_SECONDS,
    ExchangeError,
    IssuedToken,
    LocalIssuer,
    LocalTokenExchanger,
    RemoteTokenExchanger,
    ToolGrant,
    ToolTokenVerifier,
    scope_intersection,
)
from agent.security.oauth import token_endpoint
from agent.security.principal import ANONYMOUS, Principal

CALLER_SCOPES = ["inventory.read", "assurance.read"]
DECLARED = frozenset({"assurance.read", "capacity.read"})
CONTEXT = {
    "skill_id": "evaluate_resource_condition",
    "skill_version": "1.0",
    "interface_digest": "sha-256:abc",
    "task_id": "task-1",
}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_json(value: Any) -> str:
    return b64url(json.dumps(value, separators=(",", ":")).encode())


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def claims_of(token: str) -> dict[str, Any]:
    return jwt.decode(token, options={"verify_signature": False})


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture
def key(settings: Settings) -> SigningKey:
    return load_key(settings.home)


@pytest.fixture
def stranger(tmp_path: Path) -> SigningKey:
    """Another issuer's key: same algorithm, same claims, not ours."""
    return load_key(tmp_path / "stranger")


@pytest.fixture
def issuer(settings: Settings, key: SigningKey) -> LocalIssuer:
    return LocalIssuer(key, TokenVerifier(settings, key), audiences={"inventory"})


@pytest.fixture
def tool_verifier(key: SigningKey) -> ToolTokenVerifier:
    return ToolTokenVerifier("inventory", TOOL_ISSUER, key=key.private_key.public_key())


def caller_token(
    key: SigningKey,
    settings: Settings,
    subject: str = "alice",
    tenant: str = "acme",
    scopes: list[str] | None = None,
    **options: Any,
) -> str:
    return issue_token(
        key,
        settings,
        subject=subject,
        tenant=tenant,
        scopes=CALLER_SCOPES if scopes is None else scopes,
        **options,
    )


def principal(token: str, settings: Settings, key: SigningKey) -> Principal:
    return TokenVerifier(settings, key).verify(token)


def exchange(issuer: LocalIssuer, subject: str, **changes: Any) -> IssuedToken:
    arguments: dict[str, Any] = {
        "subject_token": subject,
        "actor_token": issuer.agent_credential(),
        "audience": "inventory",
        "scopes": DECLARED,
        "context": CONTEXT,
    }
    arguments.update(changes)
    return issuer.exchange_tokens(**arguments)


def refused(issuer: LocalIssuer, subject: str, **changes: Any) -> ExchangeError:
    with pytest.raises(ExchangeError) as caught:
        exchange(issuer, subject, **changes)
    return caught.value


def tool_claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": TOOL_ISSUER,
        "sub": "alice",
        "tenant": "acme",
        "aud": "inventory",
        "scope": "assurance.read",
        "act": {"sub": AGENT_SUBJECT},
        "iat": now,
        "nbf": now,
        "exp": now + 120,
        "jti": uuid.uuid4().hex,
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def sign(key: SigningKey, claims: dict[str, Any]) -> str:
    return jwt.encode(claims, key.private_key, SIGNING_ALGORITHM, {"kid": key.kid})


def tool_refusal(verifier: ToolTokenVerifier, token: str) -> str:
    with pytest.raises(TokenError) as caught:
        verifier.verify(token)
    return caught.value.description


# -- what an exchanged token says ----------------------------------------------------------------


def test_scope_intersection_never_exceeds_either_side() -> None:
    assert scope_intersection(CALLER_SCOPES, DECLARED) == frozenset({"assurance.read"})
    assert scope_intersection(["capacity.plan"], DECLARED) == frozenset()
    assert scope_intersection([], DECLARED) == frozenset()
    assert scope_intersection(DECLARED, DECLARED) == DECLARED


def test_exchange_issues_a_downscoped_token_for_the_caller(
    issuer: LocalIssuer, settings: Settings, key: SigningKey, tool_verifier: ToolTokenVerifier
) -> None:
    subject = caller_token(key, settings)
    before = int(time.time())
    issued = exchange(issuer, subject)
    after = int(time.time())
    claims = claims_of(issued.access_token)
    assert claims["iss"] == TOOL_ISSUER
    assert claims["sub"] == "alice"
    assert claims["tenant"] == "acme"
    assert claims["aud"] == "inventory"
    assert claims["scope"] == "assurance.read"
    assert claims["act"] == {"sub": AGENT_SUBJECT}
    assert before <= claims["iat"] <= after and claims["nbf"] == claims["iat"]
    assert before < claims["exp"] <= after + 300
    assert claims["exp"] - claims["iat"] == TOOL_TOKEN_TTL_SECONDS <= 300
    assert claims["ctx"] == CONTEXT
    assert claims["jti"] == issued.token_id
    assert issued.scopes == frozenset({"assurance.read"})
    assert issued.expires_in == TOOL_TOKEN_TTL_SECONDS
    header = jwt.get_unverified_header(issued.access_token)
    assert header["alg"] == SIGNING_ALGORITHM and header["kid"] == key.kid
    verified = tool_verifier.verify(issued.access_token)
    assert verified.subject == "alice" and verified.tenant == "acme"
    assert verified.scopes == frozenset({"assurance.read"})
    assert verified.actor_chain == (AGENT_SUBJECT,)
    assert verified.token_id == issued.token_id
    assert dict(verified.context) == CONTEXT


def test_the_tenant_comes_from_the_subject_token(
    issuer: LocalIssuer, settings: Settings, key: SigningKey
) -> None:
    subject = caller_token(key, settings, subject="gary", tenant="globex")
    claims = claims_of(exchange(issuer, subject).access_token)
    assert (claims["sub"], claims["tenant"]) == ("gary", "globex")


def test_every_exchange_has_its_own_token_id(
    issuer: LocalIssuer, settings: Settings, key: SigningKey
) -> None:
    subject = caller_token(key, settings)
    issued = [exchange(issuer, subject) for _ in range(25)]
    ids = {t.token_id for t in issued}
    assert len(ids) == 25
    assert ids == {claims_of(t.access_token)["jti"] for t in issued}
    assert len({t.access_token for t in issued}) == 25


def test_absent_context_values_are_left_out(
    issuer: LocalIssuer, settings: Settings, key: SigningKey
) -> None:
    subject = caller_token(key, settings)
    claims = claims_of(
        exchange(issuer, subject, context={"skill_id": "x", "task_id": None}).access_token
    )
    assert claims["ctx"] == {"skill_id": "x"}
    assert claims_of(exchange(issuer, subject, context=None).access_token)["ctx"] == {}


def test_a_subject_that_was_already_delegated_gets_a_nested_act(
    issuer: LocalIssuer, settings: Settings, key: SigningKey, tool_verifier: ToolTokenVerifier
) -> None:
    upstream = {"sub": "agent:upstream", "act": {"sub": "agent:portal"}}
    subject = caller_token(key, settings, extra_claims={"act": upstream})
    issued = exchange(issuer, subject)
    assert claims_of(issued.access_token)["act"] == {"sub": AGENT_SUBJECT, "act": upstream}
    chain = tool_verifier.verify(issued.access_token).actor_chain
    assert chain == (AGENT_SUBJECT, "agent:upstream", "agent:portal")


async def test_the_local_exchanger_uses_the_grant(
    issuer: LocalIssuer, settings: Settings, key: SigningKey
) -> None:
    token = caller_token(key, settings)
    grant = ToolGrant(principal(token, settings, key), "inventory", DECLARED, CONTEXT)
    issued = await LocalTokenExchanger(issuer).exchange(grant)
    claims = claims_of(issued.access_token)
    assert claims["sub"] == "alice" and claims["scope"] == "assurance.read"
    assert claims["ctx"] == CONTEXT


# -- what the exchange refuses -------------------------------------------------------------------


def test_no_common_scope_is_invalid_scope(
    issuer: LocalIssuer, settings: Settings, key: SigningKey
) -> None:
    subject = caller_token(key, settings, scopes=["inventory.read"])
    assert refused(issuer, subject).error == "invalid_scope"
    assert refused(issuer, subject, scopes=[]).error == "invalid_scope"
    none_held = caller_token(key, settings, scopes=[])
    assert refused(issuer, none_held, scopes=["inventory.read"]).error == "invalid_scope"


@pytest.mark.parametrize(
    "audience", ["telemetry", "", "INVENTORY", EXCHANGE_AUDIENCE, "netagent", "inventory "]
)
def test_unknown_audience_is_invalid_target(
    issuer: LocalIssuer, settings: Settings, key: SigningKey, audience: str
) -> None:
    error = refused(issuer, caller_token(key, settings), audience=audience)
    assert error.error == "invalid_target"


def _bad_subjects(settings: Settings, key: SigningKey, stranger: SigningKey, issuer: LocalIssuer):
    now = int(time.time())
    good = caller_token(key, settings)
    header, _payload, signature = good.split(".")
    tampered = claims_of(good) | {"tenant": "globex"}
    return {
        "garbage": "not-a-token",
        "empty-looking": "..",
        "expired": caller_token(key, settings, ttl_seconds=-600),
        "foreign": caller_token(stranger, settings),
        "tampered": f"{header}.{b64url_json(tampered)}.{signature}",
        "wrong-audience": issue_token(
            key,
            Settings(home=settings.home, audience="another-agent"),
            subject="alice",
            tenant="acme",
            scopes=CALLER_SCOPES,
        ),
        "no-tenant": sign(
            key,
            {
                "iss": settings.issuer,
                "aud": settings.audience,
                "sub": "alice",
                "scope": "assurance.read",
                "exp": now + 60,
            },
        ),
        "a-tool-token": exchange(issuer, good).access_token,
        "the-agent-credential": issuer.agent_credential(),
        "alg-none": f"{b64url_json({'alg': 'none'})}.{b64url_json(claims_of(good))}.",
    }


@pytest.mark.parametrize(
    "case",
    [
        "garbage",
        "empty-looking",
        "expired",
        "foreign",
        "tampered",
        "wrong-audience",
        "no-tenant",
        "a-tool-token",
        "the-agent-credential",
        "alg-none",
    ],
)
def test_a_bad_subject_token_is_invalid_grant(
    issuer: LocalIssuer, settings: Settings, key: SigningKey, stranger: SigningKey, case: str
) -> None:
    subject = _bad_subjects(settings, key, stranger, issuer)[case]
    error = refused(issuer, subject)
    assert error.error == "invalid_grant"
    assert error.description.startswith("subject token refused")


def _agent_claims(**changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {
        "iss": TOOL_ISSUER,
        "sub": AGENT_SUBJECT,
        "aud": EXCHANGE_AUDIENCE,
        "iat": now,
        "exp": now + 600,
        "jti": uuid.uuid4().hex,
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def _bad_actors(settings: Settings, key: SigningKey, stranger: SigningKey, issuer: LocalIssuer):
    public_pem = key.private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    hs_header = b64url_json({"alg": "HS256", "typ": "JWT"})
    hs_body = b64url_json(_agent_claims())
    hs_mac = hmac.new(public_pem, f"{hs_header}.{hs_body}".encode(), hashlib.sha256).digest()
    return {
        "a-callers-token": caller_token(key, settings),
        "a-callers-token-with-agent-subject": caller_token(key, settings, subject=AGENT_SUBJECT),
        "foreign-signed-credential": sign(stranger, _agent_claims()),
        "expired-credential": sign(key, _agent_claims(exp=int(time.time()) - 3600)),
        "credential-without-exp": sign(key, _agent_claims(exp=None)),
        "credential-for-another-audience": sign(key, _agent_claims(aud="inventory")),
        "credential-from-another-issuer": sign(key, _agent_claims(iss=settings.issuer)),
        "signed-credential-naming-a-user": sign(key, _agent_claims(sub="alice")),
        "a-tool-token": exchange(issuer, caller_token(key, settings)).access_token,
        "alg-none": f"{b64url_json({'alg': 'none'})}.{b64url_json(_agent_claims())}.",
        "hs256-with-the-public-key": f"{hs_header}.{hs_body}.{b64url(hs_mac)}",
        "garbage": "garbage",
    }


@pytest.mark.parametrize(
    "case",
    [
        "a-callers-token",
        "a-callers-token-with-agent-subject",
        "foreign-signed-credential",
        "expired-credential",
        "credential-without-exp",
        "credential-for-another-audience",
        "credential-from-another-issuer",
        "signed-credential-naming-a-user",
        "a-tool-token",
        "alg-none",
        "hs256-with-the-public-key",
        "garbage",
    ],
)
def test_an_actor_that_is_not_the_agent_is_invalid_client(
    issuer: LocalIssuer, settings: Settings, key: SigningKey, stranger: SigningKey, case: str
) -> None:
    actor = _bad_actors(settings, key, stranger, issuer)[case]
    error = refused(issuer, caller_token(key, settings), actor_token=actor)
    assert error.error == "invalid_client"


def test_the_actor_is_checked_before_anything_else(
    issuer: LocalIssuer, settings: Settings, key: SigningKey
) -> None:
    """A bad client learns nothing about the subject token or the audience."""
    error = refused(issuer, "garbage", actor_token=caller_token(key, settings), audience="x")
    assert error.error == "invalid_client"


def test_the_agent_credential_is_an_actor_token_for_the_exchange(
    issuer: LocalIssuer, key: SigningKey
) -> None:
    credential = issuer.agent_credential()
    claims = jwt.decode(
        credential,
        key.private_key.public_key(),
        algorithms=[SIGNING_ALGORITHM],
        audience=EXCHANGE_AUDIENCE,
        issuer=TOOL_ISSUER,
    )
    assert claims["sub"] == AGENT_SUBJECT
    assert "tenant" not in claims and "scope" not in claims


async def test_an_anonymous_principal_cannot_exchange(issuer: LocalIssuer) -> None:
    grant = ToolGrant(ANONYMOUS, "inventory", DECLARED)
    with pytest.raises(ExchangeError) as caught:
        await LocalTokenExchanger(issuer).exchange(grant)
    assert caught.value.error == "invalid_grant"


async def test_an_anonymous_principal_is_not_sent_to_a_remote_token_service() -> None:
    calls: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(500)

    async with httpx.AsyncClient(transport=httpx.MockTransport(record)) as client:
        remote = RemoteTokenExchanger("http://tokens.test/oauth/token", "credential", client)
        with pytest.raises(ExchangeError) as caught:
            await remote.exchange(ToolGrant(ANONYMOUS, "inventory", DECLARED))
    assert caught.value.error == "invalid_grant"
    assert calls == []


# -- the remote exchanger against the real token endpoint ----------------------------------------


def _token_service(issuer: LocalIssuer) -> httpx.AsyncClient:
    app = Starlette(routes=[Route("/oauth/token", token_endpoint(issuer), methods=["POST"])])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://tokens.test")


async def test_the_remote_exchanger_round_trips_through_the_token_endpoint(
    issuer: LocalIssuer, settings: Settings, key: SigningKey, tool_verifier: ToolTokenVerifier
) -> None:
    token = caller_token(key, settings)
    grant = ToolGrant(principal(token, settings, key), "inventory", DECLARED, CONTEXT)
    async with _token_service(issuer) as client:
        remote = RemoteTokenExchanger(
            "http://tokens.test/oauth/token", issuer.agent_credential(), client
        )
        issued = await remote.exchange(grant)
    assert issued.scopes == frozenset({"assurance.read"})
    assert 0 < issued.expires_in <= 300
    verified = tool_verifier.verify(issued.access_token)
    assert verified.token_id == issued.token_id
    assert (verified.subject, verified.tenant) == ("alice", "acme")
    assert verified.actor_chain == (AGENT_SUBJECT,)
    assert dict(verified.context) == CONTEXT


async def test_the_remote_exchanger_reports_the_services_error_code(
    issuer: LocalIssuer, settings: Settings, key: SigningKey
) -> None:
    token = caller_token(key, settings, scopes=["inventory.read"])
    grant = ToolGrant(principal(token, settings, key), "inventory", DECLARED)
    async with _token_service(issuer) as client:
        good = RemoteTokenExchanger(
            "http://tokens.test/oauth/token", issuer.agent_credential(), client
        )
        with pytest.raises(ExchangeError) as caught:
            await good.exchange(grant)
        assert caught.value.error == "invalid_scope"
        bad = RemoteTokenExchanger("http://tokens.test/oauth/token", token, client)
        with pytest.raises(ExchangeError) as caught:
            await bad.exchange(grant)
        assert caught.value.error == "invalid_client"


async def test_an_unreachable_token_service_is_temporarily_unavailable(
    settings: Settings, key: SigningKey
) -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    token = caller_token(key, settings)
    grant = ToolGrant(principal(token, settings, key), "inventory", DECLARED)
    async with httpx.AsyncClient(transport=httpx.MockTransport(down)) as client:
        remote = RemoteTokenExchanger("http://tokens.test/oauth/token", "credential", client)
        with pytest.raises(ExchangeError) as caught:
            await remote.exchange(grant)
    assert caught.value.error == "temporarily_unavailable"


async def test_an_error_answer_that_is_not_an_object_is_still_an_exchange_error(
    settings: Settings, key: SigningKey
) -> None:
    """A proxy's 503 whose JSON body is not an object must not escape as AttributeError."""
    bodies = [b'"Service Unavailable"', b'["error"]', b"null", b"503"]

    def proxy(request: httpx.Request) -> httpx.Response:
        body = bodies[int(request.headers["x-case"])]
        return httpx.Response(503, content=body, headers={"content-type": "application/json"})

    token = caller_token(key, settings)
    grant = ToolGrant(principal(token, settings, key), "inventory", DECLARED)
    escaped = {}
    for case, body in enumerate(bodies):
        headers = {"x-case": str(case)}
        async with httpx.AsyncClient(
            transport=httpx.MockTransport(proxy), headers=headers
        ) as client:
            remote = RemoteTokenExchanger("http://tokens.test/oauth/token", "credential", client)
            try:
                await remote.exchange(grant)
            except ExchangeError:
                continue
            except Exception as exc:
                escaped[body.decode()] = type(exc).__name__
    assert escaped == {}, f"error answers that escaped as other exceptions: {escaped}"


# -- what the tool refuses -----------------------------------------------------------------------


def test_the_tool_accepts_a_well_formed_token(
    key: SigningKey, tool_verifier: ToolTokenVerifier
) -> None:
    claims = tool_claims(ctx={"task_id": "t-1"})
    verified = tool_verifier.verify(sign(key, claims))
    assert verified.subject == "alice" and verified.tenant == "acme"
    assert verified.scopes == frozenset({"assurance.read"})
    assert verified.actor_chain == (AGENT_SUBJECT,)
    assert verified.token_id == claims["jti"]
    assert dict(verified.context) == {"task_id": "t-1"}


def test_the_tool_refuses_an_expired_token(
    key: SigningKey, tool_verifier: ToolTokenVerifier
) -> None:
    past = int(time.time()) - 600
    token = sign(key, tool_claims(iat=past - 300, nbf=past - 300, exp=past))
    assert tool_refusal(tool_verifier, token) == "tool token has expired"


def test_the_tool_refuses_a_token_signed_by_another_key(
    stranger: SigningKey, tool_verifier: ToolTokenVerifier
) -> None:
    token = sign(stranger, tool_claims())
    assert tool_refusal(tool_verifier, token) == "tool token signature or claims are invalid"


@pytest.mark.parametrize("audience", ["telemetry", EXCHANGE_AUDIENCE, "netagent", ["telemetry"]])
def test_the_tool_refuses_a_token_for_another_audience(
    key: SigningKey, tool_verifier: ToolTokenVerifier, audience: Any
) -> None:
    token = sign(key, tool_claims(aud=audience))
    assert tool_refusal(tool_verifier, token) == "tool token is for another audience"


def test_the_tool_refuses_the_agent_credential(
    issuer: LocalIssuer, tool_verifier: ToolTokenVerifier
) -> None:
    assert tool_refusal(tool_verifier, issuer.agent_credential()) == (
        "tool token is for another audience"
    )


def test_the_tool_refuses_a_callers_bearer_token(
    settings: Settings, key: SigningKey, tool_verifier: ToolTokenVerifier
) -> None:
    with pytest.raises(TokenError):
        tool_verifier.verify(caller_token(key, settings))


def test_the_tool_refuses_another_issuer(key: SigningKey, tool_verifier: ToolTokenVerifier) -> None:
    token = sign(key, tool_claims(iss="netagent-embedded"))
    assert tool_refusal(tool_verifier, token) == "tool token signature or claims are invalid"


@pytest.mark.parametrize("alg", ["none", "None", "NONE", ""])
def test_the_tool_refuses_alg_none(tool_verifier: ToolTokenVerifier, alg: str) -> None:
    token = f"{b64url_json({'alg': alg, 'typ': 'JWT'})}.{b64url_json(tool_claims())}."
    assert tool_refusal(tool_verifier, token) == "tool token algorithm is not accepted"


def test_the_tool_refuses_hs256_keyed_with_the_public_key(
    key: SigningKey, tool_verifier: ToolTokenVerifier
) -> None:
    public_pem = key.private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = b64url_json({"alg": "HS256", "typ": "JWT"})
    body = b64url_json(tool_claims())
    mac = hmac.new(public_pem, f"{header}.{body}".encode(), hashlib.sha256).digest()
    token = f"{header}.{body}.{b64url(mac)}"
    assert tool_refusal(tool_verifier, token) == "tool token algorithm is not accepted"


@pytest.mark.parametrize("tenant", [None, "", 7, ["acme"]], ids=["absent", "empty", "int", "list"])
def test_the_tool_refuses_a_token_without_a_tenant(
    key: SigningKey, tool_verifier: ToolTokenVerifier, tenant: Any
) -> None:
    claims = tool_claims()
    claims.pop("tenant")
    if tenant is not None:
        claims["tenant"] = tenant
    assert tool_refusal(tool_verifier, sign(key, claims)) == "tool token has no tenant"


@pytest.mark.parametrize(
    ("member", "value"),
    [
        *[("tenant", v) for v in (" ", "\u3000", "acme:bob", "t" * 65)],
        *[("sub", v) for v in (" ", "\u00a0", "ali\u202ece", "s" * 188)],
    ],
    ids=repr,
)
def test_the_tool_refuses_an_identity_outside_the_policy(
    key: SigningKey, tool_verifier: ToolTokenVerifier, member: str, value: str
) -> None:
    """What the edge refuses in a caller token (docs/security.md#identity-claims), the tool
    refuses in a tool token (an external token service may have signed it)."""
    claims = {**tool_claims(), member: value}
    assert tool_refusal(tool_verifier, sign(key, claims)) == "tool token names no valid identity"


@pytest.mark.parametrize(
    "act", [None, {}, {"sub": 7}, "agent:netops-agent", ["agent:netops-agent"]]
)
def test_the_tool_refuses_a_token_without_an_actor(
    key: SigningKey, tool_verifier: ToolTokenVerifier, act: Any
) -> None:
    claims = tool_claims()
    claims.pop("act")
    if act is not None:
        claims["act"] = act
    assert tool_refusal(tool_verifier, sign(key, claims)) == "tool token names no actor"


@pytest.mark.parametrize("claim", ["exp", "sub", "aud", "iss", "jti"])
def test_the_tool_refuses_a_token_missing_a_required_claim(
    key: SigningKey, tool_verifier: ToolTokenVerifier, claim: str
) -> None:
    claims = tool_claims()
    claims.pop(claim)
    with pytest.raises(TokenError):
        tool_verifier.verify(sign(key, claims))


@pytest.mark.parametrize(
    "change",
    [
        {"tenant": "globex"},
        {"scope": "assurance.read capacity.plan"},
        {"sub": "paula"},
        {"exp": int(time.time()) + 10**6},
    ],
    ids=["tenant", "scope", "subject", "expiry"],
)
def test_the_tool_refuses_a_tampered_payload(
    key: SigningKey, tool_verifier: ToolTokenVerifier, change: dict[str, Any]
) -> None:
    token = sign(key, tool_claims())
    header, payload, signature = token.split(".")
    forged = json.loads(unb64url(payload)) | change
    assert tool_refusal(tool_verifier, f"{header}.{b64url_json(forged)}.{signature}") == (
        "tool token signature or claims are invalid"
    )


def test_the_tool_refuses_a_tampered_signature(
    key: SigningKey, tool_verifier: ToolTokenVerifier
) -> None:
    header, payload, signature = sign(key, tool_claims()).split(".")
    raw = bytearray(unb64url(signature))
    raw[-1] ^= 0x01
    assert tool_refusal(tool_verifier, f"{header}.{payload}.{b64url(bytes(raw))}") == (
        "tool token signature or claims are invalid"
    )


@pytest.mark.parametrize("token", ["", "garbage", "a.b.c", "a.b", "...."])
def test_the_tool_refuses_garbage(tool_verifier: ToolTokenVerifier, token: str) -> None:
    with pytest.raises(TokenError):
        tool_verifier.verify(token)
