"""Caller text that Python or a library would read another way than the protocol does.

1. **Scopes** (RFC 6749 §3.3): only U+0020 separates scope-tokens. A scope claim joined by any
   other Unicode whitespace is one unknown scope: the preview skill it spells out stays off
   the extended card, and the token endpoint grants no scope from it; a ``scope`` parameter
   so joined is ``invalid_scope``.
2. **Versions past Python's int limit.** An ``A2A-Version`` of more than 4,300 digits (header,
   query parameter, gRPC metadata; with a token or without) is the binding's
   VERSION_NOT_SUPPORTED with the fixed text, on JSON-RPC (its SendMessage fast path and the
   SDK's dispatcher), HTTP+JSON and gRPC alike; never a 500, -32603 or UNKNOWN.
3. **Timestamps no time is.** ListTasks' ``statusTimestampAfter`` (the one Timestamp or
   Duration a caller sends: ``test_the_only_caller_timestamp_is_list_tasks``) outside
   0001-01-01..9999-12-31 UTC, or with nanos outside 0..999,999,999, is INVALID_ARGUMENT on
   gRPC (where binary protobuf carries any int64/int32) and the binding's invalid-params error
   on JSON-RPC and HTTP+JSON; never an internal error, and nothing logged with a traceback. The
   first and last valid instants are served.
"""

from __future__ import annotations

import logging
import sys
import uuid
from typing import Any

import grpc
import httpx
import pytest
from a2a.types import a2a_pb2, a2a_pb2_grpc
from a2a.types.a2a_pb2 import GetTaskRequest, ListTasksRequest, SendMessageRequest
from google.protobuf.json_format import ParseDict
from google.protobuf.timestamp_pb2 import Timestamp

from agent.edge.error_scrub import VERSION_TEXT
from agent.security.auth import issue_token, load_or_create_signing_key
from agent.security.credentials import ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT
from agent.security.oauth import SCOPE_GRAMMAR
from tests.a2a_helpers import describe
from tests.conftest import RunningAgent
from tests.integration.test_enforcement import agent_credential

JSONRPC = "/a2a/jsonrpc"
REST = "/a2a/rest"
HEADERS = {"A2A-Version": "1.0"}
OTHER_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace() and c != 0x20]
PREVIEW_SKILL = "plan_link_upgrade"  # state preview, requires capacity.plan, tenant acme


# -- 1. scopes --------------------------------------------------------------------------------


def scoped_token(agent: RunningAgent, scope: str) -> str:
    """A token whose scope claim is ``scope`` exactly as written."""
    key = load_or_create_signing_key(agent.settings.home)
    return issue_token(
        key,
        agent.settings,
        subject="scoped",
        tenant="acme",
        scopes=[],
        extra_claims={"scope": scope},
    )


def extended_skills(http: httpx.Client, token: str) -> set[str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
    response = http.post(JSONRPC, json=body, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return {skill["id"] for skill in response.json()["result"]["skills"]}


def exchange_form(agent: RunningAgent, subject_token: str, scope: str) -> dict[str, str]:
    return {
        "grant_type": TOKEN_EXCHANGE_GRANT,
        "subject_token": subject_token,
        "subject_token_type": ACCESS_TOKEN_TYPE,
        "actor_token": agent_credential(agent),
        "actor_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "audience": "inventory",
        "scope": scope,
    }


@pytest.fixture(scope="module")
def http(agent: RunningAgent) -> Any:
    with httpx.Client(base_url=agent.base_url, headers=HEADERS, timeout=30) as client:
        yield client


def test_a_scope_claim_split_by_other_whitespace_lists_no_preview_skill(
    agent: RunningAgent, http: httpx.Client
) -> None:
    pieces = ("inventory.read", "capacity.plan", "preview")
    assert PREVIEW_SKILL in extended_skills(http, scoped_token(agent, " ".join(pieces)))
    listed = {
        repr(separator): PREVIEW_SKILL
        in extended_skills(http, scoped_token(agent, separator.join(pieces)))
        for separator in OTHER_WHITESPACE
    }
    assert not any(listed.values()), [name for name, shown in listed.items() if shown]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_a_scope_claim_split_by_other_whitespace_runs_no_preview_skill(
    agent: RunningAgent, binding: str
) -> None:
    pieces = ("inventory.read", "capacity.plan", "preview")
    entitled = await describe(
        agent.base_url, scoped_token(agent, " ".join(pieces)), PREVIEW_SKILL, binding=binding
    )
    assert entitled.state == "TASK_STATE_COMPLETED", entitled.task.status
    states = {}
    for separator in OTHER_WHITESPACE:
        token = scoped_token(agent, separator.join(pieces))
        outcome = await describe(agent.base_url, token, PREVIEW_SKILL, binding=binding)
        states[repr(separator)] = outcome.state
    assert set(states.values()) == {"TASK_STATE_REJECTED"}, states


def test_the_token_endpoint_grants_no_scope_out_of_a_joined_claim(
    agent: RunningAgent, http: httpx.Client
) -> None:
    held = scoped_token(agent, "inventory.read capacity.plan")
    granted = http.post("/oauth/token", data=exchange_form(agent, held, "capacity.plan"))
    assert granted.status_code == 200 and granted.json()["scope"] == "capacity.plan"
    answers = {}
    for separator in OTHER_WHITESPACE:
        joined = scoped_token(agent, f"inventory.read{separator}capacity.plan")
        response = http.post("/oauth/token", data=exchange_form(agent, joined, "capacity.plan"))
        answers[repr(separator)] = (response.status_code, response.json().get("error"))
    assert set(answers.values()) == {(400, "invalid_scope")}, answers


def test_a_scope_parameter_joined_by_other_whitespace_is_invalid_scope(
    agent: RunningAgent, http: httpx.Client
) -> None:
    held = scoped_token(agent, "inventory.read capacity.plan")
    answers = {}
    for separator in OTHER_WHITESPACE:
        form = exchange_form(agent, held, f"inventory.read{separator}capacity.plan")
        response = http.post("/oauth/token", data=form)
        answers[repr(separator)] = (response.status_code, response.json())
    expected = (400, {"error": "invalid_scope", "error_description": SCOPE_GRAMMAR})
    assert all(answer == expected for answer in answers.values()), answers


# -- 2. versions past Python's int limit ------------------------------------------------------

LONG_VERSIONS = {
    "4301-digits": "1" * 4301,
    "1.0.<5000 digits>": "1.0." + "9" * 5000,
    "<5000 zeros>1.0": "0" * 5000 + "1.0",
}
DESCRIBE = {
    "messageId": "m-version",
    "role": "ROLE_USER",
    "parts": [
        {
            "mediaType": "application/json",
            "data": {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}},
        }
    ],
}


def http_calls(task_id: str) -> dict[str, tuple[str, str, Any]]:
    """(method, path, JSON body) of a send and a task read on each HTTP binding."""
    rpc = {"jsonrpc": "2.0", "id": "req-9"}
    return {
        "jsonrpc-send": (
            "POST",
            JSONRPC,
            {**rpc, "method": "SendMessage", "params": {"message": DESCRIBE}},
        ),
        "jsonrpc-stream": (
            "POST",
            JSONRPC,
            {**rpc, "method": "SendStreamingMessage", "params": {"message": DESCRIBE}},
        ),
        "jsonrpc-get": ("POST", JSONRPC, {**rpc, "method": "GetTask", "params": {"id": task_id}}),
        "rest-send": ("POST", f"{REST}/message:send", {"message": DESCRIBE}),
        "rest-get": ("GET", f"{REST}/tasks/{task_id}", None),
    }


def version_refusal(response: httpx.Response) -> tuple[int, int, str]:
    """(HTTP status, the binding's error code, its text) of a refused call."""
    body = response.json()
    error = body["error"]
    data = error.get("data") or error.get("details") or [{}]
    assert data[0].get("reason") == "VERSION_NOT_SUPPORTED", body
    return response.status_code, error["code"], error["message"]


@pytest.mark.parametrize("spelling", ["header", "parameter"])
@pytest.mark.parametrize("caller", ["anonymous", "alice"])
def test_an_overlong_version_is_version_not_supported_over_http(
    agent: RunningAgent, spelling: str, caller: str
) -> None:
    token = {"Authorization": f"Bearer {agent.token('alice')}"} if caller == "alice" else {}
    answers = {}
    with httpx.Client(base_url=agent.base_url, timeout=30) as client:
        for name, version in LONG_VERSIONS.items():
            for call, (method, path, body) in http_calls(str(uuid.uuid4())).items():
                if caller == "anonymous" and "get" in call:
                    continue  # a task read needs a token: 401 before the version
                headers = {**token, **({"A2A-Version": version} if spelling == "header" else {})}
                params = {"A2A-Version": version} if spelling == "parameter" else None
                response = client.request(method, path, json=body, headers=headers, params=params)
                answers[name, call] = version_refusal(response)
    expected = {
        "jsonrpc": (200, -32009, VERSION_TEXT),
        "rest": (400, 400, VERSION_TEXT),
    }
    wrong = {key: got for key, got in answers.items() if got != expected[key[1].split("-")[0]]}
    assert not wrong and answers, wrong


async def test_an_overlong_version_is_version_not_supported_over_grpc(agent: RunningAgent) -> None:
    alice = ("authorization", f"Bearer {agent.token('alice')}")
    send = ParseDict({"message": DESCRIBE}, SendMessageRequest())
    calls = {
        "send-anonymous": ("SendMessage", send, []),
        "send-alice": ("SendMessage", send, [alice]),
        "get-alice": ("GetTask", GetTaskRequest(id=str(uuid.uuid4())), [alice]),
    }
    answers = {}
    async with grpc.aio.insecure_channel(agent.grpc_target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        for name, version in LONG_VERSIONS.items():
            for call, (method, request, metadata) in calls.items():
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await getattr(stub, method)(
                        request, metadata=[*metadata, ("a2a-version", version)], timeout=30
                    )
                answers[name, call] = (caught.value.code(), caught.value.details())
    wrong = {
        key: got
        for key, got in answers.items()
        if got != (grpc.StatusCode.UNIMPLEMENTED, VERSION_TEXT)
    }
    assert not wrong, wrong


# -- 3. timestamps no time is -----------------------------------------------------------------

FIRST, LAST = (-62_135_596_800, 0), (253_402_300_799, 999_999_999)  # 0001-01-01, 9999-12-31
NO_TIME = {
    "after-9999": (LAST[0] + 1, 0),
    "before-0001": (FIRST[0] - 1, 0),
    "int64-max": (2**63 - 1, 0),
    "int64-min": (-(2**63), 0),
    "nanos-negative": (0, -1),
    "nanos-a-second": (0, 10**9),
    "nanos-int32-max": (0, 2**31 - 1),
    "nanos-int32-min": (0, -(2**31)),
}
NO_TIME_JSON: dict[str, Any] = {
    "year-0": "0000-01-01T00:00:00Z",
    "year-10000": "10000-01-01T00:00:00Z",
    "offset-before-0001": "0001-01-01T00:00:00+01:00",
    "offset-after-9999": "9999-12-31T23:59:59-01:00",
    "5000-digit-fraction": "2020-01-01T00:00:00." + "1" * 5000 + "Z",
    "5000-digit-year": "1" * 5000 + "-01-01T00:00:00Z",
    "no-offset": "2020-01-01T00:00:00",
}
NO_TIME_TEXT = "status_timestamp_after is not a time from 0001-01-01 to 9999-12-31 UTC"


def test_the_only_caller_timestamp_is_list_tasks() -> None:
    """Every Timestamp and Duration field in any RPC's request, however deeply nested."""
    found = []
    for method in a2a_pb2.DESCRIPTOR.services_by_name["A2AService"].methods:
        stack, seen = [(method.input_type, method.input_type.name)], set()
        while stack:
            message, path = stack.pop()
            if message.full_name in seen:
                continue
            seen.add(message.full_name)
            for field in message.fields:
                kind = field.message_type
                if kind is None:
                    continue
                if kind.full_name in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
                    found.append(f"{path}.{field.name}")
                elif not kind.full_name.startswith("google.protobuf."):
                    stack.append((kind, f"{path}.{field.name}"))
    assert sorted(set(found)) == ["ListTasksRequest.status_timestamp_after"]


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.exc_info and r.name.startswith("agent")]


async def test_a_grpc_timestamp_no_time_is_is_invalid_argument(
    agent: RunningAgent, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    metadata = [("a2a-version", "1.0"), ("authorization", f"Bearer {agent.token('alice')}")]
    answers = {}
    async with grpc.aio.insecure_channel(agent.grpc_target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        for name, (seconds, nanos) in {**NO_TIME, "first": FIRST, "last": LAST}.items():
            request = ListTasksRequest(
                status_timestamp_after=Timestamp(seconds=seconds, nanos=nanos)
            )
            try:
                page = await stub.ListTasks(request, metadata=metadata, timeout=30)
            except grpc.aio.AioRpcError as error:
                answers[name] = (error.code(), error.details())
            else:
                answers[name] = (grpc.StatusCode.OK, str(len(page.tasks) >= 0))
    refused = (grpc.StatusCode.INVALID_ARGUMENT, NO_TIME_TEXT)
    wrong = {name: got for name, got in answers.items() if name in NO_TIME and got != refused}
    assert not wrong, wrong
    assert answers["first"][0] == answers["last"][0] == grpc.StatusCode.OK, answers
    assert not tracebacks(caplog)


def test_a_json_timestamp_no_time_is_is_invalid_params(
    agent: RunningAgent, http: httpx.Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    bearer = {"Authorization": f"Bearer {agent.token('alice')}"}
    forms = {**NO_TIME_JSON, "object": {"seconds": "1" * 5000}, "number": 1e20}
    answers = {}
    for name, value in forms.items():
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks"}
        params = {"statusTimestampAfter": value}
        response = http.post(JSONRPC, json={**rpc, "params": params}, headers=bearer)
        answers["jsonrpc", name] = (response.status_code, response.json()["error"]["code"])
        if isinstance(value, str):
            response = http.get(f"{REST}/tasks", params=params, headers=bearer)
            answers["rest", name] = (response.status_code, response.json()["error"]["code"])
    expected = {"jsonrpc": (200, -32602), "rest": (400, 400)}
    wrong = {key: got for key, got in answers.items() if got != expected[key[0]]}
    assert not wrong, wrong
    for first_or_last in ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z"):
        params = {"statusTimestampAfter": first_or_last}
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params}
        assert "result" in http.post(JSONRPC, json=rpc, headers=bearer).json(), first_or_last
        assert http.get(f"{REST}/tasks", params=params, headers=bearer).status_code == 200
    assert not tracebacks(caplog)
