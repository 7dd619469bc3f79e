"""Who the card says the agent is: a deployment names it (the core knows no domain).

A module of its own, with nothing to import: a deployment builds its identity at import
time, and a command that never shows a card (``netagent audit``) should not import the card
module's protobuf types for it. ``agent.registry.cards`` re-exports it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentIdentity:
    """Who the card says the agent is; the deployment names it (the core knows no domain)."""

    name: str = "Schema-governed A2A agent"
    description: str = "An A2A agent whose skills are schema-governed contracts."
    organization: str = "a2a-agent"
    slug: str = "a2a-agent"
    """The short brand the agent shows beyond its card: the HTTP app's title, the console's and
    the landing page's brand, the edge's error domain (``<slug>.edge``), the trace service
    name and the agent's own subject in token exchange (``agent:<slug>``)."""
    command: str = "a2a-agent"
    """How people run the deployment's command line (the landing page and the CLI's help)."""
    tagline: str = "a schema-governed A2A agent."
    """The command line's one-line help, after the slug."""
    distribution: str | None = None
    """The installed distribution (its name as pip knows it) whose version begins the card's
    version and names the MCP server's; None, or a distribution not installed: ``0.0.0``."""

    @property
    def agent_subject(self) -> str:
        """The agent's own subject in token exchange: the actor its tool tokens name."""
        return f"agent:{self.slug}"

    @property
    def error_domain(self) -> str:
        """The ``google.rpc.ErrorInfo`` domain of the reasons this agent's edge defines."""
        return f"{self.slug}.edge"
