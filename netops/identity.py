"""Who the network agent says it is: its card's name and its brand.

A module of its own so that the command line shows the brand on ``--help`` without importing
the deployment (its skills, tools and database).
"""

from __future__ import annotations

from agent.registry.identity import AgentIdentity

IDENTITY = AgentIdentity(
    name="NetOps Agent",
    description=(
        "A reference network-management agent: schema-governed skills over a simulated "
        "network inventory (sites, devices, interfaces, links and their utilization)."
    ),
    organization="netops-agent",
    slug="netops-agent",
    command="netagent",
    tagline="a reference A2A network-management agent.",
    distribution="netops-agent",
)
