"""The inventory as a tool behind its own gate.

Every call presents a tool token. The gate verifies it (signature, audience ``inventory``,
expiry), checks that its scopes allow the operation, runs the query for the token's tenant
only (the read layer filters in SQL), and writes an audit row whether it allowed or refused.
Nothing a handler passes can widen what the token grants.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import jwt
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.sdk import (
    AuditLog,
    AuditRecord,
    TokenError,
    ToolClaims,
    ToolRefusedError,
    ToolTokenVerifier,
    VerifiedTokens,
)
from db.inventory import Inventory

log = logging.getLogger(__name__)
TOOL = "inventory"
_TOPOLOGY = frozenset({"inventory.read", "assurance.read", "capacity.read", "capacity.plan"})
OPERATION_SCOPES: Mapping[str, frozenset[str]] = {
    "sites": _TOPOLOGY,
    "devices": _TOPOLOGY,
    "device": _TOPOLOGY,
    "interfaces": _TOPOLOGY,
    "links": _TOPOLOGY,
    "link": _TOPOLOGY,
    "link_between": _TOPOLOGY,
    "resource_exists": _TOPOLOGY,
    "latest_metric": frozenset({"assurance.read"}),
    "latest_link_utilization": frozenset({"assurance.read"}),
    "utilization_samples": frozenset({"capacity.read", "capacity.plan"}),
    "hot_links": frozenset({"capacity.plan"}),
}
"""Which token scopes allow which read: topology for every skill, telemetry only for its own."""
POINT_LOOKUPS = frozenset({"device", "link", "link_between", "resource_exists"})
VERIFIED_TOKENS = 1024
"""How many verified tool tokens the gate remembers (the core reuses each for one caller
token's invocations of one skill while it is fresh, so a hit is the common case)."""


def _resource_ids(
    operation: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[str, ...]:
    """The resources a call names: its leading id arguments (two for link_between)."""
    leading = 2 if operation == "link_between" else 1
    found = [a for a in args[:leading] if isinstance(a, str)]
    found += [str(kwargs[k]) for k in ("device", "link", "link_id", "resource_id") if kwargs.get(k)]
    return tuple(found)


class InventoryGate:
    """The tool side: verify, authorize the operation, scope by tenant, audit."""

    def __init__(self, engine: AsyncEngine, verifier: ToolTokenVerifier, audit: AuditLog) -> None:
        self._engine = engine
        self._verifier = verifier
        self._audit = audit
        # The same token comes back on every call of its invocations: its signature is checked once.
        self._verify = VerifiedTokens(self._verify_signed, size=VERIFIED_TOKENS)

    def _verify_signed(self, token: str) -> tuple[ToolClaims, float | None]:
        claims = self._verifier.verify(token)  # raises TokenError
        expires = jwt.decode(token, options={"verify_signature": False}).get("exp")
        return claims, float(expires) if isinstance(expires, int | float) else None

    async def call(self, token: str, operation: str, *args: Any, **kwargs: Any) -> Any:
        """Run one read for the token's tenant, or refuse with ToolRefusedError."""
        resources = _resource_ids(operation, args, kwargs)
        try:
            claims = self._verify(token)
        except TokenError as exc:
            await self._refuse_unverified(token, operation, resources, exc.description)
            raise ToolRefusedError(exc.description) from None
        needed = OPERATION_SCOPES.get(operation)
        if needed is None or not claims.scopes & needed:
            reason = "unknown operation" if needed is None else "insufficient_scope"
            await self._record(claims, operation, resources, "deny", reason)
            raise ToolRefusedError(f"{operation}: {reason}")
        try:
            result = await getattr(Inventory(self._engine, claims.tenant), operation)(
                *args, **kwargs
            )
        except Exception as exc:  # authorized, but the read itself failed: still on record
            await self._record(claims, operation, resources, "deny", f"error: {type(exc).__name__}")
            raise
        absent = operation in POINT_LOOKUPS and not result
        await self._record(
            claims,
            operation,
            resources,
            "deny" if absent else "allow",
            "not found in the caller's tenant" if absent else "ok",
        )
        return result

    async def _record(
        self,
        claims: ToolClaims,
        operation: str,
        resources: tuple[str, ...],
        decision: str,
        reason: str,
    ) -> None:
        context = claims.context
        await self._audit.write(
            AuditRecord(
                principal=claims.subject,
                tenant=claims.tenant,
                tool=TOOL,
                operation=operation,
                decision="allow" if decision == "allow" else "deny",
                reason=reason,
                actor_chain=claims.actor_chain,
                skill_id=context.get("skill_id"),
                skill_version=context.get("skill_version"),
                interface_digest=context.get("interface_digest"),
                task_id=context.get("task_id") or AuditLog.invocation_task(),
                resource_ids=resources,
                token_id=claims.token_id,
            )
        )

    async def _refuse_unverified(
        self, token: str, operation: str, resources: tuple[str, ...], reason: str
    ) -> None:
        """Audit a refused token with what it claims, marked unverified (never the token)."""
        try:
            claimed = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            claimed = {}
        subject = claimed.get("sub") if isinstance(claimed.get("sub"), str) else "?"
        token_id = claimed.get("jti") if isinstance(claimed.get("jti"), str) else None
        await self._audit.write(
            AuditRecord(
                principal=f"unverified:{subject}"[:255],
                tenant=None,
                tool=TOOL,
                operation=operation[:64],
                decision="deny",
                reason=f"token refused: {reason}",
                resource_ids=resources,
                token_id=token_id[:64] if token_id else None,
            )
        )


class InventoryClient:
    """What a handler holds: the inventory's read methods, each presenting the tool token.

    The token is obtained on first use (the core reuses an exchanged token while it is fresh)
    and never shown to the handler.
    """

    def __init__(self, gate: InventoryGate, token: Callable[[], Awaitable[str]]) -> None:
        self._gate = gate
        self._token_source = token
        self._token: str | None = None

    async def _call(self, operation: str, *args: Any, **kwargs: Any) -> Any:
        if self._token is None:
            self._token = await self._token_source()
        return await self._gate.call(self._token, operation, *args, **kwargs)

    def __getattr__(self, operation: str) -> Callable[..., Awaitable[Any]]:
        if operation not in OPERATION_SCOPES:
            raise AttributeError(operation)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await self._call(operation, *args, **kwargs)

        return call
