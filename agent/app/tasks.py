"""The builders of what runs tasks: observability (metrics, skill spans), the tasks' parts
(router, executor, request handler, writer, lease, cancel relay, parked-task sweeper), the
deployment's services, and the classifier made ready before the app answers."""

from __future__ import annotations

import asyncio
import gc
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from agent.app.assembly import Assembly, Life, lives_in_order, running
from agent.base.settings import Settings
from agent.builtin.conformance import CONFORMANCE_SKILLS_DIR
from agent.observability.metrics import METRICS_PATH, Metrics, TaskObserver, metrics_endpoint
from agent.push.service import PushNotifications
from agent.registry.loader import Registry, load_registry
from agent.routing.data import RoutingData
from agent.routing.model_cache import ModelCache, default_directory
from agent.routing.router import Router
from agent.server.bounds import ParkedSweeper
from agent.server.cancel_relay import CancelRelay
from agent.server.executor import SkillExecutor
from agent.server.request_handler import GovernedRequestHandler
from agent.server.task_run import RunBindings
from agent.storage.bindings import DatabaseBindingStore
from agent.storage.group_commit import task_writer
from agent.storage.recovery import ReplicaLease
from agent.storage.task_store import ParkedTasks


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


def observability(assembly: Assembly) -> Life:
    """The task observer and the metrics route; its life ends last, with batched spans sent
    before uvicorn re-raises the stop signal."""
    settings, options = assembly.settings, assembly.options
    observer = task_observer(settings, options.tracer_provider, assembly.deployment.identity.slug)
    assembly.observer = observer
    if observer.metrics is not None:
        route = metrics_endpoint(observer.metrics)
        assembly.app.router.add_route(METRICS_PATH, route, methods=["GET"])
    return running(None, observer.flush)


def conformance_registry(assembly: Assembly) -> Registry | None:
    """The internal conformance skills (``--conformance``), with the deployment's words."""
    settings = assembly.settings
    if not settings.conformance:
        return None
    words = settings.skills_dir or assembly.deployment.skills_dir
    return load_registry(CONFORMANCE_SKILLS_DIR, builtin=False, words_from=words)


def notifications(assembly: Assembly) -> Life:
    """Push notifications (agent/push): the outbox's triggers on the task table, made before
    anything changes a task (a previous run's interrupted tasks included), and the delivery
    worker; it stops after the writer, so what the last writes queued waits in the outbox."""
    settings, runtime = assembly.settings, assembly.runtime
    push = assembly.push = PushNotifications(
        settings, runtime.engine, assembly.store, runtime.tool_key
    )
    return running(push.start, push.stop)


def handling(assembly: Assembly) -> Life:
    """Router, executor, writer, lease, relay and handler. Its life: the lease taken, the
    writer started, then the sweeper and the relay; on the way out the relay and sweeper stop,
    the handler settles what it runs, the writer writes what is left, the lease goes last (what
    is still running here is then a survivor's to sweep)."""
    settings, deployment, runtime = assembly.settings, assembly.deployment, assembly.runtime
    engine, store, limits = runtime.engine, assembly.store, settings.limits
    # Replicas share PostgreSQL; its LISTEN/NOTIFY carries cancels to the replica running a
    # task, and each task change to the replicas whose subscribers wait on it.
    shared = settings.cluster_stores and engine.dialect.name == "postgresql"
    writer = assembly.push.watch(task_writer(engine, store, notify=shared))
    router = assembly.router = Router(
        runtime.registry,
        threshold=settings.route_threshold,
        cache=ModelCache(settings.model_cache or default_directory()),
        data=RoutingData.load(deployment.routing_data),
    )
    bindings = RunBindings(DatabaseBindingStore(engine))
    executor = SkillExecutor(
        runtime.registry,
        assembly.tools,
        router,
        bindings,
        audit=runtime.audit,
        clock=assembly.options.clock,
        observer=assembly.observer,
    )
    # A replica's lease: survivors end the tasks of one that died (wall-clock time, not clock).
    lease = ReplicaLease(engine) if settings.cluster_stores else None
    assembly.app.state.lease = lease  # its replica id is what this process's runner rows name
    relay = CancelRelay(engine) if shared else None
    parked = ParkedTasks(engine, store.table, limits.parked_task_ttl)
    handler = assembly.handler = GovernedRequestHandler(
        cards=runtime.cards,
        agent_executor=executor,
        task_store=store,
        writer=writer,
        limits=limits,
        conformance=conformance_registry(assembly),
        relay=relay,
        replica=lease.replica if lease is not None else uuid.uuid4().hex,
        parked=parked,
        push=assembly.push.configs,
    )
    sweeper = ParkedSweeper(parked, limits.parked_task_ttl, handler.hold_task, handler.task_changed)
    return lives_in_order(
        running(lease.start, lease.stop) if lease is not None else None,
        running(writer.start, writer.stop),
        running(None, handler.aclose),
        running(sweeper.start, sweeper.stop),
        running(
            lambda: relay.start(handler.cancel_if_running_here, handler.task_changed),
            relay.stop,
        )
        if relay is not None
        else None,
    )


def services(assembly: Assembly) -> Life:
    """The deployment's services (asked for as the app starts), started in order and stopped
    in reverse."""
    settings, engine = assembly.settings, assembly.runtime.engine

    @asynccontextmanager
    async def life() -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for service in assembly.deployment.services():
                await service.start(settings, engine)
                stack.push_async_callback(service.stop)
            yield

    return life


def settled() -> None:
    """Start-up is over: collect its garbage and freeze what is left.

    Everything built at start-up (registry, validators, cards, the classifier) lives as long
    as the process: out of the collector's sight, a full collection walks only what requests
    allocate (a full walk of it is the tail of the latency under load, bench.perf)."""
    gc.collect()
    gc.freeze()


def routing(assembly: Assembly) -> Life:
    """No request waits for the classifier: it is trained, or read from its cache
    (agent/routing/model_cache.py), before the listener accepts a connection; then start-up's
    garbage is collected and the rest frozen."""
    router = assembly.router

    async def warm() -> None:
        await asyncio.to_thread(router.warm)
        settled()

    return running(warm, None)
