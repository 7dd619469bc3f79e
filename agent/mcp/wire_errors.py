"""The JSON-RPC errors MCP answers with: the code kept, a fixed text, nothing of the input.

The MCP SDK writes its own words into the errors it answers: the unknown method name in
``data`` (whole, however long, HTML and all), pydantic's validation dump with the input values
and its documentation URLs, the JSON parser's positions, a handler's Python exception text
(with code 0). The A2A bindings answer with fixed texts; so does MCP. Every JSON-RPC error
leaving either transport (``agent/mcp/endpoint.py`` over HTTP, ``agent/mcp/server.py`` over
stdio) is rebuilt here from its code alone: a JSON-RPC code keeps its code and gets this
module's text, and so does each of MCP's own codes; any other code (the SDK's 0 for an
exception) is an internal error. ``data`` is dropped, except the protocol versions a -32022
carries for the client to negotiate with (``version_data``). Tool errors are not JSON-RPC
errors: they are tool results whose texts the agent writes itself (``agent/mcp/projection.py``).

Pure JSON: imported by the HTTP endpoint before the SDK is.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

CONNECTION_CLOSED: Final = -32000
REQUEST_TIMEOUT: Final = -32001
HEADER_MISMATCH: Final = -32020
MISSING_CAPABILITY: Final = -32021
UNSUPPORTED_VERSION: Final = -32022

TEXTS: Final[dict[int, str]] = {
    PARSE_ERROR: "the request body is not valid JSON",
    INVALID_REQUEST: "not a valid JSON-RPC 2.0 request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    CONNECTION_CLOSED: "Connection closed",
    REQUEST_TIMEOUT: "Request timed out",
    HEADER_MISMATCH: "the MCP headers do not match the request",
    MISSING_CAPABILITY: "the request needs a client capability it did not declare",
    UNSUPPORTED_VERSION: "unsupported MCP protocol version; pick one of data.supported",
}
"""The one text each code is answered with: JSON-RPC's, and MCP's own (a client negotiates
the protocol version on -32022)."""
_VERSION = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

NOT_ALLOWED: Final = (
    "Method not allowed: the MCP endpoint is stateless and takes POST only "
    "(no server stream, no session to end)"
)
NOT_ACCEPTABLE: Final = "Not acceptable: the request must accept application/json"
UNSUPPORTED_TYPE: Final = "Unsupported media type: the request body must be application/json"
STATUS_TEXTS: Final[dict[int, tuple[int, str]]] = {
    405: (INVALID_REQUEST, NOT_ALLOWED),
    406: (INVALID_REQUEST, NOT_ACCEPTABLE),
    415: (INVALID_REQUEST, UNSUPPORTED_TYPE),
}
"""HTTP refusals whose reason is the HTTP status itself, not the body's content."""


def fixed_error(code: Any, status: int | None = None, data: Any = None) -> dict[str, Any]:
    """The error object to answer for ``code`` (and the HTTP ``status``, if any): no input,
    no library text, no ``data`` but the protocol versions of a -32022 (``version_data``)."""
    if status in STATUS_TEXTS:
        code, text = STATUS_TEXTS[status]
        return {"code": code, "message": text}
    if type(code) is not int or code not in TEXTS:
        code = INTERNAL_ERROR
    error: dict[str, Any] = {"code": code, "message": TEXTS[code]}
    if code == UNSUPPORTED_VERSION:
        error["data"] = version_data(data)
    return error


def version_data(data: Any) -> dict[str, Any]:
    """A -32022's data: the versions this server supports (its own list), and the one asked
    for only if it has a version's form (``YYYY-MM-DD``; anything else is not repeated)."""
    data = data if isinstance(data, dict) else {}
    supported = data.get("supported")
    versions = (
        [v for v in supported if isinstance(v, str) and _VERSION.fullmatch(v)]
        if isinstance(supported, list)
        else []
    )
    requested = data.get("requested")
    if not (isinstance(requested, str) and _VERSION.fullmatch(requested)):
        requested = ""
    return {"supported": versions, "requested": requested}


def error_body(code: int, status: int | None = None) -> bytes:
    """A whole JSON-RPC error answer with ``id`` null (the request could not be read)."""
    answer = {"jsonrpc": "2.0", "id": None, "error": fixed_error(code, status)}
    return json.dumps(answer, separators=(",", ":")).encode()


def fixed_body(body: bytes, status: int) -> bytes | None:
    """``body`` with each JSON-RPC error in it rebuilt by ``fixed_error``; None when it holds
    no error. A body that is not JSON-RPC at all (the SDK's plain-text refusals) becomes a
    JSON-RPC error for its HTTP status."""
    if status < 400 and b'"error"' not in body:
        return None
    try:
        answer = json.loads(body) if body else None
    except ValueError:
        answer = None
    if isinstance(answer, dict) and "error" in answer:
        return _dumps(_fixed_answer(answer, status))
    if isinstance(answer, list) and any(isinstance(a, dict) and "error" in a for a in answer):
        return _dumps([_fixed_answer(a, status) if isinstance(a, dict) else a for a in answer])
    if status >= 400:
        return error_body(INTERNAL_ERROR if status >= 500 else INVALID_REQUEST, status)
    return None


def _fixed_answer(answer: dict[str, Any], status: int) -> dict[str, Any]:
    if "error" not in answer:
        return answer
    error = answer["error"] if isinstance(answer["error"], dict) else {}
    fixed = fixed_error(error.get("code"), status, error.get("data"))
    return {"jsonrpc": "2.0", "id": answer.get("id"), "error": fixed}


def _dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()
