"""The ledger: the invoice agent's one tool, behind the same token exchange and audit as any tool.

A handler never sees a caller's token or the agent's own credential: it calls
``ctx.tool("ledger")``, whose client presents a tool token the core exchanged for the caller
(audience ``ledger``, the caller's tenant, the scopes the manifest grants the tool). The gate
below is the tool side of that contract, and every tool a deployment adds keeps it:

1. verify the token on every call (``ToolTokenVerifier.verify``: signature, audience, expiry);
2. allow the operation only if the token's scopes allow it;
3. read only the token's tenant, whatever the handler passes;
4. write one ``AuditRecord`` per call, allowed or refused, naming the principal, the actor
   chain, the skill and task from the token's context, and the resources asked for.

The demo data is a JSON file per tenant; a real ledger would be an ERP's API behind the same gate.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from agent.sdk import (
    AuditLog,
    AuditRecord,
    TokenError,
    ToolClaims,
    ToolRefusedError,
    ToolTokenVerifier,
)

TOOL = "ledger"
DATA = Path(__file__).resolve().parent / "data" / "ledger.json"
OPERATION_SCOPES: Mapping[str, frozenset[str]] = {
    "invoice": frozenset({"invoices.read", "recon.run"}),
    "purchase_order": frozenset({"recon.run"}),
    "vendor": frozenset({"vendors.read", "invoices.read"}),
}
"""Which token scopes allow which read."""


@cache
def _books() -> Mapping[str, Any]:
    """Every tenant's demo books, read once."""
    books: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return books


def _read(tenant: str, operation: str, key: str) -> dict[str, Any] | None:
    """One record of ``tenant``'s books: an invoice, a purchase order, or a vendor by id or name."""
    books = _books().get(tenant, {})
    if operation == "vendor":
        wanted = key.casefold()
        return next(
            (
                v
                for v in books.get("vendors", [])
                if wanted in (v["vendor_id"].casefold(), v["legal_name"].casefold())
            ),
            None,
        )
    table, id_field = {
        "invoice": ("invoices", "invoice_id"),
        "purchase_order": ("purchase_orders", "purchase_order_id"),
    }[operation]
    return next((row for row in books.get(table, []) if row[id_field] == key.upper()), None)


class LedgerGate:
    """The tool side: verify, authorize the operation, scope by tenant, audit."""

    def __init__(self, verifier: ToolTokenVerifier, audit: AuditLog) -> None:
        self._verifier = verifier
        self._audit = audit

    async def call(self, token: str, operation: str, key: str) -> dict[str, Any] | None:
        """One read for the token's tenant, or ToolRefusedError; audited either way."""
        try:
            claims = self._verifier.verify(token)
        except TokenError as exc:
            await self._write(None, operation, key, "deny", f"token refused: {exc.description}")
            raise ToolRefusedError(exc.description) from None
        if not claims.scopes & OPERATION_SCOPES.get(operation, frozenset()):
            await self._write(claims, operation, key, "deny", "insufficient_scope")
            raise ToolRefusedError(f"{operation}: insufficient_scope")
        found = _read(claims.tenant, operation, key)
        reason = "ok" if found else "not found in the caller's tenant"
        await self._write(claims, operation, key, "allow" if found else "deny", reason)
        return found

    async def _write(
        self, claims: ToolClaims | None, operation: str, key: str, decision: str, reason: str
    ) -> None:
        context = claims.context if claims else {}
        await self._audit.write(
            AuditRecord(
                principal=claims.subject if claims else "unverified",
                tenant=claims.tenant if claims else None,
                tool=TOOL,
                operation=operation,
                decision="allow" if decision == "allow" else "deny",
                reason=reason,
                actor_chain=claims.actor_chain if claims else (),
                skill_id=context.get("skill_id"),
                skill_version=context.get("skill_version"),
                interface_digest=context.get("interface_digest"),
                task_id=context.get("task_id") or AuditLog.invocation_task(),
                resource_ids=(key[:128],),
                token_id=claims.token_id if claims else None,
            )
        )


class LedgerClient:
    """What a handler holds: the ledger's reads, each presenting the exchanged tool token."""

    def __init__(self, gate: LedgerGate, token: Callable[[], Awaitable[str]]) -> None:
        self._gate = gate
        self._token_source = token

    async def _call(self, operation: str, key: str) -> dict[str, Any] | None:
        return await self._gate.call(await self._token_source(), operation, key)

    async def invoice(self, invoice_id: str) -> dict[str, Any] | None:
        """The invoice with its lines, or None if the caller's tenant has none by that id."""
        return await self._call("invoice", invoice_id)

    async def purchase_order(self, purchase_order_id: str) -> dict[str, Any] | None:
        """The purchase order with its lines, or None."""
        return await self._call("purchase_order", purchase_order_id)

    async def vendor(self, vendor: str) -> dict[str, Any] | None:
        """The vendor by id (``V-1001``) or exact legal name (any case), or None."""
        return await self._call("vendor", vendor)
