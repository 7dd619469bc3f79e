"""The MCP server of the agent, on the official SDK's low-level ``Server``, two transports.

- **Streamable HTTP** at ``/mcp`` on the agent's own application (``create_app`` adds the
  route, ``agent/mcp/endpoint.py``, which imports this module once the app has started):
  stateless, JSON responses, so any replica answers any request and no session is kept. The
  caller is the one ``BearerAuthMiddleware`` verified for that very request
  (``verify_bearer``, as on every A2A binding); without a valid token the edge answers 401 with
  its ``WWW-Authenticate`` challenge before MCP sees the request.
- **stdio** (``netagent mcp``): one local host, one caller, whose token comes from the
  environment and is verified once, at start, by the same ``verify_bearer``. A line that is
  not a JSON-RPC message is answered (parse error or invalid request, ``id`` null) rather
  than dropped, so the host is not left waiting.

On both, every JSON-RPC error is answered with a fixed text (``agent/mcp/wire_errors.py``).

Handlers only list and call (``agent/mcp/projection.py``); the router is not involved: an MCP
host chooses its tools itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from starlette.requests import Request

from agent.mcp import wire_errors
from agent.mcp.endpoint import MCP_PATH
from agent.mcp.projection import McpProjection
from agent.security.principal import ANONYMOUS, Principal, principal_of

__all__ = [
    "INSTRUCTIONS",
    "MCP_PATH",
    "CallerOf",
    "build_server",
    "fixed_caller",
    "http_caller",
    "http_endpoint",
    "serve_stdio",
]

INSTRUCTIONS: Final = (
    "Each tool is a schema-governed skill of this agent, listed as the caller's extended agent "
    "card lists it. Tool errors carry the Skill Interface Document error object "
    "{code, message, details} as structured content."
)

CallerOf = Callable[[ServerRequestContext[Any, Any]], Principal]


def http_caller(context: ServerRequestContext[Any, Any]) -> Principal:
    """The principal the edge verified for the HTTP request carrying this MCP request."""
    request = context.request
    if isinstance(request, Request):
        return principal_of(request.scope.get("user"))
    return ANONYMOUS


def fixed_caller(principal: Principal) -> CallerOf:
    """Every request is this principal's (stdio: one host, one token)."""

    def caller(context: ServerRequestContext[Any, Any]) -> Principal:
        return principal

    return caller


def build_server(
    projection: McpProjection, caller: CallerOf, name: str, version: str
) -> Server[Any]:
    """The MCP server: ``tools/list`` and ``tools/call``, for whoever ``caller`` says; ``name``
    and ``version`` are the agent's (its card's name, its release)."""

    async def list_tools(
        context: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=projection.tools(caller(context)))

    async def call_tool(
        context: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        meta = params.meta
        if meta is not None and not isinstance(meta, dict):  # a model, in older SDK versions
            meta = meta.model_dump(by_alias=True)
        return await projection.call(caller(context), params.name, params.arguments, meta)

    server: Server[Any] = Server(
        name,
        version=version,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.clear()  # the SDK's span per message: this agent traces its skills itself
    return server


def http_endpoint(server: Server[Any]) -> tuple[StreamableHTTPSessionManager, Any]:
    """The session manager (run it in the app's lifespan) and the ASGI app for ``MCP_PATH``."""
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)
    return manager, StreamableHTTPASGIApp(manager)


async def serve_stdio(
    projection: McpProjection, principal: Principal, name: str, version: str
) -> None:
    """One MCP connection on this process's stdin and stdout, as ``principal``, until EOF."""
    from mcp.server.stdio import stdio_server

    server = build_server(projection, fixed_caller(principal), name, version)
    async with stdio_server() as (read, write), write, anyio.create_task_group() as tasks:
        to_server, server_read = anyio.create_memory_object_stream[SessionMessage | Exception]()
        server_write, from_server = anyio.create_memory_object_stream[SessionMessage]()
        tasks.start_soon(_read_lines, read, to_server, write)
        tasks.start_soon(_write_fixed, from_server, write)
        async with server_read, server_write:
            await server.run(server_read, server_write, server.create_initialization_options())


async def _read_lines(
    lines: ObjectReceiveStream[SessionMessage | Exception],
    to_server: ObjectSendStream[SessionMessage | Exception],
    write: ObjectSendStream[SessionMessage],
) -> None:
    """Hand each message to the server; answer a line that is none (the SDK drops it)."""
    async with to_server:
        async for item in lines:
            if isinstance(item, Exception):
                await write.send(_unreadable(item))
            else:
                await to_server.send(item)


async def _write_fixed(
    from_server: ObjectReceiveStream[SessionMessage], write: ObjectSendStream[SessionMessage]
) -> None:
    """What the server writes, each JSON-RPC error with its fixed text."""
    async with from_server:
        async for item in from_server:
            await write.send(fixed_message(item))


def _unreadable(exc: Exception) -> SessionMessage:
    """The answer to a stdin line that is not a JSON-RPC message: not JSON at all is a parse
    error, JSON of another shape an invalid request; ``id`` null, as none could be read."""
    not_json = isinstance(exc, ValidationError) and any(
        e["type"] == "json_invalid" for e in exc.errors(include_url=False, include_input=False)
    )
    code = wire_errors.PARSE_ERROR if not_json else wire_errors.INVALID_REQUEST
    error = types.ErrorData(**wire_errors.fixed_error(code))
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error))


def fixed_message(item: SessionMessage) -> SessionMessage:
    """``item``, or, if it is a JSON-RPC error, the same error with its fixed text."""
    message = item.message
    if not isinstance(message, types.JSONRPCError):
        return item
    fixed_error = wire_errors.fixed_error(message.error.code, data=message.error.data)
    error = types.ErrorData(**fixed_error)
    fixed = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
    return SessionMessage(fixed, metadata=item.metadata)
