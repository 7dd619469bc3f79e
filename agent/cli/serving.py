"""``serve`` and ``mcp``: the agent itself, over HTTP and gRPC or over stdio, and what
``serve`` prints once it listens."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from agent.cli.common import (
    DatabaseUrl,
    app,
    cli_settings,
    console,
    current_deployment,
    current_factory,
    fail,
    port_taken,
    require_database,
    require_signing_key,
)
from agent.cli.exit_codes import ExitCode
from agent.cli.values import whole_number

if TYPE_CHECKING:
    from agent.base.settings import Settings
    from agent.ports import DemoCaller


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on.")] = None,
    port: Annotated[
        int | None, typer.Option(help="Port to listen on.", parser=whole_number)
    ] = None,
    database_url: DatabaseUrl = None,
    public_url: Annotated[
        str | None, typer.Option("--public-url", help="Base URL the card advertises.")
    ] = None,
    log_format: Annotated[
        str | None,
        typer.Option(
            "--log-format",
            help="auto (default: text on a terminal, json otherwise), text (a short line per "
            "request) or json (one object a line, with the audit rows).",
        ),
    ] = None,
    conformance: Annotated[
        bool,
        typer.Option(
            "--conformance",
            help="Also answer the A2A TCK's scenario messages (an internal skill; docs/tck.md).",
        ),
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            help="Worker processes on one port, each a replica with its own lease "
            "(PostgreSQL only).",
        ),
    ] = 1,
) -> None:
    """Run the agent (creates, migrates and seeds the embedded database on first start); the
    demo tokens and the console's address are printed once it listens."""
    from agent.app import create_app
    from agent.observability.log_format import configure_logging
    from agent.registry.loader import RegistryError

    settings = cli_settings(
        host=host,
        port=port,
        database_url=database_url,
        public_url=public_url,
        log_format=log_format,
        conformance=conformance or None,  # unset: NETAGENT_CONFORMANCE decides
    )
    try:
        log_config = configure_logging(settings.log_level, settings.log_format)
    except ValueError as exc:
        raise fail(f"settings: {exc}") from None
    busy = port_taken(settings.host, settings.port)
    if busy:  # before any token is printed: an agent that never starts needs none
        raise fail(
            f"cannot listen on {settings.host}:{settings.port}: {busy} "
            "(another agent running? stop it, or pick another port with --port)"
        )
    busy = port_taken(settings.host, settings.grpc_port) if settings.grpc_port else None
    if busy:  # the gRPC binding's port, as surely: start-up would stop on it after the tokens
        raise fail(
            f"cannot listen on {settings.host}:{settings.grpc_port} (gRPC): {busy} "
            "(another agent running? stop it, or set NETAGENT_GRPC_PORT to another port, "
            "or to off)"
        )
    deployment = current_deployment()
    factory = _worker_factory(settings, workers)
    try:
        application = create_app(settings, deployment)  # with workers: checked here, once
    except RegistryError as exc:
        raise fail(f"registry: {exc}") from None
    except ValueError as exc:  # a setting that cannot work, e.g. an exchange URL without credential
        raise fail(f"settings: {exc}") from None
    callers = deployment.demo_callers if application.state.runtime.signing_key else ()
    _listen(application, settings, callers, log_config, workers, factory)


def _listen(
    application: Any,
    settings: Settings,
    callers: Sequence[DemoCaller],
    log_config: dict[str, Any],
    workers: int,
    factory: str,
) -> None:
    """Serve until stopped; the banner (tokens, addresses) once the agent listens."""
    import contextlib

    import uvicorn

    from agent.app.workers import APP_FACTORY, DEPLOYMENT_FACTORY_ENV, settings_environment
    from agent.cli.announcing import AnnouncingServer

    def announce() -> None:
        print_banner(settings, callers)

    options: dict[str, Any] = {"log_config": log_config, "log_level": settings.log_level}
    if workers > 1:  # each worker builds its own app from the environment (agent/app/workers.py)
        os.environ.update(settings_environment(settings))
        os.environ[DEPLOYMENT_FACTORY_ENV] = factory
        announce()  # uvicorn's supervisor starts the workers: no one moment they all listen
        uvicorn.run(
            APP_FACTORY,
            host=settings.host,
            port=settings.port,
            factory=True,
            workers=workers,
            **options,
        )
        return
    config = uvicorn.Config(application, host=settings.host, port=settings.port, **options)
    server = AnnouncingServer(config, announce)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:  # start-up failed, and uvicorn logged why
        raise typer.Exit(code=ExitCode.USAGE)


def print_banner(settings: Settings, callers: Sequence[DemoCaller], *, again: bool = True) -> None:
    """The demo tokens (if this agent signs its own, and NETAGENT_PRINT_TOKENS is on; else
    how to make one), then where the card and console are."""
    printed = bool(callers) and settings.print_tokens
    if printed:
        _print_demo_tokens(settings, callers)
    elif callers:
        _say_demo_tokens_are_not_printed(callers)
    base = settings.resolved_public_url
    console.print(
        f"Agent card: [bold]{escape(base)}/.well-known/agent-card.json[/]",
        highlight=False,
        soft_wrap=True,
        markup=True,
    )
    sign_in = "one of the tokens above" if printed else "a bearer token"
    console.print(
        f"Console:    [bold]{escape(base)}/console/[/] (sign in with {sign_in})",
        highlight=False,
        soft_wrap=True,
        markup=True,
    )
    if printed and again:
        console.print("Again later: netagent tokens", style="dim", highlight=False)


TOKEN_VARIABLE = "NETAGENT_TOKEN"
"""Where ``netagent mcp`` finds the caller's bearer token."""


@app.command("mcp")
def mcp_command(
    database_url: DatabaseUrl = None,
    token_variable: Annotated[
        str, typer.Option("--token-variable", help="The environment variable holding the token.")
    ] = TOKEN_VARIABLE,
) -> None:
    """Serve the skills as an MCP server on stdin/stdout (docs/mcp.md), for one caller.

    The caller is the one whose bearer token is in NETAGENT_TOKEN, verified as every request
    of ``serve`` is; the agent itself runs in this process, on the database ``serve`` uses.
    Logs go to stderr: stdout carries only MCP messages.
    """
    import anyio

    from agent.app import create_app
    from agent.edge.http_auth import Refusal, verify_bearer
    from agent.mcp.server import serve_stdio
    from agent.observability.log_format import configure_logging
    from agent.registry.loader import RegistryError
    from agent.security.auth import TokenVerifier

    settings = cli_settings(database_url=database_url, grpc_port=0)  # no listener: stdio only
    try:
        configure_logging(settings.log_level, settings.log_format)
    except ValueError as exc:
        raise fail(f"settings: {exc}") from None
    token = os.environ.get(token_variable, "").strip()
    if not token:
        raise fail(f"{token_variable} is not set: export the caller's bearer token there")
    require_signing_key(settings, f"the token in {token_variable} cannot be verified here")
    require_database(settings)  # the one `serve` made and seeded: mcp makes none
    try:
        # Beside a running `serve` on the same file: its running tasks are live, not left over.
        application = create_app(settings, current_deployment(), ends_interrupted=False)
    except RegistryError as exc:
        raise fail(f"registry: {exc}") from None
    except ValueError as exc:
        raise fail(f"settings: {exc}") from None
    runtime = application.state.runtime
    verdict = verify_bearer(TokenVerifier(settings, runtime.signing_key), f"Bearer {token}")
    if isinstance(verdict, Refusal):
        raise fail(f"{token_variable}: {verdict.description}", ExitCode.TOKEN_REFUSED)

    async def serve_mcp() -> None:
        async with application.router.lifespan_context(application):
            projection = await application.state.mcp.projection()
            await serve_stdio(
                projection, verdict, runtime.cards.public_card.name, runtime.cards.release
            )

    anyio.run(serve_mcp)


def _worker_factory(settings: Settings, workers: int) -> str:
    """The deployment factory workers import; refuses what cannot run in several processes."""
    from agent.app.workers import DEPLOYMENT_FACTORY_ENV

    if workers == 1:
        return ""
    if settings.resolved_database_url.startswith("sqlite"):
        raise fail(
            "--workers needs PostgreSQL (NETAGENT_DATABASE_URL): one process serves a SQLite "
            "file, and its start-up ends every task it finds running"
        )
    if not settings.cluster_stores:
        raise fail("--workers needs the replica-safe stores: NETAGENT_CLUSTER is off")
    factory = current_factory() or os.environ.get(DEPLOYMENT_FACTORY_ENV, "")
    if not factory:
        raise fail(
            f"--workers needs a deployment factory: agent.cli.run(deployment, "
            f"factory='module:function'), or {DEPLOYMENT_FACTORY_ENV}"
        )
    return factory


def _print_demo_tokens(settings: Settings, callers: Sequence[DemoCaller]) -> None:
    """One shell line per demo identity, unwrapped so it can be pasted as it is."""
    from agent.security.auth import issue_token, load_or_create_signing_key

    if not callers:
        return
    key = load_or_create_signing_key(settings.home)
    console.print(
        "[bold]Demo bearer tokens[/] (valid 8 h; `netagent token` makes more):", markup=True
    )
    for caller in callers:
        scopes = list(caller.scopes)
        token = issue_token(
            key, settings, subject=caller.subject, tenant=caller.tenant, scopes=scopes
        )
        console.print(
            f"# {caller.subject}@{caller.tenant}: {' '.join(scopes)}", style="dim", highlight=False
        )
        print(f"export {caller.subject.upper()}_TOKEN={token}", flush=True)


def _say_demo_tokens_are_not_printed(callers: Sequence[DemoCaller]) -> None:
    """Where the output is kept (a container's logs), the tokens are not in it: say how to
    make one instead, with the first demo caller's own claims."""
    if not callers:
        return
    caller = callers[0]
    scopes = " ".join(f"--scope {scope}" for scope in caller.scopes)
    console.print(
        "Demo bearer tokens: not printed (NETAGENT_PRINT_TOKENS is off); make one with "
        f"`netagent token --subject {caller.subject} --tenant {caller.tenant} {scopes}`",
        highlight=False,
        soft_wrap=True,
        markup=False,
    )
