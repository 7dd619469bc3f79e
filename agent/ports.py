"""The ports through which a deployment hands the core its domain: the core imports no domain.

The core (``agent/``) governs skills it discovers through the registry; everything a skill
reaches beyond that (a tool such as a domain's database, a topology for the console, tables
of its own to migrate and seed, background services) is given to ``create_app`` as a
:class:`Deployment`. A fork replaces the deployment, its skills and its tools, and keeps the core.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent.base.settings import Settings
    from agent.console.topology import TopologyView
    from agent.registry.identity import AgentIdentity
    from agent.security.credentials import ToolTokenVerifier
    from agent.storage.audit import AuditLog
    from agent.storage.schema import MigrationHistory

TokenSupplier = Callable[[], Awaitable[str]]
"""Returns a tool token exchanged for the caller, each time the tool client needs one."""

ToolClientFactory = Callable[[TokenSupplier], Any]
"""Builds the client a handler gets from ``ctx.tool(name)``; it presents the supplied tokens."""


@dataclass(frozen=True)
class ToolEnvironment:
    """What the core gives a tool when the app is built: how to check its tokens, where to audit.

    ``verifier`` checks the tool tokens the core exchanges for this tool's audience (signature,
    audience, expiry); a tool must call it on every request, so a bug in a handler cannot reach
    another tenant's data. ``engine`` is the database the core was configured with. A tool's
    ``audit`` rows name the calling invocation's task by ``AuditLog.invocation_task()`` (tool
    tokens carry none: one serves many invocations).
    """

    settings: Settings
    engine: AsyncEngine
    verifier: ToolTokenVerifier
    audit: AuditLog


@dataclass(frozen=True)
class ToolPort:
    """A tool handlers may reach: manifests name it in ``tools``; tokens are for ``audience``."""

    name: str
    audience: str
    connect: Callable[[ToolEnvironment], ToolClientFactory]


class Service(Protocol):
    """Something a deployment runs beside the agent (e.g. a simulator) while it serves."""

    async def start(self, settings: Settings, engine: AsyncEngine) -> None:
        """Start after storage is prepared; must return promptly (spawn a task if it loops)."""
        ...

    async def stop(self) -> None:
        """Stop at shutdown, before the database is closed."""
        ...


StorageHook = Callable[["Settings", "AsyncEngine"], Awaitable[None]]
"""Work on the deployment's own tables (migrate, seed), run under the start-up lock."""


@dataclass(frozen=True)
class DemoCaller:
    """An identity the agent prints a ready token for on start-up (embedded issuer only)."""

    subject: str
    tenant: str
    scopes: tuple[str, ...]


@dataclass(frozen=True)
class SkillRequest:
    """A new skill as ``new-skill`` was asked for, every value checked: what a template renders."""

    skill_id: str
    name: str
    visibility: str
    scopes: tuple[str, ...]
    owner: str
    package: str
    """The dotted package of the skills folder: the handler is ``<package>.<skill_id>.handler``."""
    schema_prefix: str
    """The start of the new schemas' ``schema_uri``s, from the agent's name (``urn:x-agent``)."""
    factory: str
    """``module:function`` returning the deployment ``new-skill`` ran for, so that a generated
    test can start that deployment's agent without knowing its domain."""


@dataclass(frozen=True)
class SkillFiles:
    """What a template renders: the skill folder's files (name -> text) and its test module."""

    files: Mapping[str, str]
    test: str
    notes: Sequence[str] = ()
    """Anything the person should know (e.g. a scope the example's tool does not honour)."""


class SkillTemplate(Protocol):
    """What ``new-skill`` writes for a deployment that knows its domain better than the core's
    domain-free example (``agent/devtools/text_skill.py``): a skill that works on day one."""

    def default_scopes(self, skill_id: str) -> tuple[str, ...]:
        """The scopes the skill requires when ``--scope`` gives none."""
        ...

    def render(self, request: SkillRequest) -> SkillFiles:
        """The files of the new skill; its handler must import the core only via agent.sdk."""
        ...


@dataclass(frozen=True)
class Deployment:
    """Everything domain-specific one agent is built from; ``create_app`` takes one."""

    identity: AgentIdentity
    skills_dir: Path
    tools: Sequence[ToolPort] = ()
    migrate: StorageHook | None = None
    """Bring the deployment's tables to its schema; run at every start and by storage commands."""
    migrated: Sequence[MigrationHistory] = ()
    """The histories ``migrate`` brings to their heads, each naming its ``head``: a command
    that only reads (``netagent audit``, ``usage``, ``chain list``) skips ``migrate`` when the
    database records every one at its head. None given with a ``migrate``: it cannot tell, and
    always runs ``migrate`` first."""
    seed: StorageHook | None = None
    """Fill an empty database with demo data (NETAGENT_SEED); must leave existing data alone."""
    topology: TopologyView | None = None
    """The console's topology page; None: the console has none (its front page is the skills)."""
    services: Callable[[], Sequence[Service]] = field(default=lambda: ())
    demo_callers: Sequence[DemoCaller] = ()
    routing_data: Path | None = None
    """Example requests per skill and requests no skill fits, as data the router trains on
    (``agent/routing/data.py``)."""
    scaffold: SkillTemplate | None = None
    """The template ``new-skill`` writes new skills from; None: the core's domain-free one."""

    def histories(self) -> Sequence[MigrationHistory] | None:
        """The histories a database of this deployment is migrated by: the core's, then those
        ``migrate`` brings to their heads; None when it migrates without naming them (only
        running the migrations can then tell whether a database is current)."""
        from agent.storage.schema import CORE

        if self.migrate is not None and not self.migrated:
            return None
        return [CORE, *self.migrated]

    def tool(self, name: str) -> ToolPort | None:
        """The port named ``name``, if this deployment has one."""
        return next((port for port in self.tools if port.name == name), None)

    @property
    def audiences(self) -> frozenset[str]:
        """The audiences the embedded token exchange may mint tool tokens for."""
        return frozenset(port.audience for port in self.tools)
