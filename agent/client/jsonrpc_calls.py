"""The three unary JSON-RPC calls a governed client makes, spoken without the a2a-sdk's client.

Why: a client command (``netagent describe``, ``invoke``, ``check``, ``chain``) spent about
0.25 s of its 0.6 to 0.8 s importing the SDK's client package: pydantic for its call context,
culsans and aiologic for its tracing's queue error, every transport and the interceptors,
all of it imported by ``a2a.client``'s ``__init__`` whatever one uses. On a v1.0 JSON-RPC
interface, without streaming, the client makes only ``SendMessage``, ``GetTask`` and
``GetExtendedAgentCard``, each one POST and one JSON answer. This module makes them as the
SDK's ``JsonRpcTransport`` under its ``BaseClient`` does (a2a-sdk 1.x): the same JSON-RPC 2.0
envelope of the request's ProtoJSON, the ``A2A-Version`` header its ``ClientFactory`` sets, the
call's service parameters as headers, the answer parsed leniently (``parse_lenient``), an error
object mapped to the SDK's own ``A2AError`` class by code (``JSON_RPC_ERROR_CODE_MAP``) with
the ``ErrorInfo`` metadata as its data, and transport failures worded as the SDK words them.

Where the SDK's client raises its ``A2AClientError`` (or ``A2AClientTimeoutError``), this
raises their base, ``A2AError``, with the same message and the same cause: naming the client's
own classes would import the package this module exists to leave out. Streaming, the other
bindings, an interface of another protocol version and a tenant's interface go through the
SDK's client (``agent/client/calls.py``). ``tests/integration/test_jsonrpc_calls.py`` holds
the two to the same results and errors, against our agent and against one answering wrongly.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import httpx
from a2a.types import (
    AgentCard,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    Task,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, VERSION_HEADER
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError
from a2a.utils.proto_utils import parse_lenient
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

_ERROR_TYPES = {code: error_type for error_type, code in JSON_RPC_ERROR_CODE_MAP.items()}
_ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
_M = TypeVar("_M", bound=Message)


class JsonRpcCalls:
    """``send_message``, ``get_task`` and ``get_extended_agent_card`` on one JSON-RPC URL,
    with the SDK ``Client``'s signatures (the call context given once, as headers)."""

    def __init__(
        self, http: httpx.AsyncClient, card: AgentCard, url: str, parameters: dict[str, str]
    ) -> None:
        self._http = http
        self._card = card
        self._url = url
        self._headers = {VERSION_HEADER: PROTOCOL_VERSION_CURRENT, **parameters}

    async def __aenter__(self) -> JsonRpcCalls:
        return self

    async def __aexit__(self, *exc: object) -> None:
        """The HTTP client is the caller's (the SDK's client leaves a shared one open too)."""

    async def send_message(self, request: SendMessageRequest) -> AsyncIterator[StreamResponse]:
        """One ``SendMessage``; its task or message, as the one event of a stream."""
        # The SDK's client applies its configuration to the request first: with ours (no
        # polling, push configuration nor output modes) that only marks ``configuration`` as
        # set, which puts ``"configuration": {}`` on the wire. So does this.
        request.configuration.return_immediately |= False
        response = await self._call("SendMessage", request, SendMessageResponse())
        event = StreamResponse()
        if response.HasField("task"):
            event.task.CopyFrom(response.task)
        elif response.HasField("message"):
            event.message.CopyFrom(response.message)
        else:
            raise ValueError("Response has neither task nor message")
        yield event

    async def get_task(self, request: GetTaskRequest) -> Task:
        return await self._call("GetTask", request, Task())

    async def get_extended_agent_card(self, request: GetExtendedAgentCardRequest) -> AgentCard:
        """The extended card; the card itself when it declares none (as the SDK answers)."""
        if not self._card.capabilities.extended_agent_card:
            return self._card
        result = await self._result("GetExtendedAgentCard", request)
        if not isinstance(result, dict):
            raise A2AError(f"Invalid response type: {type(result)}")
        return parse_lenient(result, AgentCard())

    async def _call(self, method: str, request: Message, answer: _M) -> _M:
        return parse_lenient(await self._result(method, request), answer)

    async def _result(self, method: str, request: Message) -> Any:
        payload = {
            "jsonrpc": "2.0",
            "method": method,
            "params": MessageToDict(request),
            "id": str(uuid.uuid4()),
        }
        if self._http.is_closed:
            raise A2AError("HTTP client is closed")
        try:
            response = await self._http.post(self._url, json=payload, headers=self._headers)
            response.raise_for_status()
            body = response.json()
        except httpx.TimeoutException as exc:
            raise A2AError("Client Request timed out") from exc
        except httpx.HTTPStatusError as exc:
            raise A2AError(f"HTTP Error {exc.response.status_code}: {exc}") from exc
        except httpx.RequestError as exc:
            raise A2AError(f"Network communication error: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise A2AError(f"JSON Decode Error: {exc}") from exc
        return _checked(body)["result"]


def _checked(body: Any) -> dict[str, Any]:
    """A JSON-RPC 2.0 success response, or the error it carries raised."""
    if not isinstance(body, dict):
        raise A2AError(f"Invalid JSON-RPC response: expected an object, got {type(body).__name__}")
    error = body.get("error")
    if error:
        if not isinstance(error, dict):
            raise A2AError(f"Invalid JSON-RPC response: error is not an object: {error!r}")
        raise _error(error)
    if "result" not in body:
        raise A2AError("Invalid JSON-RPC response: it has neither 'result' nor 'error'")
    return body


def _error(error: dict[str, Any]) -> A2AError:
    """The SDK's class for the code, carrying the ErrorInfo's metadata; else its fallback."""
    code = error.get("code")
    message = error.get("message", str(error))
    data = error.get("data")
    metadata: dict[str, Any] | None = None
    if isinstance(data, list):
        for detail in data:
            if isinstance(detail, dict) and detail.get("@type") == _ERROR_INFO_TYPE:
                metadata = detail.get("metadata") or None
                break
    if isinstance(code, int) and code in _ERROR_TYPES:
        return _ERROR_TYPES[code](message, data=metadata)
    return A2AError(f"JSON-RPC Error {code}: {message}")
