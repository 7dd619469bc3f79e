"""Authenticate every HTTP request at the edge, deny by default.

Open without a token: the public card, the JWKS, health, and a message that explicitly asks
for a skill an anonymous caller is entitled to (the policy decides which). Everything else
needs a valid bearer token; a missing or bad one gets 401 with ``WWW-Authenticate``, in the
error shape of the binding asked (agent/edge/wire_errors.py): a JSON-RPC error answer with the
request's id on the JSON-RPC path, the ``google.rpc.Status`` shape everywhere else.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent.edge.wire_errors import EDGE_DOMAIN, UNAUTHENTICATED, UNAVAILABLE, send_error
from agent.security.auth import IssuerUnavailableError, TokenError, TokenVerifier
from agent.security.principal import ANONYMOUS, Principal, PrincipalUser

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset(
    {
        "/.well-known/agent-card.json",
        "/.well-known/jwks.json",
        "/healthz",
        "/metrics",
        "/oauth/token",
    }
)
"""The token endpoint authenticates its client by the actor token, not a bearer header;
/metrics is open as scrapers expect (bounded labels, no tenant data; NETAGENT_METRICS=off)."""
SEND_METHODS = frozenset({"SendMessage", "SendStreamingMessage"})
REST_SEND_SUFFIXES = ("/message:send", "/message:stream")
MAX_ANONYMOUS_BODY = 256 * 1024
RETRY_AFTER_SECONDS = 5
CONSOLE_OPEN_PATHS = frozenset({"/console/login"})
CONSOLE_OPEN_PREFIX = "/console/static/"
"""The console's login page and its assets (docs/console.md); its other pages need a token."""


def _requested_skill(path: str, body: bytes, jsonrpc_path: str, rest_path: str) -> str | None:
    """The skill an anonymous send names in its Data Part, if the request is such a send."""
    try:
        request = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(request, dict):
        return None
    if path.rstrip("/") == jsonrpc_path:
        if request.get("method") not in SEND_METHODS or not isinstance(request.get("params"), dict):
            return None
        request = request["params"]
    elif not (path.startswith(rest_path) and path.endswith(REST_SEND_SUFFIXES)):
        return None
    message = request.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list) or len(parts) != 1 or not isinstance(parts[0], dict):
        return None
    data = parts[0].get("data")
    skill = data.get("skill") if isinstance(data, dict) else None
    return skill if isinstance(skill, str) else None


class BearerAuthMiddleware:
    """Pure ASGI, so it works for JSON, SSE and every mounted sub-app alike."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        verifier: TokenVerifier,
        anonymous_skill: Callable[[str], bool],
        jsonrpc_path: str,
        rest_path: str,
        error_domain: str = EDGE_DOMAIN,
    ) -> None:
        self.app = app
        self.verifier = verifier
        self.error_domain = error_domain  # the deployment's, for the edge's own reasons
        self.anonymous_skill = anonymous_skill
        self.jsonrpc_path = jsonrpc_path
        self.rest_path = rest_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        # Every Authorization header counts: with dict() the last one would win, and a bad token
        # sent before a good one would be silently dropped (RFC 6750 §2: one method, one token).
        credentials = [value for name, value in scope["headers"] if name == b"authorization"]
        if len(credentials) > 1:
            await self._unauthorized(scope, receive, send, ONE_CREDENTIAL, "invalid_request")
            return
        authorization = credentials[0] if credentials else None
        if authorization is not None:
            await self._authenticated(scope, receive, send, authorization)
            return
        console_open = path in CONSOLE_OPEN_PATHS or path.startswith(CONSOLE_OPEN_PREFIX)
        if path in OPEN_PATHS or console_open or scope["method"] == "OPTIONS":
            scope["user"] = PrincipalUser(ANONYMOUS)
            await self.app(scope, receive, send)
            return
        body = None
        if scope["method"] == "POST":
            body, receive = await _buffer(receive, MAX_ANONYMOUS_BODY)
            skill = body is not None and _requested_skill(
                path, body, self.jsonrpc_path, self.rest_path
            )
            if skill and self.anonymous_skill(skill):
                scope["user"] = PrincipalUser(ANONYMOUS)
                await self.app(scope, receive, send)
                return
        await self._unauthorized(scope, receive, send, AUTHENTICATION_REQUIRED, None, body)

    async def _authenticated(
        self, scope: Scope, receive: Receive, send: Send, authorization: bytes
    ) -> None:
        verdict = verify_bearer(self.verifier, authorization.decode("latin-1"))
        if isinstance(verdict, Refusal):
            if verdict.unavailable:
                await self._unavailable(scope, receive, send, verdict.description)
            else:
                await self._unauthorized(scope, receive, send, verdict.description, verdict.error)
            return
        scope["user"] = PrincipalUser(verdict)
        scope["auth"] = sorted(verdict.scopes)
        await self.app(scope, receive, send)

    def _is_jsonrpc(self, scope: Scope) -> bool:
        return bool(scope["path"].rstrip("/") == self.jsonrpc_path and scope["method"] == "POST")

    async def _request_body(
        self, scope: Scope, receive: Receive, body: bytes | None
    ) -> bytes | None:
        """The body a JSON-RPC refusal reads its id from (already read, or read now)."""
        if body is not None or not self._is_jsonrpc(scope):
            return body
        body, _ = await _buffer(receive, MAX_ANONYMOUS_BODY)
        return body

    async def _unavailable(
        self, scope: Scope, receive: Receive, send: Send, description: str
    ) -> None:
        """Verification could not be done (its dependency is down): retry, nothing is wrong yet."""
        await send_error(
            send,
            UNAVAILABLE,
            description,
            jsonrpc=self._is_jsonrpc(scope),
            body=await self._request_body(scope, receive, None),
            metadata={"retry_after": str(RETRY_AFTER_SECONDS)},
            headers=[(b"retry-after", str(RETRY_AFTER_SECONDS).encode())],
            edge_domain=self.error_domain,
        )

    async def _unauthorized(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        description: str,
        error: str | None,
        body: bytes | None = None,
    ) -> None:
        """401 with the RFC 6750 challenge; the ErrorInfo carries its ``error`` code too."""
        await send_error(
            send,
            UNAUTHENTICATED,
            description,
            jsonrpc=self._is_jsonrpc(scope),
            body=await self._request_body(scope, receive, body),
            metadata={"scheme": "Bearer", **({"error": error} if error else {})},
            headers=[(b"www-authenticate", challenge(description, error).encode())],
            edge_domain=self.error_domain,
        )


_HTTP_SPACE = " \t"


@dataclass(frozen=True)
class Refusal:
    """Why a credential let nobody in: 401 (``error`` is RFC 6750's code), or 503 when
    ``unavailable`` (the issuer cannot be reached: retry, nothing is wrong with the token)."""

    description: str
    error: str | None
    unavailable: bool = False


def verify_bearer(verifier: TokenVerifier, authorization: str) -> Principal | Refusal:
    """One ``Authorization`` value (HTTP header or gRPC metadata) to its principal, or why not.

    Every binding authenticates through this function, so a token means the same thing on
    each; an unexpected failure of the verifier never lets the caller in.
    """
    scheme, _, token = authorization.partition(" ")
    token = token.strip(_HTTP_SPACE)  # RFC 7235's spaces only: no other whitespace is forgiven
    if scheme.lower() != "bearer" or not token:
        return Refusal("expected 'Authorization: Bearer <token>'", "invalid_request")
    try:
        return verifier.verify(token)
    except TokenError as exc:
        return Refusal(exc.description, "invalid_token")
    except IssuerUnavailableError:
        log.warning("token issuer's JWKS unreachable; answering 503")
        return Refusal(
            "the token issuer cannot be reached to verify the token", None, unavailable=True
        )
    except Exception:  # a JWKS outage must not become a 500 or let the caller in
        log.exception("token verification failed unexpectedly")
        return Refusal("token could not be verified", "invalid_token")


ONE_CREDENTIAL = "expected exactly one Authorization header"
AUTHENTICATION_REQUIRED = "authentication required"


async def _buffer(receive: Receive, limit: int) -> tuple[bytes | None, Receive]:
    """Read the body (up to ``limit``) and hand back a receive that replays it."""
    chunks: list[bytes] = []
    size = 0
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None, receive
        chunks.append(chunk)
        more = message.get("more_body", False)
    body = b"".join(chunks)
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


def challenge(description: str, error: str | None) -> str:
    """The ``WWW-Authenticate`` value of a refusal (RFC 6750 §3), on every binding."""
    value = 'Bearer realm="netagent"'
    if error:
        safe = description.replace('"', "'")
        value += f', error="{error}", error_description="{safe}"'
    return value
