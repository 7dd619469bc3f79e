"""The agent's own proof on a push notification: a short-lived JWT over the exact body.

When a config names no credentials of its own, each notification carries
``Authorization: Bearer <jwt>``, signed ES256 with the agent's key (the key its cards are signed
with); the JWS header names the key (``kid``) and where it is published (``jku``, the agent's
``/.well-known/jwks.json``). The claims bind it to one delivery: ``iss`` the agent's public URL,
``aud`` the config's URL, ``task_id``, ``iat``/``exp`` a few minutes apart, ``jti`` a random
id (a receiver may refuse one it has seen), and ``body_sha256`` the hex SHA-256 of the body
as sent. docs/push-notifications.md says how a receiver checks it.
"""

from __future__ import annotations

import hashlib
import time

import jwt

from agent.base.ids import random_hex
from agent.security.auth import SIGNING_ALGORITHM, SigningKey

LIFETIME_SECONDS = 300


class NotificationSigner:
    """Signs notifications with the agent's key."""

    def __init__(self, key: SigningKey, issuer: str, jwks_url: str) -> None:
        self._key = key
        self._issuer = issuer
        self._header = {"kid": key.kid, "jku": jwks_url, "typ": "JWT"}

    def token(self, url: str, task_id: str, body: bytes) -> str:
        """The bearer token for posting ``body`` about ``task_id`` to ``url``."""
        now = int(time.time())
        claims = {
            "iss": self._issuer,
            "aud": url,
            "iat": now,
            "exp": now + LIFETIME_SECONDS,
            "jti": random_hex(),
            "task_id": task_id,
            "body_sha256": hashlib.sha256(body).hexdigest(),
        }
        return jwt.encode(
            claims, self._key.private_key, algorithm=SIGNING_ALGORITHM, headers=self._header
        )
