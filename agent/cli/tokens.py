"""``token`` and ``tokens``: bearer tokens signed with the home's key."""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer

from agent.cli.common import (
    WHERE_THE_AGENT_RUNS,
    app,
    cli_settings,
    current_deployment,
    fail,
    require_signing_key,
)
from agent.cli.serving import print_banner
from agent.cli.values import whole_number


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
    callers = current_deployment().demo_callers
    if not callers:
        raise fail("this deployment has no demo callers: `netagent token` makes a token")
    print_banner(dataclasses.replace(settings, print_tokens=True), callers, again=False)
