"""Agent Card signatures (A2A 1.0 §8.4): the agent signs every card it serves, a client checks.

The JWS itself is a2a-sdk's (``a2a.utils.signing``): a compact JWS with a detached payload, the
payload being the RFC 8785 (JCS) form of the card without its ``signatures`` member and without
empty members (the specification's default-value exclusion). What is ours:

* which key: the agent's own ES256 key, whose public half ``/.well-known/jwks.json`` serves, named
  in the protected header by ``kid`` and ``jku`` (that JWKS's URL);
* signing each distinct card once: an ES256 signature differs on every signing, and signing per
  request would cost a signature each time (``CardSigner`` keeps one per content digest);
* where a client takes the keys from: only a ``jku`` on the card's own origin (scheme, host,
  port), so a card rewritten on the way cannot bring the keys it was re-signed with.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import httpx
import jwt
from a2a.types import AgentCard
from a2a.utils.signing import (
    SignatureVerificationError,
    create_agent_card_signer,
    create_signature_verifier,
)
from jwt import PyJWK, PyJWKSet

from agent.base.errors import SecurityError

if TYPE_CHECKING:  # the client side reads no setting: agent.security.auth is the server's
    from agent.security.auth import SigningKey

JWKS_PATH: Final = "/.well-known/jwks.json"
VERIFY_ALGORITHMS: Final = ("ES256", "ES384", "RS256", "PS256", "EdDSA")
"""Asymmetric algorithms only: never ``none``, never an HMAC keyed with a public key."""
MAX_SIGNATURES: Final = 8
MAX_JWKS_BYTES: Final = 64 * 1024
MAX_CACHED: Final = 1024


class CardSignatureError(SecurityError):
    """A card's signature did not verify, or a signature was required and the card had none."""


def _unsigned(card: AgentCard) -> AgentCard:
    copy = AgentCard()
    copy.CopyFrom(card)
    copy.ClearField("signatures")
    return copy


class CardSigner:
    """Signs cards with the agent's key, once per distinct content (the cache's key is a digest
    of the card without signatures, so a changed card is signed anew and an unchanged one,
    whoever asks for it, is not)."""

    def __init__(self, key: SigningKey, jwks_url: str) -> None:
        from agent.security.auth import SIGNING_ALGORITHM

        private = jwt.algorithms.ECAlgorithm.to_jwk(key.private_key, as_dict=True)
        self.kid = key.kid
        self.jwks_url = jwks_url
        self._sign = create_agent_card_signer(
            PyJWK(private, algorithm=SIGNING_ALGORITHM),
            {"alg": SIGNING_ALGORITHM, "kid": key.kid, "jku": jwks_url, "typ": "JOSE"},
        )
        self._signed: dict[bytes, AgentCard] = {}

    def __call__(self, card: AgentCard) -> AgentCard:
        """The card with this agent's signature (and no other); ``card`` is not changed."""
        unsigned = _unsigned(card)
        digest = hashlib.sha256(unsigned.SerializeToString(deterministic=True)).digest()
        signed = self._signed.get(digest)
        if signed is None:
            signed = self._sign(unsigned)
            if len(self._signed) < MAX_CACHED:
                self._signed[digest] = signed
        return signed


@dataclass(frozen=True)
class SignatureCheck:
    """What a verification found: the signature that verified, or that the card had none."""

    kid: str | None = None
    jku: str | None = None

    @property
    def signed(self) -> bool:
        return self.kid is not None

    def __str__(self) -> str:
        if not self.signed:
            return "not signed"
        return f"signature verified (kid {self.kid}, key from {self.jku})"


UNSIGNED: Final = SignatureCheck()


def protected_header(protected: str) -> dict[str, Any] | None:
    """A signature's protected header as a JSON object, or None when it is not one."""
    try:
        padded = protected + "=" * (-len(protected) % 4)
        header = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (binascii.Error, UnicodeError, ValueError):
        return None
    return header if isinstance(header, dict) else None


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        port = -1
    return scheme, (parts.hostname or ""), port


def key_url(header: dict[str, Any], card_url: str) -> str:
    """Where this signature's key is to be found: its ``jku``, else the JWKS on the card's
    origin. The caller checks that a ``jku`` is on the card's origin (``refusal``)."""
    jku = header.get("jku")
    if isinstance(jku, str):
        return jku
    scheme, host, port = _origin(card_url)
    return f"{scheme}://{host}:{port}{JWKS_PATH}"


def refusal(header: dict[str, Any] | None, card_url: str) -> str | None:
    """Why a signature with this protected header cannot verify, before any key is fetched;
    None when it may."""
    if header is None:
        return "its protected header is not a base64url JSON object"
    alg = header.get("alg")
    if alg not in VERIFY_ALGORITHMS:
        return f"alg {alg!r} is not accepted (only {', '.join(VERIFY_ALGORITHMS)})"
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        return "its protected header names no kid"
    jku = header.get("jku")
    if _off_origin(jku, card_url):
        return f"its jku {jku!r} is not on the card's origin"
    return None


def _off_origin(jku: object, card_url: str) -> bool:
    """A ``jku`` that is present and not a URL on the card's origin: a card rewritten on the
    way could name its own key set there."""
    return jku is not None and (not isinstance(jku, str) or _origin(jku) != _origin(card_url))


class CardVerifier:
    """Verifies cards with a2a-sdk's verifier, the keys taken from the card's own origin.

    One per client: it keeps the key sets it fetched (fetched again once when a ``kid`` is not
    in them: the agent may have a new key) and the cards it verified (a governed client reads
    the card before each call)."""

    def __init__(self, http: httpx.AsyncClient, *, require_signature: bool = False) -> None:
        self._http = http
        self.require_signature = require_signature
        self._keys: dict[str, PyJWKSet] = {}
        self._verified: dict[bytes, SignatureCheck] = {}

    async def verify(self, card: AgentCard, card_url: str) -> SignatureCheck:
        """Which signature of ``card`` verified; raises ``CardSignatureError`` when none does,
        or when the card has none and a signature is required."""
        if not card.signatures:
            if self.require_signature:
                raise CardSignatureError(f"the card at {card_url} is not signed")
            return UNSIGNED
        if len(card.signatures) > MAX_SIGNATURES:
            raise CardSignatureError(
                f"the card at {card_url} has {len(card.signatures)} signatures "
                f"(at most {MAX_SIGNATURES} are read)"
            )
        memo = hashlib.sha256(
            card_url.encode() + b"\0" + card.SerializeToString(deterministic=True)
        ).digest()
        known = self._verified.get(memo)
        if known is not None:
            return known
        check = await self._verify(card, card_url)
        if len(self._verified) < MAX_CACHED:
            self._verified[memo] = check
        return check

    async def _verify(self, card: AgentCard, card_url: str) -> SignatureCheck:
        headers = [protected_header(s.protected) for s in card.signatures]
        reasons = [refusal(h, card_url) for h in headers]
        candidates = [h for h, why in zip(headers, reasons, strict=True) if h and why is None]
        problems = [why for why in reasons if why is not None]
        wanted: dict[str, set[str]] = {}
        for header in candidates:
            wanted.setdefault(key_url(header, card_url), set()).add(str(header["kid"]))
        for url, kids in sorted(wanted.items()):
            problem = await self._fetch(url, kids)
            held = self._keys.get(url)
            if problem is None and held is not None:
                problems += [f"kid {k} is not in {url}" for k in sorted(kids) if not _has(held, k)]
            elif problem:
                problems.append(problem)
        used: list[SignatureCheck] = []

        def key_for(kid: str | None, jku: str | None) -> PyJWK:
            if not isinstance(kid, str) or not kid or _off_origin(jku, card_url):
                raise jwt.InvalidKeyError("no key may verify this signature")
            url = key_url({"jku": jku} if jku is not None else {}, card_url)
            try:
                key = self._keys[url][kid]
            except KeyError:
                raise jwt.InvalidKeyError(f"kid {kid} is not in {url}") from None
            used.append(SignatureCheck(kid, url))
            return key

        verify = create_signature_verifier(key_for, list(VERIFY_ALGORITHMS))
        try:
            verify(card)
        except SignatureVerificationError:
            if not problems:
                problems.append("the signature does not match the card's content")
            raise CardSignatureError(
                f"the card at {card_url} has no valid signature: " + "; ".join(problems)
            ) from None
        return used[-1]  # the SDK stops at the first signature that verifies

    async def _fetch(self, url: str, kids: Iterable[str]) -> str | None:
        """Load the key set at ``url`` unless the one held has every kid; a reason if it fails."""
        held = self._keys.get(url)
        if held is not None and all(_has(held, kid) for kid in kids):
            return None
        try:
            response = await self._http.get(url)
            response.raise_for_status()
            if len(response.content) > MAX_JWKS_BYTES:
                return f"the key set at {url} is over {MAX_JWKS_BYTES} bytes"
            document = response.json()
            if not isinstance(document, dict):
                return f"the key set at {url} is not a JSON object"
            self._keys[url] = PyJWKSet.from_dict(document)
        except (httpx.HTTPError, ValueError, jwt.PyJWTError) as exc:
            return f"no key set at {url} ({type(exc).__name__}: {exc})"
        return None


def _has(keys: PyJWKSet, kid: str) -> bool:
    return any(key.key_id == kid for key in keys.keys)
