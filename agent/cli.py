"""The ``netagent`` command: serve, seed, token, card."""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from agent.audit import AuditLog
from agent.auth import TokenError, TokenVerifier, issue_token, load_or_create_signing_key
from agent.cards import CardFactory, card_to_json
from agent.registry import RegistryError, load_registry
from agent.settings import Settings

app = typer.Typer(
    help="netops-agent: a reference A2A network-management agent.", no_args_is_help=True
)
card_app = typer.Typer(help="Print or check the agent card.", invoke_without_command=True)
app.add_typer(card_app, name="card")
console = Console()
T = TypeVar("T")
SNAPSHOT = Path(__file__).resolve().parent.parent / "tests" / "snapshots" / "public-agent-card.json"

DEMO_IDENTITIES: list[tuple[str, str, list[str]]] = [
    ("alice", "acme", ["inventory.read", "assurance.read", "capacity.read"]),
    (
        "paula",
        "acme",
        ["inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"],
    ),
    ("gary", "globex", ["inventory.read", "assurance.read", "capacity.read"]),
    ("vic", "acme", ["inventory.read"]),
]

DatabaseUrl = Annotated[
    str | None,
    typer.Option("--database-url", help="SQLAlchemy async URL (default: SQLite in NETAGENT_HOME)."),
]


def _settings(**overrides: object) -> Settings:
    return Settings.from_env().with_overrides(**overrides)


def _fail(message: str) -> typer.Exit:
    """Print an error unwrapped (paths stay greppable) and return the exit to raise."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    return typer.Exit(code=2)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on.")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on.")] = None,
    database_url: DatabaseUrl = None,
    public_url: Annotated[
        str | None, typer.Option("--public-url", help="Base URL the card advertises.")
    ] = None,
) -> None:
    """Run the agent (creates, migrates and seeds the embedded database on first start)."""
    import uvicorn

    from agent.app import create_app

    settings = _settings(host=host, port=port, database_url=database_url, public_url=public_url)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        application = create_app(settings)
    except RegistryError as exc:
        raise _fail(f"registry: {exc}") from None
    runtime = application.state.runtime
    if runtime.signing_key is not None:
        _print_demo_tokens(settings)
    console.print(
        f"Agent card: [bold]{settings.resolved_public_url}/.well-known/agent-card.json[/]",
        highlight=False,
    )
    uvicorn.run(application, host=settings.host, port=settings.port, log_level=settings.log_level)


def _print_demo_tokens(settings: Settings) -> None:
    """One shell line per demo identity, unwrapped so it can be pasted as it is."""
    key = load_or_create_signing_key(settings.home)
    console.print("[bold]Demo bearer tokens[/] (valid 8 h; `netagent token` makes more):")
    for subject, tenant, scopes in DEMO_IDENTITIES:
        token = issue_token(key, settings, subject=subject, tenant=tenant, scopes=scopes)
        console.print(f"# {subject}@{tenant}: {' '.join(scopes)}", style="dim", highlight=False)
        print(f"export {subject.upper()}_TOKEN={token}", flush=True)


@app.command("seed")
def seed_command(
    scale: Annotated[str, typer.Option(help="small | medium | large")] = "small",
    links: Annotated[
        int | None, typer.Option(help="Exact number of links (overrides --scale).")
    ] = None,
    database_url: DatabaseUrl = None,
    until: Annotated[
        datetime | None, typer.Option(help="End of the time series (UTC); default: now.")
    ] = None,
    reset: Annotated[bool, typer.Option(help="Delete existing inventory rows first.")] = False,
) -> None:
    """Fill the inventory with the deterministic simulated network."""
    from db.engine import make_engine
    from db.migrate import upgrade
    from db.simulator import SeedError, seed

    if scale not in ("small", "medium", "large"):
        raise _fail("--scale must be small, medium or large")
    settings = _settings(database_url=database_url)
    settings.home.mkdir(parents=True, exist_ok=True)

    async def run() -> object:
        await upgrade(settings.resolved_database_url)
        engine = make_engine(settings.resolved_database_url)
        try:
            return await seed(
                engine, scale=scale, links=links, until=until, progress=True, reset=reset
            )
        finally:
            await engine.dispose()

    try:
        report = asyncio.run(run())
    except SeedError as exc:
        raise _fail(str(exc)) from None
    console.print(report)


@app.command()
def token(
    subject: Annotated[str, typer.Option(help="The token's sub claim.")],
    tenant: Annotated[str, typer.Option(help="The tenant claim (acme, globex, ...).")],
    scope: Annotated[list[str] | None, typer.Option(help="A scope; repeat for more.")] = None,
    ttl: Annotated[int, typer.Option(help="Lifetime in seconds.")] = 8 * 3600,
) -> None:
    """Print a bearer token signed by this agent's embedded key."""
    settings = _settings()
    if not settings.embedded_issuer:
        raise _fail("tokens come from the external issuer (NETAGENT_JWKS_URL is set)")
    if ttl <= 0:
        raise _fail("--ttl must be positive")
    key = load_or_create_signing_key(settings.home)
    print(
        issue_token(
            key, settings, subject=subject, tenant=tenant, scopes=scope or [], ttl_seconds=ttl
        )
    )


def _card_factory(public_url: str | None) -> CardFactory:
    settings = _settings(public_url=public_url)
    try:
        registry = load_registry(settings.skills_dir)
    except RegistryError as exc:
        raise _fail(f"registry: {exc}") from None
    return CardFactory(registry, settings.resolved_public_url)


@card_app.callback()
def card(
    ctx: typer.Context,
    extended: Annotated[bool, typer.Option(help="The extended card for --token's caller.")] = False,
    bearer: Annotated[
        str | None, typer.Option("--token", help="Bearer token of the caller.")
    ] = None,
    public_url: Annotated[str | None, typer.Option("--public-url")] = None,
) -> None:
    """Print the public card, or with --extended the card the token's caller is entitled to."""
    if ctx.invoked_subcommand is not None:
        return
    factory = _card_factory(public_url)
    if not extended:
        print(json.dumps(card_to_json(factory.public_card), indent=2))
        return
    if not bearer:
        raise _fail("--extended needs --token")
    settings = _settings()
    key = load_or_create_signing_key(settings.home) if settings.embedded_issuer else None
    try:
        principal = TokenVerifier(settings, key).verify(bearer)
    except TokenError as exc:
        raise _fail(f"token refused: {exc.description}") from None
    print(json.dumps(card_to_json(factory.extended_card(principal)), indent=2))


@card_app.command("diff")
def card_diff(
    snapshot: Annotated[Path, typer.Option(help="The committed public-card snapshot.")] = SNAPSHOT,
    update: Annotated[bool, typer.Option(help="Rewrite the snapshot from the registry.")] = False,
) -> None:
    """Compare the generated public card with the committed snapshot (exit 1 if they differ)."""
    generated = (
        json.dumps(
            card_to_json(_card_factory("http://127.0.0.1:8000").public_card),
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
    raise typer.Exit(code=1)


def _since(value: str | None) -> datetime | None:
    """``--since``: an ISO time (UTC if no offset) or a look-back such as 30m, 24h, 7d."""
    if value is None:
        return None
    units = {"m": 60, "h": 3600, "d": 86400}
    if value[:-1].isdigit() and value[-1] in units:
        return datetime.now(UTC) - timedelta(seconds=int(value[:-1]) * units[value[-1]])
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise _fail("--since takes an ISO time or a look-back like 30m, 24h, 7d") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _with_audit(work: Callable[[AuditLog], Awaitable[T]], database_url: str | None) -> T:
    from db.engine import make_engine
    from db.migrate import upgrade

    settings = _settings(database_url=database_url)

    async def run() -> T:
        await upgrade(settings.resolved_database_url)
        engine = make_engine(settings.resolved_database_url)
        try:
            return await work(AuditLog(engine))
        finally:
            await engine.dispose()

    return asyncio.run(run())


@app.command("audit")
def audit_command(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant.")] = None,
    principal: Annotated[str | None, typer.Option(help="Only this subject.")] = None,
    task: Annotated[str | None, typer.Option(help="Only this task id.")] = None,
    since: Annotated[str | None, typer.Option(help="ISO time, or 30m / 24h / 7d.")] = None,
    limit: Annotated[int, typer.Option(help="At most this many rows, newest first.")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """Read the principal audit trail (tool calls and invocations)."""
    moment = _since(since)
    rows = _with_audit(
        lambda log: log.query(
            tenant=tenant, principal=principal, task_id=task, since=moment, limit=limit
        ),
        database_url,
    )
    if as_json:
        for row in rows:
            print(json.dumps(row, default=str, sort_keys=True))
        return
    table = Table(title=f"principal audit ({len(rows)} rows, newest first)")
    for column in (
        "ts",
        "principal",
        "tenant",
        "skill",
        "task",
        "tool.op",
        "resources",
        "decision",
    ):
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            row["ts"].strftime("%Y-%m-%d %H:%M:%S") if row["ts"] else "",
            row["principal"]
            + (f" (via {', '.join(row['actor_chain'])})" if row["actor_chain"] else ""),
            row["tenant"] or "",
            f"{row['skill_id'] or ''} {row['skill_version'] or ''}".strip(),
            (row["task_id"] or "")[:8],
            f"{row['tool']}.{row['operation']}",
            " ".join(row["resource_ids"]),
            f"{row['decision']}: {row['reason']}",
        )
    console.print(table)


@app.command("usage")
def usage_command(
    since: Annotated[str | None, typer.Option(help="ISO time, or 30m / 24h / 7d.")] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Calls per day, callers and last call per capability (is a deprecated skill still used?)."""
    moment = _since(since)
    rows = _with_audit(lambda log: log.usage(since=moment), database_url)
    registry = load_registry(_settings().skills_dir)
    table = Table(title="capability usage, from the audit trail")
    for column in ("skill", "state", "day", "calls", "callers", "last call"):
        table.add_column(column)
    seen = set()
    for row in rows:
        capability = registry.get(row["skill_id"] or "")
        state = capability.manifest.state.value if capability else "unknown"
        seen.add(row["skill_id"])
        table.add_row(
            row["skill_id"] or "(none)",
            state,
            row["day"],
            str(row["calls"]),
            str(row["callers"]),
            str(row["last_call"])[:19],
        )
    for capability in registry:
        if capability.id not in seen:
            table.add_row(capability.id, capability.manifest.state.value, "-", "0", "0", "never")
    console.print(table)


def main() -> None:
    """Console-script entry point."""
    app()
