"""What bench.perf sends: the reference's requests and the governed agent's, as raw JSON-RPC."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx

from bench.perf.client import MID, Target

CARD_PATH = "/.well-known/agent-card.json"
JSONRPC_PATH = "/a2a/jsonrpc"
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
COMPLETED = b'"TASK_STATE_COMPLETED"'


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
    same request bytes.
    """
    parts = data_part({"skill": "echo", "arguments": WORKED})
    targets = {
        "card": Target("card GET", port, "GET", CARD_PATH, {}, expect=(b'"skills"',)),
        "send": Target(
            "SendMessage",
            port,
            "POST",
            JSONRPC_PATH,
            headers(),
            _body("SendMessage", parts),
            (COMPLETED,),
        ),
        "stream": Target(
            "SendStreamingMessage",
            port,
            "POST",
            JSONRPC_PATH,
            headers(stream=True),
            _body("SendStreamingMessage", parts),
            (COMPLETED,),
        ),
    }
    return {k: t if k == "card" else replace(t, bearers=bearers) for k, t in targets.items()}


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
    port: int, base_url: str, bearers: tuple[str, ...]
) -> dict[str, tuple[Target, str]]:
    """Ours, each with the reference it is divided by ('card' or 'send').

    The card GET is anonymous, as a card fetch is; every invocation carries a caller's token.
    """
    evaluate = interface_of(base_url, bearers[0], "evaluate_resource_condition")
    capacity = interface_of(base_url, bearers[0], "check_link_capacity")
    worked = data_part({"skill": "evaluate_resource_condition", "arguments": WORKED, **evaluate})
    rpc = headers()
    targets = {
        "card": (
            Target("public card GET", port, "GET", CARD_PATH, {}, expect=(b'"skills"',)),
            "card",
        ),
        "describe": (
            Target(
                "describe_skill",
                port,
                "POST",
                JSONRPC_PATH,
                rpc,
                _body(
                    "SendMessage",
                    data_part(
                        {
                            "skill": "describe_skill",
                            "arguments": {"skill_id": "evaluate_resource_condition"},
                        }
                    ),
                ),
                (COMPLETED,),
            ),
            "send",
        ),
        "evaluate": (
            Target(
                "evaluate (Data Part)",
                port,
                "POST",
                JSONRPC_PATH,
                rpc,
                _body("SendMessage", worked),
                (COMPLETED, b"condition_"),
            ),
            "send",
        ),
        "text": (
            Target(
                "evaluate (text routing)",
                port,
                "POST",
                JSONRPC_PATH,
                rpc,
                _body("SendMessage", [{"text": WORKED_TEXT}]),
                (COMPLETED, b"condition_"),
            ),
            "send",
        ),
        "capacity": (
            Target(
                "check_link_capacity",
                port,
                "POST",
                JSONRPC_PATH,
                rpc,
                _body(
                    "SendMessage",
                    data_part({"skill": "check_link_capacity", "arguments": CAPACITY, **capacity}),
                ),
                (COMPLETED, b'"fits"'),
            ),
            "send",
        ),
        "stream": (
            Target(
                "evaluate (streaming)",
                port,
                "POST",
                JSONRPC_PATH,
                headers(stream=True),
                _body("SendStreamingMessage", worked),
                (COMPLETED, b"condition_"),
            ),
            "send",
        ),
    }
    return {
        k: (t if k == "card" else replace(t, bearers=bearers), against)
        for k, (t, against) in targets.items()
    }
