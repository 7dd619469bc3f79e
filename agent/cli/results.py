"""How the client commands show what they verified and what came back: the checks, an
interface's schemas, a result as text (rates for people, the JSON keeps bit/s) and its records."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from agent.cli.common import console

if TYPE_CHECKING:
    from a2a.types import AgentCard

    from agent.client import Invocation, Record, VerifiedInterface


def print_checks(checks: list[tuple[str, str]]) -> None:
    from agent.cli.layout import Column, print_records

    columns = [Column("", style="green"), Column("check", identifier=True), Column("detail")]
    rows = [("ok", name, detail) for name, detail in checks]
    print_records(console, "checked", columns, rows, lead=2)


def describe_checks(
    interface: VerifiedInterface, card: AgentCard, binding: str, signature: str
) -> list[tuple[str, str]]:
    """What GovernedClient.describe verified (draft steps 1-6), as (check, detail) rows."""
    from agent.interfaces import INTERFACE_VERSION, trusted_schema

    document = interface.document
    references = 2 + len(document["supporting_record_schemas"])
    return [
        (
            "card fetched",
            f"{interface.card_url} ({card.name} {card.version}); "
            f"{binding} at {interface.interface_url}",
        ),
        ("card signature", signature),
        (
            "advertised",
            f"{interface.skill_id} {interface.skill_version} {interface.interface_digest}; "
            "describe_skill listed",
        ),
        ("describe_skill", "returned one document"),
        ("three-way digest", "advertised = returned = computed"),
        (
            "trusted schema",
            f"valid against {trusted_schema().get('$id')}; interface_version "
            f"{INTERFACE_VERSION}; skill_id and skill_version as selected",
        ),
        ("embedded digests", f"{references} embedded schema(s) match their digests"),
    ]


def print_interface(document: dict[str, Any]) -> None:
    from agent.cli.layout import Column, print_records

    records: dict[str, Any] = document["supporting_record_schemas"]
    references = [("input", document["input_schema"]), ("output", document["output_schema"])]
    references += [(f"record {kind}", reference) for kind, reference in records.items()]
    rows = [(role, r["version"], r["schema_uri"], r["digest"]) for role, r in references]
    columns = [
        Column("role", identifier=True),
        Column("version", identifier=True),
        Column("schema_uri", identifier=True),
        Column("digest", identifier=True),
    ]
    title = f"{document['skill_id']} {document['skill_version']}: schemas"
    print_records(console, title, columns, rows, lead=2)
    console.print(f"record kinds: {', '.join(records) or '(none)'}", highlight=False)
    facts = []
    for member in ("interaction", "authority", "constraints"):
        value = document.get(member)
        if isinstance(value, dict) and value:
            facts += [(f"{member}.{key}", json.dumps(item)) for key, item in value.items()]
        else:
            facts.append((member, json.dumps(value)))
    columns = [Column("member", identifier=True), Column("value")]
    print_records(console, "interaction, authority, constraints", columns, facts)


def record_json(record: Record) -> dict[str, Any]:
    return {
        "kind": record.kind,
        "artifact_id": record.artifact_id,
        "schema_uri": record.schema_uri,
        "data": record.data,
    }


def invocation_json(invocation: Invocation) -> dict[str, Any]:
    interface = invocation.interface
    return {
        "skill": interface.skill_id,
        "skill_version": interface.skill_version,
        "interface_digest": interface.interface_digest,
        "task_id": invocation.task_id,
        "context_id": invocation.context_id,
        "endpoint": invocation.endpoint,
        "output_schema_uri": invocation.output_schema_uri,
        "output": invocation.output,
        "records": [record_json(r) for r in invocation.records],
    }


LONG_LIST = 5
"""A list of plain values longer than this is shown by its first items and its length."""
HEADLINE_MEMBERS = ("verdict", "result", "recommendation", "reason", "summary")
"""Members a result is read by, shown before the others."""


def _text_value(key: str, value: Any) -> str:
    """A plain value for people: a rate (a ``*_bps`` member) in Gbit/s or Mbit/s."""
    from agent.console.units import bit_rate

    rate = key == "bps" or key.endswith("_bps") or "_bps_" in key
    if rate and isinstance(value, int | float) and not isinstance(value, bool):
        return bit_rate(value)
    return json.dumps(value) if not isinstance(value, str) else value


def _text_lines(value: Any, key: str = "", indent: str = "") -> list[str]:
    """A JSON value as indented ``member: value`` lines (the text rendering of a result)."""
    if isinstance(value, dict):
        lines = []
        first = [name for name in HEADLINE_MEMBERS if name in value]
        for name, item in sorted(value.items(), key=lambda pair: pair[0] not in first):
            if isinstance(item, dict | list) and item:
                lines.append(f"{indent}{name}:")
                lines += _text_lines(item, name, indent + "  ")
            else:
                lines.append(f"{indent}{name}: {_text_value(name, item)}")
        return lines
    if isinstance(value, list):
        if all(not isinstance(item, dict | list) for item in value):
            shown = [_text_value(key, item) for item in value[:LONG_LIST]]
            more = f", ... ({len(value)} in all)" if len(value) > LONG_LIST else ""
            return [f"{indent}{', '.join(shown)}{more}"]
        lines = []
        for item in value:
            inner = _text_lines(item, key, indent + "  ")
            lines.append(f"{indent}- {inner[0].lstrip()}" if inner else f"{indent}-")
            lines += inner[1:]
        return lines
    return [f"{indent}{_text_value(key, value)}"]


def print_invocation(result: dict[str, Any], *, all_records: bool = False) -> None:
    """The result first (as text: rates in Gbit/s, the JSON keeps bit/s), then the records:
    how many of each kind, or every one with ``all_records``."""
    from agent.cli.layout import Column, print_records

    console.print(
        f"[bold]{escape(result['skill'])}[/] {escape(result['skill_version'])}: task "
        f"{escape(result['task_id'])} COMPLETED (context {escape(result['context_id'])}) at "
        f"{escape(result['endpoint'])}",
        highlight=False,
        markup=True,
    )
    console.print(
        f"result, valid against {result['output_schema_uri']} (--json for the JSON):",
        highlight=False,
    )
    for line in _text_lines(result["output"], indent="  "):
        console.print(line, highlight=False, markup=False)
    records = result["records"]
    kinds: dict[str, int] = {}
    for record in records:
        kinds[record["kind"]] = kinds.get(record["kind"], 0) + 1
    counted = ", ".join(f"{count} {kind}" for kind, count in kinds.items()) or "none"
    hint = "" if all_records or not records else " (--records or --json for each one)"
    console.print(f"supporting records, each schema-valid: {counted}{hint}", highlight=False)
    if not all_records or not records:
        return
    columns = [
        Column("kind", identifier=True),
        Column("artifact_id", identifier=True),
        Column("schema_uri", identifier=True),
        Column("data"),
    ]
    rows = [
        (r["kind"], r["artifact_id"], r["schema_uri"], json.dumps(r["data"], ensure_ascii=False))
        for r in records  # each record's data in its schema's order
    ]
    print_records(console, f"supporting records ({len(records)})", columns, rows, lead=2)
