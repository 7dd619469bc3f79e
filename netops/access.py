"""Who may read what in the console's network pages: the inventory gate's rule, applied to
the caller's own scopes (``db/gate.py``'s ``OPERATION_SCOPES``), and the caller's tenant."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.console.topology import TopologyRefusedError
from agent.security.principal import Principal
from db.gate import OPERATION_SCOPES
from db.overview import Overview


def may(principal: Principal, operation: str) -> bool:
    """The gate's rule for ``operation``, applied to the caller's own scopes."""
    return bool(principal.scopes & OPERATION_SCOPES[operation])


def needs(operation: str) -> str:
    """The scopes that allow ``operation``, for a message: "a or b"."""
    return " or ".join(sorted(OPERATION_SCOPES[operation]))


def overview_for(engine: AsyncEngine, principal: Principal) -> Overview:
    """The caller's tenant's reads, or a refusal naming what is missing (as the network view)."""
    if not principal.authenticated or not principal.tenant:
        raise TopologyRefusedError("the network view needs an authenticated caller")
    if not may(principal, "links"):
        raise TopologyRefusedError(f"the network view needs one of: {needs('links')}")
    return Overview(engine, principal.tenant)
