"""The calls a client makes on one agent, and which client makes them.

``open_calls`` hands back an object with the a2a-sdk ``Client``'s ``send_message``,
``get_task`` and ``get_extended_agent_card`` (the call context given once): the JSON-RPC
calls of ``agent/client/jsonrpc_calls.py`` for a unary call on a v1.0 JSON-RPC interface, the
SDK's own client for everything else (streaming, HTTP+JSON, gRPC, another protocol version, a
tenant's interface). Only the second imports the SDK's client package, and only then.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Final, Protocol

from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.types import (
    AgentCard,
    AgentInterface,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    SendMessageRequest,
    StreamResponse,
    Task,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0

from agent.client.bindings import GRPC, JSONRPC

if TYPE_CHECKING:
    import httpx
    from a2a.client import Client, ClientConfig

NO_PROXY_OPTIONS: Final = [("grpc.enable_http_proxy", 0)]
"""gRPC's channel argument (``GRPC_ARG_ENABLE_HTTP_PROXY``) that ignores the environment's
proxy variables."""


class Calls(Protocol):
    """What the governed client and ``netagent check`` call on an agent."""

    async def __aenter__(self) -> Calls: ...

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None: ...

    def send_message(self, request: SendMessageRequest) -> AsyncIterator[StreamResponse]: ...

    async def get_task(self, request: GetTaskRequest) -> Task: ...

    async def get_extended_agent_card(self, request: GetExtendedAgentCardRequest) -> AgentCard: ...


def service_parameters(authorization: str | None, extensions: list[str]) -> dict[str, str]:
    """The call's parameters (HTTP headers; gRPC metadata): the caller's ``Authorization``
    and the extensions it activates, merged as the SDK's ``with_a2a_extensions`` merges them
    (deduplicated, sorted, comma-separated)."""
    parameters = {"Authorization": authorization} if authorization else {}
    if extensions:
        parameters[HTTP_EXTENSION_HEADER] = ",".join(sorted(get_requested_extensions(extensions)))
    return parameters


def open_calls(
    card: AgentCard,
    binding: str,
    http: httpx.AsyncClient,
    parameters: dict[str, str],
    *,
    streaming: bool,
) -> Calls:
    """The calls for ``binding`` on ``card``'s interface, as the SDK's client would choose it."""
    if binding == JSONRPC and not streaming:
        interface = v1_jsonrpc_interface(card)
        if interface is not None and not interface.tenant:
            from agent.client.jsonrpc_calls import JsonRpcCalls

            return JsonRpcCalls(http, card, interface.url, parameters)
    return SdkCalls(card, binding, http, parameters, streaming=streaming)


def v1_jsonrpc_interface(card: AgentCard) -> AgentInterface | None:
    """The JSON-RPC interface the SDK's ``ClientFactory`` picks when one speaks v1.0 (its
    first of major.minor 1.0), or None: then the SDK negotiates, and its client calls."""
    from packaging.version import InvalidVersion, Version

    wanted = Version(PROTOCOL_VERSION_1_0)
    for interface in card.supported_interfaces:
        if interface.protocol_binding != JSONRPC or not interface.protocol_version:
            continue
        try:
            version = Version(interface.protocol_version)
        except (InvalidVersion, ValueError):  # ValueError: past Python's 4,300-digit int limit
            continue
        if (version.major, version.minor) == (wanted.major, wanted.minor):
            return interface
    return None


class SdkCalls:
    """The a2a-sdk's own client (``ClientFactory(...).create(card)``) for one call."""

    def __init__(
        self,
        card: AgentCard,
        binding: str,
        http: httpx.AsyncClient,
        parameters: dict[str, str],
        *,
        streaming: bool,
    ) -> None:
        from a2a.client import ClientFactory
        from a2a.client.client import ClientCallContext

        self._client: Client = ClientFactory(sdk_config(binding, http, streaming=streaming)).create(
            card
        )
        self._context = ClientCallContext(service_parameters=dict(parameters))

    async def __aenter__(self) -> SdkCalls:
        await self._client.__aenter__()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._client.__aexit__(kind, exc, traceback)

    async def send_message(self, request: SendMessageRequest) -> AsyncIterator[StreamResponse]:
        async for event in self._client.send_message(request, context=self._context):
            yield event

    async def get_task(self, request: GetTaskRequest) -> Task:
        return await self._client.get_task(request, context=self._context)

    async def get_extended_agent_card(self, request: GetExtendedAgentCardRequest) -> AgentCard:
        return await self._client.get_extended_agent_card(request, context=self._context)


def sdk_config(binding: str, http: httpx.AsyncClient, *, streaming: bool) -> ClientConfig:
    """The a2a-sdk client's configuration for one binding: ``JSONRPC`` and ``HTTP+JSON`` over
    ``http``; ``GRPC`` over a plaintext channel to the card's ``host:port`` (the SDK closes it
    with the client). The bearer token and extensions go in each call's context either way
    (``authorization`` and ``a2a-extensions`` metadata on gRPC)."""
    from a2a.client import ClientConfig

    channel_factory = None
    if binding == GRPC:
        import grpc.aio

        # plaintext: a proxy's tunnel would carry the token readable, so none of the
        # environment's (grpc_proxy, https_proxy, http_proxy) is used (agent/outbound.py)
        channel_factory = partial(grpc.aio.insecure_channel, options=NO_PROXY_OPTIONS)
    return ClientConfig(
        streaming=streaming,
        httpx_client=http,
        supported_protocol_bindings=[binding],
        grpc_channel_factory=channel_factory,
    )
