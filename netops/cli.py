"""The ``netagent`` command of the network agent: the core's commands, run for the network
deployment, plus ``seed`` and ``demo``, which know the inventory (the core's ``new-skill``
writes the network's template, ``netops/scaffold.py``, given as ``Deployment.scaffold``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer

from agent.cli import app, run
from agent.cli.common import DatabaseUrl, cli_settings, console, fail, run_async
from agent.cli.exit_codes import ExitCode
from agent.cli.values import whole_number

FACTORY = "netops.deployment:network_deployment"

if TYPE_CHECKING:
    from agent.ports import Deployment
    from db.simulator import SeedReport


@app.command("seed")
def seed_command(
    scale: Annotated[str, typer.Option(help="small | medium | large")] = "small",
    links: Annotated[
        int | None,
        typer.Option(help="Exact number of links (overrides --scale).", parser=whole_number),
    ] = None,
    database_url: DatabaseUrl = None,
    until: Annotated[
        datetime | None, typer.Option(help="End of the time series (UTC); default: now.")
    ] = None,
    reset: Annotated[
        bool,
        typer.Option(
            help="Delete existing inventory rows first (and, on SQLite, give their space back)."
        ),
    ] = False,
) -> None:
    """Fill the inventory with the deterministic simulated network."""
    from agent.storage.engine import make_engine
    from agent.storage.engine import sqlite_file as sqlite_file_of
    from db.migrate import upgrade
    from db.simulator import SeedError, seed

    if scale not in ("small", "medium", "large"):
        raise fail("--scale must be small, medium or large")
    settings = cli_settings(database_url=database_url)
    settings.home.mkdir(parents=True, exist_ok=True)

    if until is not None and until.tzinfo is None:  # typer parses without a zone: it is UTC
        until = until.replace(tzinfo=UTC)

    url = settings.resolved_database_url
    sqlite_file = sqlite_file_of(url)
    before = sqlite_file.stat().st_size if sqlite_file and sqlite_file.exists() else None

    async def run() -> SeedReport:
        await upgrade(url)
        engine = make_engine(url)
        try:
            report = await seed(
                engine, scale=scale, links=links, until=until, progress=True, reset=reset
            )
            if reset and sqlite_file is not None:  # give the deleted rows' pages back
                async with engine.connect() as connection:
                    autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                    await autocommit.exec_driver_sql("VACUUM")
            return report
        finally:
            await engine.dispose()

    try:
        report = run_async(run())
    except SeedError as exc:
        message = str(exc)
        if "pass reset=True" in message:  # the Python API's words; the command's are --reset
            message = message.replace(
                "pass reset=True to replace it",
                "run `netagent seed --reset` to replace it (the inventory is deleted first)",
            )
        raise fail(message) from None
    except ValueError as exc:  # arguments seed() refuses (too few --links, ...)
        raise fail(str(exc)) from None
    for line in seed_summary(report):
        console.print(line, highlight=False)
    if sqlite_file is not None and sqlite_file.exists():
        size = sqlite_file.stat().st_size
        change = "" if before is None else f" (was {_megabytes(before)})"
        console.print(f"database: {sqlite_file}, {_megabytes(size)}{change}", highlight=False)


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def seed_summary(report: SeedReport) -> list[str]:
    """What ``seed`` wrote, for people: the network, then the telemetry, then the totals."""
    counts = report.counts

    def count(table: str) -> str:
        return f"{counts.get(table, 0):,}"

    return [
        f"seeded the {report.scale} simulated network (seed {report.seed}, "
        f"telemetry up to {report.until:%Y-%m-%d %H:%M} UTC):",
        f"  {count('tenant')} tenants, {count('site')} sites, {count('device')} devices, "
        f"{count('interface')} interfaces, {count('link')} links",
        f"  {count('link_utilization_sample')} link utilization samples, "
        f"{count('metric_sample')} metric samples",
        f"  {report.total_rows:,} rows in {report.elapsed_s:.1f} s",
    ]


@app.command("demo")
def demo_command(
    url: Annotated[
        str | None, typer.Option(help="An agent to walk through (default: the local one).")
    ] = None,
    pause: Annotated[bool, typer.Option(help="Wait for Enter between steps.")] = False,
) -> None:
    """Walk through the whole story: cards, describe, verify, invoke, stream, clarify, chain, audit.

    Starts the agent on its embedded defaults if none answers, and stops it again afterwards.
    """
    from netops.demo import ensure_agent, run_demo

    settings = cli_settings()
    base_url = (url or settings.resolved_public_url).rstrip("/")
    if url is None:
        console.print(f"Looking for an agent at {base_url} ...", highlight=False)
    try:
        process = ensure_agent(settings, base_url)
    except RuntimeError as exc:
        raise fail(str(exc)) from None
    if process is None:
        console.print(f"Using the agent already running at {base_url}.", highlight=False)
    else:
        console.print(
            f"Started an agent of its own for this walkthrough: netagent serve at {base_url} "
            f"(pid {process.pid}, home {settings.home}, log {settings.home / 'serve.log'}); "
            "it is stopped at the end.",
            highlight=False,
        )
    try:
        report = run_async(run_demo(base_url, settings, console, pause=pause))
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
            console.print(f"Stopped the agent it started (pid {process.pid}).", highlight=False)
    raise typer.Exit(code=ExitCode.OK if report.ok else ExitCode.FAILED)


def _network_deployment() -> Deployment:
    """The deployment, imported when a command first needs it (``--help`` does not)."""
    from netops.deployment import network_deployment

    try:
        return network_deployment()
    except ValueError as exc:  # NETAGENT_LIVE_TELEMETRY, read as the core's settings are
        raise fail(f"settings: {exc}") from None


def main() -> None:
    """Console-script entry point (``netagent``)."""
    from netops.identity import IDENTITY

    run(_network_deployment, factory=FACTORY, identity=IDENTITY)
