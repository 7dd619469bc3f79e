"""The calls a client makes on one agent: the a2a-sdk's own client, for every binding.

``open_calls`` hands back the SDK ``Client`` that ``ClientFactory(config).create(card)`` makes,
with the call context (the bearer token and the activated extensions) given once instead of
at every call. The governed client and ``netagent check`` call ``send_message``, ``get_task``
and ``get_extended_agent_card`` on it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from types import TracebackType
from typing import Final

import grpc.aio
import httpx
from a2a.client import Client, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.service_parameters import with_a2a_extensions
from a2a.types import (
    AgentCard,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    SendMessageRequest,
    StreamResponse,
    Task,
)
from packaging.version import InvalidVersion, Version

from agent.client.bindings import GRPC

NO_PROXY_OPTIONS: Final = [("grpc.enable_http_proxy", 0)]
"""gRPC's channel argument (``GRPC_ARG_ENABLE_HTTP_PROXY``) that ignores the environment's
proxy variables."""


def service_parameters(authorization: str | None, extensions: list[str]) -> dict[str, str]:
    """The call's parameters (HTTP headers; gRPC metadata): the caller's ``Authorization``
    and the extensions it activates (the SDK's ``with_a2a_extensions``)."""
    parameters = {"Authorization": authorization} if authorization else {}
    if extensions:
        with_a2a_extensions(list(extensions))(parameters)
    return parameters


def open_calls(
    card: AgentCard,
    binding: str,
    http: httpx.AsyncClient,
    parameters: dict[str, str],
    *,
    streaming: bool,
) -> Calls:
    """The SDK's client for ``binding`` on ``card``'s interface, as its factory chooses it.
    Raises ValueError when the card offers no interface the factory can use."""
    return Calls(card, binding, http, parameters, streaming=streaming)


class Calls:
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
        config = sdk_config(binding, http, streaming=streaming)
        self._client: Client = ClientFactory(config).create(readable_versions(card))
        self._context = ClientCallContext(service_parameters=dict(parameters))

    async def __aenter__(self) -> Calls:
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


def readable_versions(card: AgentCard) -> AgentCard:
    """``card`` without the interfaces whose protocol version Python cannot read as a number
    (past its 4,300-digit int limit): the factory skips a version that is no version, but
    raises on those, and one such interface would cost the card's good ones."""
    kept = [i for i in card.supported_interfaces if _readable(i.protocol_version)]
    if len(kept) == len(card.supported_interfaces):
        return card
    readable = AgentCard()
    readable.CopyFrom(card)
    del readable.supported_interfaces[:]
    readable.supported_interfaces.extend(kept)
    return readable


def _readable(version: str) -> bool:
    try:
        Version(version)
    except InvalidVersion:
        return True  # the factory's to skip
    except ValueError:
        return False
    return True


def sdk_config(binding: str, http: httpx.AsyncClient, *, streaming: bool) -> ClientConfig:
    """The a2a-sdk client's configuration for one binding: ``JSONRPC`` and ``HTTP+JSON`` over
    ``http``; ``GRPC`` over a plaintext channel to the card's ``host:port`` (the SDK closes it
    with the client). The bearer token and extensions go in each call's context either way
    (``authorization`` and ``a2a-extensions`` metadata on gRPC)."""
    channel_factory = None
    if binding == GRPC:
        # plaintext: a proxy's tunnel would carry the token readable, so none of the
        # environment's (grpc_proxy, https_proxy, http_proxy) is used (agent/security/outbound.py)
        channel_factory = partial(grpc.aio.insecure_channel, options=NO_PROXY_OPTIONS)
    return ClientConfig(
        streaming=streaming,
        httpx_client=http,
        supported_protocol_bindings=[binding],
        grpc_channel_factory=channel_factory,
    )
