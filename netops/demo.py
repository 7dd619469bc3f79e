"""The newcomer walkthrough: nine short steps against a running agent, each explained.

``run_demo`` drives a live agent the way a newcomer would explore it: the public card, demo
tokens and the extended card each caller sees, a verified ``describe_skill``, the draft's worked
example through the schema-governed client, streamed records, refusals (local and remote), plain
text routing with a clarification, a direct composition and finally the audit trail those tasks
left. Every step prints a short panel saying what it does and why, then what came back. A step
that fails is reported and the walkthrough goes on; ``DemoReport`` says how each step ended.

``ensure_agent`` starts ``netagent serve`` in a subprocess when nothing answers at the URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import rich.console
from a2a.client import ClientConfig, ClientFactory
from a2a.client.client import ClientCallContext
from a2a.client.service_parameters import with_a2a_extensions
from a2a.helpers import new_text_part
from a2a.types import GetTaskRequest, Message, Role, SendMessageRequest, Task, TaskState
from google.protobuf.json_format import MessageToDict
from rich.markup import escape
from rich.panel import Panel
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.base.settings import Settings
from agent.cli.layout import Column, print_records
from agent.client import (
    CompositionRefusedError,
    CorrelationStore,
    GovernedClient,
    InputInvalidError,
    Invocation,
    Record,
    RemoteTaskError,
    chain,
    composition_differences,
)
from agent.console.units import bit_rate
from agent.interfaces import (
    EXTENSION_URI,
    TRUSTED_SCHEMA_PATH,
    digest_of,
    verify_document,
    verify_reference,
)
from agent.interfaces.order import in_schema_order
from agent.security.auth import issue_token, load_or_create_signing_key
from agent.security.outbound import outbound_client
from agent.storage.audit import DatabaseAuditLog
from netops.deployment import DEMO_CALLERS as SERVED_CALLERS

Status = Literal["ok", "refused", "failed"]
CARD_PATH = "/.well-known/agent-card.json"
HEALTH_TIMEOUT_S = 60.0
STEP_TIMEOUT_S = 90.0

# The demo callers (the same identities ``netagent serve`` prints tokens for).
WALKTHROUGH_CALLERS = ("alice", "paula", "gary")
DEMO_CALLERS: dict[str, tuple[str, list[str]]] = {
    caller.subject: (caller.tenant, list(caller.scopes))
    for caller in SERVED_CALLERS
    if caller.subject in WALKTHROUGH_CALLERS
}
"""The walkthrough's callers: three of those ``netagent serve`` prints tokens for."""
WORKED_SKILL = "evaluate_resource_condition"
WORKED_ARGUMENTS: dict[str, Any] = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
HOT_LINK = "acme-lnk-00002"
CLEAR_TEXT = "is the cpu of nyc1-core-01 above 90%?"
AMBIGUOUS_TEXT = f"spare capacity on {HOT_LINK}"
CLARIFICATION_ANSWER = "check_link_capacity"


@dataclass(frozen=True)
class StepResult:
    """How one step ended: ``ok``, ``refused`` (an expected, explained refusal) or ``failed``."""

    number: int
    name: str
    status: Status
    summary: str


@dataclass
class DemoReport:
    """Every step of the walkthrough, in order."""

    steps: list[StepResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no step failed (a refused composition is an outcome, not a failure)."""
        return all(step.status != "failed" for step in self.steps)

    def status(self, name: str) -> Status:
        """The status of the step called ``name``."""
        for step in self.steps:
            if step.name == name:
                return step.status
        raise KeyError(name)

    def summary_lines(self) -> list[str]:
        """One line per step: number, name, status and summary."""
        return [f"{s.number} {s.name}: {s.status} - {s.summary}" for s in self.steps]


# -- small formatting helpers ---------------------------------------------------------------


def _short(digest: str | None) -> str:
    if not digest:
        return "-"
    algorithm, _, value = digest.partition(":")
    return f"{algorithm}:{value[:12]}…" if value else digest[:20]


def _bps(value: Any) -> str:
    return bit_rate(value) if isinstance(value, int | float) else str(value)


def _state(task: Task) -> str:
    return TaskState.Name(task.status.state)


def _status_parts(task: Task) -> tuple[list[str], list[dict[str, Any]]]:
    parts = [MessageToDict(p) for p in task.status.message.parts]
    texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
    datas = [p["data"] for p in parts if isinstance(p.get("data"), dict)]
    return texts, datas


def _artifact_data(task: Task, name: str) -> dict[str, Any] | None:
    for artifact in task.artifacts:
        if artifact.name == name:
            for part in MessageToDict(artifact).get("parts", []):
                if isinstance(part.get("data"), dict):
                    return dict(part["data"])
    return None


def _recommendation(output: dict[str, Any]) -> str:
    """plan_link_upgrade's answer in one line: what to do, from what to what, and why."""
    current = _bps(output.get("current_capacity_bps"))
    recommended = _bps(output.get("recommended_capacity_bps"))
    change = f"{current} -> {recommended}" if current != recommended else f"stay at {current}"
    return f"{output.get('recommendation')} ({change}): {output.get('reason')}"


def _routing(task: Task) -> dict[str, Any]:
    routing = MessageToDict(task.metadata).get("routing", {})
    return routing if isinstance(routing, dict) else {}


def _routing_line(routing: dict[str, Any]) -> str:
    """metadata.routing in a fixed order and short enough for one line.

    A protobuf Struct keeps no key order, so printing the dict would shuffle (and wrap) it
    from run to run; the full object is in the task's metadata for whoever wants it.
    """
    parts = [f"stage={routing.get('stage', '?')}"]
    if routing.get("skill_id"):
        parts.append(f"skill_id={routing['skill_id']}")
    if routing.get("candidates"):
        parts.append("candidates=" + ",".join(map(str, routing["candidates"])))
    scores = [s for s in routing.get("scores", []) if isinstance(s, dict)][:2]
    if scores:
        parts.append(
            "top scores: "
            + ", ".join(f"{s.get('skill_id')} {float(s.get('score', 0)):.2f}" for s in scores)
        )
    return "; ".join(parts)


def _shown(value: Any) -> str:
    """A value as a person reads it: text as it is, a yes/no, anything else as JSON (never a
    Python repr); objects keep the order they were given in (see ``_ordered``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    return json.dumps(value, ensure_ascii=False)


def _quoted(text: str) -> str:
    """What someone typed, in double quotes (JSON's, not Python's)."""
    return json.dumps(text, ensure_ascii=False)


ERROR_ORDER = {"required": ["code", "message", "details"]}
"""An error object read from its code down (the rest by name): it crosses the wire as a Struct."""


# -- the walkthrough --------------------------------------------------------------------------


class _Walkthrough:
    """The state the steps share: tokens, one governed client per caller, collected task ids."""

    def __init__(self, base_url: str, settings: Settings, console: rich.console.Console) -> None:
        self.base_url = base_url.rstrip("/")
        self.settings = settings
        self.console = console
        self.tokens: dict[str, str] = {}
        self.clients: dict[str, GovernedClient] = {}
        self.advertised: dict[str, dict[str, tuple[str, str]]] = {}
        self.public_skills: set[str] = set()
        self.task_ids: list[str] = []

    # -- plumbing ---------------------------------------------------------------------------

    def print(self, *objects: Any, **kwargs: Any) -> None:
        self.console.print(*objects, highlight=False, **kwargs)

    def records(
        self, title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]], lead: int = 1
    ) -> None:
        """Rows as a table when its ids fit whole, else one block per row (agent/cli/layout.py)."""
        print_records(self.console, title, columns, rows, lead=lead)

    def line(self, label: str, value: Any) -> None:
        self.print(f"  [bold]{escape(label)}[/] {escape(_shown(value))}", markup=True)

    def token(self, caller: str) -> str:
        if caller not in self.tokens:
            raise RuntimeError(f"no token for {caller} (step 2 did not mint it)")
        return self.tokens[caller]

    def client(self, caller: str) -> GovernedClient:
        if caller not in self.clients:
            self.clients[caller] = GovernedClient(self.base_url, token=self.token(caller))
        return self.clients[caller]

    def remember(self, task_id: str | None) -> None:
        if task_id and task_id not in self.task_ids:
            self.task_ids.append(task_id)

    async def aclose(self) -> None:
        for client in self.clients.values():
            with contextlib.suppress(Exception):
                await client.aclose()

    # -- step 1 -----------------------------------------------------------------------------

    async def public_card(self) -> tuple[Status, str]:
        async with outbound_client(timeout=15) as http:
            response = await http.get(self.base_url + CARD_PATH)
            response.raise_for_status()
            card = response.json()
        skills = [str(s.get("id")) for s in card.get("skills", [])]
        self.public_skills = set(skills)
        self.line("agent:", f"{card.get('name')} {card.get('version', '')}".strip())
        self.line("skills anyone may know:", ", ".join(map(str, skills)))
        bindings = _binding_rows(card)
        self.records(
            "schema-interface extension bindings",
            [Column("skill_id"), Column("skill_version"), Column("interface_digest")],
            [(skill_id, version, _short(digest)) for skill_id, version, digest in bindings],
        )
        interfaces = [
            f"{i.get('protocolBinding')} {i.get('url')}"
            for i in card.get("supportedInterfaces", [])
        ]
        self.line("interfaces:", "; ".join(interfaces))
        extended = card.get("capabilities", {}).get("extendedAgentCard", False)
        self.line("extended card for authenticated callers:", extended)
        return "ok", f"{len(skills)} public skills, {len(bindings)} extension bindings"

    # -- step 2 -----------------------------------------------------------------------------

    async def tokens_and_extended_cards(self) -> tuple[Status, str]:
        if not self.settings.embedded_issuer:
            raise RuntimeError("tokens come from the external issuer (NETAGENT_JWKS_URL is set)")
        key = load_or_create_signing_key(self.settings.home)
        self.line("signing key:", f"{self.settings.home / 'signing-key.pem'} (kid {key.kid[:12]}…)")
        for subject, (tenant, scopes) in DEMO_CALLERS.items():
            self.tokens[subject] = issue_token(
                key, self.settings, subject=subject, tenant=tenant, scopes=scopes, ttl_seconds=3600
            )
        self.line(
            "minted:",
            f"{len(self.tokens)} tokens (ES256, valid 1 h, iss {self.settings.issuer!r}, "
            f"aud {self.settings.audience!r}, claims sub/tenant/scope)",
        )
        rows = []
        seen: dict[str, list[str]] = {}
        for subject, (tenant, scopes) in DEMO_CALLERS.items():
            advertised = await self.client(subject).fetch_card()
            seen[subject] = [s.id for s in advertised.card.skills]
            self.advertised[subject] = dict(advertised.bindings)
            extra = [s for s in seen[subject] if s not in self.public_skills]
            rows.append(
                (f"{subject}@{tenant}", " ".join(scopes), str(len(seen[subject])), ", ".join(extra))
            )
        columns = [
            Column("caller"),
            Column("scopes"),
            Column("skills", justify="right", label=True),
            Column("beyond the public card"),
        ]
        self.records("the extended card, per caller", columns, rows, lead=3)
        base = set(seen["alice"])
        differences = []
        for subject in ("paula", "gary"):
            more, fewer = sorted(set(seen[subject]) - base), sorted(base - set(seen[subject]))
            change = [f"+{s}" for s in more] + [f"-{s}" for s in fewer]
            differences.append(f"{subject} vs alice: {' '.join(change) or 'same skills'}")
        for difference in differences:
            self.line("differs:", difference)
        self.line(
            "note:",
            "gary sees alice's skills, but every tool call is filtered by his tenant (globex).",
        )
        return "ok", "; ".join(differences)

    # -- step 3 -----------------------------------------------------------------------------

    async def describe(self) -> tuple[Status, str]:
        client = self.client("alice")
        before = client.stats.describe_calls
        interface = await client.describe(WORKED_SKILL)
        document = interface.document
        advertised = self.advertised.get("alice", {}).get(WORKED_SKILL, ("?", "?"))[1]
        computed = digest_of(document)
        self.line("skill:", f"{interface.skill_id} v{interface.skill_version}")
        self.line("advertised (extended card):", advertised)
        self.line("returned by describe_skill:", interface.interface_digest)
        self.line("computed here (JCS + SHA-256):", computed)
        agree = advertised == interface.interface_digest == computed
        self.line("three-way check:", "all three agree" if agree else "MISMATCH")
        problems = verify_document(
            document,
            expected_digest=interface.interface_digest,
            skill_id=interface.skill_id,
            skill_version=interface.skill_version,
        )
        self.line(
            f"trusted schema ({TRUSTED_SCHEMA_PATH.name}):",
            "document is valid" if not problems else "; ".join(problems),
        )
        rows = []
        references = [
            ("input_schema", document["input_schema"]),
            ("output_schema", document["output_schema"]),
            *(
                (f"record {kind}", ref)
                for kind, ref in document["supporting_record_schemas"].items()
            ),
        ]
        bad = 0
        for member, ref in references:
            fine = not verify_reference(ref)
            bad += not fine
            rows.append(
                (
                    member,
                    str(ref.get("version")),
                    str(ref.get("schema_uri")),
                    _short(ref.get("digest")),
                    "matches" if fine else "MISMATCH",
                )
            )
        names = ("member", "version", "schema_uri", "digest", "recomputed")
        title = "embedded schemas, each digest recomputed"
        self.records(title, [Column(name) for name in names], rows, lead=2)
        interaction = document.get("interaction", {})
        self.line("interaction:", interaction)
        self.line("describe_skill calls made by the client:", client.stats.describe_calls - before)
        status: Status = "ok" if agree and not problems and not bad else "failed"
        return status, (
            f"{interface.skill_id} v{interface.skill_version} {_short(computed)}: digests "
            f"{'agree' if agree else 'differ'}, {len(references) - bad}/{len(references)} "
            "embedded schemas verified"
        )

    # -- step 4 -----------------------------------------------------------------------------

    async def worked_example(self) -> tuple[Status, str]:
        invocation = await self.client("alice").invoke(WORKED_SKILL, WORKED_ARGUMENTS)
        self.remember(invocation.task_id)
        output = invocation.output
        self.line("arguments:", WORKED_ARGUMENTS)
        self.line("task:", f"{invocation.task_id} (completed, via {invocation.endpoint})")
        self.line("result:", output)
        references = output.get("supporting_record_refs", [])
        linked = True
        for record in invocation.records:
            self.line(f"record {record.kind}:", f"artifactId {record.artifact_id}")
            self.line("  data:", record.data)
            referenced = record.artifact_id in references
            linked = linked and referenced
            self.line(
                "  referenced by the output:",
                "yes, supporting_record_refs names this artifactId" if referenced else "NO",
            )
        linked = linked and bool(invocation.records) and len(references) == len(invocation.records)
        summary = (
            f"{output.get('result')}, observed {output.get('observed_value')} "
            f"{output.get('unit')}, {len(invocation.records)} record(s) referenced by artifactId"
        )
        return ("ok" if linked else "failed"), summary

    # -- step 5 -----------------------------------------------------------------------------

    async def streamed_records(self) -> tuple[Status, str]:
        arguments = {"link_id": HOT_LINK, "requested_bps": 20_000_000_000}
        self.line("arguments:", arguments)
        records = 0
        invocation: Invocation | None = None
        async for item in self.client("alice").stream("check_link_capacity", arguments):
            if isinstance(item, Record):
                records += 1
                self.print(
                    f"  [dim]record {records:>3}[/] {escape(_sample_line(item))}", markup=True
                )
            else:
                invocation = item
        if invocation is None:
            raise RuntimeError("the stream ended without a result")
        self.remember(invocation.task_id)
        output = invocation.output
        self.line(
            "verdict:",
            f"{output.get('verdict')} (fits: {_shown(output.get('fits'))}, available "
            f"{_bps(output.get('available_bps'))} of {_bps(output.get('capacity_bps'))}, "
            f"window {output.get('window_seconds')} s)",
        )
        referenced = set(output.get("supporting_record_refs", []))
        matched = sum(r.artifact_id in referenced for r in invocation.records)
        self.line("records referenced by the result:", f"{matched} of {records}")
        return "ok", f"{records} records streamed, verdict: {output.get('verdict')}"

    # -- step 6 -----------------------------------------------------------------------------

    async def refusals(self) -> tuple[Status, str]:
        client = self.client("alice")
        bad = {
            "resource_id": WORKED_ARGUMENTS["resource_id"],
            "condition": {k: v for k, v in WORKED_ARGUMENTS["condition"].items() if k != "unit"},
        }
        self.line("alice sends the worked example without condition.unit:", bad)
        sent_before = client.stats.invocations
        local = "not refused"
        try:
            invocation = await client.invoke(WORKED_SKILL, bad)
            self.remember(invocation.task_id)
        except InputInvalidError as exc:
            local = exc.code.value
            self.line("refused locally:", f"{exc.code.value}: {exc.message}")
            for detail in exc.details:
                self.line("  detail:", detail)
        sent = client.stats.invocations - sent_before
        self.line("requests sent to the agent:", sent)
        self.line("gary (globex) sends the correct worked example:", WORKED_ARGUMENTS)
        remote = "not refused"
        try:
            invocation = await self.client("gary").invoke(WORKED_SKILL, WORKED_ARGUMENTS)
            self.remember(invocation.task_id)
        except RemoteTaskError as exc:
            self.remember(exc.task_id)
            remote = str(exc.code)
            self.line("refused by the agent:", f"task {exc.task_id} ended {exc.state}")
            self.line("error object:", in_schema_order(exc.error, ERROR_ORDER))
        ok = local == "input_invalid" and sent == 0 and remote == "authorization_failed"
        return ("ok" if ok else "failed"), (
            f"missing unit: {local} ({'nothing' if sent == 0 else sent} sent); "
            f"globex caller: {remote}"
        )

    # -- step 7 -----------------------------------------------------------------------------

    async def _routed_result(self, task: Task, skill_id: str) -> Any:
        """The routed skill's result in its output schema's order (the wire keeps none)."""
        data = _artifact_data(task, skill_id)
        if data is None:
            return _status_parts(task)[0]
        interface = await self.client("alice").describe(skill_id)
        return in_schema_order(data, interface.schema("output"))

    async def text_routing(self) -> tuple[Status, str]:
        headers = {"Authorization": f"Bearer {self.token('alice')}"}
        async with outbound_client(headers=headers, timeout=30) as http:  # a demo token
            config = ClientConfig(
                streaming=False, httpx_client=http, supported_protocol_bindings=["JSONRPC"]
            )
            client = await ClientFactory(config).create_from_url(self.base_url)
            async with client:
                self.line("alice says:", _quoted(CLEAR_TEXT))
                clear = await _send_text(client, CLEAR_TEXT)
                self.remember(clear.id)
                self.line("  state:", _state(clear))
                self.line("  metadata.routing:", _routing_line(_routing(clear)))
                routed = _routing(clear).get("skill_id", "")
                self.line("  result:", await self._routed_result(clear, routed))

                self.line("alice says:", _quoted(AMBIGUOUS_TEXT))
                first = await _send_text(client, AMBIGUOUS_TEXT)
                self.remember(first.id)
                texts, datas = _status_parts(first)
                self.line("  state:", _state(first))
                self.line("  metadata.routing:", _routing_line(_routing(first)))
                question = "\n".join(texts).splitlines() or [""]
                self.line("  the agent asks:", question[0])
                if len(question) > 1:
                    self.line("  ... and ends:", question[-1])
                candidates = [
                    c.get("skill_id") for d in datas for c in d.get("candidates", []) if c
                ]
                self.line("  candidates (only alice's skills):", ", ".join(map(str, candidates)))

                self.line("alice answers in the same task:", _quoted(CLARIFICATION_ANSWER))
                reply = await _send_text(client, CLARIFICATION_ANSWER, task_id=first.id)
                same = "the same task" if reply.id == first.id else "a NEW task"
                self.line("  task:", f"{reply.id} ({same})")
                self.line("  state:", _state(reply))
                self.line("  metadata.routing:", _routing_line(_routing(reply)))
                result = _artifact_data(reply, CLARIFICATION_ANSWER) or {}
                self.line(
                    "  result:",
                    f"{result.get('link_id')}: {result.get('verdict')} "
                    f"(available {_bps(result.get('available_bps'))})",
                )
        ok = (
            _state(clear) == "TASK_STATE_COMPLETED"
            and _state(first) == "TASK_STATE_INPUT_REQUIRED"
            and reply.id == first.id
            and _state(reply) == "TASK_STATE_COMPLETED"
        )
        return ("ok" if ok else "failed"), (
            f"{_quoted(CLEAR_TEXT)} -> {routed or '?'} {_state(clear)}; "
            f"{_quoted(AMBIGUOUS_TEXT)} -> "
            f"{_state(first)} ({len(candidates)} candidate{'' if len(candidates) == 1 else 's'})"
            f" -> {_state(reply)}"
        )

    # -- step 8 -----------------------------------------------------------------------------

    def engine(self) -> AsyncEngine:
        """The agent's own database (migrated by the agent at start; never created here)."""
        from agent.storage.engine import make_engine

        embedded = self.settings.home / "netagent.db"
        if not self.settings.database_url and not embedded.exists():
            raise RuntimeError(f"no agent database at {embedded} (is NETAGENT_HOME the agent's?)")
        return make_engine(self.settings.resolved_database_url)

    async def composition(self) -> tuple[Status, str]:
        engine = self.engine()
        try:
            return await self._compose(CorrelationStore(engine))
        finally:
            await engine.dispose()

    async def _compose(self, store: CorrelationStore) -> tuple[Status, str]:
        paula = self.client("paula")
        arguments = {"link_id": HOT_LINK}
        self.line("paula chains:", f"check_link_capacity {_shown(arguments)} -> plan_link_upgrade")
        try:
            result = await chain(
                paula, "check_link_capacity", arguments, paula, "plan_link_upgrade", store
            )
        except RemoteTaskError as exc:
            self.remember(exc.task_id)  # its audit rows belong to step 9
            raise
        except CompositionRefusedError as exc:
            self.line("composition refused (nothing was invoked):", "")
            for difference in exc.differences:
                self.line("  differs:", difference)
            up = await paula.describe("check_link_capacity")
            down = await paula.describe("plan_link_upgrade")
            produced = _properties(up.document["output_schema"])
            accepted = _properties(down.document["input_schema"])
            self.line(
                "  fields only in check_link_capacity's output:",
                ", ".join(sorted(produced - accepted)) or "-",
            )
            self.line(
                "  fields only in plan_link_upgrade's input:",
                ", ".join(sorted(accepted - produced)) or "-",
            )
            self.line(
                "why:",
                "composition needs the same schema by reference (schema_uri, version, dialect, "
                "digest); looking alike is not enough",
            )
            return "refused", f"refused: {len(exc.differences)} reference member(s) differ"
        self.remember(result.upstream.task_id)
        self.remember(result.downstream.task_id)
        self.line(
            "upstream:",
            f"check_link_capacity task {result.upstream.task_id}: "
            f"{result.upstream.output.get('verdict')}",
        )
        self.line("downstream:", f"plan_link_upgrade task {result.downstream.task_id}")
        self.line("  recommendation:", _recommendation(result.downstream.output))
        leftover = composition_differences(result.upstream.interface, result.downstream.interface)
        self.line("schema references identical:", not leftover)
        links = await store.query(workflow_id=result.workflow_id)
        rows = [
            (
                link["upstream_skill"],
                link["upstream_task_id"],
                link["downstream_skill"],
                link["downstream_task_id"],
            )
            for link in links
        ]
        columns = [Column("upstream"), Column("task"), Column("downstream"), Column("task")]
        self.records(f"task_correlation, workflow {result.workflow_id}", columns, rows, lead=2)
        answer = result.downstream.output.get("recommendation")
        return "ok", (
            f"workflow {result.workflow_id[:8]}: recommendation {answer}, "
            f"{len(links)} correlation recorded"
        )

    # -- step 9 -----------------------------------------------------------------------------

    async def audit_trail(self) -> tuple[Status, str]:
        engine = self.engine()
        try:
            log = DatabaseAuditLog(engine)
            rows: list[dict[str, Any]] = []
            for task_id in self.task_ids:
                rows += await log.query(task_id=task_id, limit=50)
        finally:
            await engine.dispose()
        rows.sort(key=lambda r: r["id"], reverse=True)
        succeeded = {
            r["task_id"]
            for r in rows
            if (r["tool"], r["operation"], r["decision"]) == ("agent", "invoke", "allow")
        }
        checks = [r for r in rows if _existence_check(r, succeeded)]
        shown = [
            (
                row["ts"].strftime("%H:%M:%S") if row["ts"] else "",
                f"{row['principal']}@{row['tenant'] or '-'}",
                row["skill_id"] or "-",
                (row["task_id"] or "")[:8],
                f"{row['tool']}.{row['operation']}",
                EXISTENCE_CHECK if row in checks else f"{row['decision']}: {row['reason']}",
            )
            for row in rows
        ]
        names = ("time", "principal", "skill", "task", "tool.op", "decision")
        title = f"principal audit ({len(rows)} row{'' if len(rows) == 1 else 's'}, newest first)"
        self.records(title, [Column(name) for name in names], shown, lead=4)
        if checks:
            self.line(
                f"{EXISTENCE_CHECK}: a lookup that found nothing (the tool records it as deny: "
                "not found in the caller's tenant); the skill went on to look elsewhere and its "
                "task completed",
                f"{len(checks)} such row(s)",
            )
        actors = sorted({a for r in rows for a in r["actor_chain"] or []})
        self.line(
            "agent.invoke rows are the invocations; the others are tool calls made for the "
            "principal with an exchanged token, acting:",
            ", ".join(actors) or "-",
        )
        self.line("the same view from the shell:", "netagent audit --task <id>")
        denied = sum(r["decision"] == "deny" for r in rows) - len(checks)
        status: Status = "ok" if rows else "failed"
        looked = f", {len(checks)} existence check(s) that found nothing" if checks else ""
        return status, f"{len(rows)} rows for {len(self.task_ids)} tasks ({denied} denied{looked})"


EXISTENCE_CHECK = "checked: not there"
"""How the walkthrough labels a tool's lookup that found nothing inside a task that completed."""
NOT_FOUND = "not found"


def _existence_check(row: dict[str, Any], succeeded: set[str | None]) -> bool:
    """A tool row refused only because the looked-up id is absent, in a task that completed:
    bookkeeping of a lookup, not a refusal of the caller."""
    return (
        row["tool"] != "agent"
        and row["decision"] == "deny"
        and str(row["reason"]).startswith(NOT_FOUND)
        and row["task_id"] in succeeded
    )


def _binding_rows(card: dict[str, Any]) -> list[tuple[str, str, str]]:
    for extension in card.get("capabilities", {}).get("extensions", []):
        if extension.get("uri") == EXTENSION_URI:
            return [
                (
                    str(b.get("skill_id")),
                    str(b.get("skill_version")),
                    str(b.get("interface_digest")),
                )
                for b in extension.get("params", {}).get("skills", [])
            ]
    return []


def _properties(reference: dict[str, Any]) -> set[str]:
    schema = reference.get("resolution", {}).get("schema", {})
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    return set(properties) if isinstance(properties, dict) else set()


def _sample_line(record: Record) -> str:
    data = record.data
    if "utilization_ratio" in data:
        return (
            f"{record.kind} {data.get('direction')} {data.get('observed_at')} "
            f"utilization {data.get('utilization_ratio', 0):.0%} "
            f"available {_bps(data.get('available_bps'))}"
        )
    text = _shown(data)
    return f"{record.kind} {text if len(text) <= 90 else text[:89] + '…'}"


async def _send_text(client: Any, text: str, task_id: str = "") -> Task:
    """One text message (with the schema-interface extension activated), the resulting task."""
    message = Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[new_text_part(text, media_type="text/plain")],
        task_id=task_id,
    )
    parameters: dict[str, str] = {}
    with_a2a_extensions([EXTENSION_URI])(parameters)  # the A2A-Extensions header
    context = ClientCallContext(service_parameters=parameters)
    task: Task | None = None
    seen_id = task_id
    async for event in client.send_message(SendMessageRequest(message=message), context=context):
        kind = event.WhichOneof("payload")
        if kind == "task":
            task = event.task
        elif kind in ("status_update", "artifact_update"):
            seen_id = getattr(event, kind).task_id
    if task is None:
        if not seen_id:
            raise RuntimeError("no task came back")
        task = await client.get_task(GetTaskRequest(id=seen_id), context=context)
    return task


_Step = tuple[str, str, str, Callable[[_Walkthrough], Awaitable[tuple[Status, str]]]]
STEPS: list[_Step] = [
    (
        "public_card",
        "The public card",
        "What anyone may know before authenticating: the public skills and, in the "
        "schema-interface extension, each skill's version and interface digest.",
        _Walkthrough.public_card,
    ),
    (
        "extended_cards",
        "Tokens and the extended card",
        "Bearer tokens for three demo callers, signed with this agent's local key. The extended "
        "card is the projection each caller is entitled to, so callers see different skills.",
        _Walkthrough.tokens_and_extended_cards,
    ),
    (
        "describe_skill",
        "describe_skill, verified by the client",
        "Before trusting a skill the governed client fetches its Skill Interface Document and "
        "checks it: advertised, returned and recomputed digests agree, the document fits the "
        "trusted schema, and every embedded schema matches its digest.",
        _Walkthrough.describe,
    ),
    (
        "worked_example",
        "The draft's worked example",
        "evaluate_resource_condition through GovernedClient: arguments validated locally, sent "
        "with skill_version and interface_digest, result and record validated on return.",
        _Walkthrough.worked_example,
    ),
    (
        "streaming",
        "Streamed supporting records",
        f"check_link_capacity on {HOT_LINK}, streamed: each telemetry record is validated and "
        "shown as it arrives, then the verdict that references them.",
        _Walkthrough.streamed_records,
    ),
    (
        "refusals",
        "Refusals, local and remote",
        "A bad input is caught by the client against the input schema and never sent; a caller "
        "from another tenant is refused by the agent, which reveals nothing about the resource.",
        _Walkthrough.refusals,
    ),
    (
        "text_routing",
        "Plain text routing",
        "A2A messages name no skill: the router picks one among the caller's skills and says so "
        "in metadata.routing; when unsure it asks, and the answer continues the same task.",
        _Walkthrough.text_routing,
    ),
    (
        "chain",
        "Direct composition",
        "One skill's output as another's input, only if both name the same schema by reference; "
        "the link between the two tasks is recorded in the agent's database.",
        _Walkthrough.composition,
    ),
    (
        "audit",
        "The audit trail",
        "Every invocation and every tool call made for a caller is audited: who, for which task, "
        "through which tool, allowed or denied. These are the rows the tasks above left.",
        _Walkthrough.audit_trail,
    ),
]


async def run_demo(
    base_url: str,
    settings: Settings,
    console: rich.console.Console,
    *,
    pause: bool = False,
) -> DemoReport:
    """Walk a newcomer through the agent at ``base_url``; never stops at a failed step."""
    walk = _Walkthrough(base_url, settings, console)
    report = DemoReport()
    console.print(
        Panel(
            f"netops-agent at {walk.base_url}: nine steps, each says what it does and "
            "why, then shows what came back.",
            title="netops-agent walkthrough",
            border_style="magenta",
        )
    )
    try:
        for number, (name, title, why, run_step) in enumerate(STEPS, start=1):
            if pause and number > 1:
                await asyncio.to_thread(console.input, "[dim]Enter for the next step… [/]")
            console.print(Panel(why, title=f"{number}/{len(STEPS)} · {title}", border_style="cyan"))
            try:
                status, summary = await asyncio.wait_for(run_step(walk), STEP_TIMEOUT_S)
            except Exception as exc:  # one failed step must not end the walkthrough
                status, summary = "failed", _failure(exc)
            style = {"ok": "green", "refused": "yellow", "failed": "red"}[status]
            console.print(f"[{style}]{status}[/] {escape(summary)}", highlight=False, markup=True)
            report.steps.append(StepResult(number, name, status, summary))
    finally:
        await walk.aclose()
    rows = [(str(s.number), s.name, s.status, s.summary) for s in report.steps]
    columns = [Column("#", justify="right"), Column("step"), Column("status"), Column("summary")]
    print_records(console, "walkthrough summary", columns, rows, lead=3)
    return report


# -- starting an agent when none answers ------------------------------------------------------


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url.rstrip('/')}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _serve_command() -> list[str]:
    script = Path(sys.executable).with_name("netagent")
    if script.exists():
        return [str(script), "serve"]
    found = shutil.which("netagent")
    if found:
        return [found, "serve"]
    return [sys.executable, "-c", "from netops.cli import main; main()", "serve"]


def _settings_env(settings: Settings) -> dict[str, str]:
    """The NETAGENT_* variables that make ``netagent serve`` run with ``settings``."""
    values: dict[str, object | None] = {
        "HOME": settings.home,
        "HOST": settings.host,
        "PORT": settings.port,
        "DATABASE_URL": settings.database_url,
        "PUBLIC_URL": settings.public_url,
        "ISSUER": settings.issuer,
        "AUDIENCE": settings.audience,
        "JWKS_URL": settings.jwks_url,
        "SKILLS_DIR": settings.skills_dir,
        "SEED": "1" if settings.seed_on_start else "0",
        "LOG_LEVEL": settings.log_level,
        "ROUTE_THRESHOLD": settings.route_threshold,
        "TOKEN_EXCHANGE_URL": settings.token_exchange_url,
        "AGENT_CREDENTIAL": settings.agent_credential,
        "TOOL_ISSUER": settings.tool_issuer,
        "TOOL_JWKS_URL": settings.tool_jwks_url,
    }
    return {f"NETAGENT_{k}": str(v) for k, v in values.items() if v is not None}


def ensure_agent(settings: Settings, url: str) -> subprocess.Popen[bytes] | None:
    """None if an agent answers at ``url``; otherwise start ``netagent serve`` and return it.

    The subprocess gets ``settings`` as NETAGENT_* variables (``NETAGENT_HOME``,
    ``NETAGENT_PORT``, ...); its output goes to ``serve.log`` in the home folder. It must answer
    ``/healthz`` within 60 s, else it is stopped and RuntimeError says why. The caller stops the
    returned process (``terminate()``) when done.
    """
    if _healthy(url):
        return None
    from agent.cli.common import port_taken

    busy = port_taken(settings.host, settings.port)
    if busy:
        raise RuntimeError(
            f"no agent answers at {url}, and {settings.host}:{settings.port} is taken ({busy}): "
            "stop what holds the port, or pass --url of a running agent"
        )
    busy = port_taken(settings.host, settings.grpc_port) if settings.grpc_port else None
    if busy:
        raise RuntimeError(
            f"no agent answers at {url}, and {settings.host}:{settings.grpc_port} (its gRPC "
            f"port) is taken ({busy}): stop what holds it, set NETAGENT_GRPC_PORT to another "
            "port or to off, or pass --url of a running agent"
        )
    settings.home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **_settings_env(settings)}
    log_path = settings.home / "serve.log"
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            _serve_command(), env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if _healthy(url):
            return process
        time.sleep(0.25)
    exited = process.poll()
    if exited is None:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=10)
    how = (
        f"exited with code {exited}"
        if exited is not None
        else f"did not become healthy within {HEALTH_TIMEOUT_S:.0f} s"
    )
    lines = log_path.read_text(errors="replace").splitlines()
    tail = [line for line in lines if not _is_secret(line)][-15:]  # never the bearer tokens
    raise RuntimeError(f"netagent serve at {url} {how}; {log_path} ends:\n" + "\n".join(tail))


def _is_secret(line: str) -> bool:
    """A line of serve's output that holds a bearer token (``export ALICE_TOKEN=eyJ...``)."""
    return "_TOKEN=" in line or "eyJ" in line


def _failure(exc: BaseException) -> str:
    """A failed step's line, with what caused it ("agent card unavailable" says little alone:
    refused, timed out, or an answer that was no card?)."""
    line = f"{type(exc).__name__}: {exc}".splitlines()[0]
    cause = exc.__cause__
    said = str(cause).splitlines()[0] if cause is not None and str(cause) else ""
    # (httpx's own errors chain their transport's, same words; a timeout often has none)
    if cause is not None and (not said or said not in line):
        line += f" ({type(cause).__name__}{': ' + said if said else ''})"
    return line


__all__ = ["DEMO_CALLERS", "DemoReport", "StepResult", "ensure_agent", "run_demo"]
