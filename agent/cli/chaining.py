"""``chain``: one skill's output fed to another only if the schemas match, the link
stored in the local database; ``chain list`` shows the links."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agent.cli.calling import (
    AsJson,
    Bearer,
    BindingOption,
    RequireSignature,
    binding_named,
    parse_arguments,
    run_client,
)
from agent.cli.common import DatabaseUrl, app, cli_settings, console, counted, fail
from agent.cli.database import on_database, read_database
from agent.cli.results import invocation_json, print_checks, print_invocation
from agent.cli.values import whole_number

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent.client import ChainResult, Correlations


@app.command("chain")
def chain_command(
    target: Annotated[
        str,
        typer.Argument(metavar="URL|list", help="Target agent's base URL, or `list`."),
    ],
    upstream: Annotated[str | None, typer.Option("--from", help="The upstream skill.")] = None,
    args: Annotated[
        str | None, typer.Option("--args", help="The upstream arguments: JSON, or @file.")
    ] = None,
    downstream: Annotated[str | None, typer.Option("--to", help="The downstream skill.")] = None,
    bearer: Bearer = None,
    binding: BindingOption = "JSONRPC",
    workflow: Annotated[
        str | None, typer.Option("--workflow", help="Workflow id (run: to use; list: to match).")
    ] = None,
    task: Annotated[
        str | None, typer.Option("--task", help="list: links touching this task id.")
    ] = None,
    limit: Annotated[
        int, typer.Option(help="list: at most this many, newest first.", parser=whole_number)
    ] = 100,
    as_json: AsJson = False,
    database_url: DatabaseUrl = None,
    require_signature: RequireSignature = False,
) -> None:
    """Feed one skill's output to another only if the schemas match; `chain list` shows links.

    The upstream -> downstream task correlation is stored in the local database.
    """
    if target == "list":
        if upstream or downstream or args is not None:
            raise fail("`chain list` takes --workflow and --task, not --from, --to or --args")
        _chain_list(database_url, workflow, task, limit, as_json)
        return
    if task is not None:
        raise fail("--task only filters `chain list`")
    if not (upstream and downstream and args is not None):
        raise fail("chain needs --from SKILL, --args JSON and --to SKILL")
    steps = ChainSteps(upstream, parse_arguments(args), downstream, workflow)
    client = ChainClient(target, bearer, binding_named(binding), require_signature)
    result = _run_chain(steps, client, database_url, as_json)
    _print_chain(result, steps, as_json)


def _chain_list(
    database_url: str | None, workflow: str | None, task: str | None, limit: int, as_json: bool
) -> None:
    """`chain list`: the stored links, newest first."""
    from agent.client import CorrelationStore

    rows = read_database(
        database_url,
        lambda engine: CorrelationStore(engine).query(
            workflow_id=workflow, task_id=task, limit=limit
        ),
    )
    _print_correlations(rows, as_json)


@dataclasses.dataclass(frozen=True)
class ChainSteps:
    """What `chain` composes: the upstream skill and its arguments, the downstream skill."""

    upstream: str
    arguments: dict[str, Any]
    downstream: str
    workflow: str | None


@dataclasses.dataclass(frozen=True)
class ChainClient:
    """Whom `chain` asks, and how."""

    target: str
    bearer: str | None
    binding: Any
    require_signature: bool


def _run_chain(
    steps: ChainSteps, client: ChainClient, database_url: str | None, as_json: bool
) -> ChainResult:
    """Run the composition, storing its link where the database is (made only when there is
    a link to store)."""
    from agent.client import CorrelationStore, GovernedClient, chain

    async def run(store: Correlations) -> ChainResult:
        async with GovernedClient(
            client.target,
            token=client.bearer,
            binding=client.binding,
            require_signature=client.require_signature,
        ) as governed:
            return await chain(
                governed,
                steps.upstream,
                steps.arguments,
                governed,
                steps.downstream,
                store,
                steps.workflow,
            )

    async def on_engine(engine: AsyncEngine) -> ChainResult:
        return await run(CorrelationStore(engine))

    async def migrated_insert(row: dict[str, Any]) -> None:
        async def insert(engine: AsyncEngine) -> None:
            await CorrelationStore(engine).insert(row)

        await on_database(insert, database_url)

    if _is_sqlite(database_url):
        # made (or migrated) only when there is a link to store: nothing if no agent answers
        return run_client(run(_store_on_insert(migrated_insert)), as_json, client.bearer)
    return run_client(on_database(on_engine, database_url), as_json, client.bearer)


def _is_sqlite(database_url: str | None) -> bool:
    from agent.storage.engine import sqlite_file

    return sqlite_file(cli_settings(database_url=database_url).resolved_database_url) is not None


def _print_chain(result: ChainResult, steps: ChainSteps, as_json: bool) -> None:
    """The composition's checks, its two steps and the downstream answer (or all as JSON)."""
    from agent.cli.layout import Column, print_records

    up, down = invocation_json(result.upstream), invocation_json(result.downstream)
    if as_json:
        print(json.dumps({"workflow_id": result.workflow_id, "upstream": up, "downstream": down}))
        return
    reference = result.upstream.interface.document["output_schema"]
    print_checks(
        [
            (
                "composition",
                f"{steps.upstream} output = {steps.downstream} input: "
                f"{reference['schema_uri']} {reference['version']} {reference['digest']} "
                "(schema_uri, version, dialect, digest agree; embedded digests verified)",
            ),
            ("upstream", "described, verified; input, output and records validated"),
            ("downstream", "the upstream output validated as its input before sending"),
        ]
    )
    columns = [
        Column(header, identifier=True)
        for header in ("step", "skill", "task id", "context id", "endpoint")
    ]
    rows = [
        (step, item["skill"], item["task_id"], item["context_id"], item["endpoint"])
        for step, item in (("upstream", up), ("downstream", down))
    ]
    print_records(console, f"workflow {result.workflow_id}", columns, rows, lead=3)
    console.print(f"workflow id: {result.workflow_id} (correlation stored)", highlight=False)
    print_invocation(down)


def _store_on_insert(insert: Callable[[dict[str, Any]], Awaitable[None]]) -> Correlations:
    """A correlation store that makes (or migrates) its SQLite file only when it stores one."""
    from agent.client import Correlations

    class StoreOnInsert(Correlations):
        async def insert(self, row: dict[str, Any]) -> None:
            await insert(row)

    return StoreOnInsert()


def _print_correlations(rows: list[dict[str, Any]], as_json: bool) -> None:
    from agent.cli.layout import Column, print_records

    if as_json:
        for row in rows:
            print(json.dumps(row, default=str, sort_keys=True))
        return
    records = []
    for row in rows:
        ts = row["ts"]
        records.append(
            (
                ts.strftime("%Y-%m-%d %H:%M:%S") if isinstance(ts, datetime) else str(ts),
                row["workflow_id"],
                f"{row['upstream_skill']} task {row['upstream_task_id']} "
                f"@ {row['upstream_endpoint']}",
                f"{row['downstream_skill']} task {row['downstream_task_id']} "
                f"@ {row['downstream_endpoint']}",
            )
        )
    columns = [
        Column("time", identifier=True),
        Column("workflow", identifier=True),
        Column("upstream"),
        Column("downstream"),
    ]
    title = f"task correlations ({counted(len(rows), 'row')}, newest first)"
    print_records(console, title, columns, records, lead=2)
