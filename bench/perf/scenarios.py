"""What bench.perf sends: the reference's requests and the governed agent's, as raw JSON-RPC."""

from __future__ import annotations

import json
from typing import Any

import httpx

from bench.perf import answers
from bench.perf.client import MID, Target

CARD_PATH = "/.well-known/agent-card.json"
JSONRPC_PATH = "/a2a/jsonrpc"
MCP_PATH = "/mcp"
MCP_PROTOCOL = "2025-11-25"
"""A handshake-era version: a stateless tools/call needs no initialize before it."""
WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
WORKED_TEXT = "is the utilization of network-resource-123 at least 80 percent?"
CAPACITY = {
    "link_id": "acme-lnk-00002",
    "requested_bps": 5_000_000_000,
    # The large seed has hourly samples: allow an hour, on both scales, so the two compare.
    "max_sample_age_seconds": 3600,
}
NAMES = {  # each governed cell's name in the printed figures, by key
    "card": "public card GET",
    "describe": "describe_skill",
    "evaluate": "evaluate (Data Part)",
    "text": "evaluate (text routing)",
    "capacity": "check_link_capacity",
    "stream": "evaluate (streaming)",
    "mcp": "evaluate (MCP tools/call)",
}
CAPACITY_RECORDS = 24
"""Samples of acme-lnk-00002 in the default 1-hour window of the demo data: 12 per direction,
as long as the series covers the whole window up to now (servers.seed_ahead sees to it)."""


def _body(method: str, parts: list[dict[str, Any]]) -> bytes:
    message = {"messageId": MID.decode(), "role": "ROLE_USER", "parts": parts}
    payload = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}
    return json.dumps(payload, separators=(",", ":")).encode()


def data_part(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"mediaType": "application/json", "data": data}]


def headers(stream: bool = False) -> dict[str, str]:
    found = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    if stream:
        found["Accept"] = "text/event-stream"
    return found


def reference_targets(port: int, bearers: tuple[str, ...]) -> dict[str, Target]:
    """The echo agent: its card route, SendMessage and SendStreamingMessage (same Data Part).

    The same Authorization headers as ours (the echo agent ignores them), so both parse the
    same request bytes. An answer counts when its task completed with the echoed Data Part.
    """
    data = {"skill": "echo", "arguments": WORKED}
    echoed = answers.completed_with(answers.echoed(data))
    send = _body("SendMessage", data_part(data))
    stream = _body("SendStreamingMessage", data_part(data))
    return {
        "card": Target("card GET", port, "GET", CARD_PATH, {}, b"", answers.card),
        "send": Target("SendMessage", port, "POST", JSONRPC_PATH, headers(), send, echoed, bearers),
        "stream": Target(
            "SendStreamingMessage",
            port,
            "POST",
            JSONRPC_PATH,
            headers(stream=True),
            stream,
            echoed,
            bearers,
        ),
    }


def interface_of(base_url: str, bearer: str, skill: str) -> dict[str, str]:
    """describe_skill once: the skill_version and interface_digest a governed call carries."""
    body = json.loads(_body("SendMessage", data_part({"skill": "describe_skill"})))
    body["params"]["message"]["messageId"] = f"perf-describe-{skill}"
    body["params"]["message"]["parts"][0]["data"]["arguments"] = {"skill_id": skill}
    auth = {"Authorization": f"Bearer {bearer}"}
    answer = httpx.post(base_url + JSONRPC_PATH, json=body, headers=headers() | auth, timeout=30)
    task = answer.json()["result"]["task"]
    described = task["artifacts"][0]["parts"][0]["data"]
    return {
        "skill_version": described["skill_version"],
        "interface_digest": described["interface_digest"],
    }


def governed_targets(
    port: int,
    base_url: str,
    bearers: tuple[str, ...],
    capacity_records: int | None = CAPACITY_RECORDS,
) -> dict[str, Target]:
    """Ours, by key (card describe evaluate text capacity stream).

    The card GET is anonymous, as a card fetch is; every invocation carries a caller's token.
    Each counts an answer only when its task completed with the skill's result artifact;
    ``capacity_records=None`` accepts any number of records (the large seed samples hourly).
    """
    evaluate = interface_of(base_url, bearers[0], "evaluate_resource_condition")
    capacity = interface_of(base_url, bearers[0], "check_link_capacity")
    worked = data_part({"skill": "evaluate_resource_condition", "arguments": WORKED, **evaluate})
    describe = data_part(
        {"skill": "describe_skill", "arguments": {"skill_id": "evaluate_resource_condition"}}
    )
    capacity_part = data_part({"skill": "check_link_capacity", "arguments": CAPACITY, **capacity})
    evaluated = answers.completed_with(answers.evaluated)
    rpc, sse = headers(), headers(stream=True)

    def send(name: str, body: bytes, check: answers.Check, head: dict[str, str] = rpc) -> Target:
        return Target(name, port, "POST", JSONRPC_PATH, head, body, check, bearers)

    return {
        "card": Target(NAMES["card"], port, "GET", CARD_PATH, {}, b"", answers.card),
        "describe": send(
            NAMES["describe"],
            _body("SendMessage", describe),
            answers.completed_with(answers.described("evaluate_resource_condition")),
        ),
        "evaluate": send(NAMES["evaluate"], _body("SendMessage", worked), evaluated),
        "text": send(
            NAMES["text"],
            _body("SendMessage", [{"text": WORKED_TEXT}]),
            evaluated,
        ),
        "capacity": send(
            NAMES["capacity"],
            _body("SendMessage", capacity_part),
            answers.completed_with(answers.capacity_checked(capacity_records)),
        ),
        "stream": send(NAMES["stream"], _body("SendStreamingMessage", worked), evaluated, sse),
        "mcp": Target(
            NAMES["mcp"],
            port,
            "POST",
            MCP_PATH,
            mcp_headers(),
            mcp_call(),
            answers.mcp_evaluated,
            bearers,
        ),
    }


def mcp_headers() -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MCP_PROTOCOL,
    }


def mcp_call() -> bytes:
    """The worked example as an MCP tools/call (the agent binds the listed interface)."""
    params = {"name": "evaluate_resource_condition", "arguments": WORKED}
    payload = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    return json.dumps(payload, separators=(",", ":")).encode()
