"""Fixed text for the SDK's own request errors, which quote the caller's input back.

a2a-sdk answers a request it cannot parse with protobuf's ParseError text (``Failed to parse
historyLength field: invalid literal for int() with base 10: '<value>'``, ``Struct must be in
a dict which is <value>``) in ``error.data[].metadata.parseError`` on JSON-RPC and in
``error.message`` on HTTP+JSON; the JSON-RPC library says ``Incorrect params <value>``; and an
unsupported ``A2A-Version`` is quoted in ``VersionNotSupportedError``; a JSON-RPC body that is
not JSON gets ``json``'s own text (``Expecting value: line 1 column 13 (char 12)``). These are
built inside the SDK's dispatchers, before any hook of ours runs, so this pure-ASGI layer
rewrites them: the field is named (a JSON Pointer of protocol field names), the value never is.

Only error answers are touched and successful or streamed ones are never buffered: on HTTP+JSON
only a 400 JSON answer is held; on JSON-RPC (errors come with status 200) the start of a JSON
answer is held until its first body message, which is read only when it is the whole body and
begins with ``{"error":``. Everything else passes through as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from a2a.types import a2a_pb2
from a2a.utils.constants import PROTOCOL_VERSION_1_0
from google.protobuf.descriptor import Descriptor
from starlette.types import ASGIApp, Message, Receive, Scope, Send

VERSION_TEXT = f"this A2A version is not supported; send A2A-Version: {PROTOCOL_VERSION_1_0}"
UNPARSED_TEXT = "the request does not parse"
NOT_JSON_TEXT = "the request body is not valid JSON"
PARAMS_TEXT = "params must be an object"
ENVELOPE_TEXT = "not a valid JSON-RPC 2.0 request"
VERSION_NOT_SUPPORTED = -32009  # JSON-RPC code of VersionNotSupportedError
INVALID_REQUEST = -32600
PARSE_ERROR = -32700
_JSONRPC_ERROR = b'{"error":'  # how the SDK's JSON-RPC error answers begin (compact, error first)
_FAILED_FIELD = re.compile(r"Failed to parse ([A-Za-z_][A-Za-z0-9_]{0,63}) field: ")
_MAX_DEPTH = 16


def _messages(descriptor: Descriptor) -> Iterator[Descriptor]:
    yield descriptor
    for nested in descriptor.nested_types:
        yield from _messages(nested)


# Every protocol field name, proto and JSON spelling: the only names a pointer may hold. The
# parser names only fields it found (unknown members are ignored), but a name not in this set
# is not named.
FIELD_NAMES = frozenset(
    name
    for top in a2a_pb2.DESCRIPTOR.message_types_by_name.values()
    for message in _messages(top)
    for field in message.fields
    for name in (field.name, field.json_name)
)


def parse_error_text(raw: str) -> str:
    """The fixed text for a ParseError: the pointer of the field that failed, not the value."""
    if raw.startswith("Failed to load JSON"):
        return NOT_JSON_TEXT
    names: list[str] = []
    rest = raw
    while len(names) < _MAX_DEPTH:
        match = _FAILED_FIELD.match(rest)
        if match is None or match.group(1) not in FIELD_NAMES:
            break
        names.append(match.group(1))
        rest = rest[match.end() :]
    return f"invalid value at /{'/'.join(names)}" if names else UNPARSED_TEXT


def _envelope_text(raw: str) -> str:
    """The JSON-RPC library's refusals of the envelope, without the value it quotes."""
    return PARAMS_TEXT if raw.startswith("Incorrect params") else ENVELOPE_TEXT


def _dump(document: Any) -> bytes:
    """As Starlette's JSONResponse renders."""
    return json.dumps(
        document, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")
    ).encode("utf-8")


def _error_object(body: bytes) -> tuple[dict[str, Any], dict[str, Any]] | None:
    try:
        document = json.loads(body)
    except ValueError:
        return None
    error = document.get("error") if isinstance(document, dict) else None
    return (document, error) if isinstance(error, dict) else None


def scrub_jsonrpc(body: bytes) -> bytes | None:
    """A JSON-RPC error answer with fixed text, or None when there is nothing to change."""
    if not body.startswith(_JSONRPC_ERROR):
        return None
    found = _error_object(body)
    if found is None:
        return None
    document, error = found
    changed = False
    if error.get("code") == VERSION_NOT_SUPPORTED:
        error["message"] = VERSION_TEXT
        changed = True
    elif error.get("code") == PARSE_ERROR and error.get("message") != NOT_JSON_TEXT:
        error["message"] = NOT_JSON_TEXT  # the SDK sends json's own text (line, column, char)
        changed = True
    data = error.get("data")
    for info in data if isinstance(data, list) else [data]:
        metadata = info.get("metadata") if isinstance(info, dict) else None
        if isinstance(metadata, dict) and "parseError" in metadata:
            raw = str(metadata["parseError"])
            invalid_request = error.get("code") == INVALID_REQUEST
            metadata["parseError"] = (
                _envelope_text(raw) if invalid_request else parse_error_text(raw)
            )
            changed = True
    return _dump(document) if changed else None


def scrub_rest(body: bytes) -> bytes | None:
    """An HTTP+JSON error answer with fixed text, or None when there is nothing to change.

    The SDK's INVALID_REQUEST answers are all its own request-level text (parse errors, a
    body it could not read); this agent raises none of them.
    """
    found = _error_object(body)
    if found is None:
        return None
    document, error = found
    details = error.get("details")
    reasons = {d.get("reason") for d in details if isinstance(d, dict)} if details else set()
    if "VERSION_NOT_SUPPORTED" in reasons:
        error["message"] = VERSION_TEXT
    elif "INVALID_REQUEST" in reasons:
        error["message"] = parse_error_text(str(error.get("message", "")))
    else:
        return None
    return _dump(document)


def _is_json(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(
        k.lower() == b"content-type" and v.startswith(b"application/json") for k, v in headers
    )


def _with_length(headers: list[tuple[bytes, bytes]], length: int) -> list[tuple[bytes, bytes]]:
    kept = [(k, v) for k, v in headers if k.lower() != b"content-length"]
    return [*kept, (b"content-length", str(length).encode())]


class ErrorScrubMiddleware:
    """Rewrites the SDK's parse and version errors on the A2A paths (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, jsonrpc_path: str, rest_path: str) -> None:
        self.app = app
        self.jsonrpc_paths = {jsonrpc_path, jsonrpc_path + "/"}
        self.rest_prefix = rest_path.rstrip("/") + "/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        scrub: Callable[[bytes], bytes | None]
        if path in self.jsonrpc_paths:
            scrub, status = scrub_jsonrpc, 200  # JSON-RPC errors come with 200
        elif path.startswith(self.rest_prefix):
            scrub, status = scrub_rest, 400  # every error this rewrites is a 400
        else:
            await self.app(scope, receive, send)
            return
        held: Message | None = None

        async def send_scrubbed(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                if message["status"] == status and _is_json(message.get("headers", [])):
                    held = message  # until the first body message says what this answer is
                    return
            elif held is not None:
                start, held = held, None
                if not message.get("more_body", False):  # the whole body: an SDK JSONResponse
                    replaced = scrub(message.get("body", b""))
                    if replaced is not None:
                        headers = _with_length(list(start.get("headers", [])), len(replaced))
                        start = {**start, "headers": headers}
                        message = {**message, "body": replaced}
                await send(start)
            await send(message)

        await self.app(scope, receive, send_scrubbed)
