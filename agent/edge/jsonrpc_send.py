"""A well-formed JSON-RPC ``SendMessage`` or ``SendStreamingMessage``, answered without the SDK
dispatcher's layers.

The SDK's JSON-RPC adapter wraps each request in four tracing wrappers, a version decorator,
the jsonrpc library's request object and a method switch before it reaches the request
handler: with no tracer provider installed every span is a no-op, and still that machinery
is a fifth of a ``describe_skill`` call's CPU and a tenth of a capacity check's (bench.perf
--profile). Here the two methods every governed call uses take a straight path: the same
parse, context, version rule, handler call, printer and response as the dispatcher's, in the
same order; for a stream, the same eager first event (whose refusal is a JSON answer, not a
stream), the same event per handler event and the same error event. Anything else, and
anything unusual about a send (a batch, a notification,
extra members, an id of another type, params that do not parse, a version the rule refuses),
goes to the SDK's dispatcher untouched, so every refusal is the SDK's own; an exception that
is not the protocol's is answered as the dispatcher answers it (an internal error, logged).
With a tracer provider installed (``NETAGENT_OTEL=on``, ``opentelemetry-instrument``) every
request goes the SDK's way, spans and all.
tests/integration/test_jsonrpc_send.py holds the two ways' answers equal, request for request.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from a2a.server.jsonrpc_models import InternalError, JSONRPCError
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.server.request_handlers.response_helpers import build_error_response
from a2a.server.routes.common import ServerCallContextBuilder
from a2a.types.a2a_pb2 import SendMessageRequest, SendMessageResponse, Task
from a2a.utils import constants
from a2a.utils.errors import A2AError
from a2a.utils.json_utils import dumps
from a2a.utils.proto_utils import to_stream_response
from packaging.version import InvalidVersion, Version
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent.edge.prepared_answer import done_taking, take_task, taking
from agent.edge.sse import create_event_stream_response
from agent.edge.version import MAX_VERSION_CHARS

logger = logging.getLogger(__name__)

Endpoint = Callable[[Request], Awaitable[Response]]
Printer = Callable[..., Any]
Parser = Callable[..., Any]

_MEMBERS = frozenset({"jsonrpc", "id", "method", "params"})
_METHODS = frozenset({"SendMessage", "SendStreamingMessage"})
_EXPECTED = Version(constants.PROTOCOL_VERSION_1_0)


def version_accepted(headers: dict[str, str]) -> bool:
    """The SDK's ``validate_version`` rule for 1.0: no header means 0.3; the same major."""
    actual = headers.get(constants.VERSION_HEADER) or headers.get(constants.VERSION_HEADER.lower())
    if not actual or len(actual) > MAX_VERSION_CHARS:  # see agent/edge/version.py
        return False
    if actual == constants.PROTOCOL_VERSION_1_0:
        return True
    try:
        return Version(str(actual)).major == _EXPECTED.major
    except InvalidVersion:
        return False


OFF_LOOP_BODY = 64 * 1024
"""A body larger than this is parsed in a worker thread: a message near the body limit takes
a tenth of a second of JSON and protobuf parsing, which on the event loop would stall every
other caller (the thread gives the loop the interpreter between its steps)."""


def _plain_send(body: bytes) -> tuple[str, str | int, dict[str, Any]] | None:
    """(method, id, params) of a single well-formed send, else None (the SDK decides)."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if type(document) is not dict or not document.keys() <= _MEMBERS:
        return None
    method, request_id, params = document.get("method"), document.get("id"), document.get("params")
    if (
        document.get("jsonrpc") != "2.0"
        or type(method) is not str  # any JSON value may stand here; an object is unhashable
        or method not in _METHODS
        or type(request_id) not in (str, int)
        or type(params) is not dict
    ):
        return None
    assert isinstance(method, str) and isinstance(request_id, str | int)
    assert isinstance(params, dict)
    return method, request_id, params


class SendMessageRoute:
    """The JSON-RPC endpoint: the two sends straight to the handler, the rest to the SDK."""

    def __init__(
        self,
        handler: RequestHandler,
        builder: ServerCallContextBuilder,
        sdk_endpoint: Endpoint,
        parse: Parser,
        printer: Printer,
        tracing: Callable[[], bool],
        shutdown_grace_period: float = 0,
    ) -> None:
        self._handler = handler
        self._builder = builder
        self._sdk = sdk_endpoint
        self._parse = parse  # the one the SDK's adapter parses params with
        self._print = printer  # the one the SDK's adapter prints answers with
        self._tracing = tracing
        self._grace = shutdown_grace_period  # the dispatcher's, for open streams at shutdown
        self._straight: bool | None = None

    async def endpoint(self, request: Request) -> Response:
        """Answer ``request`` as the SDK's JSON-RPC dispatcher would."""
        if self._straight is None:  # decided once: a provider is installed at start or never
            self._straight = not self._tracing()
        if not self._straight:
            return await self._sdk(request)
        try:
            body = await request.body()  # kept by the request: the SDK reads it again if need be
        except Exception:  # a disconnect or the size limit: the SDK answers it its own way
            return await self._sdk(request)
        if len(body) > OFF_LOOP_BODY:  # parsing it would hold the event loop for other callers
            read = await asyncio.to_thread(self._read, body)
        else:
            read = self._read(body)
        if read is None:
            return await self._sdk(request)
        method, request_id, message = read
        context = self._builder.build(request)
        if not version_accepted(context.state.get("headers", {})):
            return await self._sdk(request)
        context.tenant = message.tenant
        context.state["method"] = method
        context.state["request_id"] = request_id
        if method == "SendStreamingMessage":
            return await self._stream(message, context, request_id)
        token = taking()  # the answer below is printed from what the run prepared
        try:
            answer = await self._handler.on_message_send(message, context)
        except A2AError as error:
            return JSONResponse(build_error_response(request_id, error))
        except Exception as error:  # the dispatcher's last resort, word for word
            logger.exception("Unhandled exception")
            return JSONResponse(build_error_response(request_id, InternalError(message=str(error))))
        finally:
            done_taking(token)
        printed = take_task(answer) if isinstance(answer, Task) else None
        if printed is not None:  # the answer the run prepared, as the printer would take it
            return JSONResponse({"result": printed, "id": request_id, "jsonrpc": "2.0"})
        response = (
            SendMessageResponse(task=answer)
            if isinstance(answer, Task)
            else SendMessageResponse(message=answer)
        )
        # JSONRPC20Response(result=..., _id=...).data, member for member and in its order
        return JSONResponse({"result": self._print(response), "id": request_id, "jsonrpc": "2.0"})

    def _read(self, body: bytes) -> tuple[str, str | int, SendMessageRequest] | None:
        """(method, id, request) of a single well-formed send, else None (the SDK decides)."""
        plain = _plain_send(body)
        if plain is None:
            return None
        method, request_id, params = plain
        try:
            message = self._parse(params, SendMessageRequest(), ignore_unknown_fields=True)
        except Exception:
            return None
        return method, request_id, message

    async def _stream(
        self, message: SendMessageRequest, context: Any, request_id: str | int
    ) -> Response:
        """The dispatcher's streaming answer: its first event fetched eagerly, so a refusal
        before the task exists is a JSON answer (logged as the dispatcher logs it)."""
        try:
            stream = self._handler.on_message_send_stream(message, context)
            try:
                first = await anext(stream)
            except StopAsyncIteration:
                first = None
        except A2AError as error:
            return _error_answer(request_id, error)
        except Exception as error:  # the dispatcher's last resort, word for word
            logger.exception("Unhandled exception")
            return _error_answer(request_id, InternalError(message=str(error)))
        events = self._events(stream, first, request_id)
        return create_event_stream_response(events, shutdown_grace_period=self._grace)

    async def _events(
        self, stream: AsyncIterator[Any], first: Any, request_id: str | int
    ) -> AsyncIterator[dict[str, str]]:
        """One SSE event per handler event, as the dispatcher's ``_wrap_stream`` and
        ``event_generator`` make them; a refusal mid-stream is its error event."""

        def result(event: Any) -> dict[str, str]:
            printed = self._print(to_stream_response(event), preserving_proto_field_name=False)
            # JSONRPC20Response(result=..., _id=...).data, member for member and in its order
            return {"data": dumps({"result": printed, "id": request_id, "jsonrpc": "2.0"})}

        try:
            try:
                if first is not None:
                    yield result(first)
                async for event in stream:
                    yield result(event)
            except A2AError as error:
                yield {"data": dumps(build_error_response(request_id, error)), "event": "error"}
        except Exception as error:
            logger.exception("Unhandled error during JSON-RPC SSE stream")
            known = error if isinstance(error, A2AError | JSONRPCError) else None
            answer = build_error_response(request_id, known or InternalError(message=str(error)))
            yield {"event": "error", "data": dumps(answer)}


def _error_answer(request_id: str | int, error: A2AError | JSONRPCError) -> JSONResponse:
    """The dispatcher's ``_generate_error_response``: the error answer, logged by its code."""
    answer = build_error_response(request_id, error)
    details = answer.get("error", {})
    code, text, data = details.get("code"), details.get("message"), details.get("data")
    level = logging.ERROR if code == InternalError().code else logging.WARNING
    logger.log(
        level,
        "Request Error (ID: %s): Code=%s, Message='%s'%s",
        request_id,
        code,
        text,
        f", Data={data}" if data else "",
    )
    return JSONResponse(answer, status_code=200)
