"""Refusals the edge answers itself, in the error shape of the binding the request came on.

The SDK's own errors have one shape per binding, and a client of either binding reads the
edge's refusals (authentication, body limits, an issuer that cannot be reached) with the same
code as the SDK's:

* HTTP+JSON (and every other path): the ``google.rpc.Status`` shape the A2A spec uses and
  ``a2a.utils.error_handlers.build_rest_error_payload`` builds: ``{"error": {"code": <HTTP
  status>, "status": <google.rpc.Code name>, "message", "details": [{"@type":
  "type.googleapis.com/google.rpc.ErrorInfo", "reason", "domain", "metadata"}]}}``.
* JSON-RPC: a JSON-RPC 2.0 error answer ``{"jsonrpc": "2.0", "id", "error": {"code",
  "message", "data": [<the same ErrorInfo>]}}``, with the request's ``id`` when the body can be
  read (the SDK's JSON-RPC errors carry their details in ``data`` likewise).

The HTTP status is the transport's answer and stays what it is on both bindings (401 with its
``WWW-Authenticate``, 413, 503 with ``Retry-After``); a refusal of the body's content that the
SDK would answer itself (not UTF-8, nested too deep) rides on 200 on JSON-RPC, as the SDK's
JSON-RPC errors do. A reason the A2A spec defines (``INVALID_REQUEST``) is in the A2A domain
(``a2a-protocol.org``); the edge's own reasons are in the deployment's domain
(``AgentIdentity.error_domain``, :data:`EDGE_DOMAIN` unless given). Metadata values are strings
(``google.rpc.ErrorInfo.metadata`` is a string map).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import Send

ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
A2A_DOMAIN = "a2a-protocol.org"
EDGE_DOMAIN = "a2a-agent.edge"
"""The domain of the reasons the edge defines (``UNAUTHENTICATED``, ...) when no deployment
names its own (the default ``AgentIdentity``'s)."""

# JSON-RPC codes. The A2A spec gives JSON-RPC no code for a refused credential or an
# unavailable dependency; -32000 is JSON-RPC's first implementation-defined server error, and
# the ErrorInfo reason in ``data`` says which (the HTTP status, 401 or 503, says it too).
JSONRPC_PARSE_ERROR = -32700
JSONRPC_INVALID_REQUEST = -32600
JSONRPC_SERVER_ERROR = -32000


class EdgeError:
    """One refusal: HTTP status, google.rpc status name, reason, its domain, JSON-RPC code."""

    def __init__(
        self,
        http_status: int,
        rpc_status: str,
        reason: str,
        *,
        domain: str | None = None,
        jsonrpc_code: int = JSONRPC_SERVER_ERROR,
    ) -> None:
        self.http_status = http_status
        self.rpc_status = rpc_status
        self.reason = reason
        self.domain = domain  # None: the agent's own edge domain, given when it is sent
        self.jsonrpc_code = jsonrpc_code


UNAUTHENTICATED = EdgeError(401, "UNAUTHENTICATED", "UNAUTHENTICATED")
UNAVAILABLE = EdgeError(503, "UNAVAILABLE", "UNAVAILABLE")
BODY_TOO_LARGE = EdgeError(
    413, "INVALID_ARGUMENT", "BODY_TOO_LARGE", jsonrpc_code=JSONRPC_INVALID_REQUEST
)
BODY_TIMEOUT = EdgeError(
    408, "DEADLINE_EXCEEDED", "BODY_TIMEOUT", jsonrpc_code=JSONRPC_INVALID_REQUEST
)
NOT_UTF8 = EdgeError(
    400, "INVALID_ARGUMENT", "INVALID_REQUEST", domain=A2A_DOMAIN, jsonrpc_code=JSONRPC_PARSE_ERROR
)
TOO_DEEP = EdgeError(
    400,
    "INVALID_ARGUMENT",
    "INVALID_REQUEST",
    domain=A2A_DOMAIN,
    jsonrpc_code=JSONRPC_INVALID_REQUEST,
)


def error_info(
    error: EdgeError, metadata: dict[str, str] | None = None, edge_domain: str = EDGE_DOMAIN
) -> dict[str, Any]:
    """The ``google.rpc.ErrorInfo`` detail, as the SDK builds its own."""
    return {
        "@type": ERROR_INFO_TYPE,
        "reason": error.reason,
        "domain": error.domain or edge_domain,
        "metadata": dict(metadata or {}),
    }


def rest_payload(
    error: EdgeError,
    message: str,
    metadata: dict[str, str] | None = None,
    edge_domain: str = EDGE_DOMAIN,
) -> dict[str, Any]:
    """The ``google.rpc.Status`` body (HTTP+JSON, and every path that is not JSON-RPC)."""
    return {
        "error": {
            "code": error.http_status,
            "status": error.rpc_status,
            "message": message,
            "details": [error_info(error, metadata, edge_domain)],
        }
    }


def jsonrpc_payload(
    error: EdgeError,
    message: str,
    request_id: str | int | None,
    metadata: dict[str, str] | None = None,
    edge_domain: str = EDGE_DOMAIN,
) -> dict[str, Any]:
    """The JSON-RPC 2.0 error answer."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {
            "code": error.jsonrpc_code,
            "message": message,
            "data": [error_info(error, metadata, edge_domain)],
        },
    }


def request_id(body: bytes | None) -> str | int | None:
    """The JSON-RPC request's ``id`` when the body is a JSON object holding a valid one.

    As the SDK reads it: a string or an integer (not a boolean); anything else is ``null``.
    Only called on bodies the body limits let through (bounded, UTF-8, not too deep).
    """
    if not body:
        return None
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    value = document.get("id")
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return value


async def send_error(
    send: Send,
    error: EdgeError,
    message: str,
    *,
    jsonrpc: bool,
    body: bytes | None = None,
    metadata: dict[str, str] | None = None,
    status: int | None = None,
    headers: list[tuple[bytes, bytes]] | None = None,
    edge_domain: str = EDGE_DOMAIN,
) -> None:
    """Answer the refusal in the binding's shape; ``body``: the request's, for its JSON-RPC id.

    ``status`` overrides the HTTP status (JSON-RPC's content errors ride on 200);
    ``edge_domain`` is the deployment's domain for the edge's own reasons.
    """
    if jsonrpc:
        payload = jsonrpc_payload(error, message, request_id(body), metadata, edge_domain)
    else:
        payload = rest_payload(error, message, metadata, edge_domain)
    encoded = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status if status is not None else error.http_status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(encoded)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": encoded})
