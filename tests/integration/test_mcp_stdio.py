"""``netagent mcp``: the MCP projection over stdio, the MCP SDK's client driving the subprocess.

The database is a seeded agent's (started once to make it, then stopped: the subprocess is
the only process on it); the caller is whoever's token is in NETAGENT_TOKEN.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from agent.mcp.projection import ARTIFACT_ID, TASK_ID
from tests.conftest import RunningAgent, start_agent
from tests.integration.test_mcp_http import (
    INVALID,
    TOOLS,
    WORKED_ARGUMENTS,
    audit_rows,
    demo_token,
)

ROOT = Path(__file__).resolve().parents[2]
NETAGENT = ROOT / ".venv" / "bin" / "netagent"


@pytest.fixture(scope="module")
def stdio_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """A seeded home and database, with no agent left serving them."""
    agent = start_agent(tmp_path_factory.mktemp("mcp-stdio") / "home", backend=backend)
    agent.stop()
    yield agent


def environment(agent: RunningAgent, token: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env.update(
        {
            "NETAGENT_HOME": str(agent.settings.home),
            "NETAGENT_DATABASE_URL": agent.settings.resolved_database_url,
            "NETAGENT_LIVE_TELEMETRY": "off",
            "NETAGENT_LOG_LEVEL": "warning",
        }
    )
    if token is not None:
        env["NETAGENT_TOKEN"] = token
    return env


@asynccontextmanager
async def stdio_client(agent: RunningAgent, name: str) -> AsyncIterator[Client]:
    server = StdioServerParameters(
        command=str(NETAGENT), args=["mcp"], env=environment(agent, demo_token(agent, name))
    )
    async with Client(server, read_timeout_seconds=60) as client:
        yield client


@pytest.mark.parametrize("name", ["alice", "vic"])
async def test_the_tools_over_stdio_are_the_callers(stdio_agent: RunningAgent, name: str) -> None:
    async with stdio_client(stdio_agent, name) as client:
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == TOOLS[name]


async def test_the_worked_example_and_refusals_over_stdio(stdio_agent: RunningAgent) -> None:
    async with stdio_client(stdio_agent, "alice") as client:
        result = await client.call_tool("evaluate_resource_condition", WORKED_ARGUMENTS)
        invalid = await client.call_tool("evaluate_resource_condition", INVALID)
        hidden = await client.call_tool("plan_link_upgrade", {})
    assert not result.is_error, result
    output: Any = result.structured_content
    assert (output["result"], output["observed_value"], output["unit"]) == (
        "condition_not_met",
        42,
        "percent",
    )
    record = result.content[1]
    assert record.type == "resource" and record.meta is not None
    assert output["supporting_record_refs"] == [record.meta[ARTIFACT_ID]]
    assert json.loads(record.resource.text)["value"] == 42  # type: ignore[union-attr]
    assert invalid.is_error and invalid.structured_content["code"] == "input_invalid"  # type: ignore[index]
    assert hidden.is_error
    assert hidden.structured_content["code"] == "skill_not_advertised"  # type: ignore[index]

    assert result.meta is not None
    rows = await audit_rows(stdio_agent, result.meta[TASK_ID])
    assert rows[-1]["principal"] == "alice" and rows[-1]["reason"] == "completed"
    assert {r["projection"] for r in rows} == {"mcp"}


async def test_the_wrong_scope_and_another_tenant_over_stdio(stdio_agent: RunningAgent) -> None:
    async with stdio_client(stdio_agent, "alice:assurance.read") as client:
        scope = await client.call_tool("lookup_inventory", {"kind": "sites"})
    async with stdio_client(stdio_agent, "gary") as client:
        tenant = await client.call_tool("evaluate_resource_condition", WORKED_ARGUMENTS)
    for refused in (scope, tenant):
        assert refused.is_error
        assert refused.structured_content["code"] == "authorization_failed"  # type: ignore[index]


@pytest.mark.parametrize("token", [None, "not-a-token"])
async def test_no_valid_token_no_server(stdio_agent: RunningAgent, token: str | None) -> None:
    process = await asyncio.create_subprocess_exec(
        str(NETAGENT),
        "mcp",
        env=environment(stdio_agent, token),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == (2 if token is None else 5)  # unset: usage; refused: token
    assert stdout == b""
    assert b"NETAGENT_TOKEN" in stderr and b"Traceback" not in stderr


async def test_the_stdio_server_leaves_a_serving_agents_running_tasks_alone(
    stdio_agent: RunningAgent,
) -> None:
    """``netagent mcp`` may run beside ``serve`` on the same database: its start-up must not
    end the tasks it finds running (on a single-process database ``serve``'s start-up does)."""
    from a2a.server.context import ServerCallContext
    from a2a.types import Task, TaskState, TaskStatus

    from agent.security.principal import Principal, PrincipalUser
    from agent.storage.engine import make_engine
    from agent.storage.task_store import UpsertDatabaseTaskStore

    engine = make_engine(stdio_agent.settings.resolved_database_url)
    try:
        store = UpsertDatabaseTaskStore(engine, create_table=False)
        caller = ServerCallContext(user=PrincipalUser(Principal("alice", "acme", frozenset())))
        running = Task(
            id="running-elsewhere",
            context_id="c",
            status=TaskStatus(state=TaskState.TASK_STATE_WORKING),
        )
        await store.save(running, caller)
        async with stdio_client(stdio_agent, "alice") as client:
            await client.list_tools()
        found = await store.get("running-elsewhere", caller)
        assert found is not None and found.status.state == TaskState.TASK_STATE_WORKING
    finally:
        await engine.dispose()
