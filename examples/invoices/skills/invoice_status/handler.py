"""Where one invoice stands: its status, amount, due date and vendor."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError
from examples.invoices.skills.ids import invoice_arguments

NOT_ACCESSIBLE = "resource not found or not accessible"


def extract(text: str) -> dict[str, Any]:
    """The invoice number a text names, if any (the router asks for what is missing)."""
    return {k: v for k, v in invoice_arguments(text).items() if k == "invoice_id"}


def amount(lines: list[dict[str, Any]]) -> str:
    """An invoice's total, summed exactly, with two decimals."""
    total = sum((Decimal(line["unit_price"]) * line["quantity"] for line in lines), Decimal(0))
    return f"{total:.2f}"


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """The invoice must be the caller's own (read once; ``handle`` reuses it): another tenant's
    invoice looks exactly like one that does not exist."""
    ctx.found["invoice"] = await ctx.tool("ledger").invoice(arguments["invoice_id"])
    if ctx.found["invoice"] is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """The invoice ``authorize`` read, its total and its vendor's name."""
    invoice = ctx.found["invoice"]
    vendor = await ctx.tool("ledger").vendor(invoice["vendor_id"])
    return {
        "invoice_id": invoice["invoice_id"],
        "status": invoice["status"],
        "amount": amount(invoice["lines"]),
        "currency": invoice["currency"],
        "due_date": invoice["due_date"],
        "vendor_id": invoice["vendor_id"],
        "vendor_name": vendor["legal_name"] if vendor else invoice["vendor_id"],
        "purchase_order_id": invoice["purchase_order_id"],
    }


def summarize(result: dict[str, Any]) -> str:
    """One line for a caller that accepts only text."""
    return (
        f"{result['invoice_id']} from {result['vendor_name']}: {result['status']}, "
        f"{result['amount']} {result['currency']}, due {result['due_date']}"
    )
