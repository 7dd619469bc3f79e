"""Our JSON-RPC calls (agent/client/jsonrpc_calls.py) against the SDK's client they stand in for.

The client commands make a unary JSON-RPC call without the SDK's client package; whatever an
agent answers, they must come out as the SDK's client comes out. A scripted server on
loopback (uvicorn, Starlette) answers both with the same bytes, one answer at a time: what
each sent is compared (headers and JSON-RPC envelope, the request id aside), and what each
returned or raised. Where the SDK's client raises its own ``A2AClientError`` ours raises the
base class it derives from, ``A2AError``, with the same words and cause; a code the SDK maps
to an error class is that very class, with the same data. The same calls against our agent,
on both backends, are in tests/integration/test_jsonrpc_calls.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
)
from a2a.utils.errors import JSON_RPC_ERROR_CODE_MAP, A2AError
from google.protobuf.message import Message as ProtoMessage

from agent.client.calls import (
    JSONRPC,
    SdkCalls,
    open_calls,
    service_parameters,
    v1_jsonrpc_interface,
)
from agent.client.jsonrpc_calls import JsonRpcCalls
from tests.conftest import free_port
from tests.core.client.scripted import Scripted, governed_card, scripted_agent

EXTENSIONS = ["https://example.org/ext/b", "https://example.org/ext/a, https://example.org/ext/b"]


@pytest.fixture(scope="module")
def scripted() -> Iterator[tuple[Scripted, str]]:
    with scripted_agent() as served:
        yield served


TASK = {
    "id": "task-1",
    "contextId": "ctx-1",
    "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-12-03T06:00:00Z"},
    "artifacts": [
        {
            "artifactId": "a-1",
            "name": "result",
            "parts": [{"data": {"n": 1, "big": 9007199254740993, "x": [1.5, None, "s"]}}],
        }
    ],
    "unknownMember": {"ignored": True},
}
MESSAGE = {"messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": "hello"}]}
ERROR_INFO = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    "reason": "TASK_NOT_FOUND",
    "domain": "a2a-protocol.org",
    "metadata": {"taskId": "t-9"},
}


def card(url: str, *, extended: bool = True, version: str = "1.0") -> AgentCard:
    return AgentCard(
        name="scripted",
        capabilities=AgentCapabilities(extended_agent_card=extended),
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version=version)
        ],
    )


def send_request() -> SendMessageRequest:
    message = Message(message_id="fixed", role=Role.ROLE_USER, parts=[Part(text="hi")])
    message.extensions.append("https://example.org/ext/a")
    return SendMessageRequest(message=message)


async def outcome(calls: Any, method: str) -> tuple[str, Any]:
    """What one call returned (the protobuf) or raised (the exception)."""
    async with calls:
        try:
            if method == "send":
                return "ok", [event async for event in calls.send_message(send_request())]
            if method == "get_task":
                return "ok", await calls.get_task(GetTaskRequest(id="task-1", history_length=2))
            return "ok", await calls.get_extended_agent_card(GetExtendedAgentCardRequest())
        except Exception as exc:  # compared below, type and words
            return "raised", exc


def both(url: str, method: str, *, timeout: float = 5.0, **card_args: Any) -> list[Any]:
    """The SDK's client, then ours, on the same answer: their outcomes."""
    parameters = service_parameters("Bearer abc.def", EXTENSIONS)

    async def run() -> list[Any]:
        found = []
        for make in (SdkCalls, JsonRpcCalls):
            async with httpx.AsyncClient(timeout=timeout) as http:
                the_card = card(url, **card_args)
                if make is SdkCalls:
                    calls: Any = SdkCalls(the_card, JSONRPC, http, parameters, streaming=False)
                else:
                    calls = JsonRpcCalls(http, the_card, url, parameters)
                found.append(await outcome(calls, method))
        return found

    return asyncio.run(run())


def assert_same(script: Scripted, url: str, method: str, **options: Any) -> tuple[str, Any]:
    script.requests.clear()
    (sdk_kind, sdk), (our_kind, ours) = both(url, method, **options)
    assert our_kind == sdk_kind, (sdk, ours)
    if sdk_kind == "ok":
        if isinstance(sdk, list):
            assert [e.SerializeToString(deterministic=True) for e in ours] == [
                e.SerializeToString(deterministic=True) for e in sdk
            ]
        else:
            assert isinstance(sdk, ProtoMessage)
            assert ours == sdk
    else:
        if isinstance(sdk, A2AError):
            assert isinstance(ours, A2AError) and isinstance(sdk, type(ours)), (sdk, ours)
        if type(sdk) in JSON_RPC_ERROR_CODE_MAP or not isinstance(sdk, A2AError):
            assert type(ours) is type(sdk), (sdk, ours)
        assert str(ours) == str(sdk)
        assert getattr(ours, "data", None) == getattr(sdk, "data", None)
        assert type(ours.__cause__) is type(sdk.__cause__)
    sent = [
        (headers, {k: v for k, v in body.items() if k != "id"}) for headers, body in script.requests
    ]
    if len(sent) == 2:
        (sdk_headers, sdk_body), (our_headers, our_body) = sent
        assert our_body == sdk_body
        for name in ("a2a-version", "authorization", "a2a-extensions", "content-type"):
            assert our_headers.get(name) == sdk_headers.get(name), name
    else:
        assert sent == [], "one client sent, the other did not"
    return sdk_kind, sdk


ANSWERS = {
    "task": {"jsonrpc": "2.0", "id": "x", "result": {"task": TASK}},
    "message": {"jsonrpc": "2.0", "id": "x", "result": {"message": MESSAGE}},
    "neither": {"jsonrpc": "2.0", "id": "x", "result": {}},
    "bare task": {"jsonrpc": "2.0", "id": "x", "result": TASK},
    "result is a list": {"jsonrpc": "2.0", "id": "x", "result": [1, 2]},
    "result is null": {"jsonrpc": "2.0", "id": "x", "result": None},
    "no result nor error": {"jsonrpc": "2.0", "id": "x"},
    "error not an object": {"jsonrpc": "2.0", "id": "x", "error": "broken"},
    "error without message": {"jsonrpc": "2.0", "id": "x", "error": {"code": -32001}},
    "unknown code": {"jsonrpc": "2.0", "id": "x", "error": {"code": 7, "message": "odd"}},
    "code as text": {"jsonrpc": "2.0", "id": "x", "error": {"code": "-32001", "message": "m"}},
    "error info": {
        "jsonrpc": "2.0",
        "id": "x",
        "error": {"code": -32001, "message": "no such task", "data": [{"x": 1}, ERROR_INFO]},
    },
    **{
        f"code {code}": {"jsonrpc": "2.0", "id": "x", "error": {"code": code, "message": "m"}}
        for code in sorted(set(JSON_RPC_ERROR_CODE_MAP.values()))
    },
    "a list": [{"jsonrpc": "2.0"}],
    "a string": "hello",
    "a number": 3,
    "not JSON": b"<html>oops</html>",
    "empty body": b"",
    "truncated JSON": b'{"jsonrpc": "2.0", "result": {',
    "wrong type inside": {"jsonrpc": "2.0", "id": "x", "result": {"task": {"id": 5}}},
}


@pytest.mark.parametrize("method", ["send", "get_task", "extended_card"])
@pytest.mark.parametrize("answer", list(ANSWERS))
def test_every_answer_comes_out_as_the_sdk_client_makes_it(
    scripted: tuple[Scripted, str], answer: str, method: str
) -> None:
    script, url = scripted
    script.answer(ANSWERS[answer])
    assert_same(script, url, method)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 500, 502, 503])
def test_an_http_error_status_is_the_sdk_client_s_error_with_the_http_error_behind_it(
    scripted: tuple[Scripted, str], status: int
) -> None:
    script, url = scripted
    script.answer({"error": {"message": "token has expired"}}, status=status)
    kind, raised = assert_same(script, url, "send")
    assert kind == "raised" and isinstance(raised.__cause__, httpx.HTTPStatusError)


def test_a_slow_agent_times_out_as_with_the_sdk_client(scripted: tuple[Scripted, str]) -> None:
    script, url = scripted
    script.answer(ANSWERS["task"], delay=0.6)
    kind, raised = assert_same(script, url, "send", timeout=0.2)
    assert kind == "raised" and "timed out" in str(raised)


def test_nothing_listening_is_a_network_error_as_with_the_sdk_client() -> None:
    url = f"http://127.0.0.1:{free_port()}/rpc"
    (sdk_kind, sdk), (our_kind, ours) = both(url, "send")
    assert sdk_kind == our_kind == "raised"
    assert isinstance(sdk, type(ours)) and str(ours) == str(sdk)
    assert str(ours).startswith("Network communication error")


def test_a_card_without_an_extended_card_is_answered_without_a_call(
    scripted: tuple[Scripted, str],
) -> None:
    script, url = scripted
    script.answer(b"never read")
    kind, returned = assert_same(script, url, "extended_card", extended=False)
    assert kind == "ok" and returned.name == "scripted" and script.requests == []


@pytest.mark.parametrize(
    ("version", "ours"),
    [
        ("1.0", True),
        ("1.0.0", True),
        ("1.0.3", True),
        ("0.3", False),
        ("1.1", False),
        ("", False),
        ("one", False),
    ],
)
def test_only_a_v1_0_interface_gets_our_calls(version: str, ours: bool) -> None:
    """Another version is the SDK's to negotiate (0.3's compat transport, say)."""
    the_card = card("http://127.0.0.1:9/rpc", version=version)
    assert (v1_jsonrpc_interface(the_card) is not None) is ours

    async def chosen() -> tuple[type, type]:
        async with httpx.AsyncClient() as http:
            unary = open_calls(the_card, JSONRPC, http, {}, streaming=False)
            streamed = open_calls(the_card, JSONRPC, http, {}, streaming=True)
            return type(unary), type(streamed)

    if version in ("", "one"):  # the SDK's factory takes none of these: nothing to compare
        return
    unary, streamed = asyncio.run(chosen())
    assert unary is (JsonRpcCalls if ours else SdkCalls)
    assert streamed is SdkCalls


def test_a_tenant_s_interface_gets_the_sdk_client() -> None:
    the_card = card("http://127.0.0.1:9/rpc")
    the_card.supported_interfaces[0].tenant = "acme"

    async def chosen() -> type:
        async with httpx.AsyncClient() as http:
            return type(open_calls(the_card, JSONRPC, http, {}, streaming=False))

    assert asyncio.run(chosen()) is SdkCalls


def test_the_extensions_header_is_merged_as_the_sdk_merges_it() -> None:
    from a2a.client.service_parameters import with_a2a_extensions

    for extensions in ([], ["b"], ["b", "a"], ["a, b", "b", " c "], ["", ","]):
        expected: dict[str, str] = {"Authorization": "Bearer t"}
        with_a2a_extensions(list(extensions))(expected)
        assert service_parameters("Bearer t", list(extensions)) == expected


@pytest.mark.parametrize("tenant", ["", "t1"], ids=["our-calls", "sdk-client"])
@pytest.mark.parametrize(
    "answer", ["neither", "bare task", "result is a list", "result is null", "wrong type inside"]
)
def test_a_misshapen_answer_is_the_agent_s_fault_not_a_traceback(
    scripted: tuple[Scripted, str], answer: str, tenant: str
) -> None:
    """Both clients raise their parser's ValueError, TypeError or ParseError on these; the
    governed client reports InterfaceInvalidError (which the command line prints in a line)."""
    from agent.client import GovernedClient, InterfaceInvalidError

    script, url = scripted
    script.card = governed_card(url, tenant)
    script.answer(ANSWERS[answer])
    base = url.removesuffix("/rpc")

    async def describe() -> None:
        async with GovernedClient(base) as client:
            await client.describe("x")

    with pytest.raises(InterfaceInvalidError, match="no A2A response"):
        asyncio.run(describe())
