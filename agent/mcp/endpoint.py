"""``/mcp`` on the agent's application, built once the application has started.

Importing the MCP SDK is about a quarter of importing the application (``mcp`` and
``mcp_types``: their pydantic models), and nothing on the way to the first served card needs
it: the cards, the A2A bindings and the console do not. So ``create_app`` mounts this endpoint,
which imports ``agent.mcp.server`` (and the SDK with it) in a worker thread when the lifespan
starts it, builds the projection and the Streamable HTTP session manager on the event loop,
and runs the manager until the lifespan stops it. A request that arrives before it is built
waits for it: it is answered, late, not refused. If building fails (a broken install), that is
logged and every MCP request is answered 503 with a JSON-RPC internal error (the reason is in
the log); the other bindings serve on.

The endpoint is stateless and answers with JSON, so it takes POST only: any other method is
405 with ``Allow: POST`` (the SDK would open a server stream on GET that nothing ever writes
to, and answer DELETE about sessions), and a body that is not ``application/json`` is 415.
Every JSON-RPC error it answers has a fixed text (``agent/mcp/wire_errors.py``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Final

from agent.mcp import wire_errors

if TYPE_CHECKING:
    from starlette.types import Message, Receive, Scope, Send

    from agent.mcp.projection import McpProjection
    from agent.registry.cards import CardFactory
    from agent.registry.loader import Registry
    from agent.server.request_handler import GovernedRequestHandler

log = logging.getLogger(__name__)

MCP_PATH: Final = "/mcp"
"""Where the Streamable HTTP endpoint is, on the agent's own base URL."""
INTERNAL_ERROR: Final = wire_errors.INTERNAL_ERROR
"""JSON-RPC's internal error: what a request gets when the endpoint could not be built."""
ALLOWED: Final = "POST"
"""The one HTTP method of the stateless endpoint."""
JSON_TYPE: Final = "application/json"


def _import_server() -> None:
    """The MCP SDK, imported off the event loop (a worker thread)."""
    import agent.mcp.server  # noqa: F401


class McpEndpoint:
    """The ASGI app at ``MCP_PATH``, and the projection ``netagent mcp`` serves over stdio."""

    def __init__(
        self, registry: Registry, cards: CardFactory, handler: GovernedRequestHandler
    ) -> None:
        self._registry = registry
        self._cards = cards
        self._handler = handler
        self._ready: asyncio.Event | None = None
        self._stopping = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._projection: McpProjection | None = None
        self._app: Any = None
        self._failure: Exception | None = None

    @property
    def started(self) -> bool:
        """Whether the build has begun (and not been stopped)."""
        return self._task is not None

    def start(self) -> None:
        """Begin building in the background, on this event loop, unless it has begun: the
        lifespan calls it as it starts, ``projection()`` if it comes first.
        Each lifespan builds its own session manager, which runs once."""
        if self._task is not None:
            return
        self._ready, self._stopping = asyncio.Event(), asyncio.Event()
        self._projection, self._app, self._failure = None, None, None
        self._task = asyncio.create_task(self._run(), name="mcp-endpoint")

    async def stop(self) -> None:
        """Stop the session manager (once built, if its build is still running) and wait."""
        task, self._task = self._task, None
        if task is None:
            return
        self._stopping.set()
        await task  # the session manager's own error, if it had one, as under the lifespan

    async def _run(self) -> None:
        assert self._ready is not None
        try:
            await asyncio.get_running_loop().run_in_executor(None, _import_server)
            from agent.mcp.projection import McpProjection
            from agent.mcp.server import build_server, http_caller, http_endpoint

            projection = McpProjection(self._registry, self._cards, self._handler)
            manager, app = http_endpoint(
                build_server(
                    projection, http_caller, self._cards.public_card.name, self._cards.release
                )
            )
        except Exception as exc:
            log.error("mcp: cannot build the endpoint: %s", exc, exc_info=exc)
            self._failure = exc
            self._ready.set()
            return
        async with manager.run():
            self._projection, self._app = projection, app
            self._ready.set()
            await self._stopping.wait()

    async def _built(self) -> str | None:
        """Wait for the build; why there is no endpoint, if there is none."""
        if self._ready is None:
            raise RuntimeError("the MCP endpoint runs under the app's lifespan: it was not started")
        await self._ready.wait()
        if self._failure is not None:
            return f"the MCP endpoint could not be built: {self._failure}"
        return None

    async def projection(self) -> McpProjection:
        """The projection, once built (``netagent mcp`` serves it over stdio, and has no
        lifespan: this begins the build if it has not begun)."""
        self.start()
        failure = await self._built()
        if failure is not None:
            raise RuntimeError(failure)
        assert self._projection is not None
        return self._projection

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One HTTP request to ``MCP_PATH``, handed to the SDK's app once it is built; without
        one, a JSON-RPC internal error (503): the request is answered, the connection kept.
        Not a POST of JSON: refused here (405, 415), before the SDK sees it."""
        if scope["type"] == "http" and scope["method"] != ALLOWED:
            await _refuse(send, 405, ((b"allow", ALLOWED.encode()),))
            return
        if scope["type"] == "http" and _media_type(scope) != JSON_TYPE:
            await _refuse(send, 415)
            return
        failure = await self._built()
        if failure is None:
            await self._app(scope, receive, _FixedErrors(send))
            return
        await _refuse(send, 503, code=INTERNAL_ERROR)  # why is in the log, not the answer


def _media_type(scope: Scope) -> str:
    """The request's Content-Type without parameters, lower case ("" when absent)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return str(value.decode("latin-1")).split(";", 1)[0].strip().lower()
    return ""


async def _refuse(
    send: Send,
    status: int,
    headers: tuple[tuple[bytes, bytes], ...] = (),
    code: int = wire_errors.INVALID_REQUEST,
) -> None:
    """A JSON-RPC error answer for an HTTP-level refusal (``id`` null: the body is not read)."""
    body = wire_errors.error_body(code, status)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", JSON_TYPE.encode()),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _FixedErrors:
    """The SDK's answer, held until whole (JSON responses: one body, no stream), with each
    JSON-RPC error in it rebuilt with a fixed text (``wire_errors.fixed_body``)."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._start: Message | None = None
        self._chunks: list[bytes] = []

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self._start = message
            return
        if message["type"] != "http.response.body" or self._start is None:
            await self._send(message)
            return
        self._chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        start, self._start = self._start, None
        body, status = b"".join(self._chunks), int(start["status"])
        self._chunks = []
        fixed = wire_errors.fixed_body(body, status)
        if fixed is not None:
            headers = [
                (k, v)
                for k, v in start.get("headers", ())
                if k.lower() not in (b"content-length", b"content-type")
            ]
            headers += [
                (b"content-type", JSON_TYPE.encode()),
                (b"content-length", str(len(fixed)).encode()),
            ]
            start, body = {**start, "headers": headers}, fixed
        await self._send(start)
        await self._send({"type": "http.response.body", "body": body})
