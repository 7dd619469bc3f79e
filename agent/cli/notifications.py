"""``listen``: push notifications from an agent, each verified against its keys."""

from __future__ import annotations

from typing import Annotated

import typer

from agent.base.settings import DEFAULT_HOST
from agent.cli.calling import UNREACHABLE, AsJson, Url
from agent.cli.common import app, console, fail, port_taken, run_async
from agent.cli.exit_codes import ExitCode


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
