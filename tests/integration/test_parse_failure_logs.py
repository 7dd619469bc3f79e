"""A request whose params do not parse, or whose A2A-Version is not supported, leaves no trace
of the caller's input in the logs.

a2a-sdk logs such a request with a traceback ending in protobuf's text, which quotes the value,
and quotes a version it refuses (agent/edge/log_scrub.py). Over JSON-RPC (the SDK's dispatcher)
and HTTP+JSON, with hostile values (NUL, Unicode spaces, huge, deeply nested), the caller is
answered the binding's error, and every log line names the field, never the value, with no
traceback.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agent.edge.log_scrub import WITHHELD
from tests.conftest import RunningAgent

JSONRPC = "/a2a/jsonrpc"
REST = "/a2a/rest"
CANARY = "c4nary-0f-the-caller"
SPACES = "\u0000\u00a0\u2003\u3000\u202f\u2028\t"


def _deep(levels: int) -> Any:
    value: Any = CANARY
    for _ in range(levels):
        value = [value]
    return value


def _message(**fields: Any) -> dict[str, Any]:
    base = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "list the sites"}]}
    return {**base, **fields}


HOSTILE = {
    "extensions-not-a-list": _message(extensions=CANARY + SPACES),
    "metadata-not-an-object": _message(metadata=SPACES + CANARY),
    "text-an-object": _message(parts=[{"text": {CANARY: CANARY + "\u0000"}}]),
    "raw-an-object": _message(parts=[{"raw": {"x": CANARY}}]),
    "huge": _message(extensions=CANARY + "x" * 200_000),
    "deep": _message(metadata=_deep(40)),
}


@pytest.fixture(scope="module")
def http(agent: RunningAgent) -> Iterator[httpx.Client]:
    headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {agent.token('alice')}"}
    with httpx.Client(base_url=agent.base_url, headers=headers, timeout=30) as client:
        yield client


def _logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Every line the SDK wrote, with its traceback when it has one."""
    lines = []
    for record in caplog.records:
        if record.name.startswith("a2a"):
            trace = traceback.format_exception(*record.exc_info) if record.exc_info else []
            lines.append(record.getMessage() + "".join(trace))
    return lines


@pytest.mark.parametrize("params", HOSTILE.values(), ids=HOSTILE.keys())
def test_unparsable_jsonrpc_params_are_logged_without_the_input(
    http: httpx.Client, caplog: pytest.LogCaptureFixture, params: dict[str, Any]
) -> None:
    caplog.set_level(logging.WARNING)
    rpc = {"jsonrpc": "2.0", "id": "r-1", "method": "SendMessage", "params": {"message": params}}
    response = http.post(JSONRPC, json=rpc)
    assert response.status_code == 200 and response.json()["error"]["code"] == -32602
    logged = _logged(caplog)
    assert any("Failed to parse request params: invalid value at /" in x for x in logged), logged
    assert not [line for line in logged if CANARY in line]
    assert not [r for r in caplog.records if r.name.startswith("a2a") and r.exc_info]


@pytest.mark.parametrize("params", HOSTILE.values(), ids=HOSTILE.keys())
def test_unparsable_rest_bodies_are_logged_without_the_input(
    http: httpx.Client, caplog: pytest.LogCaptureFixture, params: dict[str, Any]
) -> None:
    caplog.set_level(logging.WARNING)
    response = http.post(f"{REST}/message:send", json={"message": params})
    assert response.status_code == 400, response.text
    assert CANARY not in response.text
    logged = _logged(caplog)
    assert not [line for line in logged if CANARY in line]


VERSIONS = {
    "marked": "9.9-" + CANARY,
    "unicode-space": ("1.0\u3000" + CANARY).encode(),
    "huge": "1" * 5000 + CANARY,
}


@pytest.mark.parametrize("version", VERSIONS.values(), ids=VERSIONS.keys())
def test_an_unsupported_version_is_logged_without_it(
    http: httpx.Client, caplog: pytest.LogCaptureFixture, version: str | bytes
) -> None:
    caplog.set_level(logging.WARNING)
    header = {"A2A-Version": version}
    rpc = {"jsonrpc": "2.0", "id": "r-2", "method": "GetTask", "params": {"id": "t-1"}}
    assert http.post(JSONRPC, json=rpc, headers=header).json()["error"]["code"] == -32009
    assert http.get(f"{REST}/tasks/t-1", headers=header).status_code == 400
    logged = _logged(caplog)
    assert any(f"actual='{WITHHELD}'" in line for line in logged), logged
    assert not [line for line in logged if CANARY in line]
