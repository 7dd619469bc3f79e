"""An invoice compared with its purchase order, line by line."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError
from examples.invoices.skills.ids import invoice_arguments

NOT_ACCESSIBLE = "resource not found or not accessible"


def extract(text: str) -> dict[str, Any]:
    """The invoice and, if named, the purchase order a text gives."""
    return invoice_arguments(text)


def _line_status(line: dict[str, Any], ordered: dict[str, Any] | None) -> str:
    if ordered is None:
        return "not_on_purchase_order"
    quantity = line["quantity"] != ordered["quantity"]
    price = Decimal(line["unit_price"]) != Decimal(ordered["unit_price"])
    return {
        (False, False): "matched",
        (True, False): "quantity",
        (False, True): "price",
        (True, True): "quantity and price",
    }[(quantity, price)]


def _differences(
    lines: list[dict[str, Any]], ordered: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each way the invoice departs from the order, in the invoice's line order, then what was
    ordered but not invoiced."""
    found: list[dict[str, Any]] = []
    for line in lines:
        order_line = ordered.get(line["item"])
        status = _line_status(line, order_line)
        if order_line is None:
            found.append({"kind": status, "item": line["item"], "invoiced": str(line["quantity"])})
            continue
        if "quantity" in status:
            found.append(
                {
                    "kind": "quantity",
                    "item": line["item"],
                    "invoiced": str(line["quantity"]),
                    "ordered": str(order_line["quantity"]),
                }
            )
        if "price" in status:
            found.append(
                {
                    "kind": "price",
                    "item": line["item"],
                    "invoiced": line["unit_price"],
                    "ordered": order_line["unit_price"],
                }
            )
    invoiced = {line["item"] for line in lines}
    for item, order_line in ordered.items():
        if item not in invoiced:
            found.append(
                {"kind": "not_invoiced", "item": item, "ordered": str(order_line["quantity"])}
            )
    return found


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """Both documents must be the caller's own (read once; ``handle`` reuses them): the invoice,
    and the order named or, by default, the one the invoice references."""
    ledger = ctx.tool("ledger")
    invoice = await ledger.invoice(arguments["invoice_id"])
    order_id = arguments.get("purchase_order_id") or (invoice or {}).get("purchase_order_id")
    if invoice is not None and not order_id:
        raise SkillError(
            ErrorCode.CONSTRAINT_REJECTED,
            "the invoice references no purchase order: name one in purchase_order_id",
        )
    order = await ledger.purchase_order(order_id) if invoice and order_id else None
    if invoice is None or order is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)
    ctx.found.update(invoice=invoice, order=order)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Stream one record per invoice line, then answer matched or mismatched with the
    differences."""
    invoice, order = ctx.found["invoice"], ctx.found["order"]
    ordered = {line["item"]: line for line in order["lines"]}
    for number, line in enumerate(invoice["lines"], start=1):
        order_line = ordered.get(line["item"])
        record = {
            "record_id": f"{invoice['invoice_id']}-line-{number}",
            "line": number,
            "item": line["item"],
            "quantity": line["quantity"],
            "unit_price": line["unit_price"],
            "status": _line_status(line, order_line),
        }
        if order_line is not None:
            record["ordered_quantity"] = order_line["quantity"]
            record["ordered_unit_price"] = order_line["unit_price"]
        await ctx.emit_record("invoice-line", record, artifact_id=record["record_id"])
    differences = _differences(invoice["lines"], ordered)
    return {
        "invoice_id": invoice["invoice_id"],
        "purchase_order_id": order["purchase_order_id"],
        "result": "mismatched" if differences else "matched",
        "currency": invoice["currency"],
        "differences": differences,
    }


def summarize(result: dict[str, Any]) -> str:
    """One line for a caller that accepts only text."""
    head = f"{result['invoice_id']} against {result['purchase_order_id']}: {result['result']}"
    kinds = ", ".join(f"{d['kind']} ({d['item']})" for d in result["differences"])
    return f"{head}; {kinds}" if kinds else head
