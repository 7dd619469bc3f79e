"""Bearer tokens: the embedded signing key, issuing demo tokens, and verifying any token.

Embedded default: the agent makes an ES256 key in ``$NETAGENT_HOME`` on first start and signs
its own tokens with it (``netagent token``). In production the agent verifies tokens of an
external issuer against its JWKS; nothing else changes.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from agent.base.errors import SecurityError
from agent.base.ids import random_hex
from agent.base.settings import Settings
from agent.security.identity import MAX_SUBJECT_CHARS as MAX_SUBJECT_CHARS
from agent.security.identity import MAX_TENANT_CHARS as MAX_TENANT_CHARS
from agent.security.identity import (
    SUBJECT_REFUSED,
    TENANT_REFUSED,
    valid_subject,
    valid_tenant,
)
from agent.security.principal import Principal
from agent.security.scopes import is_scope_token, scope_tokens
from agent.security.token_cache import VerifiedTokens

SIGNING_ALGORITHM = "ES256"
EXTERNAL_ALGORITHMS = ("RS256", "PS256", "ES256", "ES384", "EdDSA")
KEY_FILE = "signing-key.pem"
MAX_TOKEN_BYTES = 8192
DEFAULT_TTL_SECONDS = 8 * 3600


class TokenError(SecurityError):
    """A token was refused; ``description`` is safe to send back to the caller."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class IssuerUnavailableError(SecurityError):
    """The issuer's keys could not be fetched: the caller's token may be fine (503, retry)."""


@dataclass(frozen=True)
class SigningKey:
    """The embedded issuer's key pair and its JWK thumbprint (used as ``kid``)."""

    private_key: ec.EllipticCurvePrivateKey
    kid: str

    @property
    def public_jwk(self) -> dict[str, Any]:
        """The public half as a JWK, for ``/.well-known/jwks.json``."""
        jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.private_key.public_key()))
        return {**jwk, "kid": self.kid, "use": "sig", "alg": SIGNING_ALGORITHM}


def _thumbprint(private_key: ec.EllipticCurvePrivateKey) -> str:
    """RFC 7638 thumbprint of the public key: stable across restarts, unique per key."""
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private_key.public_key()))
    members = {k: jwk[k] for k in ("crv", "kty", "x", "y")}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode()


def load_or_create_signing_key(home: Path) -> SigningKey:
    """Read the embedded key, creating it (mode 0600) on first start."""
    path = home / KEY_FILE
    if not path.exists():
        _create_key_file(path)
    loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(loaded, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{path}: expected an EC private key")
    return SigningKey(private_key=loaded, kid=_thumbprint(loaded))


def _create_key_file(path: Path) -> None:
    """Write a new key so that concurrent first starts (replicas) all end up with one key.

    The key is written whole to a private temporary file and hard-linked into place: the link
    fails if another process got there first, and nobody ever reads a half-written file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    # A random name, created exclusively: replicas in containers sharing one volume may all
    # be pid 1, and one process truncating another's linked file would change its key.
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{random_hex()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
        # If another process linked its key first, everyone uses that one.
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def issue_token(
    key: SigningKey,
    settings: Settings,
    *,
    subject: str,
    tenant: str,
    scopes: list[str],
    ttl_seconds: int = DEFAULT_TTL_SECONDS,
    extra_claims: dict[str, Any] | None = None,
) -> str:
    """Sign a bearer token with the embedded key (demo tokens and tests).

    Each scope must be one RFC 6749 scope-token: joined with spaces, a scope holding a space
    would be read back as several (agent/security/scopes.py).
    """
    if not all(is_scope_token(scope) for scope in scopes):
        raise ValueError("a scope is printable ASCII without spaces, quotes or backslashes")
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": settings.issuer,
        "aud": settings.audience,
        "sub": subject,
        "tenant": tenant,
        "scope": " ".join(dict.fromkeys(scopes)),
        "iat": now,
        "nbf": now,
        "exp": now + ttl_seconds,
        "jti": random_hex(),
        **(extra_claims or {}),
    }
    return jwt.encode(
        claims, key.private_key, algorithm=SIGNING_ALGORITHM, headers={"kid": key.kid}
    )


class TokenVerifier:
    """Turns a bearer token into a Principal, or refuses it with a TokenError."""

    def __init__(self, settings: Settings, key: SigningKey | None) -> None:
        self._issuer = settings.issuer
        self._audience = settings.audience
        if settings.jwks_url:
            self._jwks: jwt.PyJWKClient | None = jwt.PyJWKClient(settings.jwks_url, cache_keys=True)
            self._algorithms: list[str] = list(EXTERNAL_ALGORITHMS)
            self._local_key = None
        else:
            if key is None:
                raise ValueError("the embedded issuer needs a signing key")
            self._jwks = None
            self._algorithms = [SIGNING_ALGORITHM]
            self._local_key = key.private_key.public_key()
        self._verified = VerifiedTokens(self._verify_signed)

    def _key_for(self, token: str) -> Any:
        if self._jwks is None:
            return self._local_key
        try:
            return self._jwks.get_signing_key_from_jwt(token).key
        except jwt.PyJWKClientConnectionError as exc:  # an outage, not a bad token
            raise IssuerUnavailableError("the token issuer's keys cannot be fetched") from exc
        except jwt.PyJWKClientError as exc:
            raise TokenError("token signing key is not known to the issuer") from exc

    def verify(self, token: str) -> Principal:
        """Check signature, algorithm, issuer, audience and lifetime, then read the claims
        (once per token until it expires: agent/security/token_cache.py)."""
        if len(token) > MAX_TOKEN_BYTES:
            raise TokenError("token is too large")
        return self._verified(token)

    def _verify_signed(self, token: str) -> tuple[Principal, float | None]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise TokenError("token is malformed") from exc
        if header.get("alg") not in self._algorithms:
            raise TokenError("token algorithm is not accepted")
        try:
            claims = jwt.decode(
                token,
                self._key_for(token),
                algorithms=self._algorithms,
                audience=self._audience,
                issuer=self._issuer,
                options={"require": ["exp", "iss", "aud", "sub"]},
                leeway=30,
            )
        except jwt.ExpiredSignatureError as exc:
            raise TokenError("token has expired") from exc
        except jwt.InvalidAudienceError as exc:
            raise TokenError("token is for another audience") from exc
        except jwt.InvalidIssuerError as exc:
            raise TokenError("token is from an unknown issuer") from exc
        except jwt.exceptions.InvalidSubjectError as exc:  # PyJWT: a ``sub`` that is no string
            raise TokenError(SUBJECT_REFUSED) from exc
        except jwt.PyJWTError as exc:
            raise TokenError("token signature or claims are invalid") from exc
        expires = claims["exp"]
        principal = _principal_from_claims(claims, token)
        return principal, float(expires) if isinstance(expires, int | float) else None


def _principal_from_claims(claims: dict[str, Any], token: str) -> Principal:
    """The identity policy (agent/security/identity.py), then the scopes.

    Every identity that passes can be stored and compared (task owner, bindings, audit rows,
    a tool's tenant filter); anything else is refused here, as a 401 with a fixed
    reason that never holds the claim, rather than failing every request later.
    """
    subject, tenant, scope = claims.get("sub"), claims.get("tenant"), claims.get("scope", "")
    if not valid_subject(subject):
        raise TokenError(SUBJECT_REFUSED)
    if tenant is None:
        raise TokenError("token has no tenant claim")
    if not valid_tenant(tenant):
        raise TokenError(TENANT_REFUSED)
    if not isinstance(scope, str):
        raise TokenError("token scope claim must be a space-separated string")
    return Principal(subject=subject, tenant=tenant, scopes=scope_tokens(scope), token=token)
