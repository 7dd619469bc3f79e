"""The ``netagent`` command of the network agent: the core's commands, run for the network
deployment, plus ``seed``, ``new-skill`` and ``demo``, which know the inventory."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from agent.cli import DatabaseUrl, app, cli_settings, console, fail, run, skills_dir_of
from netops.deployment import network_deployment


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
    from agent.storage.engine import make_engine
    from db.migrate import upgrade
    from db.simulator import SeedError, seed

    if scale not in ("small", "medium", "large"):
        raise fail("--scale must be small, medium or large")
    settings = cli_settings(database_url=database_url)
    settings.home.mkdir(parents=True, exist_ok=True)

    if until is not None and until.tzinfo is None:  # typer parses without a zone: it is UTC
        until = until.replace(tzinfo=UTC)

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
        raise fail(str(exc)) from None
    console.print(report)


@app.command("new-skill")
def new_skill_command(
    skill_id: Annotated[
        str, typer.Argument(metavar="ID", help="The new skill's id, e.g. site_report.")
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
            "--scope",
            help="A scope callers need; repeat for more (default inventory.read).",
        ),
    ] = None,
    owner: Annotated[str | None, typer.Option(help="The owning team.")] = None,
) -> None:
    """Create a working skill (manifest, schemas, handler, extractor), its test, and its lock entry.

    Refuses (exit 2, nothing written) an id that exists, is malformed or is reserved.
    """
    from netops.scaffold import DEFAULT_OWNER, DEFAULT_SCOPES, ScaffoldError, new_skill, next_steps

    skills_dir = skills_dir_of(cli_settings())
    try:
        result = new_skill(
            skill_id,
            skills_dir,
            skills_dir.parent / "tests",
            name=name,
            visibility=visibility,
            scopes=scope or DEFAULT_SCOPES,
            owner=owner or DEFAULT_OWNER,
        )
    except ScaffoldError as exc:
        raise fail(str(exc)) from None

    def shown(path: Path) -> str:
        return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)

    for path in result.created:
        print(f"created {shown(path)}")
    for path in result.updated:
        print(f"updated {shown(path)}")
    for note in result.notes:
        print(f"note: {note}")
    print("next steps:")
    for number, step in enumerate(
        next_steps(result, visibility=visibility, owner=owner or DEFAULT_OWNER), start=1
    ):
        print(f"  {number}. {step}")


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
        report = asyncio.run(run_demo(base_url, settings, console, pause=pause))
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
            console.print(f"Stopped the agent it started (pid {process.pid}).", highlight=False)
    raise typer.Exit(code=0 if report.ok else 1)


def main() -> None:
    """Console-script entry point (``netagent``)."""
    run(network_deployment(), factory="netops.deployment:network_deployment")
