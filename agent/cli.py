"""The ``netagent`` command's core: serve, token, card, audit, usage, validate, new-skill (agent
side) and describe, invoke, chain, check (client side: the schema-governed procedure against
any agent).

A deployment runs it with :func:`run`, handing in its :class:`~agent.ports.Deployment`, and
may add commands of its own to :data:`app` (such as ``seed`` and ``demo``).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from agent.base.settings import DEFAULT_GRPC_PORT, DEFAULT_HOST, DEFAULT_PORT
from agent.cli_exit import ExitCode, exit_codes_help
from agent.cli_values import file_path, whole_number

if TYPE_CHECKING:
    from a2a.types import AgentCard
    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent.base.settings import Settings
    from agent.client import (
        ChainResult,
        Correlations,
        CredentialRefusedError,
        GovernedClient,
        Invocation,
        Record,
        SkillNotAdvertisedError,
        VerifiedInterface,
    )
    from agent.devtools.conformance import Report
    from agent.ports import DemoCaller, Deployment
    from agent.registry.cards import CardFactory
    from agent.registry.identity import AgentIdentity
    from agent.registry.loader import Registry
    from agent.registry.manifest import Manifest
    from agent.security.card_signatures import SignatureCheck
    from agent.storage.audit import AuditLog

app = typer.Typer(
    help="a2a-agent: a schema-governed A2A agent.",
    epilog=exit_codes_help(),
    no_args_is_help=True,
)
card_app = typer.Typer(
    help="Print or check the agent card.",
    epilog=exit_codes_help(),
    invoke_without_command=True,
)
app.add_typer(card_app, name="card")
console = Console(markup=False, emoji=False)
"""Text is printed as it is: much of it is an agent's (names, task ids, messages, schema URIs)
or the database's (principals), and Rich's markup would read ``[/x]`` in it as a tag (an error
that stopped the command) and ``:x:`` as an emoji. Where a style is wanted, a print says so
(``markup=True``, with every value in it escaped) or passes a ``Text``."""
T = TypeVar("T")
SNAPSHOT = Path(__file__).resolve().parent.parent / "tests" / "snapshots" / "public-agent-card.json"
"""A file of the checkout, not of the package: an installed package has no tests/."""
SNAPSHOT_BASE_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
SNAPSHOT_GRPC_URL = f"{DEFAULT_HOST}:{DEFAULT_GRPC_PORT}"
"""The snapshot is the card of the default settings, whatever this environment sets."""

DatabaseUrl = Annotated[
    str | None,
    typer.Option("--database-url", help="SQLAlchemy async URL (default: SQLite in NETAGENT_HOME)."),
]


def cli_settings(**overrides: object) -> Settings:
    """NETAGENT_* and the command's options; a value that cannot work is one line, exit 2."""
    from agent.base.settings import Settings

    try:
        return Settings.from_env().with_overrides(**overrides)
    except ValueError as exc:
        raise fail(f"settings: {exc}") from None


_running: list[Deployment | Callable[[], Deployment]] = []
"""The deployment :func:`run` was given: one process serves one deployment."""
_factories: list[str] = []
"""The import path of a function returning it, if :func:`run` was given one."""


def _deployment() -> Deployment:
    """The deployment this command line runs for."""
    if not _running:
        raise RuntimeError("agent.cli commands run through agent.cli.run(deployment)")
    current = _running[-1]
    from agent.ports import Deployment

    if not isinstance(current, Deployment):  # built on first use
        current = _running[-1] = current()
    return current


def skills_dir_of(settings: Settings) -> Path:
    """NETAGENT_SKILLS_DIR, else the deployment's own skills folder."""
    return settings.skills_dir or _deployment().skills_dir


def _load_registry(settings: Settings) -> Registry:
    from agent.registry.loader import RegistryError, load_registry

    try:
        return load_registry(skills_dir_of(settings))
    except RegistryError as exc:
        raise fail(f"registry: {exc}") from None


def _read_manifests(settings: Settings) -> dict[str, Manifest]:
    """The registry's manifests by skill id, checked as loading it checks them, without
    importing a handler or building an interface (what a command that names skills needs)."""
    from agent.registry.manifests import RegistryError, read_manifests

    try:
        return read_manifests(skills_dir_of(settings))
    except RegistryError as exc:
        raise fail(f"registry: {exc}") from None


def fail(message: str, code: ExitCode = ExitCode.USAGE) -> typer.Exit:
    """Print an error unwrapped (paths stay greppable) and return the exit to raise (by
    default: nothing was done, the command line, a setting or the home cannot work)."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    return typer.Exit(code=code)


WHERE_THE_AGENT_RUNS = (
    "Run this where the agent runs (its NETAGENT_HOME, default ./.netagent), or set "
    "NETAGENT_HOME to its folder"
)
"""The advice after "not in this home" (whose message names the home it looked in)."""


def require_signing_key(settings: Settings, why: str) -> None:
    """Refuse (exit 2, nothing made) when the home holds no signing key: a new one would sign
    or verify nothing any agent of this home accepts."""
    from agent.security.auth import KEY_FILE

    if settings.embedded_issuer and not (settings.home / KEY_FILE).exists():
        raise fail(
            f"no signing key in {settings.home} (NETAGENT_HOME): {why}. {WHERE_THE_AGENT_RUNS}"
        )


def require_database(settings: Settings) -> None:
    """Refuse (exit 2, nothing made) when the SQLite database a command reads does not exist:
    an empty one made here would answer "0 rows" for an agent that has thousands."""
    from agent.storage.engine import sqlite_file

    path = sqlite_file(settings.resolved_database_url)
    if path is None or path.exists():
        return
    if settings.database_url is not None:
        raise fail(f"no database at {path} (--database-url or NETAGENT_DATABASE_URL)")
    raise fail(
        f"no database ({path.name}) in {settings.home} (NETAGENT_HOME), so nothing to read "
        f"and nothing was made. {WHERE_THE_AGENT_RUNS}, or pass --database-url"
    )


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
    deployment = _deployment()
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
    from agent.listening import AnnouncingServer

    def announce() -> None:
        _print_banner(settings, callers)

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


def _print_banner(settings: Settings, callers: Sequence[DemoCaller], *, again: bool = True) -> None:
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
        application = create_app(settings, _deployment(), ends_interrupted=False)
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


def port_taken(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (another process holds it), or None."""
    import socket

    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return exc.strerror or str(exc)
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind(address)
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


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
    factory = (_factories[-1] if _factories else "") or os.environ.get(DEPLOYMENT_FACTORY_ENV, "")
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


@app.command()
def token(
    subject: Annotated[str, typer.Option(help="The token's sub claim.")],
    tenant: Annotated[
        str | None,
        typer.Option(
            help="The tenant claim (acme, globex, ...). Required for a caller's token "
            "(not with --agent-credential)."
        ),
    ] = None,
    scope: Annotated[list[str] | None, typer.Option(help="A scope; repeat for more.")] = None,
    ttl: Annotated[int, typer.Option(help="Lifetime in seconds.", parser=whole_number)] = 8 * 3600,
    agent_credential: Annotated[
        bool,
        typer.Option(
            "--agent-credential",
            help="Instead: a service credential for another agent (subject agent:NAME) that "
            "exchanges tokens at this agent's POST /oauth/token.",
        ),
    ] = False,
    create_key: Annotated[
        bool,
        typer.Option(
            "--create-key",
            help="Create a signing key in NETAGENT_HOME if it holds none (an agent accepts the "
            "token only if it serves from that home).",
        ),
    ] = False,
) -> None:
    """Print a bearer token signed by this agent's embedded key (in NETAGENT_HOME)."""
    from agent.security.auth import KEY_FILE, TokenVerifier, issue_token, load_or_create_signing_key
    from agent.security.scopes import is_scope_token

    settings = cli_settings()
    if ttl <= 0:
        raise fail("--ttl must be positive")
    if not all(is_scope_token(item) for item in scope or []):
        raise fail("--scope takes one scope: printable ASCII without spaces, quotes or backslashes")
    if not agent_credential:
        if not settings.embedded_issuer:
            raise fail("tokens come from the external issuer (NETAGENT_JWKS_URL is set)")
        if tenant is None:
            raise fail("--tenant is required for a caller's token")
    if not (settings.home / KEY_FILE).exists() and not create_key:
        raise fail(
            f"no signing key in {settings.home} (NETAGENT_HOME): a token signed with a new key "
            f"is refused by an agent that serves elsewhere. {WHERE_THE_AGENT_RUNS}; "
            "--create-key makes a new key here"
        )
    key = load_or_create_signing_key(settings.home)
    if agent_credential:
        if not subject.startswith("agent:"):
            raise fail("an agent credential's --subject starts with 'agent:'")
        # The credentials module brings httpx: a caller's token needs neither.
        from agent.security.credentials import LocalIssuer

        issuer = LocalIssuer(
            key, TokenVerifier(settings, key if settings.embedded_issuer else None), audiences=()
        )
        print(issuer.agent_credential(subject, ttl_seconds=ttl))
        return
    assert tenant is not None
    print(
        issue_token(
            key, settings, subject=subject, tenant=tenant, scopes=scope or [], ttl_seconds=ttl
        )
    )


@app.command("tokens")
def tokens_command() -> None:
    """Print the demo callers' tokens again (fresh ones, valid 8 h), as ``netagent serve``
    printed them, with the card's and the console's address."""
    settings = cli_settings()
    if not settings.embedded_issuer:
        raise fail("tokens come from the external issuer (NETAGENT_JWKS_URL is set)")
    require_signing_key(settings, "tokens signed with a new key would be refused by the agent")
    callers = _deployment().demo_callers
    if not callers:
        raise fail("this deployment has no demo callers: `netagent token` makes a token")
    _print_banner(dataclasses.replace(settings, print_tokens=True), callers, again=False)


def _card_factory(public_url: str | None, *, grpc_url: str | None = None) -> CardFactory:
    """The cards ``serve`` would build with these settings (``grpc_url`` overrides theirs)."""
    from agent.registry.cards import CardFactory

    settings = cli_settings(public_url=public_url)
    deployment = _deployment()
    return CardFactory(
        _load_registry(settings),
        settings.resolved_public_url,
        identity=deployment.identity,
        grpc_url=grpc_url or settings.resolved_grpc_url,
    )


@card_app.callback()
def card(
    ctx: typer.Context,
    extended: Annotated[bool, typer.Option(help="The extended card for --token's caller.")] = False,
    bearer: Annotated[
        str | None, typer.Option("--token", help="Bearer token of the caller.")
    ] = None,
    public_url: Annotated[
        str | None,
        typer.Option(
            "--public-url",
            help="Base URL the card advertises (default: NETAGENT_PUBLIC_URL, else http://HOST:PORT).",
        ),
    ] = None,
) -> None:
    """Print the public card, or with --extended the card the token's caller is entitled to."""
    from agent.registry.cards import card_to_json

    if ctx.invoked_subcommand is not None:
        return
    factory = _card_factory(public_url)
    if not extended:
        print(json.dumps(card_to_json(factory.public_card), indent=2))
        return
    if not bearer:
        raise fail("--extended needs --token")
    from agent.security.auth import TokenError, TokenVerifier, load_or_create_signing_key

    settings = cli_settings()
    require_signing_key(settings, "the token cannot be verified here")
    key = load_or_create_signing_key(settings.home) if settings.embedded_issuer else None
    try:
        principal = TokenVerifier(settings, key).verify(bearer)
    except TokenError as exc:
        raise fail(f"token refused: {exc.description}", ExitCode.TOKEN_REFUSED) from None
    print(json.dumps(card_to_json(factory.extended_card(principal)), indent=2))


@card_app.command("diff")
def card_diff(
    snapshot: Annotated[
        Path | None,
        typer.Option(
            help="The committed public-card snapshot (default: the checkout's "
            "tests/snapshots/public-agent-card.json)."
        ),
    ] = None,
    update: Annotated[bool, typer.Option(help="Rewrite the snapshot from the registry.")] = False,
) -> None:
    """Compare the generated public card with the committed snapshot (exit 1 if they differ)."""
    from agent.registry.cards import card_to_json

    if snapshot is None:
        if not SNAPSHOT.parent.is_dir():
            raise fail(
                f"card diff: {SNAPSHOT.parent} not found (an installed package has no tests/); "
                "pass --snapshot FILE"
            )
        snapshot = SNAPSHOT
    generated = (
        json.dumps(
            card_to_json(_card_factory(SNAPSHOT_BASE_URL, grpc_url=SNAPSHOT_GRPC_URL).public_card),
            indent=2,
            sort_keys=True,
        )
        + "\n"
    )
    if update:
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        snapshot.write_text(generated)
        console.print(f"wrote {snapshot}")
        return
    current = snapshot.read_text() if snapshot.exists() else ""
    if current == generated:
        console.print("public card matches the snapshot")
        return
    diff = difflib.unified_diff(
        current.splitlines(keepends=True),
        generated.splitlines(keepends=True),
        fromfile=str(snapshot),
        tofile="generated",
    )
    print("".join(diff), end="")
    raise typer.Exit(code=ExitCode.FAILED)


def _since(value: str | None) -> datetime | None:
    """``--since``: an ISO time (UTC if no offset) or a look-back such as 30m, 24h, 7d."""
    if value is None:
        return None
    import re

    units = {"m": 60, "h": 3600, "d": 86400}
    # ASCII digits, few enough for int() and for a datetime (str.isdigit takes "²", which
    # int() refuses, and any number of digits, past which int() raises its own text).
    lookback = re.fullmatch(r"([0-9]{1,12})([mhd])", value, re.ASCII)
    try:
        if lookback is not None:
            amount, unit = lookback.groups()
            return datetime.now(UTC) - timedelta(seconds=int(amount) * units[unit])
        moment = datetime.fromisoformat(value)
    except (ValueError, OverflowError):
        raise fail("--since takes an ISO time or a look-back like 30m, 24h, 7d") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _audit_log(engine: AsyncEngine) -> AuditLog:
    from agent.storage.audit import DatabaseAuditLog

    return DatabaseAuditLog(engine)


@app.command("audit")
def audit_command(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant.")] = None,
    principal: Annotated[str | None, typer.Option(help="Only this subject.")] = None,
    task: Annotated[str | None, typer.Option(help="Only this task id.")] = None,
    since: Annotated[str | None, typer.Option(help="ISO time, or 30m / 24h / 7d.")] = None,
    limit: Annotated[
        int, typer.Option(help="At most this many rows, newest first.", parser=whole_number)
    ] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """Read the principal audit trail (tool calls and invocations)."""
    moment = _since(since)
    filters: dict[str, Any] = {
        "tenant": tenant,
        "principal": principal,
        "task_id": task,
        "since": moment,
        "limit": limit,
    }
    rows = _read_database(database_url, lambda engine: _audit_log(engine).query(**filters))
    if as_json:
        for row in rows:
            print(json.dumps(row, default=str, sort_keys=True))
        return
    _print_audit(rows)


def _print_audit(rows: list[dict[str, Any]]) -> None:
    """The audit rows as a table when every id fits whole, else one two-line block a row."""
    from agent.cli_layout import Column, print_records

    days = {row["ts"].date() for row in rows if row["ts"]}
    one_day = len(days) == 1
    when = f", {next(iter(days))} UTC" if one_day else ", UTC"
    columns = [
        Column("time", identifier=True),
        Column("who"),
        Column("skill"),
        Column("version, task", identifier=True),
        Column("tool.operation"),
        Column("decision"),
    ]
    records = []
    for row in rows:
        via = f" via {', '.join(row['actor_chain'])}" if row["actor_chain"] else ""
        resources = " ".join(row["resource_ids"])
        ts = row["ts"]
        records.append(
            (
                (ts.strftime("%H:%M:%S") if one_day else ts.strftime("%m-%d %H:%M")) if ts else "",
                f"{row['principal']}@{row['tenant'] or '-'}{via}",
                row["skill_id"] or "-",
                f"{row['skill_version'] or ''} {(row['task_id'] or '-')[:8]}".strip(),
                f"{row['tool']}.{row['operation']}" + (f" {resources}" if resources else ""),
                f"{row['decision']}: {row['reason']}",
            )
        )
    title = f"principal audit ({_count(len(rows), 'row')}, newest first{when})"
    print_records(console, title, columns, records, lead=4)


def _count(number: int, noun: str) -> str:
    """``1 row``, ``2 rows``."""
    return f"{number} {noun}" + ("" if number == 1 else "s")


@app.command("usage")
def usage_command(
    since: Annotated[str | None, typer.Option(help="ISO time, or 30m / 24h / 7d.")] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Calls run and refused per day, callers and last call per capability (is a deprecated
    skill still used? who keeps asking for one they may not use?)."""
    from agent.cli_layout import Column, print_records

    moment = _since(since)
    rows = _read_database(database_url, lambda engine: _audit_log(engine).usage(since=moment))
    manifests = _read_manifests(cli_settings())
    records = []
    seen = set()
    unchosen = False
    for row in rows:
        manifest = manifests.get(row["skill_id"] or "")
        state = manifest.state.value if manifest else "unknown"
        if row["skill_id"] is None:  # the router asked which skill, or refused before choosing
            unchosen = True
            state = "clarification" if not row["refused"] else "clarification, unrouted"
        seen.add(row["skill_id"])
        last = str(row["last_call"])[:19]
        records.append(
            (
                row["skill_id"] or NO_SKILL_CHOSEN,
                state,
                row["day"],
                str(row["calls"]),
                str(row["refused"]),
                str(row["callers"]),
                last[11:] if last.startswith(str(row["day"])) else last,  # that day's: the time
            )
        )
    for manifest in manifests.values():
        if manifest.id not in seen:
            records.append((manifest.id, manifest.state.value, "-", "0", "0", "0", "never"))
    columns = [
        Column("skill", identifier=True),
        Column("state"),
        Column("day", identifier=True),
        Column("calls", justify="right", label=True),
        Column("refused", justify="right", label=True),
        Column("callers", justify="right", label=True),
        Column("last call", label=True),
    ]
    print_records(console, "capability usage, from the audit trail", columns, records, lead=3)
    if unchosen:
        console.print(
            f"{NO_SKILL_CHOSEN}: plain-text turns the agent answered by asking which skill "
            "(clarification, counted as calls; the answer runs in the same task) and requests "
            "it refused before choosing one (counted as refused).",
            highlight=False,
        )


NO_SKILL_CHOSEN = "(no skill chosen)"


# -- client side: describe, invoke, chain, check ------------------------------------------------

Url = Annotated[str, typer.Argument(help="Base URL of the target agent (its card is under it).")]
Bearer = Annotated[str | None, typer.Option("--token", help="Bearer token of the caller.")]
BindingOption = Annotated[
    str, typer.Option("--binding", help="A2A binding: JSONRPC, HTTP+JSON or GRPC (any case).")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
RequireSignature = Annotated[
    bool,
    typer.Option(
        "--require-signature",
        help="Refuse an unsigned agent card (a signed one is always verified).",
    ),
]
Arguments = Annotated[str, typer.Option("--args", help="The skill's arguments: JSON, or @file.")]


def _client_errors() -> tuple[type[Exception], ...]:
    """What a client command expects to fail with (imported when a client command runs)."""
    import httpx
    from a2a.utils.errors import A2AError

    from agent.client import (
        CompositionRefusedError,
        CredentialRefusedError,
        GovernedClientError,
        RemoteTaskError,
    )

    return (
        CredentialRefusedError,
        GovernedClientError,
        RemoteTaskError,
        CompositionRefusedError,
        A2AError,
        httpx.HTTPError,
    )


def _binding(value: str) -> str:
    """``--binding``, checked (any case). Nothing of the a2a-sdk's client is imported here: a
    unary JSON-RPC call needs none of it, and the calls that do import it themselves."""
    from agent.client import BINDINGS

    for name in BINDINGS:
        if value.upper() == name:
            return name
    raise fail(f"--binding must be one of {', '.join(BINDINGS)}, not {value!r}")


def _arguments(value: str) -> dict[str, Any]:
    """``--args``: a JSON object, inline or as ``@path``."""
    text = value
    if value.startswith("@"):
        try:
            text = Path(value[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise fail(f"--args: cannot read {value[1:]}: {exc.strerror}") from None
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise fail(f"--args is not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise fail("--args must be a JSON object")
    return parsed


async def _explained(
    client: GovernedClient, skill: str, exc: SkillNotAdvertisedError
) -> SkillNotAdvertisedError:
    """The local refusal, with the agent's own words when the card leaves the skill out (a
    removed skill's answer names its replacement)."""
    from agent.client import SkillNotAdvertisedError

    if exc.message != f"the card does not advertise {skill!r}":
        return exc
    said = await client.why_not(skill)
    if said is None:
        return exc
    return SkillNotAdvertisedError(exc.message, [f"the agent says: {said}"])


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


CLAIM_VALUE = r"[A-Za-z0-9._@:-]{1,128}"
"""A claim value the advice repeats as it is (anything else becomes a placeholder)."""


def _token_claims(token: str | None) -> dict[str, Any]:
    """A JWT's claims, read without verifying it: only to word the advice after a refusal."""
    import base64
    import binascii

    parts = (token or "").split(".")
    if len(parts) != 3:
        return {}
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, binascii.Error):
        return {}
    return claims if isinstance(claims, dict) else {}


def mint_command(token: str | None) -> str:
    """The ``netagent token`` line that mints a token like ``token`` (its subject, tenant and
    scopes when they can be read from it; placeholders otherwise)."""
    import re
    import shlex

    claims = _token_claims(token)

    def claim(name: str) -> str | None:
        value = claims.get(name)
        return value if isinstance(value, str) and re.fullmatch(CLAIM_VALUE, value) else None

    subject, tenant = claim("sub"), claim("tenant")
    scope = claims.get("scope")
    words = scope.split(" ") if isinstance(scope, str) else []  # RFC 6749: U+0020 only
    scopes = [s for s in words if re.fullmatch(CLAIM_VALUE, s)]
    if subject is None or tenant is None or subject.startswith("agent:"):
        return "netagent token --subject NAME --tenant TENANT --scope SCOPE"
    words = ["netagent", "token", "--subject", subject, "--tenant", tenant]
    for item in scopes:
        words += ["--scope", item]
    return shlex.join(words)


def _refusal_lines(refusal: CredentialRefusedError, token: str | None) -> list[str]:
    """The agent's own reason for a 401/403, and the command that mints a token it accepts."""
    reason = f" {refusal.reason}" if refusal.reason else ""
    what = "refused the token" if token else "needs a bearer token"
    return [
        f"the agent {what} (HTTP {refusal.status}{reason}): {refusal.message}",
        "mint a new token where the agent's NETAGENT_HOME is (its signing key), "
        "and pass it with --token:",
        f"  {mint_command(token)}",
    ]


def _client_error(
    exc: Exception, token: str | None = None
) -> tuple[int, dict[str, Any], list[str]]:
    """Exit code, JSON error object and message lines for an expected client-side error."""
    import httpx

    from agent.client import (
        CompositionRefusedError,
        GovernedClientError,
        RemoteTaskError,
        refusal_in,
    )

    refusal = refusal_in(exc)
    if refusal is not None:
        error = {
            "where": "remote",
            "code": "credential_refused",
            "status": refusal.status,
            "reason": refusal.reason,
            "message": refusal.message,
            "metadata": refusal.metadata,
            "mint": mint_command(token),
        }
        return ExitCode.TOKEN_REFUSED, error, _refusal_lines(refusal, token)
    if isinstance(exc, RemoteTaskError):
        message = str(exc.error.get("message", ""))
        error = {
            "where": "remote",
            "task_id": exc.task_id,
            "state": exc.state,
            "code": exc.code,
            "message": message,
            "details": exc.error.get("details", []),
        }
        return (
            ExitCode.FAILED,
            error,
            [f"task {exc.task_id} ended {exc.state}: {exc.code}: {message}"],
        )
    if isinstance(exc, CompositionRefusedError):
        fields = [d.split(":", 1)[0] for d in exc.differences if ":" in d]
        error = {
            "where": "local",
            "code": "composition_refused",
            "fields": fields,
            "differences": exc.differences,
        }
        return (
            ExitCode.REFUSED_LOCALLY,
            error,
            ["no direct composition: " + ", ".join(fields) + " differ"],
        )
    unreachable = _unreachable(exc)
    if unreachable is not None:
        return ExitCode.UNREACHABLE, {"where": "remote", **unreachable}, [unreachable["message"]]
    if isinstance(exc, GovernedClientError):
        # The client folds "could not fetch the card" into interface_invalid: that is remote.
        remote = isinstance(exc.__cause__, httpx.HTTPError)
        cause = f" ({_first_line(exc.__cause__)})" if remote and exc.__cause__ else ""
        error = {
            "where": "remote" if remote else "local",
            "code": exc.code.value,
            "message": exc.message + cause,
            "details": exc.details,
        }
        code = ExitCode.FAILED if remote else ExitCode.REFUSED_LOCALLY
        return code, error, [f"{exc.code.value}: {exc.message}{cause}"]
    error = {"where": "remote", "code": type(exc).__name__, "message": _first_line(exc)}
    return ExitCode.FAILED, error, [f"{type(exc).__name__}: {_first_line(exc)}"]


UNREACHABLE = "unreachable"
"""The error code a client command reports when nothing answered (exit 4)."""


def _unreachable(exc: BaseException) -> dict[str, str] | None:
    """``{"code", "message"}`` when ``exc`` (or what caused it) is a connection that never
    carried an answer: refused, unknown host, timed out. An agent that answered badly is not
    this: that is a failed check or an invalid interface."""
    import httpx

    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, httpx.TransportError):
        cause = cause.__cause__
    if cause is None:
        return None
    import contextlib

    where = ""
    with contextlib.suppress(RuntimeError):  # an error raised before a request has none
        where = f" at {cause.request.url}"
    return {
        "code": UNREACHABLE,
        "message": f"{UNREACHABLE}: nothing answered{where} ({_first_line(cause)}); "
        "is the agent running, is the URL right?",
    }


def _client_exit(exc: Exception, as_json: bool, token: str | None = None) -> typer.Exit:
    """Report the error unwrapped on stderr (and as JSON with --json); never a traceback."""
    code, error, lines = _client_error(exc, token)
    for item in error.get("differences") or error.get("details") or []:
        if isinstance(item, dict):
            rest = ", ".join(f"{k}={v}" for k, v in item.items() if k != "instance_path")
            lines.append(f"  {item.get('instance_path', '')!s:<24} {rest}")
        else:
            lines.append(f"  {item}")
    print("error: " + "\n".join(lines), file=sys.stderr, flush=True)
    if as_json:
        print(json.dumps({"error": error}, default=str), flush=True)
    return typer.Exit(code=code)


def run_async(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run``, with asyncio imported only by the commands that run something
    (``card``, ``validate`` and ``token`` never do: 35-80 ms of their start)."""
    import asyncio

    return asyncio.run(work)


def _run_client(work: Coroutine[Any, Any, T], as_json: bool, token: str | None = None) -> T:
    """Run a client coroutine; expected failures become an exit code, not a traceback."""
    try:
        return _run_checking(work)
    except _client_errors() as exc:
        raise _client_exit(exc, as_json, token) from None


def _run_checking(work: Coroutine[Any, Any, T]) -> T:
    """``run_async`` for a command that verifies interface documents."""
    return run_async(work)


def _print_checks(checks: list[tuple[str, str]]) -> None:
    from agent.cli_layout import Column, print_records

    columns = [Column("", style="green"), Column("check", identifier=True), Column("detail")]
    rows = [("ok", name, detail) for name, detail in checks]
    print_records(console, "checked", columns, rows, lead=2)


def _describe_checks(
    interface: VerifiedInterface, card: AgentCard, binding: str, signature: str
) -> list[tuple[str, str]]:
    """What GovernedClient.describe verified (draft steps 1-6), as (check, detail) rows."""
    from agent.interfaces import INTERFACE_VERSION, trusted_schema

    document = interface.document
    references = 2 + len(document["supporting_record_schemas"])
    return [
        (
            "card fetched",
            f"{interface.card_url} ({card.name} {card.version}); "
            f"{binding} at {interface.interface_url}",
        ),
        ("card signature", signature),
        (
            "advertised",
            f"{interface.skill_id} {interface.skill_version} {interface.interface_digest}; "
            "describe_skill listed",
        ),
        ("describe_skill", "returned one document"),
        ("three-way digest", "advertised = returned = computed"),
        (
            "trusted schema",
            f"valid against {trusted_schema().get('$id')}; interface_version "
            f"{INTERFACE_VERSION}; skill_id and skill_version as selected",
        ),
        ("embedded digests", f"{references} embedded schema(s) match their digests"),
    ]


def _print_interface(document: dict[str, Any]) -> None:
    from agent.cli_layout import Column, print_records

    records: dict[str, Any] = document["supporting_record_schemas"]
    references = [("input", document["input_schema"]), ("output", document["output_schema"])]
    references += [(f"record {kind}", reference) for kind, reference in records.items()]
    rows = [(role, r["version"], r["schema_uri"], r["digest"]) for role, r in references]
    columns = [
        Column("role", identifier=True),
        Column("version", identifier=True),
        Column("schema_uri", identifier=True),
        Column("digest", identifier=True),
    ]
    title = f"{document['skill_id']} {document['skill_version']}: schemas"
    print_records(console, title, columns, rows, lead=2)
    console.print(f"record kinds: {', '.join(records) or '(none)'}", highlight=False)
    facts = []
    for member in ("interaction", "authority", "constraints"):
        value = document.get(member)
        if isinstance(value, dict) and value:
            facts += [(f"{member}.{key}", json.dumps(item)) for key, item in value.items()]
        else:
            facts.append((member, json.dumps(value)))
    columns = [Column("member", identifier=True), Column("value")]
    print_records(console, "interaction, authority, constraints", columns, facts)


def _record_json(record: Record) -> dict[str, Any]:
    return {
        "kind": record.kind,
        "artifact_id": record.artifact_id,
        "schema_uri": record.schema_uri,
        "data": record.data,
    }


def _invocation_json(invocation: Invocation) -> dict[str, Any]:
    interface = invocation.interface
    return {
        "skill": interface.skill_id,
        "skill_version": interface.skill_version,
        "interface_digest": interface.interface_digest,
        "task_id": invocation.task_id,
        "context_id": invocation.context_id,
        "endpoint": invocation.endpoint,
        "output_schema_uri": invocation.output_schema_uri,
        "output": invocation.output,
        "records": [_record_json(r) for r in invocation.records],
    }


LONG_LIST = 5
"""A list of plain values longer than this is shown by its first items and its length."""
HEADLINE_MEMBERS = ("verdict", "result", "recommendation", "reason", "summary")
"""Members a result is read by, shown before the others."""


def _text_value(key: str, value: Any) -> str:
    """A plain value for people: a rate (a ``*_bps`` member) in Gbit/s or Mbit/s."""
    from agent.console.units import bit_rate

    rate = key == "bps" or key.endswith("_bps") or "_bps_" in key
    if rate and isinstance(value, int | float) and not isinstance(value, bool):
        return bit_rate(value)
    return json.dumps(value) if not isinstance(value, str) else value


def _text_lines(value: Any, key: str = "", indent: str = "") -> list[str]:
    """A JSON value as indented ``member: value`` lines (the text rendering of a result)."""
    if isinstance(value, dict):
        lines = []
        first = [name for name in HEADLINE_MEMBERS if name in value]
        for name, item in sorted(value.items(), key=lambda pair: pair[0] not in first):
            if isinstance(item, dict | list) and item:
                lines.append(f"{indent}{name}:")
                lines += _text_lines(item, name, indent + "  ")
            else:
                lines.append(f"{indent}{name}: {_text_value(name, item)}")
        return lines
    if isinstance(value, list):
        if all(not isinstance(item, dict | list) for item in value):
            shown = [_text_value(key, item) for item in value[:LONG_LIST]]
            more = f", ... ({len(value)} in all)" if len(value) > LONG_LIST else ""
            return [f"{indent}{', '.join(shown)}{more}"]
        lines = []
        for item in value:
            inner = _text_lines(item, key, indent + "  ")
            lines.append(f"{indent}- {inner[0].lstrip()}" if inner else f"{indent}-")
            lines += inner[1:]
        return lines
    return [f"{indent}{_text_value(key, value)}"]


def _print_invocation(result: dict[str, Any], *, all_records: bool = False) -> None:
    """The result first (as text: rates in Gbit/s, the JSON keeps bit/s), then the records:
    how many of each kind, or every one with ``all_records``."""
    from agent.cli_layout import Column, print_records

    console.print(
        f"[bold]{escape(result['skill'])}[/] {escape(result['skill_version'])}: task "
        f"{escape(result['task_id'])} COMPLETED (context {escape(result['context_id'])}) at "
        f"{escape(result['endpoint'])}",
        highlight=False,
        markup=True,
    )
    console.print(
        f"result, valid against {result['output_schema_uri']} (--json for the JSON):",
        highlight=False,
    )
    for line in _text_lines(result["output"], indent="  "):
        console.print(line, highlight=False, markup=False)
    records = result["records"]
    kinds: dict[str, int] = {}
    for record in records:
        kinds[record["kind"]] = kinds.get(record["kind"], 0) + 1
    counted = ", ".join(f"{count} {kind}" for kind, count in kinds.items()) or "none"
    hint = "" if all_records or not records else " (--records or --json for each one)"
    console.print(f"supporting records, each schema-valid: {counted}{hint}", highlight=False)
    if not all_records or not records:
        return
    columns = [
        Column("kind", identifier=True),
        Column("artifact_id", identifier=True),
        Column("schema_uri", identifier=True),
        Column("data"),
    ]
    rows = [
        (r["kind"], r["artifact_id"], r["schema_uri"], json.dumps(r["data"], ensure_ascii=False))
        for r in records  # each record's data in its schema's order
    ]
    print_records(console, f"supporting records ({len(records)})", columns, rows, lead=2)


@app.command("describe")
def describe_command(
    url: Url,
    skill: Annotated[str, typer.Argument(help="The skill whose interface to fetch.")],
    bearer: Bearer = None,
    binding: BindingOption = "JSONRPC",
    as_json: AsJson = False,
    require_signature: RequireSignature = False,
) -> None:
    """Fetch a skill's interface and verify it: card (and its signature, if signed), three-way
    digest, trusted schema."""
    chosen = _binding(binding)
    from agent.client import GovernedClient, SkillNotAdvertisedError
    from agent.devtools.statuses import NOT_APPLICABLE, PASS

    async def run() -> tuple[AgentCard, SignatureCheck, VerifiedInterface]:
        async with GovernedClient(
            url, token=bearer, binding=chosen, require_signature=require_signature
        ) as client:
            advertised = await client.fetch_card()
            try:
                return advertised.card, advertised.signature, await client.describe(skill)
            except SkillNotAdvertisedError as exc:
                raise await _explained(client, skill, exc) from None

    card, signature, interface = _run_client(run(), as_json, bearer)
    checks = _describe_checks(interface, card, chosen, str(signature))
    unsigned = "card signature" if not signature.signed else None
    if as_json:
        payload = {
            "target": url,
            "binding": chosen,
            "card_url": interface.card_url,
            "interface_url": interface.interface_url,
            "skill_id": interface.skill_id,
            "skill_version": interface.skill_version,
            "interface_digest": interface.interface_digest,
            "checks": [
                {"check": c, "status": NOT_APPLICABLE if c == unsigned else PASS, "detail": d}
                for c, d in checks
            ],
            "skill_interface": interface.document,
        }
        print(json.dumps(payload, indent=2))
        return
    _print_checks(checks)
    _print_interface(interface.document)


@app.command("invoke")
def invoke_command(
    url: Url,
    skill: Annotated[str, typer.Argument(help="The skill to invoke.")],
    args: Arguments,
    bearer: Bearer = None,
    binding: BindingOption = "JSONRPC",
    stream: Annotated[
        bool,
        typer.Option("--stream", help="Stream: records as they arrive (each one with --records)."),
    ] = False,
    all_records: Annotated[
        bool,
        typer.Option("--records", help="Print every supporting record, not only their count."),
    ] = False,
    as_json: AsJson = False,
    require_signature: RequireSignature = False,
) -> None:
    """Invoke a skill the governed way: describe, verify, validate input, send, validate.

    Prints the result first, then how many supporting records of each kind came with it
    (--records: each one; --json: everything as JSON, rates in bit/s as the schemas say).
    """
    chosen = _binding(binding)
    from agent.client import GovernedClient, Invocation, SkillNotAdvertisedError

    arguments = _arguments(args)
    streamed: list[Record] = []

    def arrived(record: Record) -> None:
        if as_json:  # one JSON line per record as it arrives, then the result line
            print(json.dumps({"event": "record", **_record_json(record)}), flush=True)
            return
        streamed.append(record)
        if not all_records:  # one line for the first; the count follows the result
            if len(streamed) == 1:
                console.print(
                    f"streaming: first record arrived ({record.kind}); --records prints each one",
                    highlight=False,
                )
            return
        console.print(
            f"record arrived: [bold]{escape(record.kind)}[/] {escape(record.artifact_id)} "
            f"(valid against {escape(record.schema_uri)})",
            highlight=False,
            markup=True,
        )

    async def run() -> Invocation:
        async with GovernedClient(
            url, token=bearer, binding=chosen, require_signature=require_signature
        ) as client:
            try:
                if not stream:
                    return await client.invoke(skill, arguments)
                final: Invocation | None = None
                async for item in client.stream(skill, arguments):
                    if isinstance(item, Invocation):
                        final = item
                    else:
                        arrived(item)
            except SkillNotAdvertisedError as exc:
                raise await _explained(client, skill, exc) from None
            assert final is not None  # the stream always ends with the invocation
            return final

    result = _invocation_json(_run_client(run(), as_json, bearer))
    if as_json:
        print(json.dumps({"event": "result", **result} if stream else result))
        return
    _print_invocation(result, all_records=all_records)
    _print_checks(
        [
            ("describe", f"steps 1-6 for {skill} {result['skill_version']}"),
            ("input", "arguments valid against input_schema; sent with version and digest"),
            ("results", "output and every record valid against their schemas"),
        ]
    )


async def _on_database(work: Callable[[AsyncEngine], Awaitable[T]], database_url: str | None) -> T:
    """``work(engine)`` on the local database, migrated first (as ``netagent serve`` does)."""
    from agent.storage.engine import make_engine

    settings = cli_settings(database_url=database_url)
    await _migrate(settings)
    engine = make_engine(settings.resolved_database_url)
    try:
        return await work(engine)
    finally:
        await engine.dispose()


async def _migrate(settings: Settings) -> None:
    """The core's history, then the deployment's ``migrate``, as ``netagent serve`` runs them
    (a database at every head is left alone); a database this version cannot migrate is one
    line."""
    from agent.base.errors import ConfigurationError
    from agent.storage.engine import make_engine
    from agent.storage.migrate import at_heads
    from agent.storage.migrate import upgrade as upgrade_core

    if settings.database_url is None:
        settings.home.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.resolved_database_url)
    try:
        if await at_heads(engine, _deployment().histories()):
            return
        await upgrade_core(settings.resolved_database_url)
        migrate = _deployment().migrate
        if migrate is not None:
            await migrate(settings, engine)
    except ConfigurationError as exc:
        raise fail(str(exc)) from None
    finally:
        await engine.dispose()


def _read_database(database_url: str | None, work: Callable[[AsyncEngine], Awaitable[T]]) -> T:
    """What a command that only reads reads, through the stores ``serve`` writes with.

    A database at every head is read at once; any other (an older revision, a deployment whose
    heads are unknown, a newer version's database) is migrated first, as ``serve`` does, which
    refuses a revision it does not know. A SQLite file that is not there is refused (exit 2):
    one made here would read as an agent that never ran.
    """
    from agent.storage.engine import sqlite_file

    settings = cli_settings(database_url=database_url)
    path = sqlite_file(settings.resolved_database_url)
    if path is None:
        return run_async(_on_database(work, database_url))
    require_database(settings)
    return run_async(_read_sqlite(settings, path, work))


async def _read_sqlite(
    settings: Settings, path: Path, work: Callable[[AsyncEngine], Awaitable[T]]
) -> T:
    """``work`` on the SQLite file at ``path``, migrated first where it is not at its heads.
    In a folder this process may not write (a read-only mount) a file with nothing left in its
    WAL is read as it is (``immutable``): SQLite could not make the WAL reader's shared-memory
    file there. Whatever SQLite says of a file it cannot read is one line."""
    from sqlalchemy.exc import DBAPIError

    from agent.base.errors import ConfigurationError
    from agent.storage.engine import make_engine, read_only_sqlite_url
    from agent.storage.migrate import at_heads

    url = settings.resolved_database_url
    wal = path.with_name(path.name + "-wal")
    if not os.access(path.parent, os.W_OK) and not wal.exists():
        url = read_only_sqlite_url(path)
    engine = make_engine(url)
    try:
        if not await at_heads(engine, _deployment().histories()):
            _refuse_unwritable(path)
            await engine.dispose()  # no connection of ours open while it is migrated
            await _migrate(settings)
        return await work(engine)
    except ConfigurationError as exc:
        raise fail(str(exc)) from None
    except DBAPIError as exc:
        raise fail(f"cannot read the database {path}: {exc.orig}") from None
    finally:
        await engine.dispose()


def _refuse_unwritable(path: Path) -> None:
    """A database to make or migrate where this process may not write: one line, not
    SQLite's "unable to open database file" from inside the migration."""
    from agent.base.errors import ConfigurationError

    folder = path.parent
    if not path.exists():
        if folder.is_dir() and not os.access(folder, os.W_OK):
            raise ConfigurationError(
                f"the database {path} does not exist and {folder} cannot be written: "
                "it cannot be made here"
            )
        return
    if not (os.access(folder, os.W_OK) and os.access(path, os.W_OK)):
        raise ConfigurationError(
            f"the database {path} is not at the revisions this version reads (older, newer, "
            f"or not made by it) and {folder} cannot be written: it cannot be migrated here"
        )


@app.command("chain")
def chain_command(
    target: Annotated[
        str,
        typer.Argument(metavar="URL|list", help="Target agent's base URL, or `list`."),
    ],
    upstream: Annotated[str | None, typer.Option("--from", help="The upstream skill.")] = None,
    args: Annotated[
        str | None, typer.Option("--args", help="The upstream arguments: JSON, or @file.")
    ] = None,
    downstream: Annotated[str | None, typer.Option("--to", help="The downstream skill.")] = None,
    bearer: Bearer = None,
    binding: BindingOption = "JSONRPC",
    workflow: Annotated[
        str | None, typer.Option("--workflow", help="Workflow id (run: to use; list: to match).")
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="list: links touching this task id.")
    ] = None,
    limit: Annotated[
        int, typer.Option(help="list: at most this many, newest first.", parser=whole_number)
    ] = 100,
    as_json: AsJson = False,
    database_url: DatabaseUrl = None,
    require_signature: RequireSignature = False,
) -> None:
    """Feed one skill's output to another only if the schemas match; `chain list` shows links.

    The upstream -> downstream task correlation is stored in the local database.
    """
    if target == "list":
        if upstream or downstream or args is not None:
            raise fail("`chain list` takes --workflow and --task, not --from, --to or --args")
        _chain_list(database_url, workflow, task, limit, as_json)
        return
    if task is not None:
        raise fail("--task only filters `chain list`")
    if not (upstream and downstream and args is not None):
        raise fail("chain needs --from SKILL, --args JSON and --to SKILL")
    steps = ChainSteps(upstream, _arguments(args), downstream, workflow)
    client = ChainClient(target, bearer, _binding(binding), require_signature)
    result = _run_chain(steps, client, database_url, as_json)
    _print_chain(result, steps, as_json)


def _chain_list(
    database_url: str | None, workflow: str | None, task: str | None, limit: int, as_json: bool
) -> None:
    """`chain list`: the stored links, newest first."""
    from agent.client import CorrelationStore

    rows = _read_database(
        database_url,
        lambda engine: CorrelationStore(engine).query(
            workflow_id=workflow, task_id=task, limit=limit
        ),
    )
    _print_correlations(rows, as_json)


@dataclasses.dataclass(frozen=True)
class ChainSteps:
    """What `chain` composes: the upstream skill and its arguments, the downstream skill."""

    upstream: str
    arguments: dict[str, Any]
    downstream: str
    workflow: str | None


@dataclasses.dataclass(frozen=True)
class ChainClient:
    """Whom `chain` asks, and how."""

    target: str
    bearer: str | None
    binding: Any
    require_signature: bool


def _run_chain(
    steps: ChainSteps, client: ChainClient, database_url: str | None, as_json: bool
) -> ChainResult:
    """Run the composition, storing its link where the database is (made only when there is
    a link to store)."""
    from agent.client import CorrelationStore, GovernedClient, chain

    async def run(store: Correlations) -> ChainResult:
        async with GovernedClient(
            client.target,
            token=client.bearer,
            binding=client.binding,
            require_signature=client.require_signature,
        ) as governed:
            return await chain(
                governed,
                steps.upstream,
                steps.arguments,
                governed,
                steps.downstream,
                store,
                steps.workflow,
            )

    async def on_engine(engine: AsyncEngine) -> ChainResult:
        return await run(CorrelationStore(engine))

    async def migrated_insert(row: dict[str, Any]) -> None:
        async def insert(engine: AsyncEngine) -> None:
            await CorrelationStore(engine).insert(row)

        await _on_database(insert, database_url)

    if _is_sqlite(database_url):
        # made (or migrated) only when there is a link to store: nothing if no agent answers
        return _run_client(run(_store_on_insert(migrated_insert)), as_json, client.bearer)
    return _run_client(_on_database(on_engine, database_url), as_json, client.bearer)


def _is_sqlite(database_url: str | None) -> bool:
    from agent.storage.engine import sqlite_file

    return sqlite_file(cli_settings(database_url=database_url).resolved_database_url) is not None


def _print_chain(result: ChainResult, steps: ChainSteps, as_json: bool) -> None:
    """The composition's checks, its two steps and the downstream answer (or all as JSON)."""
    from agent.cli_layout import Column, print_records

    up, down = _invocation_json(result.upstream), _invocation_json(result.downstream)
    if as_json:
        print(json.dumps({"workflow_id": result.workflow_id, "upstream": up, "downstream": down}))
        return
    reference = result.upstream.interface.document["output_schema"]
    _print_checks(
        [
            (
                "composition",
                f"{steps.upstream} output = {steps.downstream} input: "
                f"{reference['schema_uri']} {reference['version']} {reference['digest']} "
                "(schema_uri, version, dialect, digest agree; embedded digests verified)",
            ),
            ("upstream", "described, verified; input, output and records validated"),
            ("downstream", "the upstream output validated as its input before sending"),
        ]
    )
    columns = [
        Column(header, identifier=True)
        for header in ("step", "skill", "task id", "context id", "endpoint")
    ]
    rows = [
        (step, item["skill"], item["task_id"], item["context_id"], item["endpoint"])
        for step, item in (("upstream", up), ("downstream", down))
    ]
    print_records(console, f"workflow {result.workflow_id}", columns, rows, lead=3)
    console.print(f"workflow id: {result.workflow_id} (correlation stored)", highlight=False)
    _print_invocation(down)


def _store_on_insert(insert: Callable[[dict[str, Any]], Awaitable[None]]) -> Correlations:
    """A correlation store that makes (or migrates) its SQLite file only when it stores one."""
    from agent.client import Correlations

    class StoreOnInsert(Correlations):
        async def insert(self, row: dict[str, Any]) -> None:
            await insert(row)

    return StoreOnInsert()


def _print_correlations(rows: list[dict[str, Any]], as_json: bool) -> None:
    from agent.cli_layout import Column, print_records

    if as_json:
        for row in rows:
            print(json.dumps(row, default=str, sort_keys=True))
        return
    records = []
    for row in rows:
        ts = row["ts"]
        records.append(
            (
                ts.strftime("%Y-%m-%d %H:%M:%S") if isinstance(ts, datetime) else str(ts),
                row["workflow_id"],
                f"{row['upstream_skill']} task {row['upstream_task_id']} "
                f"@ {row['upstream_endpoint']}",
                f"{row['downstream_skill']} task {row['downstream_task_id']} "
                f"@ {row['downstream_endpoint']}",
            )
        )
    columns = [
        Column("time", identifier=True),
        Column("workflow", identifier=True),
        Column("upstream"),
        Column("downstream"),
    ]
    title = f"task correlations ({_count(len(rows), 'row')}, newest first)"
    print_records(console, title, columns, records, lead=2)


@app.command("check")
def check_command(
    url: Url,
    bearer: Bearer = None,
    binding: BindingOption = "JSONRPC",
    json_file: Annotated[
        Path | None,
        typer.Option(
            "--json", help="Also write the report as JSON to this file.", parser=file_path
        ),
    ] = None,
    require_signature: RequireSignature = False,
    details: Annotated[
        bool,
        typer.Option(
            "--details",
            help="List every check with its reason, not only the ones that did not pass.",
        ),
    ] = False,
) -> None:
    """Check any A2A agent against the schema-interface procedure (exit 1 if a check fails,
    4 if nothing answers, 5 if it refuses the token).

    Prints the verdict first, then how each skill fared and every check that did not pass
    (--details: every check). A signed card is verified against the JWKS on the card's own
    origin; a card whose signature fails is not used."""
    chosen = _binding(binding)
    from agent.devtools.conformance import check_agent

    report = _run_checking(
        check_agent(url, token=bearer, binding=chosen, require_signature=require_signature)
    )
    if report.unreachable is not None:
        _write_report(json_file, report)
        raise fail(
            f"{UNREACHABLE}: nothing answered at {url} ({report.unreachable}); nothing was "
            "checked: is the agent running, is the URL right?",
            ExitCode.UNREACHABLE,
        )
    caller = "with --token" if bearer else "anonymous"
    _print_report(report, f"{url} ({chosen}, {caller})", details=details)
    if report.refusal is not None:
        for line in _refusal_lines(report.refusal, bearer):
            console.print(line, highlight=False, markup=False)
    _write_report(json_file, report)
    if report.refusal is not None:
        raise typer.Exit(code=ExitCode.TOKEN_REFUSED)
    if not report.ok:
        raise typer.Exit(code=ExitCode.FAILED)


def _print_report(report: Report, target: str, *, details: bool) -> None:
    """The verdict, a line per subject, then the checks that did not pass (or every one)."""
    from agent.cli_layout import Column, print_records
    from agent.devtools.statuses import FAIL, NOT_APPLICABLE, PASS, SKIP

    counts = report.counts()
    verdict = "[green]conforms[/]" if report.ok else "[bold red]does not conform[/]"
    console.print(f"{escape(target)} {verdict} to the schema-interface procedure", markup=True)
    console.print(
        f"{counts[PASS]} passed, {counts[FAIL]} failed, {counts[SKIP]} skipped, "
        f"{counts[NOT_APPLICABLE]} not applicable",
        highlight=False,
    )
    subjects: dict[str, dict[str, int]] = {}
    for check in report.checks:
        tally = subjects.setdefault(check.subject, {})
        tally[check.status] = tally.get(check.status, 0) + 1
    tallies = [
        (subject, ", ".join(f"{n} {status}" for status, n in tally.items()))
        for subject, tally in subjects.items()
    ]
    print_records(
        console, "by subject", [Column("subject", identifier=True), Column("checks")], tallies
    )
    shown = [c for c in report.checks if details or c.status in (FAIL, SKIP)]
    if shown:
        columns = [
            Column("subject", identifier=True),
            Column("check", identifier=True),
            Column("result", identifier=True),
            Column("reason"),
        ]
        rows = [(c.subject, c.name, c.status, c.reason) for c in shown]
        title = "every check" if details else "checks that did not pass"
        print_records(console, title, columns, rows, lead=3)
    if not details:
        console.print("--details lists every check with its reason", style="dim", highlight=False)
    for note in report.notes:
        console.print(f"note: {note}", highlight=False)


def _write_report(json_file: Path | None, report: Report) -> None:
    """``check --json FILE``: the report as JSON, whatever the outcome."""
    if json_file is None:
        return
    try:
        json_file.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise fail(f"--json: cannot write {json_file}: {exc.strerror}") from None


@app.command("listen")
def listen_command(
    url: Url,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = DEFAULT_HOST,
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8787,
    public_url: Annotated[
        str | None,
        typer.Option(
            "--public-url", help="The URL the agent posts to (default: http://HOST:PORT)."
        ),
    ] = None,
    notification_token: Annotated[
        str | None,
        typer.Option("--notification-token", help="Refuse notifications without this token."),
    ] = None,
    count: Annotated[
        int | None, typer.Option("--count", help="Exit after this many verified notifications.")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """Receive push notifications from the agent at URL: verify each (its signed token, against
    the agent's JWKS, read first: exit 4 if nothing answers) and print it; refused ones are
    answered 401 and printed with the reason."""
    busy = port_taken(host, port)
    if busy:
        raise fail(f"cannot listen on {host}:{port}: {busy} (pick another port with --port)")
    from agent.push.listener import NotificationRefusedError, listen

    def out(line: str) -> None:
        console.print(line, highlight=False, soft_wrap=True)

    listening = listen(
        url,
        host=host,
        port=port,
        public_url=public_url,
        token=notification_token,
        count=count,
        out=out,
        as_json=as_json,
    )
    try:
        run_async(listening)
    except NotificationRefusedError as exc:  # the agent's keys could not be read
        message = f"{UNREACHABLE}: nothing answered at {url} ({exc})"
        raise fail(message, ExitCode.UNREACHABLE) from None


@app.command("validate")
def validate_command(
    update_lock: Annotated[
        bool,
        typer.Option(
            "--update-lock", help="Record the current interfaces as released (after a bump)."
        ),
    ] = False,
) -> None:
    """Check the whole registry offline and print every problem with its file and JSON Pointer.

    Manifests, schemas, interface documents, digests, record kinds, lifecycle pointers, and
    the interface lock (a contract never changes without a version bump).
    """
    from agent.registry.loader import validate_registry
    from agent.registry.versioning import LOCK_FILE, lock_problems, write_lock

    skills_dir = skills_dir_of(cli_settings())
    lock = skills_dir / LOCK_FILE
    registry, problems = validate_registry(skills_dir)
    if registry is not None:
        problems += lock_problems(registry, lock)
    if registry is not None and update_lock:
        # Only what a release may record: new skills, and changes that carry the right bump.
        recordable = ("not locked yet", "missing;", "is not recorded yet", "no longer in the")
        blocking = [p for p in problems if not any(mark in p for mark in recordable)]
        if blocking:
            print("the lock was not updated:", file=sys.stderr)
        else:
            console.print(f"wrote {write_lock(registry, lock)}")
            problems = lock_problems(registry, lock)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} problem(s)", file=sys.stderr)
        raise typer.Exit(code=ExitCode.FAILED)
    console.print(f"registry valid: {len(registry or [])} skills, interfaces match the lock")


@app.command("new-skill")
def new_skill_command(
    skill_id: Annotated[
        str, typer.Argument(metavar="ID", help="The new skill's id, e.g. weekly_report.")
    ],
    name: Annotated[
        str | None, typer.Option(help="Its display name (default: from the id).")
    ] = None,
    visibility: Annotated[
        str, typer.Option(help="public | extended (listed only to entitled callers).")
    ] = "extended",
    scope: Annotated[
        list[str] | None,
        typer.Option(
            "--scope", help="A scope callers need; repeat for more (default: the template's)."
        ),
    ] = None,
    owner: Annotated[str | None, typer.Option(help="The owning team.")] = None,
) -> None:
    """Create a working skill (manifest, schemas, handler, extractor), its test, and its lock entry.

    From the deployment's own template if it offers one, else the core's domain-free one.
    Refuses (exit 2, nothing written) an id that exists, is malformed or is reserved.
    """
    from agent.devtools.scaffold import DEFAULT_OWNER, ScaffoldError, new_skill, next_steps
    from agent.devtools.text_skill import TextSkillTemplate

    deployment = _deployment()
    skills_dir = skills_dir_of(cli_settings())
    try:
        result = new_skill(
            skill_id,
            skills_dir,
            skills_dir.parent / "tests",
            deployment.scaffold or TextSkillTemplate(),
            name=name,
            visibility=visibility,
            scopes=scope,
            owner=owner or DEFAULT_OWNER,
            agent_name=deployment.identity.name,
            factory=_factories[-1] if _factories else "",
        )
    except ScaffoldError as exc:
        raise fail(str(exc)) from None
    here = Path.cwd()
    for path in result.created:
        print(f"created {path.relative_to(here) if path.is_relative_to(here) else path}")
    for path in result.updated:
        print(f"updated {path.relative_to(here) if path.is_relative_to(here) else path}")
    for note in result.notes:
        print(f"note: {note}")
    print("next steps:")
    steps = next_steps(
        result, command=_program(), visibility=visibility, owner=owner or DEFAULT_OWNER, root=here
    )
    for number, step in enumerate(steps, start=1):
        print(f"  {number}. {step}")


def _program() -> str:
    """How this command line was started, for the steps it prints (``netagent``,
    ``python -m examples.invoices``)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:
        return f"python -m {spec.name.removesuffix('.__main__')}"
    program = Path(sys.argv[0]).name if sys.argv else ""
    return program if program and not program.startswith("-") else "netagent"


def run(
    deployment: Deployment | Callable[[], Deployment],
    *,
    factory: str | None = None,
    identity: AgentIdentity | None = None,
) -> None:
    """Run the command line for ``deployment`` (a deployment's console-script entry point).

    ``deployment`` may be a function returning it, called when a command first needs it (so
    that ``--help`` or ``token`` does not import the domain). ``factory``: the
    ``module:function`` that returns the same deployment, for ``serve --workers N`` (each
    worker process builds its app from it). ``identity``: the deployment's, whose brand the
    help shows without building the deployment.
    """
    if identity is not None:
        app.info.help = f"{identity.slug}: {identity.tagline}"
    for command in [*app.registered_commands, *card_app.registered_commands]:
        command.epilog = command.epilog or exit_codes_help()  # a deployment's commands too
    _running.append(deployment)
    _factories.append(factory or "")
    try:
        app()
    finally:
        _running.pop()
        _factories.pop()
