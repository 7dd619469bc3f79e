"""``describe`` and ``invoke``: one skill of any agent, the schema-governed way."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from agent.cli.calling import (
    Arguments,
    AsJson,
    Bearer,
    BindingOption,
    RequireSignature,
    Url,
    binding_named,
    explained,
    parse_arguments,
    run_client,
)
from agent.cli.common import app, console
from agent.cli.results import (
    describe_checks,
    invocation_json,
    print_checks,
    print_interface,
    print_invocation,
    record_json,
)

if TYPE_CHECKING:
    from a2a.types import AgentCard

    from agent.client import Invocation, Record, VerifiedInterface
    from agent.security.card_signatures import SignatureCheck


@app.command("describe")
def describe_command(
    url: Url,
    skill: Annotated[str, typer.Argument(help="The skill whose interface to fetch.")],
    bearer: Bearer = None,
    binding: BindingOption = "JSONRPC",
    as_json: AsJson = False,
    require_signature: RequireSignature = False,
) -> None:
    """Fetch a skill's interface and verify it: card (and its signature, if signed), three-way
    digest, trusted schema."""
    chosen = binding_named(binding)
    from agent.client import GovernedClient, SkillNotAdvertisedError
    from agent.devtools.statuses import NOT_APPLICABLE, PASS

    async def run() -> tuple[AgentCard, SignatureCheck, VerifiedInterface]:
        async with GovernedClient(
            url, token=bearer, binding=chosen, require_signature=require_signature
        ) as client:
            advertised = await client.fetch_card()
            try:
                return advertised.card, advertised.signature, await client.describe(skill)
            except SkillNotAdvertisedError as exc:
                raise await explained(client, skill, exc) from None

    card, signature, interface = run_client(run(), as_json, bearer)
    checks = describe_checks(interface, card, chosen, str(signature))
    unsigned = "card signature" if not signature.signed else None
    if as_json:
        payload = {
            "target": url,
            "binding": chosen,
            "card_url": interface.card_url,
            "interface_url": interface.interface_url,
            "skill_id": interface.skill_id,
            "skill_version": interface.skill_version,
            "interface_digest": interface.interface_digest,
            "checks": [
                {"check": c, "status": NOT_APPLICABLE if c == unsigned else PASS, "detail": d}
                for c, d in checks
            ],
            "skill_interface": interface.document,
        }
        print(json.dumps(payload, indent=2))
        return
    print_checks(checks)
    print_interface(interface.document)


@app.command("invoke")
def invoke_command(
    url: Url,
    skill: Annotated[str, typer.Argument(help="The skill to invoke.")],
    args: Arguments,
    bearer: Bearer = None,
    binding: BindingOption = "JSONRPC",
    stream: Annotated[
        bool,
        typer.Option("--stream", help="Stream: records as they arrive (each one with --records)."),
    ] = False,
    all_records: Annotated[
        bool,
        typer.Option("--records", help="Print every supporting record, not only their count."),
    ] = False,
    as_json: AsJson = False,
    require_signature: RequireSignature = False,
) -> None:
    """Invoke a skill the governed way: describe, verify, validate input, send, validate.

    Prints the result first, then how many supporting records of each kind came with it
    (--records: each one; --json: everything as JSON, rates in bit/s as the schemas say).
    """
    chosen = binding_named(binding)
    from agent.client import GovernedClient, Invocation, SkillNotAdvertisedError

    arguments = parse_arguments(args)
    streamed: list[Record] = []

    def arrived(record: Record) -> None:
        if as_json:  # one JSON line per record as it arrives, then the result line
            print(json.dumps({"event": "record", **record_json(record)}), flush=True)
            return
        streamed.append(record)
        if not all_records:  # one line for the first; the count follows the result
            if len(streamed) == 1:
                console.print(
                    f"streaming: first record arrived ({record.kind}); --records prints each one",
                    highlight=False,
                )
            return
        console.print(
            f"record arrived: [bold]{escape(record.kind)}[/] {escape(record.artifact_id)} "
            f"(valid against {escape(record.schema_uri)})",
            highlight=False,
            markup=True,
        )

    async def run() -> Invocation:
        async with GovernedClient(
            url, token=bearer, binding=chosen, require_signature=require_signature
        ) as client:
            try:
                if not stream:
                    return await client.invoke(skill, arguments)
                final: Invocation | None = None
                async for item in client.stream(skill, arguments):
                    if isinstance(item, Invocation):
                        final = item
                    else:
                        arrived(item)
            except SkillNotAdvertisedError as exc:
                raise await explained(client, skill, exc) from None
            assert final is not None  # the stream always ends with the invocation
            return final

    result = invocation_json(run_client(run(), as_json, bearer))
    if as_json:
        print(json.dumps({"event": "result", **result} if stream else result))
        return
    print_invocation(result, all_records=all_records)
    print_checks(
        [
            ("describe", f"steps 1-6 for {skill} {result['skill_version']}"),
            ("input", "arguments valid against input_schema; sent with version and digest"),
            ("results", "output and every record valid against their schemas"),
        ]
    )
