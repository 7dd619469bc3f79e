"""Card projections: the public card and each caller's extended card, generated from the registry.

Both are pure functions of the registry, the deployment's base URL and the caller, so the
card can never advertise a skill the router and executor would not serve to that caller.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import time
from collections.abc import Callable, Iterable
from email.utils import formatdate, parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from a2a.utils.proto_utils import warn_on_missing_required_fields
from google.protobuf.json_format import MessageToDict

from agent.edge.json_numbers import integral_numbers
from agent.interfaces import EXTENSION_URI, INTERFACE_VERSION
from agent.registry.identity import AgentIdentity as AgentIdentity
from agent.registry.loader import Capability, Registry
from agent.registry.manifest import Manifest, State, Visibility, thawed
from agent.registry.policy import publicly_visible, visible
from agent.security.principal import Principal

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route


JSONRPC_PATH = "/a2a/jsonrpc"
REST_PATH = "/a2a/rest"
BEARER_SCHEME = "bearer"
PROTOCOL_VERSION = "1.0"


@functools.cache
def agent_version(distribution: str | None) -> str:
    """The deployment's installed distribution's version (``AgentIdentity.distribution``); the
    card version builds on it. Read once: it does not change while the process runs, and an
    extended card is built at a new caller's first request)."""
    if distribution is None:
        return "0.0.0"
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0"


def _skill_block(manifest: Manifest) -> AgentSkill:
    block = thawed(manifest.skill)
    description = block["description"]
    if manifest.state is State.DEPRECATED:
        description = f"Deprecated: use '{manifest.replacement}' instead. {description}"
    requirements = []
    if manifest.requires_scopes:
        requirements.append(
            SecurityRequirement(
                schemes={BEARER_SCHEME: StringList(list=sorted(manifest.requires_scopes))}
            )
        )
    tags = list(block["tags"])
    if manifest.state in (State.DEPRECATED, State.PREVIEW):
        tags.append(manifest.state.value)
    return AgentSkill(
        id=manifest.id,
        name=block["name"],
        description=description,
        tags=tags,
        examples=block.get("examples", []),
        input_modes=list(manifest.input_modes),
        output_modes=list(manifest.output_modes),
        security_requirements=requirements,
    )


def _extension(capabilities: Iterable[Capability]) -> AgentExtension:
    bindings = [
        {
            "skill_id": c.interface.skill_id,
            "skill_version": c.interface.skill_version,
            "interface_digest": c.interface.interface_digest,
        }
        for c in capabilities
        if c.interface is not None
    ]
    return AgentExtension(
        uri=EXTENSION_URI,
        description="Schema-governed skill interfaces: call describe_skill for each document.",
        required=False,
        params={"interface_version": INTERFACE_VERSION, "skills": bindings},
    )


def card_version(skills: Iterable[AgentSkill], extension: AgentExtension, release: str) -> str:
    """Derived from what the card lists, so every change of the skill list changes it;
    ``release`` (the distribution's version) before it."""
    listed = [MessageToDict(s) for s in skills] + [MessageToDict(extension)]
    fingerprint = hashlib.sha256(json.dumps(listed, sort_keys=True).encode()).hexdigest()[:12]
    return f"{release}+skills.{fingerprint}"


class CardFactory:
    """Builds the public card once and each distinct caller's extended card once.

    With a ``signer`` (``agent.security.card_signatures.CardSigner``) every card it hands out
    is signed; the signer keeps one signature per distinct content, so callers whose extended
    cards list the same skills share it. Without one (``netagent card``, the snapshot) the
    cards are unsigned: a signature differs on every signing and would make them unstable.
    """

    def __init__(
        self,
        registry: Registry,
        base_url: str,
        extra_extensions: Iterable[AgentExtension] = (),
        identity: AgentIdentity | None = None,
        grpc_url: str | None = None,
        signer: Callable[[AgentCard], AgentCard] | None = None,
    ) -> None:
        self._registry = registry
        self._signer = signer
        self._grpc_url = grpc_url
        self._identity = identity or AgentIdentity()
        self.release = agent_version(self._identity.distribution)
        """The deployment's release: the card's version begins with it, the MCP server's is it."""
        self._base_url = base_url.rstrip("/")
        self._extra_extensions = list(extra_extensions)
        self._has_extended = any(
            m.visibility is Visibility.EXTENDED and m.state is not State.REMOVED
            for m in registry.manifests
        )
        self.public_card = self._build(lambda m: publicly_visible(m))
        self._extended: dict[tuple[str | None, frozenset[str], bool], AgentCard] = {}

    def _build(self, include: Callable[[Manifest], bool]) -> AgentCard:
        card = self._unsigned(include)
        return card if self._signer is None else self._signer(card)

    def _unsigned(self, include: Callable[[Manifest], bool]) -> AgentCard:
        listed = [c for c in self._registry if include(c.manifest)]
        skills = [_skill_block(c.manifest) for c in listed]
        extension = _extension(listed)
        return AgentCard(
            name=self._identity.name,
            description=self._identity.description,
            version=card_version(skills, extension, self.release),
            provider=AgentProvider(organization=self._identity.organization, url=self._base_url),
            supported_interfaces=[
                AgentInterface(
                    url=f"{self._base_url}{JSONRPC_PATH}",
                    protocol_binding="JSONRPC",
                    protocol_version=PROTOCOL_VERSION,
                ),
                AgentInterface(
                    url=f"{self._base_url}{REST_PATH}",
                    protocol_binding="HTTP+JSON",
                    protocol_version=PROTOCOL_VERSION,
                ),
                *(
                    [
                        AgentInterface(
                            url=self._grpc_url,
                            protocol_binding="GRPC",
                            protocol_version=PROTOCOL_VERSION,
                        )
                    ]
                    if self._grpc_url
                    else []
                ),
            ],
            capabilities=AgentCapabilities(
                streaming=True,
                push_notifications=True,
                extended_agent_card=self._has_extended,
                extensions=[extension, *self._extra_extensions],
            ),
            security_schemes={
                BEARER_SCHEME: SecurityScheme(
                    http_auth_security_scheme=HTTPAuthSecurityScheme(
                        scheme="bearer",
                        bearer_format="JWT",
                        description="JWT with sub, tenant and scope (space-separated) claims.",
                    )
                )
            },
            # Declared up front, so a generic client knows before its first call: every call
            # but the card and an anonymous describe_skill needs the bearer token; the scopes
            # each skill needs are in its own securityRequirements.
            security_requirements=[
                SecurityRequirement(schemes={BEARER_SCHEME: StringList(list=[])})
            ],
            default_input_modes=["application/json", "text/plain"],
            default_output_modes=["application/json"],
            skills=skills,
        )

    def extended_card(self, principal: Principal) -> AgentCard:
        """The card this caller is entitled to; cached per distinct identity shape."""
        key = (principal.tenant, principal.scopes, principal.authenticated)
        card = self._extended.get(key)
        if card is None:
            card = self._build(lambda m: visible(m, principal))
            if len(self._extended) < 4096:
                self._extended[key] = card
        return card


def card_to_json(card: AgentCard) -> dict[str, Any]:
    """The card as it goes on the wire (camelCase ProtoJSON, integral numbers as integers).

    What the SDK's ``agent_card_to_dict`` renders, without importing the SDK's server side
    (half a second, which ``netagent card`` would otherwise spend): for a card whose every
    interface speaks protocol 1.0, as every card of ours does, that is ``MessageToDict`` after
    the same warning on missing REQUIRED fields (it merges v0.3 fields in only when an
    interface speaks a v0.3 version, or none). Any other card goes through the SDK's function.
    """
    if any(i.protocol_version != PROTOCOL_VERSION for i in card.supported_interfaces):
        from a2a.server.request_handlers.response_helpers import agent_card_to_dict

        return dict(integral_numbers(agent_card_to_dict(card)))
    warn_on_missing_required_fields(card, "agent_card passed to agent_card_to_dict:")
    return dict(integral_numbers(MessageToDict(card)))


def card_routes(card: AgentCard, cache_control: str) -> list[Route]:
    """The SDK's public card route (same body, ETag, Cache-Control and 304 revalidation), with
    the card serialized once here instead of on every request, and a ``Last-Modified``.

    ``create_agent_card_routes`` re-renders the card per request (MessageToDict, JSON for the
    ETag, SHA-256, JSON again for the body), which costs in proportion to the card: about
    0.9 ms for this agent's public card against 0.35 ms for a one-skill card. The public card
    is fixed at start-up, so all of it can be done once. It was generated when this process
    started, so that is its ``Last-Modified`` (replicas differ by their start times; the ETag,
    taken from the content, is the same on all of them and wins when a client sends both).
    """
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from agent._sdk import card_etag, etag_matches

    rendered = card_to_json(card)
    body = JSONResponse(rendered).body
    generated = int(time.time())
    headers = {
        "ETag": card_etag(rendered),
        "Cache-Control": cache_control,
        "Last-Modified": formatdate(generated, usegmt=True),
    }

    async def get_card(request: Request) -> Response:
        asked = request.headers.get("if-none-match")
        if asked is not None:  # RFC 9110 13.2.2: If-Modified-Since is ignored beside it
            if etag_matches(asked, headers["ETag"]):
                return Response(status_code=304, headers=headers)
        elif _not_modified_since(request.headers.get("if-modified-since"), generated):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    return [Route(AGENT_CARD_WELL_KNOWN_PATH, get_card, methods=["GET"])]


def _not_modified_since(value: str | None, generated: int) -> bool:
    """True when an If-Modified-Since date is at or after the card's; an invalid one is ignored."""
    if not value:
        return False
    try:
        since = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return False
    if since.tzinfo is None:
        return False
    return since.timestamp() >= generated
