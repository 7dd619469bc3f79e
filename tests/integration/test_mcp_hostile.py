"""Hostile input to the MCP endpoint, over HTTP and stdio: fixed texts, no echo, no stream.

Every JSON-RPC error MCP answers carries one of the agent's fixed texts (agent/mcp/
wire_errors.py) and no ``data``: no caller input (a 60 KB method name, HTML), no pydantic dump
or documentation URL, no parser position, no Python exception text. A tool call whose
arguments no A2A Data Part can hold is a tool error with a fixed text. The HTTP endpoint is
stateless: POST only, every other method 405 with ``Allow: POST``, at once.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from agent.mcp import wire_errors
from agent.mcp.projection import UNPARSED
from agent.mcp.server import MCP_PATH
from tests.conftest import RunningAgent
from tests.integration.test_mcp_http import demo_token
from tests.integration.test_mcp_stdio import NETAGENT, environment, stdio_agent

__all__ = ["stdio_agent"]  # the module fixture, shared with test_mcp_stdio

MARK = "<html><script>probe</script></html>"
HUGE = "9" * 400
FIXED = {*wire_errors.TEXTS.values(), *(text for _, text in wire_errors.STATUS_TEXTS.values())}
LEAKS = (
    MARK,
    "probe",
    "pydantic",
    "http://",
    "https://",
    "input_value",
    "line 1",
    "column",
    "Traceback",
    "too large to convert",
    "validation error",
    "\\u0000",
)
"""What no answer may hold: the caller's marker, library words, positions, exception text."""


def call(name: Any, arguments: Any, **extra: Any) -> str:
    params = {"name": name, "arguments": arguments, **extra}
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})


BODIES = [
    pytest.param(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": MARK + "m" * 60_000}), id="method-60kb"
    ),
    pytest.param(json.dumps({"jsonrpc": "2.0", "id": 1, "method": 5}), id="method-number"),
    pytest.param(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list\x00"}), id="nul"),
    pytest.param(json.dumps({"jsonrpc": "1.0", "id": 1, "method": MARK}), id="jsonrpc-1.0"),
    pytest.param(json.dumps({"jsonrpc": "2.0", "id": 1}), id="no-method"),
    pytest.param(call(5, {}), id="name-number"),
    pytest.param(call("lookup_inventory", [MARK]), id="arguments-array"),
    pytest.param(call("lookup_inventory", MARK), id="arguments-string"),
    pytest.param(call("lookup_inventory", {}, _meta=MARK), id="meta-string"),
    pytest.param(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": MARK}),
        id="params-string",
    ),
    pytest.param('{"jsonrpc": "2.0", "id": 1, "method": "' + MARK, id="truncated"),
    pytest.param('{"jsonrpc": "2.0", "id": 1, "method": "a\x00b"}', id="raw-nul"),
    pytest.param("[" * 3000 + "]" * 3000, id="deep"),
    pytest.param(MARK, id="html"),
    pytest.param("", id="empty"),
    pytest.param(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": MARK}),
        id="discover-string",
    ),
    pytest.param(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": MARK, "capabilities": MARK, "clientInfo": {}},
            }
        ),
        id="initialize-hostile",
    ),
    pytest.param(json.dumps([{"jsonrpc": "2.0", "id": 1, "method": MARK}]), id="batch"),
]
"""Bodies the protocol refuses (a JSON-RPC error): each must be answered with a fixed text."""
UNADVERTISED = {"code": "skill_not_advertised", "message": "no such skill is advertised to you"}
NOT_HELD = {"code": "input_invalid", "message": UNPARSED}
TOOL_BODIES = [
    pytest.param(call("lookup_inventory", {"kind": int(HUGE)}), NOT_HELD, id="huge-integer"),
    pytest.param(
        call("lookup_inventory", {"kind": [{"a": [int(HUGE)]}]}), NOT_HELD, id="huge-nested"
    ),
    pytest.param(call("lookup_inventory", {"kind": -(10**400)}), NOT_HELD, id="huge-negative"),
    pytest.param(call(MARK * 100, {}), UNADVERTISED, id="name-html"),
]
"""Tool calls refused as tool errors (arguments no A2A Data Part holds, a name no skill has):
each with the agent's fixed text."""


def assert_fixed(answer: Any, text: str) -> None:
    """A JSON-RPC error object with a fixed text and no data; nothing of the input anywhere."""
    for leak in LEAKS:
        assert leak not in text, (leak, text[:300])
    assert len(text) < 1000, text[:300]
    items = answer if isinstance(answer, list) else [answer]
    for item in items:
        error = item["error"]
        if error["code"] == wire_errors.UNSUPPORTED_VERSION:  # the server's versions, to pick
            assert set(error.pop("data")) == {"supported", "requested"}, error
        assert set(error) == {"code", "message"}, error
        assert error["message"] in FIXED, error
        assert error["code"] in wire_errors.TEXTS, error


def post(agent: RunningAgent, body: bytes | str, **headers: str) -> httpx.Response:
    base = {
        "Authorization": f"Bearer {demo_token(agent, 'alice')}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-11-25",
    }
    return httpx.post(agent.base_url + MCP_PATH, content=body, headers=base | headers, timeout=30)


@pytest.mark.parametrize("body", BODIES)
def test_a_refused_request_is_answered_with_a_fixed_text_over_http(
    agent: RunningAgent, body: str
) -> None:
    answer = post(agent, body)
    assert answer.status_code < 500 and answer.headers["content-type"] == "application/json"
    assert_fixed(answer.json(), answer.text)


def assert_tool_error(answer: Any, text: str, expected: object) -> None:
    """A tool error carrying ``expected``; nothing of the input anywhere."""
    for leak in (*LEAKS, HUGE, "float"):
        assert leak not in text, (leak, text[:300])
    assert answer["result"]["isError"] is True
    assert answer["result"]["structuredContent"] == expected


@pytest.mark.parametrize(("body", "expected"), TOOL_BODIES)
def test_tool_calls_refused_are_tool_errors_with_fixed_texts_over_http(
    agent: RunningAgent, body: str, expected: object
) -> None:
    answer = post(agent, body)
    assert answer.status_code == 200
    assert_tool_error(answer.json(), answer.text, expected)


@pytest.mark.parametrize(
    ("content_type", "accept", "status"),
    [
        ("text/html", "application/json, text/event-stream", 415),
        ("", "application/json, text/event-stream", 415),
        ("multipart/form-data; boundary=x", "application/json, text/event-stream", 415),
        ("application/json", "text/html", 406),
    ],
)
def test_wrong_content_types_are_refused_with_a_fixed_text(
    agent: RunningAgent, content_type: str, accept: str, status: int
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    answer = post(agent, body, **{"Content-Type": content_type, "Accept": accept})
    assert answer.status_code == status
    assert answer.headers["content-type"] == "application/json"
    assert_fixed(answer.json(), answer.text)


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD"])
@pytest.mark.parametrize("accept", ["text/event-stream", "application/json, text/event-stream"])
def test_the_stateless_endpoint_takes_post_only(
    agent: RunningAgent, method: str, accept: str
) -> None:
    """No server stream (GET used to open one that never ended), no session to delete: 405
    with ``Allow: POST``, answered at once (the client gives up after 5 s)."""
    headers = {"Authorization": f"Bearer {demo_token(agent, 'alice')}", "Accept": accept}
    answer = httpx.request(method, agent.base_url + MCP_PATH, headers=headers, timeout=5)
    assert answer.status_code == 405
    assert answer.headers["allow"] == "POST"
    if method != "HEAD":
        assert_fixed(answer.json(), answer.text)
        assert answer.json()["error"]["message"] == wire_errors.NOT_ALLOWED


# -- stdio ----------------------------------------------------------------------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "1"},
    },
}


async def stdio_answers(agent: RunningAgent, lines: list[str], expected: int) -> list[Any]:
    """Run ``netagent mcp``, write the handshake and ``lines``, read ``expected`` answers."""
    process = await asyncio.create_subprocess_exec(
        str(NETAGENT),
        "mcp",
        env=environment(agent, demo_token(agent, "alice")),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=1 << 22,
    )
    assert process.stdin is not None and process.stdout is not None
    handshake = [json.dumps(INITIALIZE), '{"jsonrpc":"2.0","method":"notifications/initialized"}']
    process.stdin.write("".join(f"{line}\n" for line in [*handshake, *lines]).encode())
    await process.stdin.drain()
    answers: list[Any] = []
    try:
        async with asyncio.timeout(60):
            while len(answers) < expected + 1:  # and the handshake's
                line = await process.stdout.readline()
                assert line, f"stdout ended after {answers}"
                answers.append((json.loads(line), line.decode()))
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), timeout=30)
    return [a for a in answers if a[0].get("id") != "init"]


async def test_refused_requests_are_answered_with_fixed_texts_over_stdio(
    stdio_agent: RunningAgent,
) -> None:
    """Each line the protocol refuses gets an answer (a line that is not JSON-RPC too: the
    host would otherwise wait for ever), with a fixed text; the arguments no Data Part holds
    are a tool error with a fixed text."""
    lines = [str(p.values[0]).replace("\n", " ") for p in BODIES if p.id not in ("empty",)]
    tools = [
        (str(p.values[0]).replace('"id": 7', f'"id": "tool-{i}"'), p.values[1])
        for i, p in enumerate(TOOL_BODIES)
    ]
    answers = await stdio_answers(
        stdio_agent, [*lines, *(line for line, _ in tools)], len(lines) + len(tools)
    )
    errors = [(a, text) for a, text in answers if "error" in a or isinstance(a, list)]
    results = {a["id"]: (a, text) for a, text in answers if "result" in a}
    assert len(errors) == len(lines) and len(results) == len(tools), answers
    for answer, text in errors:
        assert_fixed(answer, text)
    for i, (_, expected) in enumerate(tools):
        assert_tool_error(*results[f"tool-{i}"], expected)
