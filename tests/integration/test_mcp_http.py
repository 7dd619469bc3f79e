"""The MCP projection over Streamable HTTP, with the MCP SDK's own client against a live agent.

Tools are exactly what each demo caller's extended card lists; a call goes through the same
governance as the A2A request for the same skill (the refusals and audit rows are compared
with the A2A side's, call for call).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agent.mcp import endpoint
from agent.mcp.projection import ARTIFACT_ID, INTERFACE_DIGEST, RECORD_KIND, SKILL_VERSION, TASK_ID
from agent.mcp.server import MCP_PATH
from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from netops.deployment import DEMO_CALLERS
from tests.a2a_helpers import binding_of, invoke
from tests.conftest import RunningAgent, start_agent

WORKED_ARGUMENTS = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
CALLERS = {c.subject: c for c in DEMO_CALLERS}
TOOLS = {
    "alice": [
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
    ],
    "paula": [
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
        "plan_link_upgrade",
    ],
    "gary": [
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
    ],
    "vic": ["describe_skill", "lookup_inventory"],
    "nora": [
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
    ],
}
"""What each demo caller (netops/deployment.py) is listed; the extended card must agree."""
CARD_PATH = "/.well-known/agent-card.json"


def demo_token(agent: RunningAgent, name: str) -> str:
    """A demo caller's token; ``name:scope,scope`` gives that caller only those scopes."""
    name, _, only = name.partition(":")
    caller = CALLERS[name]
    scopes = only.split(",") if only else list(caller.scopes)
    return agent.token(name, tenant=caller.tenant, scopes=scopes)


@asynccontextmanager
async def mcp_client(
    agent: RunningAgent, token: str | None, **options: Any
) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(
            streamable_http_client(agent.base_url + MCP_PATH, http_client=http), **options
        ) as client,
    ):
        yield client


def extended_card(agent: RunningAgent, token: str) -> dict[str, Any]:
    """The caller's extended card, over A2A JSON-RPC."""
    answer = httpx.post(
        f"{agent.base_url}/a2a/jsonrpc",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
        json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
    )
    card: dict[str, Any] = answer.json()["result"]
    return card


def extended_card_ids(agent: RunningAgent, token: str) -> list[str]:
    return [s["id"] for s in extended_card(agent, token)["skills"]]


def card_bindings(agent: RunningAgent, token: str) -> dict[str, dict[str, str]]:
    """The card's schema-interface bindings, by skill id."""
    extensions = extended_card(agent, token)["capabilities"]["extensions"]
    (extension,) = [e for e in extensions if "params" in e]
    return {b["skill_id"]: b for b in extension["params"]["skills"]}


async def audit_rows(agent: RunningAgent, task_id: str) -> list[dict[str, Any]]:
    """The task's audit rows, oldest first, once its invocation row is there."""
    engine = make_engine(agent.settings.resolved_database_url)
    try:
        audit = DatabaseAuditLog(engine)
        deadline = time.monotonic() + 5
        while True:
            rows = await audit.query(task_id=task_id, limit=1000)
            if any(r["tool"] == "agent" for r in rows) or time.monotonic() > deadline:
                return sorted(rows, key=lambda r: r["id"])
            await asyncio.sleep(0.02)
    finally:
        await engine.dispose()


@pytest.mark.parametrize("name", sorted(TOOLS))
async def test_the_tools_are_the_callers_extended_card(agent: RunningAgent, name: str) -> None:
    token = demo_token(agent, name)
    async with mcp_client(agent, token) as client:
        tools = (await client.list_tools()).tools
    names = [t.name for t in tools]
    assert names == TOOLS[name] == extended_card_ids(agent, token)
    bindings = card_bindings(agent, token)
    for tool in tools:
        assert tool.meta is not None
        assert tool.meta[SKILL_VERSION] == bindings[tool.name]["skill_version"]
        assert tool.meta[INTERFACE_DIGEST] == bindings[tool.name]["interface_digest"]
        assert tool.input_schema["type"] == "object" and tool.output_schema is not None
    assert "port_report" not in names  # removed: never listed


async def test_lifecycle_is_shown_as_on_the_card(agent: RunningAgent) -> None:
    async with mcp_client(agent, demo_token(agent, "paula")) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    deprecated = tools["link_headroom"]
    assert deprecated.meta is not None
    assert deprecated.meta["netagent/state"] == "deprecated"
    assert deprecated.meta["netagent/replacement"] == "check_link_capacity"
    assert deprecated.description is not None
    assert deprecated.description.startswith("Deprecated: use 'check_link_capacity' instead.")
    preview = tools["plan_link_upgrade"]  # paula opted in (scope preview); alice did not
    assert preview.meta is not None and preview.meta["netagent/state"] == "preview"


async def test_the_schemas_are_the_interface_documents(agent: RunningAgent) -> None:
    token = demo_token(agent, "alice")
    async with mcp_client(agent, token) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        described = await client.call_tool(
            "describe_skill", {"skill_id": "evaluate_resource_condition"}
        )
    assert not described.is_error
    output = described.structured_content
    assert isinstance(output, dict)
    document = output["skill_interface"]
    tool = tools["evaluate_resource_condition"]
    assert tool.input_schema == document["input_schema"]["resolution"]["schema"]
    assert tool.output_schema == document["output_schema"]["resolution"]["schema"]
    assert tool.meta is not None
    assert output["interface_digest"] == tool.meta[INTERFACE_DIGEST]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_worked_example(agent: RunningAgent, mode: str) -> None:
    async with mcp_client(agent, demo_token(agent, "alice"), mode=mode) as client:
        result = await client.call_tool("evaluate_resource_condition", WORKED_ARGUMENTS)
    assert not result.is_error, result
    output = result.structured_content
    assert isinstance(output, dict)
    assert output["result"] == "condition_not_met"
    assert output["observed_value"] == 42 and output["unit"] == "percent"
    text, record = result.content
    assert text.type == "text" and "condition_not_met" in text.text
    assert record.type == "resource"
    assert record.meta is not None and record.meta[RECORD_KIND] == "resource-observation"
    artifact_id = record.meta[ARTIFACT_ID]
    assert output["supporting_record_refs"] == [artifact_id]
    assert record.resource.uri == f"netagent://records/resource-observation/{artifact_id}"
    assert record.resource.mime_type == "application/json"
    data = json.loads(record.resource.text)  # type: ignore[union-attr]
    assert data["observed_at"] == "2026-08-11T12:00:01Z"
    assert (data["value"], data["unit"], data["metric"]) == (42, "percent", "utilization")
    assert data["resource_id"] == "network-resource-123"

    assert result.meta is not None
    rows = await audit_rows(agent, result.meta[TASK_ID])
    *tool_rows, invocation = rows
    assert (invocation["tool"], invocation["decision"], invocation["reason"]) == (
        "agent",
        "allow",
        "completed",
    )
    assert (invocation["principal"], invocation["tenant"]) == ("alice", "acme")
    assert invocation["skill_id"] == "evaluate_resource_condition"
    assert tool_rows, "the result came from the gated inventory, with a downscoped tool token"
    for row in tool_rows:
        assert (row["principal"], row["tenant"], row["decision"]) == ("alice", "acme", "allow")
        assert row["token_id"]
    assert {row["projection"] for row in rows} == {"mcp"}


INVALID = {"resource_id": 5, "condition": {"metric": "utilization"}}
REFUSALS = [
    # lookup_inventory is listed to everyone (public), usable with inventory.read only
    pytest.param(
        "alice:assurance.read",
        "lookup_inventory",
        {"kind": "sites"},
        "authorization_failed",
        id="wrong-scope",
    ),
    # evaluate_resource_condition is listed only to callers with assurance.read
    pytest.param(
        "vic", "evaluate_resource_condition", WORKED_ARGUMENTS, "skill_not_advertised", id="vic"
    ),
    pytest.param(
        "gary",
        "evaluate_resource_condition",
        WORKED_ARGUMENTS,
        "authorization_failed",
        id="gary-acme-resource",
    ),
    pytest.param(
        "alice", "evaluate_resource_condition", INVALID, "input_invalid", id="invalid-input"
    ),
    pytest.param("alice", "plan_link_upgrade", {}, "skill_not_advertised", id="alice-preview"),
    pytest.param("gary", "plan_link_upgrade", {}, "skill_not_advertised", id="gary-acme-only"),
    pytest.param("alice", "port_report", {}, "skill_not_advertised", id="alice-removed"),
    pytest.param("vic", "no_such_skill", {}, "skill_not_advertised", id="vic-unknown"),
]


@pytest.mark.parametrize(("name", "skill", "arguments", "code"), REFUSALS)
async def test_a_refusal_is_the_a2a_refusal(
    agent: RunningAgent, name: str, skill: str, arguments: dict[str, Any], code: str
) -> None:
    token = demo_token(agent, name)
    async with mcp_client(agent, token) as client:
        refused = await client.call_tool(skill, arguments)
    assert refused.is_error
    error = refused.structured_content
    assert isinstance(error, dict)
    assert refused.content[0].type == "text"
    assert refused.content[0].text.startswith(error["code"])

    registered = agent_binding(agent, skill)
    a2a = await invoke(agent.base_url, token, skill, arguments, registered)
    assert a2a.state == "TASK_STATE_REJECTED"
    assert error == a2a.error  # the same code, message and details
    assert error["code"] == code

    assert refused.meta is not None
    mcp_rows = await audit_rows(agent, refused.meta[TASK_ID])
    a2a_rows = await audit_rows(agent, a2a.task.id)

    def shape(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        keys = ("principal", "tenant", "tool", "operation", "decision", "reason", "skill_id")
        return [tuple(row[k] for k in keys) for row in rows]

    assert shape(mcp_rows) == shape(a2a_rows)
    assert mcp_rows[-1]["decision"] == "deny"
    assert {r["projection"] for r in mcp_rows} == {"mcp"}
    assert {r["projection"] for r in a2a_rows} == {"a2a"}


def agent_binding(agent: RunningAgent, skill: str) -> dict[str, str] | None:
    """The interface the registry runs for ``skill`` (what tools/list gives), if any."""
    for binding in card_bindings(agent, demo_token(agent, "paula")).values():
        if binding["skill_id"] == skill:
            return {k: binding[k] for k in ("skill_version", "interface_digest")}
    return None


async def test_the_invalid_input_details_point_at_the_members(agent: RunningAgent) -> None:
    async with mcp_client(agent, demo_token(agent, "alice")) as client:
        refused = await client.call_tool("evaluate_resource_condition", INVALID)
    error = refused.structured_content
    assert isinstance(error, dict) and error["code"] == "input_invalid"
    pointers = {d["instance_path"] for d in error["details"]}
    assert {"/resource_id", "/condition/operator"} <= pointers


async def test_a_pinned_stale_interface_is_a_mismatch(agent: RunningAgent) -> None:
    token = demo_token(agent, "alice")
    stale = {SKILL_VERSION: "1.0", INTERFACE_DIGEST: "sha256:" + "0" * 64}
    async with mcp_client(agent, token) as client:
        refused = await client.call_tool(
            "evaluate_resource_condition", WORKED_ARGUMENTS, meta=stale
        )
    assert refused.is_error
    error = refused.structured_content
    assert isinstance(error, dict) and error["code"] == "interface_mismatch"
    current = await binding_of(agent.base_url, token, "evaluate_resource_condition")
    assert current["interface_digest"] in error["message"]


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-token", "Basic abc"])
def test_no_valid_token_is_refused_at_the_edge(
    agent: RunningAgent, authorization: str | None
) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    answer = httpx.post(
        agent.base_url + MCP_PATH,
        headers=headers,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
    )
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith('Bearer realm="netagent"')


# -- built once the app serves (agent/mcp/endpoint.py) ------------------------------------------


@pytest.fixture
def gated_mcp(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """The MCP SDK's import, held until the test opens the gate (it then imports as ever)."""
    gate = threading.Event()
    real = endpoint._import_server

    def held() -> None:
        assert gate.wait(timeout=30)
        real()

    monkeypatch.setattr(endpoint, "_import_server", held)
    return gate


async def test_a_request_before_the_mcp_endpoint_is_built_waits_for_it(
    tmp_path: Path, gated_mcp: threading.Event
) -> None:
    """The app serves (card, A2A, health) while the MCP SDK is still being imported; an MCP
    request that arrives meanwhile is answered once it is built, not refused."""
    running = await asyncio.to_thread(start_agent, tmp_path / "home")
    try:
        card = await asyncio.to_thread(httpx.get, running.base_url + CARD_PATH, timeout=10)
        assert card.status_code == 200
        token = demo_token(running, "vic")
        threading.Timer(0.5, gated_mcp.set).start()
        started = time.monotonic()
        async with mcp_client(running, token) as client:
            tools = (await client.list_tools()).tools
        assert gated_mcp.is_set() and time.monotonic() - started >= 0.4
        assert [t.name for t in tools] == TOOLS["vic"]
    finally:
        gated_mcp.set()
        await asyncio.to_thread(running.stop)


async def test_an_mcp_endpoint_that_cannot_be_built_fails_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A broken install (the SDK cannot be imported) is logged; MCP requests are answered 503
    with a JSON-RPC internal error (its text fixed, the reason in the log only), the A2A
    bindings serve on."""

    def broken() -> None:
        raise ImportError("No module named 'mcp'")

    monkeypatch.setattr(endpoint, "_import_server", broken)
    running = await asyncio.to_thread(start_agent, tmp_path / "home")
    try:
        token = demo_token(running, "vic")
        async with httpx.AsyncClient(base_url=running.base_url, timeout=10) as http:
            answer = await http.post(
                MCP_PATH,
                headers={
                    "Authorization": f"Bearer {token}",
                    "Accept": "application/json, text/event-stream",
                },
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            )
            assert answer.status_code == 503
            error = answer.json()["error"]
            assert error == {"code": -32603, "message": "Internal error"}  # why: in the log
            assert (await http.get(CARD_PATH)).status_code == 200
        assert await binding_of(running.base_url, token, "lookup_inventory")
        assert "mcp: cannot build the endpoint: No module named 'mcp'" in caplog.text
    finally:
        await asyncio.to_thread(running.stop)
