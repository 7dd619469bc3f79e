"""``netagent listen``: a webhook receiver that checks each push notification as any receiver
should, then prints it (docs/push-notifications.md).

A notification is accepted when its ``Authorization: Bearer`` JWT verifies with a key of the
agent's JWKS (fetched from the agent named on the command line; the JWS header's ``jku`` must be
on that agent's origin, and a ``kid`` not yet seen fetches the key set again once), ``iss`` is
the agent, ``aud`` is the URL it was posted to, it has not expired, and ``body_sha256`` is the
SHA-256 of the body as received; and, with ``--token``, when ``X-A2A-Notification-Token`` is
that token. Anything else is answered 401 and printed as refused, with the reason.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
import jwt
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agent.base.errors import SecurityError
from agent.security.card_signatures import JWKS_PATH, MAX_JWKS_BYTES, VERIFY_ALGORITHMS

MAX_BODY_BYTES = 4 * 1024 * 1024
TOKEN_HEADER = "x-a2a-notification-token"


class NotificationRefusedError(SecurityError):
    """A notification that did not verify; the text says why."""


@dataclass(frozen=True)
class Notification:
    """A verified notification: the task it is about, its state, the key that signed it."""

    task_id: str
    state: str
    kid: str
    document: dict[str, Any]

    def line(self) -> str:
        """One line for the terminal."""
        return f"{self.task_id} {self.state} (signature verified, kid {self.kid})"


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, parts.hostname or "", parts.port or default


def _summary(document: dict[str, Any]) -> tuple[str, str]:
    """(task id, state) of a StreamResponse's task or status update."""
    task, update = document.get("task"), document.get("statusUpdate")
    if isinstance(task, dict):
        return str(task.get("id", "")), str(task.get("status", {}).get("state", ""))
    if isinstance(update, dict):
        return str(update.get("taskId", "")), str(update.get("status", {}).get("state", ""))
    return "", ""


class NotificationVerifier:
    """Verifies notifications from one agent (its base URL), keeping its key set."""

    def __init__(self, agent_url: str, http: httpx.AsyncClient, token: str | None = None) -> None:
        self._agent = agent_url.rstrip("/")
        self._http = http
        self._token = token
        self._keys: jwt.PyJWKSet | None = None

    async def verify(self, url: str, headers: dict[str, str], body: bytes) -> Notification:
        """The notification posted to ``url`` (a config's URL with no path is posted to
        ``/``: either form is the audience); raises ``NotificationRefusedError``."""
        if self._token is not None and not hmac.compare_digest(
            headers.get(TOKEN_HEADER, "").encode(), self._token.encode()
        ):
            raise NotificationRefusedError(f"{TOKEN_HEADER} is not the expected token")
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise NotificationRefusedError("no bearer token")
        try:
            header = jwt.get_unverified_header(token)
            key = await self._key(header)
            claims = jwt.decode(
                token,
                key,
                algorithms=list(VERIFY_ALGORITHMS),
                audience=[url, url.removesuffix("/")],
                issuer=self._agent,
                options={"require": ["exp", "iat", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise NotificationRefusedError(f"the token does not verify: {exc}") from None
        if claims.get("body_sha256") != hashlib.sha256(body).hexdigest():
            raise NotificationRefusedError("body_sha256 is not the SHA-256 of the body")
        try:
            document = json.loads(body)
        except ValueError:
            raise NotificationRefusedError("the body is not JSON") from None
        task_id, state = _summary(document if isinstance(document, dict) else {})
        if task_id != claims.get("task_id"):
            raise NotificationRefusedError("the body is about another task than the token")
        return Notification(task_id, state, str(header.get("kid")), document)

    async def load_keys(self) -> None:
        """Read the agent's key set now; raises ``NotificationRefusedError`` if it cannot."""
        self._keys = await self._fetch()

    async def _key(self, header: dict[str, Any]) -> jwt.PyJWK:
        """The key ``header`` names, from the agent's own key set."""
        jku, kid = header.get("jku"), header.get("kid")
        if not isinstance(jku, str) or _origin(jku) != _origin(self._agent):
            raise NotificationRefusedError("the token's jku is not on the agent's origin")
        for attempt in range(2):
            if self._keys is None or attempt:
                self._keys = await self._fetch()
            found = next((k for k in self._keys.keys if k.key_id == kid), None)
            if found is not None:
                return found
        raise NotificationRefusedError(f"kid {kid!r} is not in the agent's key set")

    async def _fetch(self) -> jwt.PyJWKSet:
        try:
            response = await self._http.get(self._agent + JWKS_PATH)
            response.raise_for_status()
            if len(response.content) > MAX_JWKS_BYTES:
                raise NotificationRefusedError("the agent's key set is too large")
            return jwt.PyJWKSet.from_dict(response.json())
        except (httpx.HTTPError, ValueError, jwt.PyJWTError) as exc:
            raise NotificationRefusedError(f"no key set from the agent: {exc}") from None


def receiver_app(
    verifier: NotificationVerifier,
    public_url: str,
    shown: Callable[[Notification | None, str], None],
) -> Starlette:
    """A Starlette app taking POSTs on any path; ``public_url``: where the agent posts (the
    base the path is appended to, the token's audience); ``shown`` gets each outcome."""

    async def receive(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            shown(None, "refused: the body is too large")
            return Response(status_code=413)
        url = public_url.rstrip("/") + request.url.path
        if request.url.query:
            url += "?" + request.url.query
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            notification = await verifier.verify(url, headers, body)
        except NotificationRefusedError as refusal:
            shown(None, f"refused: {refusal}")
            return Response(status_code=401)
        shown(notification, notification.line())
        return Response(status_code=204)

    return Starlette(routes=[Route("/{path:path}", receive, methods=["POST"])])


async def listen(
    agent_url: str,
    *,
    host: str,
    port: int,
    public_url: str | None,
    token: str | None,
    count: int | None,
    out: Callable[[str], None],
    as_json: bool = False,
) -> int:
    """Receive until interrupted, or until ``count`` notifications verified; how many did."""
    import uvicorn

    verified = 0

    def shown(notification: Notification | None, line: str) -> None:
        nonlocal verified
        if notification is not None and as_json:
            line = json.dumps(notification.document, separators=(",", ":"))
        out(line)
        if notification is not None:
            verified += 1
            if count is not None and verified >= count:
                server.should_exit = True

    base = public_url or f"http://{host}:{port}"
    async with httpx.AsyncClient(timeout=10) as http:
        verifier = NotificationVerifier(agent_url, http, token)
        await verifier.load_keys()  # before listening: an agent that is not there says so
        app = receiver_app(verifier, base, shown)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off")
        server = uvicorn.Server(config)
        out(f"listening on {base}/ for notifications from {agent_url.rstrip('/')}")
        await server.serve()
    return verified
