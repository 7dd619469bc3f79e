"""Bounds on what a client may send, so bad input costs a clear error and bounded memory.

Two layers:

* ``BodyLimitMiddleware`` (pure ASGI, outermost): a request body larger than
  ``max_body_bytes`` is refused with HTTP 413 while it streams in (a declared Content-Length
  is refused before a byte is read; a chunked body is counted and dropped at the limit), and
  an A2A body nested deeper than the JSON parsers survive is refused before any parser sees
  it (Python's ``json`` raises ``RecursionError`` near depth 1000, which the SDK would answer
  with an internal error, or a 500 on REST); so is an A2A body that is not UTF-8 (the
  parsers' ``UnicodeDecodeError`` meets the same fate).
* ``check_message`` (called by the request handler before routing): parts per message, string
  lengths, items per array or object, and nesting depth of Data Parts and metadata. A
  violation is the protocol's ``InvalidParamsError`` naming the limit and a JSON Pointer into
  the request, before any task exists, so an oversize message is never stored.

Error texts name the limit and where it was hit, never the offending value.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from typing import Any

from a2a.types import InvalidParamsError, Message, Role, SendMessageRequest
from google.protobuf.struct_pb2 import Struct, Value
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.types import Message as ASGIMessage

from agent.base.errors import NetagentError
from agent.base.settings import Limits
from agent.edge.wire_errors import (
    BODY_TIMEOUT,
    BODY_TOO_LARGE,
    EDGE_DOMAIN,
    NOT_UTF8,
    TOO_DEEP,
    EdgeError,
    send_error,
)
from agent.interfaces.pointer import bounded_pointer

NON_FINITE = "finite_numbers"
NUL = "no_nul"
# How much of a refused (oversize) body is read and dropped so the client can read the 413.
DRAIN_BYTES = 8 * 1024 * 1024
DRAIN_WAIT_SECONDS = 1.0  # the longest pause in a refused body before the 413 goes out anyway
MAX_INT_DIGITS = 4300  # Python's int_max_str_digits: json.loads raises ValueError past it
_LONG_DIGITS = re.compile(rb"[0-9](?<![0-9][0-9])[0-9]{%d,}" % MAX_INT_DIGITS)
"""A number too long for ``json``, tried at a run's first digit only: from each digit, runs just
short of the bound cost 4,300 steps a byte (a MiB of them held the event loop for seconds). A
digit first, so ``re`` skips to one without trying every position (a lookbehind first made a
MiB without digits cost 16 ms instead of 3)."""
TIMEOUT_TEXT = "the request body was not received in time"
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_PAIR = re.compile(rb"\[\]|\{\}")
_DIGITS = b"0123456789"
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


# -- message-level limits ---------------------------------------------------------------------


class _ExceededError(NetagentError):
    def __init__(self, limit: str, maximum: int, path: list[str | int]) -> None:
        super().__init__(limit)
        self.limit, self.maximum, self.path = limit, maximum, path


_DESCRIPTIONS = {
    "max_parts": "a message may carry at most {n} parts",
    "max_string_length": "a string may be at most {n} characters long",
    "max_items": "an array or object may hold at most {n} items",
    "max_depth": "JSON values may be nested at most {n} levels deep",
}


def _refusal(exceeded: _ExceededError) -> InvalidParamsError:
    pointer = bounded_pointer(exceeded.path)
    if exceeded.limit == NUL:  # PostgreSQL text cannot hold it, so no backend accepts it
        return InvalidParamsError(
            message=f"strings may not contain U+0000 (at {pointer or '/'})",
            data={"pointer": pointer},
        )
    if exceeded.limit == NON_FINITE:  # not a limit: JSON itself has no NaN or Infinity
        return InvalidParamsError(
            message=f"numbers must be finite: JSON has no NaN or Infinity (at {pointer or '/'})",
            data={"pointer": pointer},
        )
    message = _DESCRIPTIONS[exceeded.limit].format(n=exceeded.maximum)
    return InvalidParamsError(
        message=f"{message} (at {pointer or '/'})",
        data={"limit": exceeded.limit, "max": str(exceeded.maximum), "pointer": pointer},
    )


class _Walker:
    """Checks protobuf JSON values (Struct/Value) against the limits, iteratively bounded."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def string(self, value: str, path: list[str | int]) -> None:
        if len(value) > self.limits.max_string_length:
            raise _ExceededError("max_string_length", self.limits.max_string_length, path)
        if "\x00" in value:
            raise _ExceededError(NUL, 0, path)

    def strings(self, values: Any, path: list[str | int]) -> None:
        if len(values) > self.limits.max_items:
            raise _ExceededError("max_items", self.limits.max_items, path)
        for index, value in enumerate(values):
            self.string(value, [*path, index])

    def struct(self, struct: Struct, path: list[str | int], depth: int) -> None:
        if depth > self.limits.max_depth:
            raise _ExceededError("max_depth", self.limits.max_depth, path)
        if len(struct.fields) > self.limits.max_items:
            raise _ExceededError("max_items", self.limits.max_items, path)
        for key, value in struct.fields.items():
            self.string(key, path)  # the pointer stops at the object: keys are input too
            self.value(value, [*path, key], depth)

    def value(self, value: Value, path: list[str | int], depth: int) -> None:
        kind = value.WhichOneof("kind")
        if kind == "number_value" and not math.isfinite(value.number_value):
            # Python's json reads NaN and Infinity; protobuf then cannot write the message
            # back out (the task store and every answer would fail): refuse it here
            raise _ExceededError(NON_FINITE, 0, path)
        if kind == "string_value":
            self.string(value.string_value, path)
        elif kind == "struct_value":
            self.struct(value.struct_value, path, depth + 1)
        elif kind == "list_value":
            if depth + 1 > self.limits.max_depth:
                raise _ExceededError("max_depth", self.limits.max_depth, path)
            items = value.list_value.values
            if len(items) > self.limits.max_items:
                raise _ExceededError("max_items", self.limits.max_items, path)
            for index, item in enumerate(items):
                self.value(item, [*path, index], depth + 1)

    def message(self, message: Message, path: list[str | int]) -> None:
        if len(message.parts) > self.limits.max_parts:
            raise _ExceededError("max_parts", self.limits.max_parts, [*path, "parts"])
        for name in ("message_id", "context_id", "task_id"):
            # Length only: ids with control characters get their own answers (request_handler).
            if len(getattr(message, name)) > self.limits.max_string_length:
                field_path = [*path, _camel(name)]
                raise _ExceededError("max_string_length", self.limits.max_string_length, field_path)
        self.strings(message.extensions, [*path, "extensions"])
        self.strings(message.reference_task_ids, [*path, "referenceTaskIds"])
        if message.HasField("metadata"):
            self.struct(message.metadata, [*path, "metadata"], 1)
        for index, part in enumerate(message.parts):
            where: list[str | int] = [*path, "parts", index]
            for name in ("text", "url", "media_type", "filename"):
                self.string(getattr(part, name), [*where, _camel(name)])
            if part.HasField("data"):
                self.value(part.data, [*where, "data"], 0)
            if part.HasField("metadata"):
                self.struct(part.metadata, [*where, "metadata"], 1)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def _check_shape(message: Message) -> None:
    """What the SDK's task creation requires of a user message (it raises ValueError else)."""
    if message.role != Role.ROLE_USER:
        raise InvalidParamsError(
            message="message.role must be ROLE_USER", data={"pointer": "/message/role"}
        )
    if not message.parts:
        raise InvalidParamsError(
            message="a message needs at least one part", data={"pointer": "/message/parts"}
        )
    for index, part in enumerate(message.parts):
        if part.HasField("text") and not part.text:
            pointer = f"/message/parts/{index}/text"
            raise InvalidParamsError(
                message=f"a text part may not be empty (at {pointer})", data={"pointer": pointer}
            )


def check_message(params: SendMessageRequest, limits: Limits) -> None:
    """Refuse a send whose message or metadata exceeds the limits (InvalidParamsError).

    Also refused here, as the SDK would otherwise fail on them with an internal error when it
    creates the task: a role other than ROLE_USER, no parts, an empty text part.

    The pointer is into the request as sent (``/message/parts/0/data/arguments/x``), so a
    client can find what to shorten; it never includes the value itself.
    """
    _check_shape(params.message)
    walker = _Walker(limits)
    try:
        walker.message(params.message, ["message"])
        if params.HasField("metadata"):
            walker.struct(params.metadata, ["metadata"], 1)
        if params.HasField("configuration"):
            walker.strings(
                params.configuration.accepted_output_modes,
                ["configuration", "acceptedOutputModes"],
            )
    except _ExceededError as exceeded:
        raise _refusal(exceeded) from None


def check_json(value: Any, limits: Limits, path: list[str | int]) -> None:
    """Refuse a plain JSON value (the console's arguments) past the limits a Data Part has.

    The same limits, pointers and texts as ``check_message`` (``value`` counts as a Data
    Part's ``data`` at ``path``), walked without recursion: InvalidParamsError.
    """
    try:
        _check_plain(value, limits, path)
    except _ExceededError as exceeded:
        raise _refusal(exceeded) from None


def _check_plain(value: Any, limits: Limits, path: list[str | int]) -> None:
    walker = _Walker(limits)
    stack: list[tuple[Any, list[str | int], int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            walker.string(item, where)
        elif isinstance(item, float) and not math.isfinite(item):
            raise _ExceededError(NON_FINITE, 0, where)
        elif isinstance(item, dict | list):
            if depth + 1 > limits.max_depth:
                raise _ExceededError("max_depth", limits.max_depth, where)
            if len(item) > limits.max_items:
                raise _ExceededError("max_items", limits.max_items, where)
            if isinstance(item, dict):
                for key, member in item.items():
                    walker.string(str(key), where)
                    stack.append((member, [*where, str(key)], depth + 1))
            else:
                stack.extend((member, [*where, i], depth + 1) for i, member in enumerate(item))


# -- body-level limits ------------------------------------------------------------------------


def json_too_deep(body: bytes, limit: int) -> bool:
    """True when a JSON parser reading ``body`` would nest more than ``limit`` levels deep.

    At C speed on bytes: strings are blanked and everything but brackets dropped, then
    adjacent ``[]``/``{}`` pairs are peeled repeatedly. A valid body is deeper than ``limit``
    exactly when pairs remain after ``limit`` passes. What cannot be peeled is malformed; a
    parser fails at its first closing bracket, having nested at most the leading openers plus
    the passes it took, which bounds the depth reached there (conservatively).
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return False
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    passes = 0
    while passes <= limit:
        peeled = _PAIR.sub(b"", brackets)  # one left-to-right pass: innermost pairs only
        if peeled == brackets:
            break
        brackets = peeled
        passes += 1
    leading_openers = len(brackets) - len(brackets.lstrip(b"[{"))
    return passes + leading_openers > limit


def _long_number(body: bytes) -> bool:
    """Whether ``body`` holds a number (outside its strings) of more digits than ``json``
    reads. Counting the digits first, at C speed, spares nearly every body the pattern; one
    with many (in its strings, most likely) has its strings blanked before the search, so the
    search reads only what is left (a MiB of digit runs in a string: 27 ms searched whole)."""
    if len(body) - len(body.translate(None, _DIGITS)) <= MAX_INT_DIGITS:
        return False
    return _LONG_DIGITS.search(_STRING.sub(b'""', body)) is not None


class BodyLimitMiddleware:
    """Refuse oversize bodies (413) and over-deep A2A JSON bodies before the app sees them.

    The body is read at most up to the limit (a declared Content-Length beyond it is refused
    unread) and replayed to the app. Answers are in the binding's error shape
    (agent/edge/wire_errors.py): on the JSON-RPC path JSON-RPC error answers (``id`` null, as
    the body could not be read; -32600 with HTTP 413 for size, -32700 not UTF-8 and -32600 too
    deep with 200 like every JSON-RPC error), elsewhere ``google.rpc.Status`` with 413 or 400.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        limits: Limits,
        jsonrpc_path: str,
        rest_path: str,
        body_timeout: float = 30.0,
        json_paths: tuple[str, ...] = (),
        error_domain: str = EDGE_DOMAIN,
    ) -> None:
        self.app = app
        self.limits = limits
        self.error_domain = error_domain  # the deployment's, for the edge's own reasons
        self.jsonrpc_path = jsonrpc_path.rstrip("/")
        self.rest_path = rest_path.rstrip("/")
        self.body_timeout = body_timeout
        self.json_paths = json_paths  # further JSON endpoints (prefixes) held to the depth limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limits.max_body_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            if declared <= DRAIN_BYTES:
                await _drain(receive, DRAIN_BYTES)
            await self._too_large(scope, send)
            return
        chunks: list[bytes] = []
        size = 0
        deadline = asyncio.get_running_loop().time() + self.body_timeout
        while True:
            try:  # the whole body within body_timeout, however it trickles in
                async with asyncio.timeout_at(deadline):  # a timer, not a task per chunk
                    message = await receive()
            except TimeoutError:
                await send_error(
                    send,
                    BODY_TIMEOUT,
                    TIMEOUT_TEXT,
                    jsonrpc=self._is_jsonrpc(scope),
                    metadata={"limit": "body_timeout", "seconds": f"{self.body_timeout:g}"},
                    headers=[(b"connection", b"close")],
                    edge_domain=self.error_domain,
                )
                return
            if message["type"] != "http.request":
                return  # the client went away before sending its body
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                del chunks
                if message.get("more_body", False):
                    await _drain(receive, DRAIN_BYTES - size)
                await self._too_large(scope, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        del chunks
        if self._is_a2a(scope["path"]) or any(map(scope["path"].startswith, self.json_paths)):
            refusal = self._malformed(body)
            if refusal is not None:
                jsonrpc = self._is_jsonrpc(scope)
                error, text = refusal
                await send_error(  # JSON-RPC's errors of the body's content ride on 200
                    send,
                    error,
                    text,
                    jsonrpc=jsonrpc,
                    status=200 if jsonrpc else None,
                    edge_domain=self.error_domain,
                )
                return
        replayed = False

        async def replay() -> ASGIMessage:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _malformed(self, body: bytes) -> tuple[EdgeError, str] | None:
        """Why an A2A body cannot be parsed safely (the refusal, its message), or None.

        Not UTF-8: both parsers raise UnicodeDecodeError, which the SDK answers as an
        internal error (JSON-RPC) or a 500 (REST). Too deep: RecursionError, likewise.
        """
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return NOT_UTF8, "request body is not UTF-8 encoded JSON"
        if json.detect_encoding(body) not in ("utf-8", "utf-8-sig"):
            # NUL bytes up front make json.loads guess UTF-16/32 and fail decoding, likewise
            return NOT_UTF8, "request body is not UTF-8 encoded JSON"
        if json_too_deep(body, self.limits.max_body_depth):
            depth = self.limits.max_body_depth
            return TOO_DEEP, f"JSON nested more than {depth} levels deep"
        if _long_number(body):
            # Python's json refuses such an integer with a ValueError naming its own limit,
            # which the SDK answers as an internal error
            return TOO_DEEP, f"numbers may have at most {MAX_INT_DIGITS} digits"
        return None

    def _is_jsonrpc(self, scope: Scope) -> bool:
        return bool(scope["path"].rstrip("/") == self.jsonrpc_path and scope["method"] == "POST")

    def _is_a2a(self, path: str) -> bool:
        return path.rstrip("/") == self.jsonrpc_path or path.startswith(self.rest_path + "/")

    async def _too_large(self, scope: Scope, send: Send) -> None:
        """413 without calling the app; the unread rest of the body is dropped (and the
        connection closed): no JSON-RPC id can be read from a body that was not read."""
        limit = self.limits.max_body_bytes
        await send_error(
            send,
            BODY_TOO_LARGE,
            f"request body exceeds {limit} bytes",
            jsonrpc=self._is_jsonrpc(scope),
            metadata={"limit": "max_body_bytes", "max": str(limit)},
            headers=[(b"connection", b"close")],
            edge_domain=self.error_domain,
        )


async def _drain(receive: Receive, budget: int) -> None:
    """Read and drop the rest of a refused body, up to ``budget`` bytes.

    Closing a connection with unread data in it makes the kernel reset it, and the client then
    sees "connection reset" instead of the 413 it was sent. Reading on (and discarding: memory
    stays flat) lets a client that overshot by a little get the clear answer; past the budget
    the connection is closed anyway.
    """
    while budget > 0:
        try:  # a client that declared more than it sends must not hold the answer back
            message = await asyncio.wait_for(receive(), DRAIN_WAIT_SECONDS)
        except TimeoutError:
            return
        if message["type"] != "http.request":
            return
        budget -= len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _content_length(scope: Scope) -> int | None:
    for key, value in scope["headers"]:
        if key.lower() == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
