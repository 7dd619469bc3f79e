"""``POST /oauth/token``: the embedded issuer's RFC 8693 token-exchange endpoint.

The client authenticates with its actor token (the agent credential); the subject token is the
caller's. Errors follow RFC 6749 §5.2. Responses are never cached. A ``scope`` parameter that
is not scope-tokens separated by U+0020 (any other whitespace or a non-ASCII character in it)
is refused with ``invalid_scope``; it is never split another way (agent/security/scopes.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse

from agent.security.credentials import (
    ACCESS_TOKEN_TYPE,
    TOKEN_EXCHANGE_GRANT,
    TOKEN_TYPES,
    ExchangeError,
    LocalIssuer,
)
from agent.security.scopes import is_scope_token, scope_tokens

MAX_FORM_BYTES = 64 * 1024
CONTEXT_FIELDS = ("skill_id", "skill_version", "interface_digest", "task_id")
SCOPE_GRAMMAR = "scope is scope-tokens separated by single spaces (RFC 6749 section 3.3)"
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def _error(error: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse(
        {"error": error, "error_description": description}, status_code=status, headers=NO_STORE
    )


def token_endpoint(issuer: LocalIssuer) -> Callable[[Request], Awaitable[JSONResponse]]:
    """The route handler bound to the embedded issuer."""

    async def token(request: Request) -> JSONResponse:
        if "application/x-www-form-urlencoded" not in request.headers.get("content-type", ""):
            return _error("invalid_request", "send application/x-www-form-urlencoded")
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return _error("invalid_request", "request too large", 413)
        try:
            form = {
                k: v[0] for k, v in parse_qs(body.decode("utf-8"), strict_parsing=False).items()
            }
        except UnicodeDecodeError:
            return _error("invalid_request", "form is not UTF-8")
        if form.get("grant_type") != TOKEN_EXCHANGE_GRANT:
            return _error("unsupported_grant_type", "only token exchange is supported")
        for name in ("subject_token", "actor_token", "audience"):
            if not form.get(name):
                return _error("invalid_request", f"{name} is required")
        for name in ("subject_token_type", "actor_token_type"):
            if form.get(name, ACCESS_TOKEN_TYPE) not in TOKEN_TYPES:
                return _error("invalid_request", f"{name} is not supported")
        requested = scope_tokens(form.get("scope", ""))
        if not all(is_scope_token(piece) for piece in requested):
            return _error("invalid_scope", SCOPE_GRAMMAR)
        try:
            issued = issuer.exchange_tokens(
                subject_token=form["subject_token"],
                actor_token=form["actor_token"],
                audience=form["audience"],
                scopes=requested,
                context={k: form.get(f"ctx_{k}") for k in CONTEXT_FIELDS},
            )
        except ExchangeError as exc:
            statuses = {"invalid_client": 401, "temporarily_unavailable": 503}
            return _error(exc.error, exc.description, statuses.get(exc.error, 400))
        return JSONResponse(
            {
                "access_token": issued.access_token,
                "issued_token_type": ACCESS_TOKEN_TYPE,
                "token_type": "Bearer",
                "expires_in": issued.expires_in,
                "scope": " ".join(sorted(issued.scopes)),
            },
            headers=NO_STORE,
        )

    return token
