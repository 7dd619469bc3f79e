"""Downscoped tool credentials by token exchange (RFC 8693 semantics).

The agent holds a service credential of its own (``actor``); handlers never see it. For each
tool a handler reaches, the exchanger issues a token whose subject is the caller, whose ``act``
claim names the agent, whose audience is the tool, whose scopes are the caller's scopes
intersected with what the manifest declares for that tool, with a short lifetime and a unique
id. The tool verifies that token itself. Embedded default: this process is the issuer, also
serving ``POST /oauth/token``; a setting points the agent at an external token service.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
import jwt

from agent.base.errors import SecurityError
from agent.base.ids import random_hex
from agent.security.auth import (
    SIGNING_ALGORITHM,
    IssuerUnavailableError,
    SigningKey,
    TokenError,
    TokenVerifier,
)
from agent.security.identity import valid_subject, valid_tenant
from agent.security.principal import Principal
from agent.security.scopes import scope_tokens
from agent.security.token_cache import VerifiedTokens

TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
JWT_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:jwt"
TOKEN_TYPES = frozenset({ACCESS_TOKEN_TYPE, JWT_TOKEN_TYPE})
AGENT_SUBJECT = "agent:a2a-agent"
"""The agent's own subject when no deployment names one (``AgentIdentity.agent_subject``)."""
TOOL_ISSUER = "netagent-token-exchange"
"""``iss`` of the embedded exchange's tokens (agent credential and tool tokens)."""
EXCHANGE_AUDIENCE = "netagent-token-exchange"
TOOL_TOKEN_TTL_SECONDS = 300
AGENT_CREDENTIAL_TTL_SECONDS = 24 * 3600
JWKS_ALGORITHMS = (SIGNING_ALGORITHM, "RS256", "EdDSA")


class ExchangeError(SecurityError):
    """A refused exchange, with the OAuth error code (RFC 6749 §5.2 / RFC 8693 §2.2.2)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description


@dataclass(frozen=True)
class ToolGrant:
    """What a handler is about to do with a tool, for whom; the exchange's input."""

    principal: Principal
    tool: str
    scopes: frozenset[str]
    context: Mapping[str, str | None] = field(default_factory=dict)
    audience: str | None = None
    """Whom the exchanged token is for: the tool port's audience (its name if unset)."""

    @property
    def target(self) -> str:
        """The audience to ask the exchange for."""
        return self.audience or self.tool


@dataclass(frozen=True)
class IssuedToken:
    """An exchanged token and what it grants."""

    access_token: str
    expires_in: int
    scopes: frozenset[str]
    token_id: str


class TokenExchanger(Protocol):
    """Anything that turns (caller token, agent credential) into a tool token."""

    async def exchange(self, grant: ToolGrant) -> IssuedToken:
        """Exchange for ``grant``; raises ExchangeError when refused."""
        ...


def scope_intersection(caller: Iterable[str], declared: Iterable[str]) -> frozenset[str]:
    """Downscoping: never more than the caller holds, never more than the tool needs."""
    return frozenset(caller) & frozenset(declared)


class LocalIssuer:
    """The embedded issuer: mints the agent credential and performs exchanges in-process."""

    def __init__(
        self, key: SigningKey, subject_verifier: TokenVerifier, audiences: Iterable[str]
    ) -> None:
        self._audiences = frozenset(audiences)
        self._key = key
        self._issuer = TOOL_ISSUER
        self._subject_verifier = subject_verifier
        self._public = key.private_key.public_key()
        self._actors = VerifiedTokens(self._verify_actor)

    def agent_credential(
        self, subject: str = AGENT_SUBJECT, ttl_seconds: int = AGENT_CREDENTIAL_TTL_SECONDS
    ) -> str:
        """An agent's service credential (actor token); only that agent's exchanger holds it.

        This issuer mints its own; for another agent that exchanges here (its
        NETAGENT_AGENT_CREDENTIAL), ``netagent token --agent-credential`` prints one.
        """
        if not subject.startswith("agent:"):
            raise ValueError("an agent credential's subject starts with 'agent:'")
        now = int(time.time())
        claims = {
            "iss": self._issuer,
            "sub": subject,
            "aud": EXCHANGE_AUDIENCE,
            "iat": now,
            "exp": now + ttl_seconds,
            "jti": random_hex(),
        }
        return jwt.encode(claims, self._key.private_key, SIGNING_ALGORITHM, {"kid": self._key.kid})

    def _actor(self, actor_token: str) -> str:
        return self._actors(actor_token)

    def _verify_actor(self, actor_token: str) -> tuple[str, float | None]:
        try:
            claims = jwt.decode(
                actor_token,
                self._public,
                algorithms=[SIGNING_ALGORITHM],
                audience=EXCHANGE_AUDIENCE,
                issuer=self._issuer,
                options={"require": ["exp", "sub", "aud", "iss"]},
            )
        except jwt.PyJWTError as exc:
            raise ExchangeError(
                "invalid_client", "actor token is not a valid agent credential"
            ) from exc
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject.startswith("agent:"):
            raise ExchangeError("invalid_client", "actor is not an agent")
        expires = claims["exp"]
        return subject, float(expires) if isinstance(expires, int | float) else None

    def exchange_tokens(
        self,
        *,
        subject_token: str,
        actor_token: str,
        audience: str,
        scopes: Iterable[str],
        context: Mapping[str, str | None] | None = None,
    ) -> IssuedToken:
        """RFC 8693 exchange; the issued token carries ``act`` and the downscoped scopes."""
        actor = self._actor(actor_token)
        if audience not in self._audiences:
            raise ExchangeError("invalid_target", "unknown audience")
        try:
            subject = self._subject_verifier.verify(subject_token)
        except TokenError as exc:
            raise ExchangeError(
                "invalid_grant", f"subject token refused: {exc.description}"
            ) from exc
        except IssuerUnavailableError as exc:
            raise ExchangeError(
                "temporarily_unavailable", "the subject token's issuer cannot be reached"
            ) from exc
        granted = scope_intersection(subject.scopes, scopes)
        if not granted:
            raise ExchangeError("invalid_scope", "no requested scope is held by the subject")
        prior = jwt.decode(subject_token, options={"verify_signature": False}).get("act")
        act: dict[str, Any] = {"sub": actor}
        if isinstance(prior, dict):
            act["act"] = prior
        now = int(time.time())
        token_id = random_hex()
        claims = {
            "iss": self._issuer,
            "sub": subject.subject,
            "tenant": subject.tenant,
            "aud": audience,
            "scope": " ".join(sorted(granted)),
            "act": act,
            "iat": now,
            "nbf": now,
            "exp": now + TOOL_TOKEN_TTL_SECONDS,
            "jti": token_id,
            "ctx": {k: v for k, v in (context or {}).items() if v is not None},
        }
        token = jwt.encode(claims, self._key.private_key, SIGNING_ALGORITHM, {"kid": self._key.kid})
        return IssuedToken(token, TOOL_TOKEN_TTL_SECONDS, granted, token_id)


class LocalTokenExchanger:
    """Exchanges in-process with the embedded issuer (the default)."""

    def __init__(self, issuer: LocalIssuer, subject: str = AGENT_SUBJECT) -> None:
        self._issuer = issuer
        self._credential = issuer.agent_credential(subject)

    async def exchange(self, grant: ToolGrant) -> IssuedToken:
        """Exchange the caller's token for a tool token."""
        if not grant.principal.token:
            raise ExchangeError("invalid_grant", "an anonymous caller has no token to exchange")
        return self._issuer.exchange_tokens(
            subject_token=grant.principal.token,
            actor_token=self._credential,
            audience=grant.target,
            scopes=grant.scopes,
            context=grant.context,
        )


class RemoteTokenExchanger:
    """Exchanges at an external token endpoint (``NETAGENT_TOKEN_EXCHANGE_URL``)."""

    def __init__(self, url: str, agent_credential: str, client: httpx.AsyncClient) -> None:
        self._url = url
        self._credential = agent_credential
        self._client = client

    async def aclose(self) -> None:
        """Close the HTTP client (the app does this at shutdown)."""
        await self._client.aclose()

    async def exchange(self, grant: ToolGrant) -> IssuedToken:
        """POST the RFC 8693 form; an error answer becomes an ExchangeError."""
        if not grant.principal.token:
            raise ExchangeError("invalid_grant", "an anonymous caller has no token to exchange")
        form = {
            "grant_type": TOKEN_EXCHANGE_GRANT,
            "subject_token": grant.principal.token,
            "subject_token_type": ACCESS_TOKEN_TYPE,
            "actor_token": self._credential,
            "actor_token_type": JWT_TOKEN_TYPE,
            "audience": grant.target,
            "scope": " ".join(sorted(grant.scopes)),
        }
        for key, value in grant.context.items():
            if value is not None:
                form[f"ctx_{key}"] = value
        try:
            response = await self._client.post(self._url, data=form, timeout=10)
            body = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ExchangeError("temporarily_unavailable", "token service unreachable") from exc
        if not isinstance(body, dict):
            raise ExchangeError("invalid_response", "token service answered no JSON object")
        if response.status_code != 200:
            raise ExchangeError(str(body.get("error", "invalid_request")), "exchange refused")
        token = body.get("access_token")
        if not isinstance(token, str) or not token:
            raise ExchangeError("invalid_response", "token service returned no access_token")
        granted = scope_tokens(str(body.get("scope", "")))
        try:
            token_id = str(jwt.decode(token, options={"verify_signature": False}).get("jti", ""))
        except jwt.PyJWTError as exc:
            raise ExchangeError("invalid_response", "access_token is not a JWT") from exc
        return IssuedToken(token, _lifetime(body.get("expires_in", 0)), granted, token_id)


def _lifetime(value: Any) -> int:
    """A token service's ``expires_in`` (a JSON number, or its digits as a string); anything
    else, or more digits than a lifetime has, is an ``invalid_response`` rather than Python's
    conversion error."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 12:
        return int(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e12:
        return int(value)
    raise ExchangeError("invalid_response", "expires_in is not a lifetime in seconds")


@dataclass(frozen=True)
class ToolClaims:
    """A verified tool token's content, as the tool sees it."""

    subject: str
    tenant: str
    scopes: frozenset[str]
    actor_chain: tuple[str, ...]
    token_id: str
    context: Mapping[str, str]


class ToolTokenVerifier:
    """What a tool runs on every call: signature, audience, expiry, then the claims."""

    def __init__(
        self, audience: str, issuer: str, key: Any | None = None, jwks_url: str | None = None
    ) -> None:
        self._audience = audience
        self._issuer = issuer
        self._key = key
        self._jwks = jwt.PyJWKClient(jwks_url, cache_keys=True) if jwks_url else None

    def verify(self, token: str) -> ToolClaims:
        """Refuse anything but a live token for this tool; raises TokenError."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise TokenError("tool token is malformed") from exc
        if header.get("alg") != SIGNING_ALGORITHM and self._jwks is None:
            raise TokenError("tool token algorithm is not accepted")
        try:
            key: Any = self._jwks.get_signing_key_from_jwt(token).key if self._jwks else self._key
            if key is None:
                raise TokenError("tool token signature or claims are invalid")
            claims = jwt.decode(
                token,
                key,
                algorithms=list(JWKS_ALGORITHMS) if self._jwks else [SIGNING_ALGORITHM],
                audience=self._audience,
                issuer=self._issuer,
                options={"require": ["exp", "sub", "aud", "iss", "jti"]},
            )
        except jwt.ExpiredSignatureError as exc:
            raise TokenError("tool token has expired") from exc
        except jwt.InvalidAudienceError as exc:
            raise TokenError("tool token is for another audience") from exc
        except (jwt.PyJWTError, jwt.PyJWKClientError) as exc:
            raise TokenError("tool token signature or claims are invalid") from exc
        tenant, subject = claims.get("tenant"), claims.get("sub")
        if not isinstance(tenant, str) or not tenant:
            raise TokenError("tool token has no tenant")
        if not valid_tenant(tenant) or not valid_subject(subject):  # the edge's policy
            raise TokenError("tool token names no valid identity")
        chain: list[str] = []
        act = claims.get("act")
        while isinstance(act, dict) and isinstance(act.get("sub"), str):
            chain.append(act["sub"])
            act = act.get("act")
        if not chain:
            raise TokenError("tool token names no actor")
        given = claims.get("ctx")
        context: dict[str, Any] = given if isinstance(given, dict) else {}
        return ToolClaims(
            subject=subject,
            tenant=tenant,
            scopes=scope_tokens(str(claims.get("scope", ""))),
            actor_chain=tuple(chain),
            token_id=str(claims["jti"]),
            context={str(k): str(v) for k, v in context.items()},
        )
