"""A vendor's master data, by vendor id or legal name."""

from __future__ import annotations

from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError
from examples.invoices.skills.ids import vendor_arguments

NOT_ACCESSIBLE = "resource not found or not accessible"
FIELDS = ("vendor_id", "legal_name", "country", "payment_terms", "status", "contact")


def extract(text: str) -> dict[str, Any]:
    """A vendor id the text names, if any (a name is asked for: names are free text)."""
    return vendor_arguments(text)


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """The vendor must be in the caller's books; another tenant's vendor looks absent."""
    ctx.found["vendor"] = await ctx.tool("ledger").vendor(arguments["vendor"].strip())
    if ctx.found["vendor"] is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """The master data ``authorize`` read."""
    return {field: ctx.found["vendor"][field] for field in FIELDS}


def summarize(result: dict[str, Any]) -> str:
    """One line for a caller that accepts only text."""
    return (
        f"{result['vendor_id']} {result['legal_name']} ({result['country']}): {result['status']}, "
        f"{result['payment_terms']}, contact {result['contact']['email']}"
    )
