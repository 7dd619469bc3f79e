"""What every command of the command line shares: the Typer apps, the console, the
deployment :func:`run` was given, the settings and the refusals (exit 2) that every command
words alike, and :func:`run` itself."""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console

from agent.cli.exit_codes import ExitCode, exit_codes_help

if TYPE_CHECKING:
    from agent.base.settings import Settings
    from agent.ports import Deployment
    from agent.registry.identity import AgentIdentity


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


def current_deployment() -> Deployment:
    """The deployment this command line runs for."""
    if not _running:
        raise RuntimeError("agent.cli commands run through agent.cli.run(deployment)")
    current = _running[-1]
    from agent.ports import Deployment

    if not isinstance(current, Deployment):  # built on first use
        current = _running[-1] = current()
    return current


def current_factory() -> str:
    """The import path of a function returning the deployment, if :func:`run` was given one."""
    return _factories[-1] if _factories else ""


def skills_dir_of(settings: Settings) -> Path:
    """NETAGENT_SKILLS_DIR, else the deployment's own skills folder."""
    return settings.skills_dir or current_deployment().skills_dir


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


def run_async(work: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run``, with asyncio imported only by the commands that run something
    (``card``, ``validate`` and ``token`` never do: 35-80 ms of their start)."""
    import asyncio

    return asyncio.run(work)


def counted(number: int, noun: str) -> str:
    """``1 row``, ``2 rows``."""
    return f"{number} {noun}" + ("" if number == 1 else "s")


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
