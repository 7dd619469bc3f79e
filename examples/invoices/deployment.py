"""The invoice agent's parts for ``agent.app.create_app`` and the core's command line.

Everything domain-specific is here: who the agent says it is, where its skills live, its one
tool (the ledger) and the demo callers it prints tokens for. Routing needs nothing more: the
router learns the skills from their manifests' descriptions, examples and utterances.
"""

from __future__ import annotations

from pathlib import Path

from agent.ports import DemoCaller, Deployment, ToolClientFactory, ToolEnvironment, ToolPort
from agent.registry.identity import AgentIdentity

IDENTITY = AgentIdentity(
    name="Invoice Agent",
    description=(
        "Reconciles supplier invoices against purchase orders, reports invoice status and "
        "looks up vendors; schema-governed skills over a demo ledger. Reads only."
    ),
    organization="invoice-agent example",
    slug="invoice-agent",
    command="python -m examples.invoices",
    tagline="an A2A agent that reconciles supplier invoices.",
)
SKILLS_DIR = Path(__file__).resolve().parent / "skills"
ROUTING_DATA = Path(__file__).resolve().parent / "routing.json"
"""Example requests and requests no skill fits, which the router learns from (no routing code)."""
LEDGER = "ledger"
DEMO_CALLERS = (
    DemoCaller("ann", "acme", ("recon.run", "invoices.read", "vendors.read")),
    DemoCaller("ben", "acme", ("invoices.read", "vendors.read")),
    DemoCaller("gina", "globex", ("recon.run", "invoices.read", "vendors.read")),
)


def connect_ledger(environment: ToolEnvironment) -> ToolClientFactory:
    """One gate per app (it verifies every tool token and audits every call); a client per call."""
    from examples.invoices.ledger import LedgerClient, LedgerGate

    gate = LedgerGate(environment.verifier, environment.audit)
    return lambda token: LedgerClient(gate, token)


def invoice_deployment() -> Deployment:
    """The invoice agent: its skills, the ledger, the demo callers."""
    return Deployment(
        identity=IDENTITY,
        skills_dir=SKILLS_DIR,
        tools=(ToolPort(LEDGER, LEDGER, connect_ledger),),
        demo_callers=DEMO_CALLERS,
        routing_data=ROUTING_DATA,
    )
