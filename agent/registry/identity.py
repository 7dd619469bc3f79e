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
    organization: str = "netops-agent"
