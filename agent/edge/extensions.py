"""A2A-Extensions negotiation: required ones enforced, unknown ones ignored, active ones echoed.

The SDK only parses the request header; refusing a request that lacks a required extension and
echoing the activated ones in the response header are ours to do (a2a-sdk 1.3 notes §8).
"""

from __future__ import annotations

from collections.abc import Iterable

from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.types import AgentExtension, ExtensionSupportRequiredError
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def missing_required(declared: Iterable[AgentExtension], requested: set[str]) -> list[str]:
    """URIs the card marks required that the request did not activate."""
    return sorted(e.uri for e in declared if e.required and e.uri not in requested)


def require_extensions(declared: Iterable[AgentExtension], requested: set[str]) -> None:
    """Refuse the request (before any task exists) when a required extension is missing."""
    missing = missing_required(declared, requested)
    if missing:
        raise ExtensionSupportRequiredError(
            message="required extension(s) not activated: " + ", ".join(missing),
            data={"missing": ",".join(missing)},
        )


def activated(declared: Iterable[AgentExtension], requested: set[str]) -> list[str]:
    """The requested URIs this agent declares, in a stable order; unknown URIs are ignored."""
    uris = {e.uri for e in declared}
    return sorted(u for u in requested if u in uris)


class ExtensionEchoMiddleware:
    """Adds ``A2A-Extensions: <activated URIs>`` to every response (JSON and SSE alike)."""

    def __init__(self, app: ASGIApp, *, declared: list[AgentExtension]) -> None:
        self.app = app
        self.declared = declared

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        values = [
            v.decode("latin-1")
            for k, v in scope["headers"]
            if k.decode("latin-1").lower() == HTTP_EXTENSION_HEADER.lower()
        ]
        active = activated(self.declared, get_requested_extensions(values))
        if not active:
            await self.app(scope, receive, send)
            return
        header = (HTTP_EXTENSION_HEADER.lower().encode(), ", ".join(active).encode())

        async def send_with_header(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), header]}
            await send(message)

        await self.app(scope, receive, send_with_header)
