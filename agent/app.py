"""Assemble the FastAPI application: storage, registry, cards, executor and the A2A routes.

Everything expensive (registry, digests, validators, cards, keys) happens once here, before
the first request. The domain (skills folder, tools, topology, its own tables, services) comes
in as a :class:`~agent.ports.Deployment`; nothing here knows which domain it is.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from a2a.auth.user import User
from a2a.server.context import ServerCallContext
from a2a.server.routes import DefaultServerCallContextBuilder, create_rest_routes
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import AgentExtension
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from agent._sdk import (
    answer_printer,
    params_parser,
    parse_requests_fast,
    sdk_spans_recorded,
    serialize_integral_numbers,
    stream_events_lean,
)
from agent.builtin.conformance import CONFORMANCE_SKILLS_DIR
from agent.console import CONSOLE_API_PREFIX, mount_console
from agent.edge.error_scrub import ErrorScrubMiddleware
from agent.edge.extensions import ExtensionEchoMiddleware
from agent.edge.grpc_binding import GovernedGrpcHandler, GrpcServer
from agent.edge.http_auth import BearerAuthMiddleware
from agent.edge.jsonrpc_send import SendMessageRoute
from agent.edge.limits import BodyLimitMiddleware
from agent.edge.version import VERSION_PARAMETER, bound_version, lift_version_parameter
from agent.mcp.endpoint import MCP_PATH, McpEndpoint
from agent.observability.metrics import (
    CALL_STATE_KEY,
    METRICS_PATH,
    Metrics,
    RequestObserver,
    TaskObserver,
    metrics_endpoint,
)
from agent.outbound import outbound_client
from agent.ports import Deployment, ToolEnvironment
from agent.push.service import PushNotifications
from agent.registry.cards import JSONRPC_PATH, REST_PATH, CardFactory, card_routes
from agent.registry.loader import Registry, load_registry
from agent.registry.policy import entitled
from agent.routing.data import RoutingData
from agent.routing.model_cache import ModelCache, default_directory
from agent.routing.router import Router
from agent.security.auth import SigningKey, TokenVerifier, load_or_create_signing_key
from agent.security.card_signatures import JWKS_PATH, CardSigner
from agent.security.credentials import (
    AGENT_SUBJECT,
    TOOL_ISSUER,
    LocalIssuer,
    LocalTokenExchanger,
    RemoteTokenExchanger,
    TokenExchanger,
    ToolGrant,
    ToolTokenVerifier,
)
from agent.security.exchange_cache import CachingTokenExchanger
from agent.security.oauth import token_endpoint
from agent.security.principal import ANONYMOUS, PrincipalUser
from agent.server.bounds import ParkedSweeper
from agent.server.cancel_relay import CancelRelay
from agent.server.executor import SkillExecutor
from agent.server.request_handler import GovernedRequestHandler
from agent.server.skill_context import ToolFactory
from agent.server.task_run import RunBindings
from agent.settings import Settings
from agent.storage.audit import AuditLog, DatabaseAuditLog
from agent.storage.bindings import DatabaseBindingStore
from agent.storage.coordination import exclusively
from agent.storage.engine import make_engine
from agent.storage.group_commit import task_writer
from agent.storage.leases import ReplicaLease
from agent.storage.migrate import at_heads
from agent.storage.migrate import upgrade as upgrade_core
from agent.storage.parked import ParkedTasks
from agent.storage.reads import close_reader
from agent.storage.task_store import INTERRUPTED, UpsertDatabaseTaskStore

log = logging.getLogger(__name__)
CARD_CACHE_CONTROL = "public, max-age=300"
OAUTH_TOKEN_PATH = "/oauth/token"
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


@dataclass
class AgentRuntime:
    """The pieces one process shares between requests; exposed for the CLI and tests."""

    settings: Settings
    registry: Registry
    engine: AsyncEngine
    signing_key: SigningKey | None
    cards: CardFactory
    tool_key: SigningKey
    audit: AuditLog


def gated_tools(
    deployment: Deployment,
    exchanger: TokenExchanger,
    environments: Mapping[str, ToolEnvironment],
) -> ToolFactory:
    """Handlers' tools: each port's client, presenting a token exchanged for the caller.

    Exchanged tokens are reused per grant while fresh (agent/security/exchange_cache.py): one
    signature here, and one verification at the tool, per caller token and skill, not per call.
    """
    exchanger = CachingTokenExchanger(exchanger)
    clients = {
        port.name: (port.audience, port.connect(environments[port.audience]))
        for port in deployment.tools
    }

    def make(name: str, grant: ToolGrant) -> Any:
        if name not in clients:
            raise LookupError(f"no tool named {name!r}")
        audience, client = clients[name]
        target = replace(grant, audience=audience)

        async def token() -> str:
            return (await exchanger.exchange(target)).access_token

        return client(token)

    return make


def build_exchanger(
    settings: Settings,
    runtime: AgentRuntime,
    subject_verifier: TokenVerifier,
    audiences: frozenset[str],
    subject: str = AGENT_SUBJECT,
) -> tuple[TokenExchanger, dict[str, ToolTokenVerifier], LocalIssuer]:
    """The embedded exchange (default) or an external token service, and each tool's verifier;
    ``subject``: the agent's own, the actor of the tokens the embedded exchange issues."""
    issuer = LocalIssuer(runtime.tool_key, subject_verifier, audiences)
    own_key = runtime.tool_key.private_key.public_key()
    if settings.token_exchange_url:
        if not settings.agent_credential:
            raise ValueError("NETAGENT_TOKEN_EXCHANGE_URL needs NETAGENT_AGENT_CREDENTIAL")
        exchanger: TokenExchanger = RemoteTokenExchanger(
            settings.token_exchange_url,
            settings.agent_credential,
            outbound_client(timeout=10),  # the caller's token: no proxy reads it
        )
        verifiers = {
            audience: ToolTokenVerifier(
                audience,
                settings.tool_issuer or TOOL_ISSUER,
                jwks_url=settings.tool_jwks_url,
                key=None if settings.tool_jwks_url else own_key,
            )
            for audience in audiences
        }
        return exchanger, verifiers, issuer
    verifiers = {
        audience: ToolTokenVerifier(audience, TOOL_ISSUER, key=own_key) for audience in audiences
    }
    return LocalTokenExchanger(issuer, subject), verifiers, issuer


async def prepare_storage(
    settings: Settings,
    engine: AsyncEngine,
    deployment: Deployment,
    stores: Iterable[Initializable] = (),
) -> None:
    """Migrate the core's own tables, create the task tables, then let the deployment migrate
    (and seed) its own.

    Under one cluster-wide lock, so replicas starting together do this once, one at a time.
    A SQLite file that records every history at its head (a restart) is not handed to Alembic,
    which would find nothing to do after importing itself and reading every revision's script.
    """
    async with exclusively(engine, f"{deployment.identity.slug}:prepare-storage"):
        url = settings.resolved_database_url
        current = at_heads(url, deployment.histories())
        if not current:
            await upgrade_core(url)
        for store in stores:
            await store.initialize()
        if deployment.migrate is not None and not current:
            await deployment.migrate(settings, engine)
        if settings.seed_on_start and deployment.seed is not None:
            await deployment.seed(settings, engine)


@runtime_checkable
class Initializable(Protocol):
    """A store whose tables are created on demand (the SDK's task table)."""

    async def initialize(self) -> None: ...


def task_store(engine: AsyncEngine) -> UpsertDatabaseTaskStore:
    """The SDK's task table, read by the request handler (every write goes by the writer).

    The same table serves one process and several replicas: a task's settled states are
    written once each, whichever replica runs it (agent/server/request_handler.py).
    """
    return UpsertDatabaseTaskStore(engine, create_table=True)


def build_runtime(
    settings: Settings,
    deployment: Deployment,
    registry: Registry | None = None,
    extra_extensions: Iterable[AgentExtension] = (),
) -> AgentRuntime:
    """Load everything the app needs; raises on a bad registry before anything listens."""
    settings.home.mkdir(parents=True, exist_ok=True)
    registry = registry or load_registry(settings.skills_dir or deployment.skills_dir)
    tool_key = load_or_create_signing_key(settings.home)
    key = tool_key if settings.embedded_issuer else None
    engine = make_engine(settings.resolved_database_url)
    cards = CardFactory(
        registry,
        settings.resolved_public_url,
        extra_extensions,
        deployment.identity,
        grpc_url=settings.resolved_grpc_url,
        signer=CardSigner(tool_key, settings.resolved_public_url.rstrip("/") + JWKS_PATH),
    )
    return AgentRuntime(settings, registry, engine, key, cards, tool_key, DatabaseAuditLog(engine))


def _settled() -> None:
    """Start-up is over: collect its garbage and freeze what is left.

    Everything built at start-up (registry, validators, cards, the classifier) lives as long
    as the process: out of the collector's sight, a full collection walks only what requests
    allocate (a full walk of it is the tail of the latency under load, bench.perf)."""
    gc.collect()
    gc.freeze()


def create_app(
    settings: Settings,
    deployment: Deployment,
    *,
    registry: Registry | None = None,
    clock: Callable[[], datetime] | None = None,
    tools: Callable[[ToolFactory], ToolFactory] | None = None,
    extra_extensions: Iterable[AgentExtension] = (),
    tracer_provider: Any | None = None,
    grpc_shared_port: bool = False,
    ends_interrupted: bool = True,
) -> FastAPI:
    """The ASGI app for one agent process.

    ``tools`` wraps the real tool factory (a seam, as httpx's transport is for HTTP: tests use
    it to slow a tool down); ``extra_extensions`` declares further A2A extensions on the card,
    e.g. a required one; ``tracer_provider`` is where skill spans go with ``settings.otel``
    (default: the global one, built from OTEL_* if there is none); ``grpc_shared_port`` lets
    the workers of ``serve --workers`` share the gRPC port, as they share uvicorn's;
    ``ends_interrupted`` False for a process that is not the one serving the database
    (``netagent mcp`` beside ``serve``): on a single-process database start-up otherwise ends
    every running task, and those would be the serving process's live ones.
    """
    serialize_integral_numbers()  # before any card or answer is rendered
    parse_requests_fast()
    stream_events_lean()
    runtime = build_runtime(settings, deployment, registry, extra_extensions)
    verifier = TokenVerifier(settings, runtime.signing_key)
    audiences = deployment.audiences
    exchanger, tool_verifiers, issuer = build_exchanger(
        settings, runtime, verifier, audiences, deployment.identity.agent_subject
    )
    environments = {
        audience: ToolEnvironment(settings, runtime.engine, tool_verifiers[audience], runtime.audit)
        for audience in audiences
    }
    tool_factory = gated_tools(deployment, exchanger, environments)
    if tools is not None:
        tool_factory = tools(tool_factory)
    store = task_store(runtime.engine)
    # Replicas share PostgreSQL; its LISTEN/NOTIFY carries cancels to the replica running a
    # task, and each task change to the replicas whose subscribers wait on it.
    shared = settings.cluster_stores and runtime.engine.dialect.name == "postgresql"
    push = PushNotifications(settings, runtime.engine, store, runtime.tool_key)
    writer = push.watch(task_writer(runtime.engine, store, notify=shared))
    router = Router(
        runtime.registry,
        threshold=settings.route_threshold,
        cache=ModelCache(settings.model_cache or default_directory()),
        data=RoutingData.load(deployment.routing_data),
    )
    observer = task_observer(settings, tracer_provider, deployment.identity.slug)
    executor = SkillExecutor(
        runtime.registry,
        tool_factory,
        router,
        RunBindings(DatabaseBindingStore(runtime.engine)),
        audit=runtime.audit,
        clock=clock,
        observer=observer,
    )
    # A replica's lease: survivors end the tasks of one that died (wall-clock time, not ``clock``).
    lease = ReplicaLease(runtime.engine) if settings.cluster_stores else None
    relay = CancelRelay(runtime.engine) if shared else None
    parked = ParkedTasks(runtime.engine, store.table, settings.limits.parked_task_ttl)
    handler = GovernedRequestHandler(
        cards=runtime.cards,
        agent_executor=executor,
        task_store=store,
        writer=writer,
        limits=settings.limits,
        conformance=(
            load_registry(
                CONFORMANCE_SKILLS_DIR,
                builtin=False,
                words_from=settings.skills_dir or deployment.skills_dir,
            )
            if settings.conformance
            else None
        ),
        relay=relay,
        replica=lease.replica if lease is not None else uuid.uuid4().hex,
        parked=parked,
        push=push.configs,
    )
    sweeper = ParkedSweeper(
        parked, settings.limits.parked_task_ttl, handler.hold_task, handler.task_changed
    )

    # The fifth projection: the same skills as MCP tools, through the same handler (agent/mcp/),
    # built once the lifespan has started: nothing before the first card needs the MCP SDK.
    mcp = McpEndpoint(runtime.registry, runtime.cards, handler)

    def anonymous_skill(skill_id: str) -> bool:
        capability = runtime.registry.get(skill_id)
        return capability is not None and entitled(capability.manifest, ANONYMOUS)

    declared = list(runtime.cards.public_card.capabilities.extensions)
    grpc_server = (
        GrpcServer(
            GovernedGrpcHandler(
                handler, verifier=verifier, anonymous_skill=anonymous_skill, declared=declared
            ),
            host=settings.host,
            port=settings.grpc_port,
            limits=settings.limits,
            shared_port=grpc_shared_port,
            grace_seconds=SHUTDOWN_GRACE_SECONDS,
        )
        if settings.grpc_port
        else None
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await prepare_storage(
            settings,
            runtime.engine,
            deployment,
            [store],
        )
        await push.start()  # its triggers on the task table, before anything changes a task
        if ends_interrupted and not settings.cluster_stores:  # one process: what ran
            await end_interrupted(store, clock)  # here before is dead
        await writer.start()
        if lease is not None:
            await lease.start()
        if relay is not None:
            await relay.start(handler.cancel_if_running_here, handler.task_changed)
        sweeper.start()
        services = list(deployment.services())
        for service in services:
            await service.start(settings, runtime.engine)
        if grpc_server is not None:  # in this event loop, beside uvicorn's HTTP server
            await grpc_server.start()
        # No request waits for the classifier: it is trained, or read from its cache
        # (agent/routing/model_cache.py), before the listener accepts a connection.
        await asyncio.to_thread(router.warm)
        _settled()
        mcp.start()  # imports the MCP SDK in a worker thread; /mcp waits for it
        try:
            yield
        finally:
            await mcp.stop()
            if grpc_server is not None:
                await grpc_server.stop()
            for service in reversed(services):
                await service.stop()
            if relay is not None:
                await relay.stop()
            await sweeper.stop()
            await handler.aclose()
            await push.stop()
            await writer.stop()
            if lease is not None:  # after the handler: what is left running here is swept
                await lease.stop()
            if isinstance(exchanger, RemoteTokenExchanger):
                await exchanger.aclose()
            await close_reader(runtime.engine)
            await runtime.engine.dispose()
            observer.flush()  # batched spans go out before uvicorn re-raises the stop signal

    brand = deployment.identity
    app = FastAPI(title=brand.slug, lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.runtime = runtime
    app.state.mcp = mcp  # netagent mcp (stdio) serves its projection under this app's lifespan
    app.state.lease = lease  # its replica id is what this process's task_runner rows name
    builder = PrincipalContextBuilder()

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> JSONResponse:
        try:
            async with runtime.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception:
            log.exception("health check: database unreachable")
            return JSONResponse({"status": "unavailable"}, status_code=503)
        # (the lifespan trains the classifier before the app answers: it is always ready here)
        return JSONResponse(
            {"status": "ok", "skills": len(runtime.registry), "classifier": "ready"}
        )

    jwks = {"keys": [runtime.tool_key.public_jwk]}

    @app.get(JWKS_PATH, include_in_schema=False)
    async def jwks_route() -> JSONResponse:
        return JSONResponse(jwks, headers={"Cache-Control": CARD_CACHE_CONTROL})

    app.router.add_route(OAUTH_TOKEN_PATH, token_endpoint(issuer), methods=["POST"])
    metrics = observer.metrics
    if metrics is not None:
        app.router.add_route(METRICS_PATH, metrics_endpoint(metrics), methods=["GET"])

    # The SDK's card route, rendered once (the public card is fixed at start-up).
    app.router.routes.extend(card_routes(runtime.cards.public_card, CARD_CACHE_CONTROL))
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
    rest = Starlette(
        routes=create_rest_routes(
            handler, context_builder=builder, shutdown_grace_period=SHUTDOWN_GRACE_SECONDS
        )
    )
    app.mount(REST_PATH, rest)
    app.router.routes.append(Route(MCP_PATH, endpoint=mcp))

    app.add_middleware(  # innermost: the SDK's parse and version errors without the input
        ErrorScrubMiddleware, jsonrpc_path=JSONRPC_PATH, rest_path=REST_PATH
    )
    app.add_middleware(ExtensionEchoMiddleware, declared=declared)
    app.add_middleware(
        BearerAuthMiddleware,
        verifier=verifier,
        anonymous_skill=anonymous_skill,
        jsonrpc_path=JSONRPC_PATH,
        rest_path=REST_PATH,
        error_domain=brand.error_domain,
    )
    mount_console(app, runtime, topology=deployment.topology, clock=clock, identity=brand)
    app.add_middleware(  # outermost: bounds every body (size, time) before anything reads it
        BodyLimitMiddleware,
        limits=settings.limits,
        jsonrpc_path=JSONRPC_PATH,
        rest_path=REST_PATH,
        body_timeout=settings.body_timeout,
        json_paths=(CONSOLE_API_PREFIX,),
        error_domain=brand.error_domain,
    )
    if metrics is not None or settings.log_format == "json":
        app.add_middleware(  # outermost: counts every request, refusals at the edge included
            RequestObserver,
            metrics=metrics,
            request_ids=settings.log_format == "json",
            jsonrpc_path=JSONRPC_PATH,
            rest_path=REST_PATH,
        )
    return app


async def end_interrupted(
    store: UpsertDatabaseTaskStore, clock: Callable[[], datetime] | None
) -> None:
    """A single process's restart ends the tasks its previous run left running."""
    ended = await store.end_interrupted((clock or (lambda: datetime.now(UTC)))())
    if ended:
        log.warning("ended %d task(s) a previous run left running: %s", len(ended), INTERRUPTED)


def task_observer(
    settings: Settings, tracer_provider: Any | None = None, service_name: str = "a2a-agent"
) -> TaskObserver:
    """Metrics (NETAGENT_METRICS) and skill spans (NETAGENT_OTEL) for the executor's hooks;
    ``service_name`` is the deployment's brand, the tracer's and the default service name."""
    spans = None
    if settings.otel:
        from agent.observability.tracing import SkillSpans, tracer_provider_from_env

        provider = tracer_provider or tracer_provider_from_env(service_name=service_name)
        spans = SkillSpans(provider, service_name)
    return TaskObserver(Metrics() if settings.metrics else None, spans)
