"""Issue 18's findings, each as the class of input that showed it, on both databases.

3. NUL (and unpaired surrogates) in any string that reaches a query: a client error, the same
   on SQLite and PostgreSQL, never a 5xx or -32603.
4. The console's inputs: far or out-of-range ``since`` values, arguments nested past the
   A2A endpoint's limits.
5. Errors with fixed text: page tokens, an over-long integer, a body that is not JSON, member
   names in pointers (bounded, escaped).
6. Follow-ups racing a cancel on one parked task.
7. A text part and a Data Part whose ``arguments`` is not an object.
8. A body that trickles in is cut off after ``body_timeout`` with 408.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import RunningAgent, start_agent

AUDITOR = ["inventory.read", "assurance.read", "capacity.read", "audit.read"]
MARKER = "Zq7secret"
# The documented texts and bounds (docs/security.md), written out: the contract, not the code.
PAGE_TOKEN_TEXT = "pageToken is not a page token this agent issued"
ELLIPSIS = "\u2026"
MAX_SEGMENT_CHARS = 64


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=30) as client:
        yield client


def _headers(agent: RunningAgent, **extra: str) -> dict[str, str]:
    return {
        "Authorization": f"Bearer {agent.token('alice')}",
        "A2A-Version": "1.0",
        "Content-Type": "application/json",
        **extra,
    }


def rpc(agent: RunningAgent, http: httpx.Client, method: str, params: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = http.post(f"{agent.base_url}/a2a/jsonrpc", json=body, headers=_headers(agent))
    assert response.status_code == 200, response.text
    payload: dict[str, Any] = response.json()
    return payload


def raw_rpc(agent: RunningAgent, http: httpx.Client, body: bytes) -> httpx.Response:
    return http.post(f"{agent.base_url}/a2a/jsonrpc", content=body, headers=_headers(agent))


def _token(document: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).decode().rstrip("=")


BAD_PAGE_TOKENS = {
    "nul bytes": "AAAA",  # decodes to three NULs: the SDK's older (task-id) token
    "legacy id with nul": base64.b64encode(b"a\x00b").decode(),
    "cursor id with nul": _token({"ts": 1, "id": "a\x00b"}),
    "cursor id with control": _token({"ts": None, "id": "a\x1bb"}),
    "cursor id too long": _token({"ts": 1, "id": "x" * 37}),
    "cursor ts overflow": _token({"ts": 10**30, "id": "x"}),
    "legacy missing task": base64.b64encode(MARKER.encode()).decode(),
    "not base64": MARKER + "!!",
    "huge": base64.b64encode(MARKER.encode() * 30_000).decode(),
}


@pytest.mark.parametrize("name", list(BAD_PAGE_TOKENS))
def test_a_page_token_that_is_not_ours_is_invalid_params_in_fixed_text(
    agent: RunningAgent, http: httpx.Client, name: str
) -> None:
    token = BAD_PAGE_TOKENS[name]
    error = rpc(agent, http, "ListTasks", {"pageToken": token})["error"]
    assert (error["code"], error["message"]) == (-32602, PAGE_TOKEN_TEXT), error
    if len(token) < 4000:  # a URL holds the smaller ones
        response = http.get(
            f"{agent.base_url}/a2a/rest/tasks",
            params={"pageToken": token},
            headers=_headers(agent),
        )
        assert response.status_code == 400, response.text
        assert response.json()["error"]["message"] == PAGE_TOKEN_TEXT
        assert MARKER not in response.text


def test_a_page_token_we_issued_still_pages(agent: RunningAgent, http: httpx.Client) -> None:
    for _ in range(2):
        message = {
            "messageId": "page",
            "role": "ROLE_USER",
            "parts": [{"data": {"skill": "describe_skill", "arguments": {"skill_id": "x"}}}],
        }
        rpc(agent, http, "SendMessage", {"message": message})
    first = rpc(agent, http, "ListTasks", {"pageSize": 1})["result"]
    assert first["nextPageToken"]
    second = rpc(agent, http, "ListTasks", {"pageSize": 1, "pageToken": first["nextPageToken"]})
    assert second["result"]["tasks"][0]["id"] != first["tasks"][0]["id"]


def _auditor(agent: RunningAgent) -> dict[str, str]:
    return {"Authorization": f"Bearer {agent.token('alice', scopes=AUDITOR)}"}


@pytest.mark.parametrize(
    ("page", "name"),
    [
        ("network", "link"),
        ("network", "site"),
        ("network", "q"),
        ("audit", "task"),
        ("audit", "principal"),
    ],
)
@pytest.mark.parametrize("value", ["a\x00b", "\x00", "a%00b"])
def test_a_console_filter_with_nul_is_a_client_error(
    agent: RunningAgent, http: httpx.Client, page: str, name: str, value: str
) -> None:
    response = http.get(
        f"{agent.base_url}/console/{page}", params={name: value}, headers=_auditor(agent)
    )
    if "\x00" in value:
        assert response.status_code == 400, response.text[:300]
        assert "U+0000" in response.text
    else:  # a literal percent sign is a filter like any other
        assert response.status_code in (200, 404), response.text[:300]


@pytest.mark.parametrize(
    "params",
    [
        {"page": "9" * 5000},  # past int()'s digit limit
        {"page": "\u0663"},
        {"page": "-1"},
        {"load": "nonsense"},
        {"site": "lon1", "peer": "a\x00b"},
        {"peer": "nyc1"},  # a peer without a site is ignored
    ],
)
def test_the_network_page_takes_any_table_filter(
    agent: RunningAgent, http: httpx.Client, params: dict[str, str]
) -> None:
    response = http.get(f"{agent.base_url}/console/network", params=params, headers=_auditor(agent))
    assert response.status_code in (200, 400, 404), response.text[:300]
    if "\x00" in "".join(params.values()):
        assert response.status_code == 400


@pytest.mark.parametrize(
    "since",
    [
        "9999999d",
        "999999999999d",
        "\u00b2d",
        "\u0663d",  # ARABIC-INDIC DIGIT THREE
        "99999999999999999999m",
        "0001-01-01T00:00:00+23:59",
        "9999-12-31T23:59:59-23:59",
        "0001-01-01T00:00:00",
        "9999-12-31T23:59:59",
        "garbage",
    ],
)
def test_the_audit_page_takes_any_since(
    agent: RunningAgent, http: httpx.Client, since: str
) -> None:
    response = http.get(
        f"{agent.base_url}/console/audit", params={"since": since}, headers=_auditor(agent)
    )
    assert response.status_code == 200, response.text[:300]


@pytest.mark.parametrize("api", ["validate", "invoke"])
@pytest.mark.parametrize("depth", [40, 2000])
def test_console_arguments_get_the_endpoints_limits(
    agent: RunningAgent, http: httpx.Client, api: str, depth: int
) -> None:
    nested = "[" * depth + "1" + "]" * depth
    body = '{"skill": "lookup_inventory", "arguments": ' + nested + "}"
    response = http.post(
        f"{agent.base_url}/console/api/{api}",
        content=body,
        headers={**_auditor(agent), "Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text[:300]
    assert "deep" in response.json()["error"]["message"]


@pytest.mark.parametrize("api", ["validate", "invoke"])
def test_console_arguments_with_nul_or_long_strings_are_refused(
    agent: RunningAgent, http: httpx.Client, api: str
) -> None:
    for arguments in ({"link_id": "a\x00b"}, {"link_id": MARKER * 10_000}):
        response = http.post(
            f"{agent.base_url}/console/api/{api}",
            json={"skill": "lookup_inventory", "arguments": arguments},
            headers=_auditor(agent),
        )
        assert response.status_code == 400, response.text[:300]
        assert MARKER not in response.text


def test_an_integer_past_pythons_digit_limit_is_a_clear_refusal(
    agent: RunningAgent, http: httpx.Client
) -> None:
    digits = b"1" * 4301
    body = b'{"jsonrpc":"2.0","id":' + digits + b',"method":"GetTask","params":{"id":"x"}}'
    error = raw_rpc(agent, http, body).json()["error"]
    assert error["code"] == -32600 and error["message"] == "numbers may have at most 4300 digits"
    rest = http.post(
        f"{agent.base_url}/a2a/rest/message:send",
        content=b'{"message": {"messageId": ' + digits + b"}}",
        headers=_headers(agent),
    )
    assert rest.status_code == 400 and "4300 digits" in rest.json()["error"]["message"]
    # inside a string the same digits are text, not a number
    quoted = b'{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"' + digits + b'"}}'
    assert raw_rpc(agent, http, quoted).json()["error"]["code"] == -32001


@pytest.mark.parametrize("body", [b'{"jsonrpc": nope', b"not json", b'{"a": 1', b"\xef\xbb\xbf{"])
def test_a_body_that_is_not_json_is_answered_in_fixed_text(
    agent: RunningAgent, http: httpx.Client, body: bytes
) -> None:
    error = raw_rpc(agent, http, body).json()["error"]
    assert error["code"] == -32700
    assert error["message"] in ("the request body is not valid JSON",), error


def test_member_names_come_back_bounded_and_escaped(
    agent: RunningAgent, http: httpx.Client
) -> None:
    name = "<b>/~" + MARKER * 6000
    deep: Any = "x"
    for _ in range(40):
        deep = {"k": deep}
    message = {
        "messageId": "names",
        "role": "ROLE_USER",
        "parts": [{"data": {"skill": "lookup_inventory", "arguments": {name: deep}}}],
    }
    error = rpc(agent, http, "SendMessage", {"message": message})["error"]
    pointer = error["data"][0]["metadata"]["pointer"]
    segment = pointer.split("/")[6]  # /message/parts/0/data/arguments/<name>/k/...
    assert segment.startswith("<b>~1~0") and segment.endswith(ELLIPSIS), segment[:80]
    assert len(segment) <= MAX_SEGMENT_CHARS + 2 + 1
    assert len(json.dumps(error)) < 4000
    # a skill's input_invalid details: a member the schema does not allow, named by the caller
    arguments = {"link_id": "acme-lnk-00001", name: 1}
    data = {"skill": "lookup_inventory", "arguments": arguments}
    message = {"messageId": "extra", "role": "ROLE_USER", "parts": [{"data": data}]}
    task = rpc(agent, http, "SendMessage", {"message": message})["result"]["task"]
    text = json.dumps(task["status"])
    assert len(text) < 8000, len(text)


# -- 7: non-object arguments beside a text part ------------------------------------------------

NON_OBJECTS: list[Any] = [5, 1.5, "x", [1, 2], None, True, []]


def test_a_data_part_with_non_object_arguments_beside_text_is_not_an_internal_error(
    agent: RunningAgent, http: httpx.Client
) -> None:
    failures = []
    for arguments in NON_OBJECTS:
        for with_skill in (True, False):
            data: dict[str, Any] = {"arguments": arguments}
            if with_skill:
                data["skill"] = "lookup_inventory"
            parts = [{"text": "check link acme-lnk-00002"}, {"data": data}]
            message = {"messageId": "mixed", "role": "ROLE_USER", "parts": parts}
            answer = rpc(agent, http, "SendMessage", {"message": message})
            if answer.get("error", {}).get("code") == -32603:
                failures.append((arguments, with_skill))
    assert not failures, failures


# -- 6: follow-ups racing a cancel ---------------------------------------------------------------

RACE_ROUNDS = 12
FOLLOW_UPS = 8


async def _race_round(client: httpx.AsyncClient, agent: RunningAgent) -> list[tuple[int, Any]]:
    headers = _headers(agent)

    async def call(method: str, params: Any) -> tuple[int, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = await client.post("/a2a/jsonrpc", json=body, headers=headers)
        return response.status_code, response.json()

    ask = {
        "messageId": "ask",
        "role": "ROLE_USER",
        "parts": [{"text": "is the cpu utilisation over 90 percent?"}],
    }
    _, first = await call("SendMessage", {"message": ask})
    task = first["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task["status"]
    follow = {
        "role": "ROLE_USER",
        "taskId": task["id"],
        "parts": [{"data": {"resource_id": "network-resource-123"}}],
    }
    calls = [
        call("SendMessage", {"message": {**follow, "messageId": f"f{i}"}})
        for i in range(FOLLOW_UPS)
    ]
    calls.insert(FOLLOW_UPS // 2, call("CancelTask", {"id": task["id"]}))
    answers = list(await asyncio.gather(*calls))
    _, stored = await call("GetTask", {"id": task["id"]})
    answers.append((200, stored))
    return answers


async def test_follow_ups_racing_a_cancel_on_a_parked_task(agent: RunningAgent) -> None:
    """Eight follow-ups and a CancelTask at once, many rounds: each is answered with a task or
    a protocol error (never a 5xx or -32603), and the task ends in one terminal state."""
    async with httpx.AsyncClient(base_url=agent.base_url, timeout=60) as client:
        for _ in range(RACE_ROUNDS):
            answers = await _race_round(client, agent)
            *calls, (_, stored) = answers
            for status, payload in calls:
                assert status == 200, payload
                error = payload.get("error")
                assert error is None or error["code"] in (-32001, -32002, -32004, -32602), error
            final = stored["result"]["status"]["state"]
            assert final in ("TASK_STATE_CANCELED", "TASK_STATE_COMPLETED"), final


# -- 8: a body that trickles in ----------------------------------------------------------------


@pytest.fixture(scope="module")
def impatient_agent(
    tmp_path_factory: pytest.TempPathFactory, backend: str
) -> Iterator[RunningAgent]:
    running = start_agent(
        tmp_path_factory.mktemp("impatient"),
        settings_overrides={"body_timeout": 1.0},
        backend=backend,
    )
    yield running
    running.stop()


def _trickle(agent: RunningAgent, path: str, seconds: float) -> tuple[bytes, float]:
    """Send headers and then a byte of the body every 0.2 s for ``seconds``; what came back."""
    port = int(agent.base_url.rsplit(":", 1)[1])
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {agent.token('alice')}\r\nA2A-Version: 1.0\r\n"
            "Content-Length: 1000\r\n\r\n"
        )
        sock.sendall(head.encode())
        sock.settimeout(0.2)
        received = b""
        while time.monotonic() - started < seconds:
            try:
                sock.sendall(b" ")
            except OSError:
                break
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            received += chunk
        return received, time.monotonic() - started


@pytest.mark.parametrize(
    "path", ["/a2a/jsonrpc", "/a2a/rest/message:send", "/console/api/validate"]
)
def test_a_body_that_trickles_in_is_cut_off(impatient_agent: RunningAgent, path: str) -> None:
    received, elapsed = _trickle(impatient_agent, path, seconds=6)
    assert received.startswith(b"HTTP/1.1 408 "), received[:200]
    assert elapsed < 4, elapsed
    assert b"the request body was not received in time" in received
    # and the agent serves on
    assert httpx.get(f"{impatient_agent.base_url}/healthz", timeout=5).status_code == 200


def test_the_body_timeout_is_a_setting(tmp_path: Path) -> None:
    from agent.base.settings import Settings

    assert Settings().body_timeout == 30.0
    assert Settings.from_env({"NETAGENT_BODY_TIMEOUT": "2.5"}).body_timeout == 2.5
    with pytest.raises(ValueError, match="NETAGENT_BODY_TIMEOUT"):
        Settings.from_env({"NETAGENT_BODY_TIMEOUT": "0"})
