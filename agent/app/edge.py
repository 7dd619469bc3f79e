"""The middleware builders, innermost first (each ``add_middleware`` wraps what was added
before it): the guards (errors scrubbed, extensions echoed, bearer tokens checked), the
console (its session middleware outside the guards, so they verify its cookie's token), then
the bounds (every body bounded, every request observed) outermost."""

from __future__ import annotations

from agent.app.assembly import Assembly
from agent.console import CONSOLE_API_PREFIX, mount_console
from agent.edge.error_scrub import ErrorScrubMiddleware
from agent.edge.extensions import ExtensionEchoMiddleware
from agent.edge.http_auth import BearerAuthMiddleware
from agent.edge.limits import BodyLimitMiddleware
from agent.edge.log_scrub import withhold_caller_input
from agent.observability.metrics import RequestObserver
from agent.registry.cards import JSONRPC_PATH, REST_PATH


def guards(assembly: Assembly) -> None:
    """The SDK's parse and version errors without the input (innermost; its log lines about
    them too), the declared extensions echoed, and the bearer token verified."""
    app, paths = assembly.app, {"jsonrpc_path": JSONRPC_PATH, "rest_path": REST_PATH}
    withhold_caller_input()
    app.add_middleware(ErrorScrubMiddleware, **paths)
    app.add_middleware(ExtensionEchoMiddleware, declared=assembly.declared_extensions)
    app.add_middleware(
        BearerAuthMiddleware,
        verifier=assembly.verifier,
        anonymous_skill=assembly.anonymous_skill,
        error_domain=assembly.deployment.identity.error_domain,
        **paths,
    )


def console(assembly: Assembly) -> None:
    """The operator console at /console and the landing page (agent/console/)."""
    deployment = assembly.deployment
    mount_console(
        assembly.app,
        assembly.runtime,
        topology=deployment.topology,
        clock=assembly.options.clock,
        identity=deployment.identity,
    )


def bounds(assembly: Assembly) -> None:
    """Every body bounded (size, time) before anything reads it; outermost of all, every
    request counted or given a request id, refusals at the edge included."""
    app, settings = assembly.app, assembly.settings
    paths = {"jsonrpc_path": JSONRPC_PATH, "rest_path": REST_PATH}
    app.add_middleware(
        BodyLimitMiddleware,
        limits=settings.limits,
        body_timeout=settings.body_timeout,
        json_paths=(CONSOLE_API_PREFIX,),
        error_domain=assembly.deployment.identity.error_domain,
        **paths,
    )
    metrics = assembly.observer.metrics
    if metrics is not None or settings.log_format == "json":
        app.add_middleware(
            RequestObserver, metrics=metrics, request_ids=settings.log_format == "json", **paths
        )
