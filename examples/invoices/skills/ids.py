"""The ledger's identifier shapes, read from free text for the three skills' extractors.

Each pattern is linear (no nested repetition) and runs on text the core has already bounded.
"""

from __future__ import annotations

import re
from typing import Any

from agent.sdk import total

_INVOICE = re.compile(r"\b(?:inv[-\s]?|invoice\s+(?:no\.?\s?|number\s|#\s?)?)(\d{3,12})\b", re.I)
_ORDER = re.compile(r"\b(?:po[-\s]?|purchase\s+order\s+(?:no\.?\s?|#\s?)?)(\d{3,12})\b", re.I)
_VENDOR = re.compile(r"\bv-?(\d{3,8})\b", re.I)


def _first(pattern: re.Pattern[str], text: str, prefix: str) -> dict[str, Any]:
    found = pattern.search(text)
    return {"value": f"{prefix}-{found.group(1)}"} if found else {}


@total
def invoice_arguments(text: str) -> dict[str, Any]:
    """``invoice_id`` (``INV-20931``, ``inv 20931``, ``invoice no. 20931``) and a named PO."""
    arguments: dict[str, Any] = {}
    if invoice := _first(_INVOICE, text, "INV"):
        arguments["invoice_id"] = invoice["value"]
    if order := _first(_ORDER, text, "PO"):
        arguments["purchase_order_id"] = order["value"]
    return arguments


@total
def vendor_arguments(text: str) -> dict[str, Any]:
    """``vendor`` from a vendor id (``V-1001``, ``v1001``); a name is asked for."""
    found = _first(_VENDOR, text, "V")
    return {"vendor": found["value"]} if found else {}
