"""``check``: any A2A agent against the schema-interface procedure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from agent.cli.calling import (
    UNREACHABLE,
    Bearer,
    BindingOption,
    RequireSignature,
    Url,
    binding_named,
    refusal_lines,
    run_checking,
)
from agent.cli.common import app, console, fail
from agent.cli.exit_codes import ExitCode
from agent.cli.values import file_path

if TYPE_CHECKING:
    from agent.devtools.conformance import Report


@app.command("check")
def check_command(
    url: Url,
    bearer: Bearer = None,
    binding: BindingOption = "JSONRPC",
    json_file: Annotated[
        Path | None,
        typer.Option(
            "--json", help="Also write the report as JSON to this file.", parser=file_path
        ),
    ] = None,
    require_signature: RequireSignature = False,
    details: Annotated[
        bool,
        typer.Option(
            "--details",
            help="List every check with its reason, not only the ones that did not pass.",
        ),
    ] = False,
) -> None:
    """Check any A2A agent against the schema-interface procedure (exit 1 if a check fails,
    4 if nothing answers, 5 if it refuses the token).

    Prints the verdict first, then how each skill fared and every check that did not pass
    (--details: every check). A signed card is verified against the JWKS on the card's own
    origin; a card whose signature fails is not used."""
    chosen = binding_named(binding)
    from agent.devtools.conformance import check_agent

    report = run_checking(
        check_agent(url, token=bearer, binding=chosen, require_signature=require_signature)
    )
    if report.unreachable is not None:
        _write_report(json_file, report)
        raise fail(
            f"{UNREACHABLE}: nothing answered at {url} ({report.unreachable}); nothing was "
            "checked: is the agent running, is the URL right?",
            ExitCode.UNREACHABLE,
        )
    caller = "with --token" if bearer else "anonymous"
    _print_report(report, f"{url} ({chosen}, {caller})", details=details)
    if report.refusal is not None:
        for line in refusal_lines(report.refusal, bearer):
            console.print(line, highlight=False, markup=False)
    _write_report(json_file, report)
    if report.refusal is not None:
        raise typer.Exit(code=ExitCode.TOKEN_REFUSED)
    if not report.ok:
        raise typer.Exit(code=ExitCode.FAILED)


def _print_report(report: Report, target: str, *, details: bool) -> None:
    """The verdict, a line per subject, then the checks that did not pass (or every one)."""
    from agent.cli.layout import Column, print_records
    from agent.devtools.statuses import FAIL, NOT_APPLICABLE, PASS, SKIP

    counts = report.counts()
    verdict = "[green]conforms[/]" if report.ok else "[bold red]does not conform[/]"
    console.print(f"{escape(target)} {verdict} to the schema-interface procedure", markup=True)
    console.print(
        f"{counts[PASS]} passed, {counts[FAIL]} failed, {counts[SKIP]} skipped, "
        f"{counts[NOT_APPLICABLE]} not applicable",
        highlight=False,
    )
    subjects: dict[str, dict[str, int]] = {}
    for check in report.checks:
        tally = subjects.setdefault(check.subject, {})
        tally[check.status] = tally.get(check.status, 0) + 1
    tallies = [
        (subject, ", ".join(f"{n} {status}" for status, n in tally.items()))
        for subject, tally in subjects.items()
    ]
    print_records(
        console, "by subject", [Column("subject", identifier=True), Column("checks")], tallies
    )
    shown = [c for c in report.checks if details or c.status in (FAIL, SKIP)]
    if shown:
        columns = [
            Column("subject", identifier=True),
            Column("check", identifier=True),
            Column("result", identifier=True),
            Column("reason"),
        ]
        rows = [(c.subject, c.name, c.status, c.reason) for c in shown]
        title = "every check" if details else "checks that did not pass"
        print_records(console, title, columns, rows, lead=3)
    if not details:
        console.print("--details lists every check with its reason", style="dim", highlight=False)
    for note in report.notes:
        console.print(f"note: {note}", highlight=False)


def _write_report(json_file: Path | None, report: Report) -> None:
    """``check --json FILE``: the report as JSON, whatever the outcome."""
    if json_file is None:
        return
    try:
        json_file.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise fail(f"--json: cannot write {json_file}: {exc.strerror}") from None
