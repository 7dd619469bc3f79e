"""The security builder: the caller-token verifier, the token exchange and each tool's
verifier, the handlers' gated tools, and the routes that publish keys and issue tokens."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from fastapi.responses import JSONResponse

from agent.app.assembly import AgentRuntime, Assembly, Life, running
from agent.base.settings import Settings
from agent.ports import Deployment, ToolEnvironment
from agent.security.auth import TokenVerifier
from agent.security.card_signatures import JWKS_PATH
from agent.security.credentials import (
    AGENT_SUBJECT,
    TOOL_ISSUER,
    LocalIssuer,
    LocalTokenExchanger,
    RemoteTokenExchanger,
    TokenExchanger,
    ToolGrant,
    ToolTokenVerifier,
)
from agent.security.exchange_cache import CachingTokenExchanger
from agent.security.oauth import token_endpoint
from agent.security.outbound import outbound_client
from agent.server.skill_context import ToolFactory

CARD_CACHE_CONTROL = "public, max-age=300"
OAUTH_TOKEN_PATH = "/oauth/token"


def gated_tools(
    deployment: Deployment,
    exchanger: TokenExchanger,
    environments: Mapping[str, ToolEnvironment],
) -> ToolFactory:
    """Handlers' tools: each port's client, presenting a token exchanged for the caller.

    Exchanged tokens are reused per grant while fresh (agent/security/exchange_cache.py): one
    signature here, and one verification at the tool, per caller token and skill, not per call.
    """
    exchanger = CachingTokenExchanger(exchanger)
    clients = {
        port.name: (port.audience, port.connect(environments[port.audience]))
        for port in deployment.tools
    }

    def make(name: str, grant: ToolGrant) -> Any:
        if name not in clients:
            raise LookupError(f"no tool named {name!r}")
        audience, client = clients[name]
        target = replace(grant, audience=audience)

        async def token() -> str:
            return (await exchanger.exchange(target)).access_token

        return client(token)

    return make


def build_exchanger(
    settings: Settings,
    runtime: AgentRuntime,
    subject_verifier: TokenVerifier,
    audiences: frozenset[str],
    subject: str = AGENT_SUBJECT,
) -> tuple[TokenExchanger, dict[str, ToolTokenVerifier], LocalIssuer]:
    """The embedded exchange (default) or an external token service, and each tool's verifier;
    ``subject``: the agent's own, the actor of the tokens the embedded exchange issues."""
    issuer = LocalIssuer(runtime.tool_key, subject_verifier, audiences)
    own_key = runtime.tool_key.private_key.public_key()
    if settings.token_exchange_url:
        if not settings.agent_credential:
            raise ValueError("NETAGENT_TOKEN_EXCHANGE_URL needs NETAGENT_AGENT_CREDENTIAL")
        exchanger: TokenExchanger = RemoteTokenExchanger(
            settings.token_exchange_url,
            settings.agent_credential,
            outbound_client(timeout=10),  # the caller's token: no proxy reads it
        )
        verifiers = {
            audience: ToolTokenVerifier(
                audience,
                settings.tool_issuer or TOOL_ISSUER,
                jwks_url=settings.tool_jwks_url,
                key=None if settings.tool_jwks_url else own_key,
            )
            for audience in audiences
        }
        return exchanger, verifiers, issuer
    verifiers = {
        audience: ToolTokenVerifier(audience, TOOL_ISSUER, key=own_key) for audience in audiences
    }
    return LocalTokenExchanger(issuer, subject), verifiers, issuer


def credentials(assembly: Assembly) -> Life | None:
    """Verifier, exchange and tools, the JWKS and token routes; its life: an external token
    service's client closed."""
    settings, deployment, runtime = assembly.settings, assembly.deployment, assembly.runtime
    verifier = assembly.verifier = TokenVerifier(settings, runtime.signing_key)
    exchanger, tool_verifiers, issuer = build_exchanger(
        settings, runtime, verifier, deployment.audiences, deployment.identity.agent_subject
    )
    environments = {
        audience: ToolEnvironment(settings, runtime.engine, tool_verifiers[audience], runtime.audit)
        for audience in deployment.audiences
    }
    tools = gated_tools(deployment, exchanger, environments)
    wrap = assembly.options.tools
    assembly.tools = wrap(tools) if wrap is not None else tools

    jwks = {"keys": [runtime.tool_key.public_jwk]}

    async def jwks_route() -> JSONResponse:
        return JSONResponse(jwks, headers={"Cache-Control": CARD_CACHE_CONTROL})

    assembly.app.add_api_route(JWKS_PATH, jwks_route, include_in_schema=False)
    assembly.app.router.add_route(OAUTH_TOKEN_PATH, token_endpoint(issuer), methods=["POST"])
    if isinstance(exchanger, RemoteTokenExchanger):
        return running(None, exchanger.aclose)
    return None
