"""The invoice agent end to end: a real uvicorn server on loopback, the real a2a-sdk client.

These tests import nothing of the network deployment: they hold that the core serves a domain
that shares nothing with networks, by Data Part and by text, with the same governance.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn

from agent.app import create_app
from agent.base.settings import Settings
from agent.client import GovernedClient
from agent.security.auth import issue_token, load_or_create_signing_key
from examples.invoices.deployment import DEMO_CALLERS, invoice_deployment
from tests.a2a_helpers import BINDINGS, Outcome, call, data_message, send, text_message
from tests.test_core_words import network_words

CALLERS = {caller.subject: caller for caller in DEMO_CALLERS}


@dataclass
class InvoiceAgent:
    base_url: str
    settings: Settings

    def token(self, subject: str) -> str:
        caller = CALLERS[subject]
        key = load_or_create_signing_key(self.settings.home)
        return issue_token(
            key, self.settings, subject=subject, tenant=caller.tenant, scopes=list(caller.scopes)
        )


@pytest.fixture(scope="module")
def invoices(tmp_path_factory: pytest.TempPathFactory) -> Iterator[InvoiceAgent]:
    """The invoice agent on SQLite in a fresh home, served by uvicorn in a thread."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = int(listener.getsockname()[1])
    home: Path = tmp_path_factory.mktemp("invoice-home")
    settings = Settings(home=home, port=port, grpc_port=0)
    app = create_app(settings, invoice_deployment())
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not server.started or httpx.get(f"{base_url}/healthz").status_code != 200:
        assert thread.is_alive() and time.monotonic() < deadline, "the invoice agent did not start"
        time.sleep(0.05)
    yield InvoiceAgent(base_url, settings)
    server.should_exit = True
    thread.join(timeout=15)


BRAND = "invoice-agent"


def skill_ids(card: dict[str, object]) -> set[str]:
    skills = card["skills"]
    assert isinstance(skills, list)
    return {skill["id"] for skill in skills}


def test_the_cards_introduce_the_invoice_agent_and_each_caller_sees_their_skills(
    invoices: InvoiceAgent,
) -> None:
    public = httpx.get(f"{invoices.base_url}/.well-known/agent-card.json").json()
    assert public["name"] == "Invoice Agent"
    assert skill_ids(public) == {"describe_skill"}
    extended = {
        subject: httpx.post(
            f"{invoices.base_url}/a2a/jsonrpc",
            headers={"Authorization": f"Bearer {invoices.token(subject)}", "A2A-Version": "1.0"},
            json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
        ).json()["result"]
        for subject in CALLERS
    }
    everything = {"describe_skill", "reconcile_invoice", "invoice_status", "lookup_vendor"}
    assert skill_ids(extended["ann"]) == everything
    assert skill_ids(extended["ben"]) == everything - {"reconcile_invoice"}
    assert skill_ids(extended["gina"]) == everything


@pytest.mark.parametrize("binding", BINDINGS)
async def test_every_card_is_signed_with_the_invoice_agents_key(
    invoices: InvoiceAgent, binding: str
) -> None:
    """The core signs whatever deployment it serves: the public card and each caller's
    extended card verify against the invoice agent's own JWKS."""
    for subject in (None, *CALLERS):
        token = invoices.token(subject) if subject else None
        async with GovernedClient(
            invoices.base_url, token=token, binding=binding, require_signature=True
        ) as client:
            signature = (await client.fetch_card()).signature
        assert signature.signed
        assert signature.jku == f"{invoices.base_url}/.well-known/jwks.json"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_reconciliation_lists_every_kind_of_difference_with_a_record_per_line(
    invoices: InvoiceAgent, binding: str
) -> None:
    outcome = await call(
        invoices.base_url,
        invoices.token("ann"),
        "reconcile_invoice",
        {"invoice_id": "INV-20931"},
        binding=binding,
    )
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task
    result = outcome.result("reconcile_invoice")
    assert (result["result"], result["purchase_order_id"]) == ("mismatched", "PO-5512")
    kinds = sorted(d["kind"] for d in result["differences"])
    assert kinds == ["not_invoiced", "not_on_purchase_order", "price", "quantity"]
    records = [a for a in outcome.artifacts() if a.get("name") != "reconcile_invoice"]
    assert len(records) == 4  # one per invoice line


def _status(outcome: Outcome) -> str:
    return outcome.state.removeprefix("TASK_STATE_")


async def test_plain_text_reaches_each_skill_with_its_arguments(invoices: InvoiceAgent) -> None:
    token = invoices.token("ann")
    asked = {
        "Please reconcile INV-20931 against its PO": "reconcile_invoice",
        "has invoice INV-20932 been paid yet?": "invoice_status",
        "look up vendor V-1002": "lookup_vendor",
    }
    for text, skill in asked.items():
        outcome = await send(invoices.base_url, token, text_message(text))
        assert _status(outcome) == "COMPLETED", (text, outcome.task)
        assert outcome.artifacts(skill), (text, outcome.task)
    paid = await send(invoices.base_url, token, text_message("has invoice INV-20932 been paid?"))
    assert paid.result("invoice_status")["status"] == "paid"


async def test_another_tenants_invoice_looks_absent_and_the_ledger_audits_the_refusal(
    invoices: InvoiceAgent,
) -> None:
    for skill, arguments in (
        ("invoice_status", {"invoice_id": "INV-20931"}),
        ("reconcile_invoice", {"invoice_id": "INV-20931"}),
        ("lookup_vendor", {"vendor": "V-1001"}),
    ):
        outcome = await call(invoices.base_url, invoices.token("gina"), skill, arguments)
        assert outcome.state == "TASK_STATE_REJECTED", outcome.task
        assert outcome.error == {
            "code": "authorization_failed",
            "message": "resource not found or not accessible",
        }
    own = await call(
        invoices.base_url, invoices.token("gina"), "invoice_status", {"invoice_id": "INV-40017"}
    )
    assert own.result("invoice_status")["vendor_name"] == "Initech Components Inc."


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_caller_without_the_scope_cannot_reconcile(
    invoices: InvoiceAgent, binding: str
) -> None:
    by_text = await send(
        invoices.base_url,
        invoices.token("ben"),
        text_message("reconcile invoice INV-20931 with PO-5512"),
        binding=binding,
    )
    assert not by_text.artifacts("reconcile_invoice")
    by_data = await send(
        invoices.base_url,
        invoices.token("ben"),
        data_message({"skill": "reconcile_invoice", "arguments": {"invoice_id": "INV-20931"}}),
        binding=binding,
    )
    assert by_data.state == "TASK_STATE_REJECTED", by_data.task
    assert not by_data.artifacts("reconcile_invoice")


async def test_an_invoice_without_a_purchase_order_is_refused_with_what_to_send(
    invoices: InvoiceAgent,
) -> None:
    outcome = await call(
        invoices.base_url, invoices.token("gina"), "reconcile_invoice", {"invoice_id": "INV-40018"}
    )
    assert outcome.state == "TASK_STATE_REJECTED", outcome.task
    assert outcome.error["code"] == "constraint_rejected"
    assert "purchase_order_id" in outcome.error["message"]


def test_the_command_line_introduces_the_invoice_agent() -> None:
    helped = subprocess.run(
        [sys.executable, "-m", "examples.invoices", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"COLUMNS": "200", "PATH": "", "NO_COLOR": "1"},
    )
    assert f"{BRAND}: an A2A agent that reconciles supplier invoices." in helped.stdout
    assert "python -m examples.invoices" in helped.stdout
    assert network_words(helped.stdout) == []


def test_the_http_app_and_every_binding_refusal_carry_the_invoice_brand(
    invoices: InvoiceAgent,
) -> None:
    schema = httpx.get(
        f"{invoices.base_url}/openapi.json",
        headers={"Authorization": f"Bearer {invoices.token('ann')}"},
    )
    assert schema.status_code == 200
    assert schema.json()["info"]["title"] == BRAND
    bad = {"Authorization": "Bearer not-a-token", "A2A-Version": "1.0"}
    jsonrpc = httpx.post(
        f"{invoices.base_url}/a2a/jsonrpc",
        headers=bad,
        json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
    )
    rest = httpx.get(f"{invoices.base_url}/a2a/rest/extendedAgentCard", headers=bad)
    too_large = httpx.post(
        f"{invoices.base_url}/a2a/rest/message:send",
        content=b"x" * (invoices.settings.limits.max_body_bytes + 1),
        headers={"Content-Type": "application/json"},
    )
    infos = [
        jsonrpc.json()["error"]["data"][0],
        rest.json()["error"]["details"][0],
        too_large.json()["error"]["details"][0],
    ]
    assert [response.status_code for response in (jsonrpc, rest, too_large)] == [401, 401, 413]
    assert [info["domain"] for info in infos] == [f"{BRAND}.edge"] * 3


def test_the_landing_page_and_the_console_carry_the_invoice_brand(
    invoices: InvoiceAgent,
) -> None:
    landing = httpx.get(f"{invoices.base_url}/", headers={"Accept": "text/html"})
    assert "<title>Invoice Agent · invoice-agent</title>" in landing.text
    assert "<code>python -m examples.invoices serve</code>" in landing.text
    introduction = landing.text.split("Documentation:")[0]  # the docs are the checkout's own
    assert network_words(introduction) == []
    console = httpx.get(
        f"{invoices.base_url}/console/skills",
        headers={"Authorization": f"Bearer {invoices.token('ann')}"},
    )
    assert console.status_code == 200
    assert "· invoice-agent</title>" in console.text
    assert '<span class="brand">invoice-agent console</span>' in console.text
    navigation = console.text.split("<main")[0]  # the page's own text: brand, views, caller
    assert network_words(navigation) == []  # a deployment without a topology has no such view
    front = httpx.get(
        f"{invoices.base_url}/console/",
        headers={"Authorization": f"Bearer {invoices.token('ann')}"},
        follow_redirects=False,
    )
    assert front.headers["location"] == "/console/skills"
    no_view = httpx.get(
        f"{invoices.base_url}/console/network",
        headers={"Authorization": f"Bearer {invoices.token('ann')}"},
    )
    assert no_view.status_code == 404  # the network's page is the network deployment's
