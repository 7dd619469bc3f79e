"""Our JSON-RPC calls (agent/client/jsonrpc_calls.py) and the a2a-sdk's client against our agent.

tests/unit/test_jsonrpc_calls.py holds the two to the same outcome on every kind of
answer a scripted server gives; here both call our agent, on each backend, and a JSON-RPC
``netagent describe`` is checked to import no SDK client at all (the point of ours).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx
from a2a.types import (
    AgentCard,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
)
from google.protobuf.json_format import MessageToDict, ParseDict

from agent.client.calls import JSONRPC, SdkCalls, service_parameters, v1_jsonrpc_interface
from agent.client.jsonrpc_calls import JsonRpcCalls
from tests.cli_process import run_netagent
from tests.conftest import RunningAgent

ROOT = Path(__file__).resolve().parents[2]


def test_our_agent_answers_both_alike(agent: RunningAgent) -> None:
    """The extended card, a describe_skill task and that task read back: the same through
    both (the task ids differ: each sends its own message)."""
    token = f"Bearer {agent.token('alice')}"
    parameters = service_parameters(token, ["https://example.org/none"])

    async def run() -> list[tuple[AgentCard, dict[str, Any], dict[str, Any]]]:
        async with httpx.AsyncClient(timeout=30) as http:
            raw = (await http.get(agent.base_url + "/.well-known/agent-card.json")).json()
            public = ParseDict(raw, AgentCard(), ignore_unknown_fields=True)
            interface = v1_jsonrpc_interface(public)
            assert interface is not None
            found = []
            for calls in (
                SdkCalls(public, JSONRPC, http, parameters, streaming=False),
                JsonRpcCalls(http, public, interface.url, parameters),
            ):
                async with calls:
                    extended = await calls.get_extended_agent_card(GetExtendedAgentCardRequest())
                    message = Message(
                        message_id=os.urandom(8).hex(),
                        role=Role.ROLE_USER,
                        parts=[Part(text="describe lookup_inventory")],
                    )
                    events = [
                        e async for e in calls.send_message(SendMessageRequest(message=message))
                    ]
                    task = events[0].task
                    again = await calls.get_task(GetTaskRequest(id=task.id))
                    found.append(
                        (extended, _stable(MessageToDict(task)), _stable(MessageToDict(again)))
                    )
            return found

    (sdk_card, sdk_task, sdk_again), (our_card, our_task, our_again) = asyncio.run(run())
    assert our_card == sdk_card and len(our_card.skills) > 0
    assert our_task == sdk_task and our_again == sdk_again


def _stable(task: dict[str, Any]) -> dict[str, Any]:
    """A task without what differs between two sends: ids and times."""
    text = json.dumps(task, sort_keys=True)
    for key in (task["id"], task["contextId"]):
        text = text.replace(key, "<id>")
    stable: dict[str, Any] = json.loads(text)
    stable["status"].pop("timestamp", None)
    for entry in [*stable.get("history", []), stable["status"].get("message", {})]:
        entry.pop("messageId", None)
    for artifact in stable.get("artifacts", []):
        artifact.pop("artifactId", None)
    stable.get("metadata", {}).pop("routing", None)
    return stable


def test_a_json_rpc_describe_imports_no_sdk_client(agent: RunningAgent, tmp_path: Path) -> None:
    """The point of our calls: ``netagent describe`` on JSON-RPC leaves the SDK's client
    package unimported, and verifies as ever."""
    token = agent.token("alice")
    args = ["describe", agent.base_url, "lookup_inventory", "--token", token, "--json"]
    ran = run_netagent(tmp_path, *args)
    assert ran.code in (0, None), ran.stdout
    assert json.loads(ran.stdout)["skill_id"] == "lookup_inventory"
    assert "a2a.client" not in ran.modules
    assert "agent.client.jsonrpc_calls" in ran.modules


def test_chain_on_a_current_home_writes_its_link(agent: RunningAgent, tmp_path: Path) -> None:
    """``chain`` on a home whose SQLite file is at its heads: no SQLAlchemy, no SDK client,
    and the link it wrote reads back through ``chain list`` as SQLAlchemy's rows do."""
    token = agent.token("paula")
    args = ["--from", "check_link_capacity", "--args", '{"link_id": "acme-lnk-00001"}']
    args += ["--to", "plan_link_upgrade", "--token", token, "--json"]
    first = run_netagent(tmp_path, "chain", agent.base_url, *args)  # makes and migrates the file
    assert first.code in (0, None), first.stdout
    ran = run_netagent(tmp_path, "chain", agent.base_url, *args)
    assert ran.code in (0, None), ran.stdout
    workflow = json.loads(ran.stdout)["workflow_id"]
    rows = run_netagent(tmp_path, "chain", "list", "--workflow", workflow, "--json").stdout
    (row,) = [json.loads(line) for line in rows.splitlines() if line.strip()]
    assert row["upstream_skill"] == "check_link_capacity"
    assert row["downstream_skill"] == "plan_link_upgrade"
    assert row["upstream_agent"] == row["downstream_agent"] == agent.base_url
    assert row["ts"].endswith("+00:00")


def test_a_client_validates_with_the_fast_check_and_details_with_jsonschema(
    agent: RunningAgent, tmp_path: Path
) -> None:
    """agent/interfaces/fast_check.py answers every valid instance of describing, invoking,
    chaining and checking; arguments it refuses get the draft's error details from jsonschema
    (agent/interfaces/draft2020.py)."""
    token = agent.token("paula")
    bearer = ["--token", token]
    sites = ["lookup_inventory", "--args", '{"kind": "sites"}', *bearer]
    link = ["--args", '{"link_id": "acme-lnk-00001"}', "--to", "plan_link_upgrade", *bearer]
    runs = {
        "describe": ["describe", agent.base_url, "lookup_inventory", *bearer],
        "invoke": ["invoke", agent.base_url, *sites],
        "chain": ["chain", agent.base_url, "--from", "check_link_capacity", *link],
        "check": ["check", agent.base_url, *bearer],
    }
    for name, args in runs.items():
        ran = run_netagent(tmp_path, *args)
        assert ran.code in (0, None), (name, ran.stdout)
        assert "agent.interfaces.fast_check" in ran.modules, name

    wrong = ["invoke", agent.base_url, "lookup_inventory", "--args", '{"kind": 7}', *bearer]
    ran = run_netagent(tmp_path, *wrong, "--json")
    assert ran.code == 3, ran.stdout  # refused before sending
    error = json.loads(ran.stdout)["error"]
    assert (error["where"], error["code"]) == ("local", "input_invalid")
    assert [d["instance_path"] for d in error["details"]] == ["/kind"]
    assert ran.imported(("jsonschema",)) == ["jsonschema"]
