"""The transports builder (the HTTP routes of both A2A bindings, the card and health, and the
gRPC server) and the MCP builder (the same skills as MCP tools, through the same handler)."""

from __future__ import annotations

import logging

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.routes import DefaultServerCallContextBuilder, create_rest_routes
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from fastapi.responses import JSONResponse
from sqlalchemy import text
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from agent._sdk import answer_printer, params_parser, sdk_spans_recorded
from agent.app.assembly import Assembly, Life, running
from agent.app.security import CARD_CACHE_CONTROL
from agent.edge.grpc_binding import GovernedGrpcHandler, GrpcServer
from agent.edge.jsonrpc_send import SendMessageRoute
from agent.edge.version import VERSION_PARAMETER, bound_version, lift_version_parameter
from agent.mcp.endpoint import MCP_PATH, McpEndpoint
from agent.observability.metrics import CALL_STATE_KEY
from agent.registry.cards import JSONRPC_PATH, REST_PATH, card_routes
from agent.security.principal import ANONYMOUS, PrincipalUser

log = logging.getLogger(__name__)
SHUTDOWN_GRACE_SECONDS = 5.0


class PrincipalContextBuilder(DefaultServerCallContextBuilder):
    """Hands the SDK the principal our edge middleware verified (never the request's tenant)."""

    def build_user(self, request: Request) -> User:
        """The PrincipalUser set by BearerAuthMiddleware, or the anonymous one."""
        user = request.scope.get("user")
        return user if isinstance(user, PrincipalUser) else PrincipalUser(ANONYMOUS)

    def build(self, request: Request) -> ServerCallContext:
        """Also take ``?A2A-Version=`` for the version when no header says it (the SDK's
        version check reads only the headers: agent/edge/version.py), bound its length (the
        check would raise Python's int-limit error on a long one), and leave the context's
        state in the scope: the SDK writes the JSON-RPC method there, and the request observer
        reads it from the scope instead of the body."""
        context = super().build(request)
        if request.scope.get("query_string"):  # parsing an empty query costs an object per call
            lift_version_parameter(
                context.state["headers"], request.query_params.getlist(VERSION_PARAMETER)
            )
        bound_version(context.state["headers"])
        request.scope[CALL_STATE_KEY] = context.state
        return context


def health_route(assembly: Assembly) -> None:
    """``/healthz``: the database answers (the lifespan trains the classifier before the app
    answers: it is always ready here)."""
    runtime = assembly.runtime

    async def healthz() -> JSONResponse:
        try:
            async with runtime.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception:
            log.exception("health check: database unreachable")
            return JSONResponse({"status": "unavailable"}, status_code=503)
        skills = len(runtime.registry)
        return JSONResponse({"status": "ok", "skills": skills, "classifier": "ready"})

    assembly.app.add_api_route("/healthz", healthz, include_in_schema=False)


def http_routes(assembly: Assembly) -> None:
    """The card (rendered once: the public card is fixed at start-up), JSON-RPC (SendMessage
    on its own path, agent/edge/jsonrpc_send.py, the rest by the SDK's dispatcher) and REST."""
    app, handler = assembly.app, assembly.handler
    app.router.routes.extend(card_routes(assembly.runtime.cards.public_card, CARD_CACHE_CONTROL))
    builder = PrincipalContextBuilder()
    dispatcher = JsonRpcDispatcher(
        request_handler=handler,
        context_builder=builder,
        shutdown_grace_period=SHUTDOWN_GRACE_SECONDS,
    )
    send = SendMessageRoute(
        handler,
        builder,
        dispatcher.handle_requests,
        parse=params_parser(),
        printer=answer_printer(),
        tracing=sdk_spans_recorded,
        shutdown_grace_period=SHUTDOWN_GRACE_SECONDS,
    )
    for path in (JSONRPC_PATH, JSONRPC_PATH + "/"):
        app.router.routes.append(Route(path, endpoint=send.endpoint, methods=["POST"]))
    rest = create_rest_routes(
        handler, context_builder=builder, shutdown_grace_period=SHUTDOWN_GRACE_SECONDS
    )
    app.mount(REST_PATH, Starlette(routes=rest))


def grpc_server(assembly: Assembly) -> GrpcServer | None:
    """The gRPC binding's server (NETAGENT_GRPC_PORT), in the app's event loop beside
    uvicorn's HTTP server."""
    settings = assembly.settings
    if not settings.grpc_port:
        return None
    governed = GovernedGrpcHandler(
        assembly.handler,
        verifier=assembly.verifier,
        anonymous_skill=assembly.anonymous_skill,
        declared=assembly.declared_extensions,
    )
    return GrpcServer(
        governed,
        host=settings.host,
        port=settings.grpc_port,
        limits=settings.limits,
        shared_port=assembly.options.grpc_shared_port,
        grace_seconds=SHUTDOWN_GRACE_SECONDS,
    )


def bindings(assembly: Assembly) -> Life | None:
    """Health, the card, both HTTP bindings and the gRPC server; its life: gRPC's listener."""
    health_route(assembly)
    http_routes(assembly)
    server = grpc_server(assembly)
    return running(server.start, server.stop) if server is not None else None


def mcp(assembly: Assembly) -> Life:
    """The fifth projection: the skills as MCP tools at ``/mcp`` (agent/mcp/). Its life starts
    last, importing the MCP SDK in a worker thread (``/mcp`` waits for it: nothing before the
    first card needs it), and stops first."""
    endpoint = McpEndpoint(assembly.runtime.registry, assembly.runtime.cards, assembly.handler)
    assembly.app.state.mcp = endpoint  # netagent mcp (stdio) serves it under the app's lifespan
    assembly.app.router.routes.append(Route(MCP_PATH, endpoint=endpoint))
    return running(endpoint.start, endpoint.stop)
