"""``audit`` and ``usage``: the principal audit trail, read from the local database."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agent.cli.common import DatabaseUrl, app, cli_settings, console, counted, fail, skills_dir_of
from agent.cli.database import read_database
from agent.cli.values import whole_number

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent.base.settings import Settings
    from agent.registry.manifest import Manifest
    from agent.storage.audit import AuditLog


def _read_manifests(settings: Settings) -> dict[str, Manifest]:
    """The registry's manifests by skill id, checked as loading it checks them, without
    importing a handler or building an interface (what a command that names skills needs)."""
    from agent.registry.manifests import RegistryError, read_manifests

    try:
        return read_manifests(skills_dir_of(settings))
    except RegistryError as exc:
        raise fail(f"registry: {exc}") from None


def _since(value: str | None) -> datetime | None:
    """``--since``: an ISO time (UTC if no offset) or a look-back such as 30m, 24h, 7d."""
    if value is None:
        return None
    import re

    units = {"m": 60, "h": 3600, "d": 86400}
    # ASCII digits, few enough for int() and for a datetime (str.isdigit takes "²", which
    # int() refuses, and any number of digits, past which int() raises its own text).
    lookback = re.fullmatch(r"([0-9]{1,12})([mhd])", value, re.ASCII)
    try:
        if lookback is not None:
            amount, unit = lookback.groups()
            return datetime.now(UTC) - timedelta(seconds=int(amount) * units[unit])
        moment = datetime.fromisoformat(value)
    except (ValueError, OverflowError):
        raise fail("--since takes an ISO time or a look-back like 30m, 24h, 7d") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _audit_log(engine: AsyncEngine) -> AuditLog:
    from agent.storage.audit import DatabaseAuditLog

    return DatabaseAuditLog(engine)


@app.command("audit")
def audit_command(
    tenant: Annotated[str | None, typer.Option(help="Only this tenant.")] = None,
    principal: Annotated[str | None, typer.Option(help="Only this subject.")] = None,
    task: Annotated[str | None, typer.Option(help="Only this task id.")] = None,
    since: Annotated[str | None, typer.Option(help="ISO time, or 30m / 24h / 7d.")] = None,
    limit: Annotated[
        int, typer.Option(help="At most this many rows, newest first.", parser=whole_number)
    ] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line.")] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """Read the principal audit trail (tool calls and invocations)."""
    moment = _since(since)
    filters: dict[str, Any] = {
        "tenant": tenant,
        "principal": principal,
        "task_id": task,
        "since": moment,
        "limit": limit,
    }
    rows = read_database(database_url, lambda engine: _audit_log(engine).query(**filters))
    if as_json:
        for row in rows:
            print(json.dumps(row, default=str, sort_keys=True))
        return
    _print_audit(rows)


def _print_audit(rows: list[dict[str, Any]]) -> None:
    """The audit rows as a table when every id fits whole, else one two-line block a row."""
    from agent.cli.layout import Column, print_records

    days = {row["ts"].date() for row in rows if row["ts"]}
    one_day = len(days) == 1
    when = f", {next(iter(days))} UTC" if one_day else ", UTC"
    columns = [
        Column("time", identifier=True),
        Column("who"),
        Column("skill"),
        Column("version, task", identifier=True),
        Column("tool.operation"),
        Column("decision"),
    ]
    records = []
    for row in rows:
        via = f" via {', '.join(row['actor_chain'])}" if row["actor_chain"] else ""
        resources = " ".join(row["resource_ids"])
        ts = row["ts"]
        records.append(
            (
                (ts.strftime("%H:%M:%S") if one_day else ts.strftime("%m-%d %H:%M")) if ts else "",
                f"{row['principal']}@{row['tenant'] or '-'}{via}",
                row["skill_id"] or "-",
                f"{row['skill_version'] or ''} {(row['task_id'] or '-')[:8]}".strip(),
                f"{row['tool']}.{row['operation']}" + (f" {resources}" if resources else ""),
                f"{row['decision']}: {row['reason']}",
            )
        )
    title = f"principal audit ({counted(len(rows), 'row')}, newest first{when})"
    print_records(console, title, columns, records, lead=4)


@app.command("usage")
def usage_command(
    since: Annotated[str | None, typer.Option(help="ISO time, or 30m / 24h / 7d.")] = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Calls run and refused per day, callers and last call per capability (is a deprecated
    skill still used? who keeps asking for one they may not use?)."""
    from agent.cli.layout import Column, print_records

    moment = _since(since)
    rows = read_database(database_url, lambda engine: _audit_log(engine).usage(since=moment))
    manifests = _read_manifests(cli_settings())
    records = []
    seen = set()
    unchosen = False
    for row in rows:
        manifest = manifests.get(row["skill_id"] or "")
        state = manifest.state.value if manifest else "unknown"
        if row["skill_id"] is None:  # the router asked which skill, or refused before choosing
            unchosen = True
            state = "clarification" if not row["refused"] else "clarification, unrouted"
        seen.add(row["skill_id"])
        last = str(row["last_call"])[:19]
        records.append(
            (
                row["skill_id"] or NO_SKILL_CHOSEN,
                state,
                row["day"],
                str(row["calls"]),
                str(row["refused"]),
                str(row["callers"]),
                last[11:] if last.startswith(str(row["day"])) else last,  # that day's: the time
            )
        )
    for manifest in manifests.values():
        if manifest.id not in seen:
            records.append((manifest.id, manifest.state.value, "-", "0", "0", "0", "never"))
    columns = [
        Column("skill", identifier=True),
        Column("state"),
        Column("day", identifier=True),
        Column("calls", justify="right", label=True),
        Column("refused", justify="right", label=True),
        Column("callers", justify="right", label=True),
        Column("last call", label=True),
    ]
    print_records(console, "capability usage, from the audit trail", columns, records, lead=3)
    if unchosen:
        console.print(
            f"{NO_SKILL_CHOSEN}: plain-text turns the agent answered by asking which skill "
            "(clarification, counted as calls; the answer runs in the same task) and requests "
            "it refused before choosing one (counted as refused).",
            highlight=False,
        )


NO_SKILL_CHOSEN = "(no skill chosen)"
