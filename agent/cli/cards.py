"""``card`` and ``card diff``: the agent card as ``serve`` would publish it, and its
committed snapshot."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent.base.settings import DEFAULT_GRPC_PORT, DEFAULT_HOST, DEFAULT_PORT
from agent.cli.common import (
    card_app,
    cli_settings,
    console,
    current_deployment,
    fail,
    require_signing_key,
    skills_dir_of,
)
from agent.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    from agent.base.settings import Settings
    from agent.registry.cards import CardFactory
    from agent.registry.loader import Registry

SNAPSHOT = Path(__file__).resolve().parents[2] / "tests" / "snapshots" / "public-agent-card.json"
"""A file of the checkout, not of the package: an installed package has no tests/."""
SNAPSHOT_BASE_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
SNAPSHOT_GRPC_URL = f"{DEFAULT_HOST}:{DEFAULT_GRPC_PORT}"
"""The snapshot is the card of the default settings, whatever this environment sets."""


def _load_registry(settings: Settings) -> Registry:
    from agent.registry.loader import RegistryError, load_registry

    try:
        return load_registry(skills_dir_of(settings))
    except RegistryError as exc:
        raise fail(f"registry: {exc}") from None


def _card_factory(public_url: str | None, *, grpc_url: str | None = None) -> CardFactory:
    """The cards ``serve`` would build with these settings (``grpc_url`` overrides theirs)."""
    from agent.registry.cards import CardFactory

    settings = cli_settings(public_url=public_url)
    deployment = current_deployment()
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
