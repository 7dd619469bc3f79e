"""The gRPC binding over a real grpc.aio server on loopback, in the agent's own event loop.

The same request handler as the HTTP bindings, with the same governance: the bearer token in
``authorization`` metadata (deny by default), the version and extensions in metadata,
routing, enforcement, validation, audit, streaming, cancel, subscribe, tenant isolation; and
errors as ``google.rpc.Status`` under A2A 5.4's status codes.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import grpc.aio
import httpx
import pytest
from a2a.types import (
    AgentExtension,
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskState,
    a2a_pb2_grpc,
)
from a2a.utils.grpc_status import status_from_call
from google.rpc import error_details_pb2

from agent.base.settings import Limits
from agent.client import GovernedClient, Invocation
from agent.devtools.conformance import check_agent
from agent.edge.error_scrub import VERSION_TEXT
from agent.interfaces import EXTENSION_URI
from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from tests.a2a_helpers import (
    binding_of,
    call,
    call_context,
    data_message,
    invoke,
    make_client,
)
from tests.conftest import RunningAgent, start_agent
from tests.integration.conftest import TEST_REQUIRED_EXTENSION, lab_skills
from tests.integration.test_interaction import start_polling, wait_for

GRPC = "GRPC"
VERSION = ("a2a-version", "1.0")
TERMINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"}
LINK = {"link_id": "acme-lnk-00002"}
MAX_DEPTH = 8


@pytest.fixture(scope="module")
def grpc_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """Demo skills plus the slow probe, serving gRPC beside HTTP."""
    from agent.registry.loader import load_registry

    home = tmp_path_factory.mktemp("grpc-home")
    running = start_agent(
        home,
        registry=load_registry(lab_skills(home)),
        backend=backend,
        grpc=True,
        # Below protobuf's own bound (a Data Part's objects about 30 deep), so that the
        # message check's refusal can be seen; the default (32) is at that bound.
        settings_overrides={"limits": Limits(max_depth=MAX_DEPTH)},
    )
    yield running
    running.stop()


def bearer(token: str) -> tuple[str, str]:
    return ("authorization", f"Bearer {token}")


async def raw(agent: RunningAgent, method: str, request: Any, metadata: list[Any]) -> Any:
    """One unary call through the generated stub (no SDK client in between)."""
    async with grpc.aio.insecure_channel(agent.grpc_target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        return await getattr(stub, method)(request, metadata=metadata, timeout=30)


async def refused(agent: RunningAgent, method: str, request: Any, metadata: list[Any]) -> Any:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await raw(agent, method, request, metadata)
    return caught.value


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    status = status_from_call(error)
    assert status is not None, "an A2A error carries a google.rpc.Status"
    assert status.code == error.code().value[0]
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info
    raise AssertionError("no ErrorInfo in the status details")


# -- the card and the SDK's own client ----------------------------------------------------------


def test_the_card_declares_the_grpc_interface(grpc_agent: RunningAgent) -> None:
    card = httpx.get(f"{grpc_agent.base_url}/.well-known/agent-card.json").json()
    interfaces = {i["protocolBinding"]: i for i in card["supportedInterfaces"]}
    assert set(interfaces) == {"JSONRPC", "HTTP+JSON", GRPC}
    assert interfaces[GRPC] == {
        "url": grpc_agent.grpc_target,
        "protocolBinding": GRPC,
        "protocolVersion": "1.0",
    }


async def test_blocking_send_get_and_list(grpc_agent: RunningAgent) -> None:
    token = grpc_agent.token("alice")
    outcome = await call(grpc_agent.base_url, token, "check_link_capacity", LINK, binding=GRPC)
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    assert outcome.result("check_link_capacity")["link_id"] == "acme-lnk-00002"
    assert outcome.task.metadata["routing"]["stage"] == "explicit_request"
    async with make_client(grpc_agent.base_url, token, GRPC) as client:
        task = await client.get_task(GetTaskRequest(id=outcome.task.id), context=call_context())
        assert task.status.state == TaskState.TASK_STATE_COMPLETED
        listed = await client.list_tasks(ListTasksRequest(), context=call_context())
        assert outcome.task.id in [t.id for t in listed.tasks]


async def test_streaming_send_records_before_the_result(grpc_agent: RunningAgent) -> None:
    token = grpc_agent.token("alice")
    outcome = await call(
        grpc_agent.base_url, token, "check_link_capacity", LINK, binding=GRPC, streaming=True
    )
    kinds = [e.WhichOneof("payload") for e in outcome.events]
    assert kinds[0] == "task" and kinds[-1] == "status_update", kinds
    names = [
        e.artifact_update.artifact.name for e in outcome.events if e.HasField("artifact_update")
    ]
    assert names[-1] == "check_link_capacity"
    assert set(names[:-1]) == {"link-utilization-sample"}
    assert outcome.events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_cancel_and_subscribe(grpc_agent: RunningAgent) -> None:
    token = grpc_agent.token("sub-grpc", tenant="acme", scopes=[])
    async with make_client(grpc_agent.base_url, token, GRPC, polling=True) as client:
        # 2 s: on a loaded machine a 1 s probe ended before the subscription reached it,
        # and the probe's manifest fails it at 3 s (limits.timeout_seconds)
        task_id = await start_polling(
            grpc_agent.base_url, token, "slow_probe", {"seconds": 2}, client
        )
        assert await wait_for(client, task_id, {"TASK_STATE_WORKING"}) == "TASK_STATE_WORKING"
    async with make_client(grpc_agent.base_url, token, GRPC, streaming=True) as client:
        states = []
        async for event in client.subscribe(
            SubscribeToTaskRequest(id=task_id), context=call_context()
        ):
            kind = event.WhichOneof("payload")
            if kind == "status_update":
                states.append(TaskState.Name(event.status_update.status.state))
            elif kind == "task":
                states.append(TaskState.Name(event.task.status.state))
    assert states[0] == "TASK_STATE_WORKING" and states[-1] == "TASK_STATE_COMPLETED", states

    cancel_token = grpc_agent.token("cancel-grpc", tenant="acme", scopes=[])
    async with make_client(grpc_agent.base_url, cancel_token, GRPC, polling=True) as client:
        task_id = await start_polling(
            grpc_agent.base_url, cancel_token, "slow_probe", {"seconds": 10}, client
        )
        assert await wait_for(client, task_id, {"TASK_STATE_WORKING"}) == "TASK_STATE_WORKING"
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        await asyncio.sleep(0.3)
        task = await client.get_task(GetTaskRequest(id=task_id), context=call_context())
        assert task.status.state == TaskState.TASK_STATE_CANCELED


async def test_a_subscription_to_an_ended_task_is_unimplemented(grpc_agent: RunningAgent) -> None:
    token = grpc_agent.token("alice")
    outcome = await call(grpc_agent.base_url, token, "check_link_capacity", LINK, binding=GRPC)
    async with grpc.aio.insecure_channel(grpc_agent.grpc_target) as channel:
        stream = a2a_pb2_grpc.A2AServiceStub(channel).SubscribeToTask(
            SubscribeToTaskRequest(id=outcome.task.id), metadata=[VERSION, bearer(token)]
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in stream:
                pass
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED  # A2A 5.4
    assert error_info(caught.value).reason == "UNSUPPORTED_OPERATION"


async def test_the_governed_client_and_netagent_check_run_over_grpc(
    grpc_agent: RunningAgent,
) -> None:
    token = grpc_agent.token("alice")
    async with GovernedClient(grpc_agent.base_url, token=token, binding=GRPC) as client:
        items = [item async for item in client.stream("check_link_capacity", LINK)]
        assert isinstance(items[-1], Invocation) and items[-1].endpoint == grpc_agent.grpc_target
        assert len(items) > 1  # records first
    report = await check_agent(grpc_agent.base_url, token=token, binding=GRPC)
    assert report.ok, report.failed()


# -- the edge: authentication, version, extensions, limits ------------------------------------


async def test_a_call_without_a_token_is_unauthenticated(grpc_agent: RunningAgent) -> None:
    for method, request in [
        ("GetTask", GetTaskRequest(id=str(uuid.uuid4()))),
        ("ListTasks", ListTasksRequest()),
        ("GetExtendedAgentCard", GetExtendedAgentCardRequest()),
        ("SendMessage", SendMessageRequest(message=data_message({"skill": "lookup_inventory"}))),
    ]:
        error = await refused(grpc_agent, method, request, [VERSION])
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED, (method, error)
        assert error.details() == "authentication required"
        assert ("www-authenticate", 'Bearer realm="netagent"') in tuple(error.trailing_metadata())


async def test_a_bad_or_repeated_token_is_unauthenticated(grpc_agent: RunningAgent) -> None:
    request = GetTaskRequest(id=str(uuid.uuid4()))
    forged = grpc_agent.token("alice")[:-4] + "AAAA"
    error = await refused(grpc_agent, "GetTask", request, [VERSION, bearer(forged)])
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    [(_, challenge)] = [(k, v) for k, v in error.trailing_metadata() if k == "www-authenticate"]
    assert 'error="invalid_token"' in challenge
    token = grpc_agent.token("alice")
    twice = [VERSION, bearer(token), bearer(token)]
    error = await refused(grpc_agent, "GetTask", request, twice)
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error.details() == "expected exactly one Authorization header"
    basic = [VERSION, ("authorization", "Basic YWxpY2U6eA==")]
    error = await refused(grpc_agent, "GetTask", request, basic)
    assert error.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_describe_skill_is_open_without_a_token(grpc_agent: RunningAgent) -> None:
    described = await binding_of(grpc_agent.base_url, None, "lookup_inventory", binding=GRPC)
    assert described["interface_digest"].startswith("sha256:")


async def test_a_missing_version_is_version_not_supported(grpc_agent: RunningAgent) -> None:
    token = grpc_agent.token("alice")
    request = GetTaskRequest(id=str(uuid.uuid4()))
    for metadata in ([bearer(token)], [bearer(token), ("a2a-version", "0.3<probe>")]):
        error = await refused(grpc_agent, "GetTask", request, metadata)
        assert error.code() == grpc.StatusCode.UNIMPLEMENTED  # A2A 5.4: VersionNotSupported
        assert error.details() == VERSION_TEXT  # the value is not quoted back
        info = error_info(error)
        assert (info.reason, info.domain) == ("VERSION_NOT_SUPPORTED", "a2a-protocol.org")


async def test_activated_extensions_are_echoed(grpc_agent: RunningAgent) -> None:
    token = grpc_agent.token("alice")
    async with grpc.aio.insecure_channel(grpc_agent.grpc_target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        metadata = [VERSION, bearer(token), ("a2a-extensions", f"{EXTENSION_URI}, urn:unknown")]
        call_ = stub.ListTasks(ListTasksRequest(), metadata=metadata)
        await call_
        assert ("a2a-extensions", EXTENSION_URI) in tuple(await call_.initial_metadata())


def _length_delimited(field: int, payload: bytes) -> bytes:
    def varint(n: int) -> bytes:
        out = b""
        while n > 0x7F:
            out += bytes([(n & 0x7F) | 0x80])
            n >>= 7
        return out + bytes([n])

    return varint((field << 3) | 2) + varint(len(payload)) + payload


def _nested_struct(levels: int) -> bytes:
    """``{"x": {"x": ... "bottom"}}`` as protobuf bytes, deeper than protobuf would encode."""
    value = _length_delimited(3, b"bottom")  # Value.string_value
    struct = b""
    for _ in range(levels):
        struct = _length_delimited(1, _length_delimited(1, b"x") + _length_delimited(2, value))
        value = _length_delimited(5, struct)  # Value.struct_value
    return struct


async def test_limits_hold_on_grpc(grpc_agent: RunningAgent) -> None:
    token = grpc_agent.token("alice")
    metadata = [VERSION, bearer(token)]
    limits = grpc_agent.settings.limits
    # The edge's body limit is the server's max_receive_message_length.
    huge = data_message(
        {"skill": "lookup_inventory", "arguments": {"q": "x" * limits.max_body_bytes}}
    )
    error = await refused(grpc_agent, "SendMessage", SendMessageRequest(message=huge), metadata)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # The handler's message check: a Data Part deeper than max_depth, named by pointer.
    deep: Any = "bottom"
    for _ in range(limits.max_depth):
        deep = {"x": deep}
    nested = data_message({"skill": "lookup_inventory", "arguments": deep})
    error = await refused(grpc_agent, "SendMessage", SendMessageRequest(message=nested), metadata)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    info = error_info(error)
    assert info.reason == "INVALID_PARAMS"
    assert info.metadata["limit"] == "max_depth"
    assert info.metadata["pointer"].startswith("/message/parts/0/data/arguments/x/x")
    # Deeper than protobuf decodes (as the HTTP edge refuses a body nested too deep).
    message = SendMessageRequest(message=data_message({"skill": "lookup_inventory"}))
    raw_request = message.SerializeToString() + _length_delimited(4, _nested_struct(60))
    async with grpc.aio.insecure_channel(grpc_agent.grpc_target) as channel:
        send = channel.unary_unary("/lf.a2a.v1.A2AService/SendMessage")
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await send(raw_request, metadata=metadata)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "nested deeper than protobuf reads" in str(caught.value.details())


# -- governance: validation, isolation, audit ---------------------------------------------------


async def test_invalid_arguments_are_rejected_with_the_drafts_code(
    grpc_agent: RunningAgent,
) -> None:
    token = grpc_agent.token("alice")
    interface = await binding_of(grpc_agent.base_url, token, "check_link_capacity", binding=GRPC)
    outcome = await invoke(
        grpc_agent.base_url, token, "check_link_capacity", {"link": 1}, interface, binding=GRPC
    )
    assert outcome.state == "TASK_STATE_REJECTED"
    assert outcome.error["code"] == "input_invalid"
    assert outcome.error["details"]


async def test_another_tenants_task_is_not_found(grpc_agent: RunningAgent) -> None:
    alice = grpc_agent.token("alice")
    outcome = await call(grpc_agent.base_url, alice, "check_link_capacity", LINK, binding=GRPC)
    gary = [VERSION, bearer(grpc_agent.token("gary"))]
    absent = str(uuid.uuid4())
    for method, make in [("GetTask", GetTaskRequest), ("CancelTask", CancelTaskRequest)]:
        theirs = await refused(grpc_agent, method, make(id=outcome.task.id), gary)
        missing = await refused(grpc_agent, method, make(id=absent), gary)
        assert theirs.code() == missing.code() == grpc.StatusCode.NOT_FOUND, method
        assert theirs.details() == missing.details() == "Task not found"
        assert error_info(theirs).reason == "TASK_NOT_FOUND"
    follow_up = data_message({"skill": "check_link_capacity"}, task_id=outcome.task.id)
    error = await refused(grpc_agent, "SendMessage", SendMessageRequest(message=follow_up), gary)
    assert error.code() == grpc.StatusCode.NOT_FOUND
    listed = await raw(grpc_agent, "ListTasks", ListTasksRequest(), gary)
    assert outcome.task.id not in [t.id for t in listed.tasks]


async def test_the_audit_row_names_the_grpc_caller(grpc_agent: RunningAgent) -> None:
    token = grpc_agent.token("paula")
    outcome = await call(grpc_agent.base_url, token, "check_link_capacity", LINK, binding=GRPC)
    assert outcome.state == "TASK_STATE_COMPLETED"
    engine = make_engine(grpc_agent.settings.resolved_database_url)
    try:
        rows = await DatabaseAuditLog(engine).query(task_id=outcome.task.id)
    finally:
        await engine.dispose()
    invocation = [r for r in rows if r["tool"] == "agent"]
    assert len(invocation) == 1, rows
    assert (invocation[0]["principal"], invocation[0]["tenant"]) == ("paula", "acme")
    assert invocation[0]["skill_id"] == "check_link_capacity"
    assert {(r["principal"], r["tenant"]) for r in rows} == {("paula", "acme")}
    assert {r["projection"] for r in rows} == {"a2a"}  # gRPC is an A2A binding


@pytest.fixture(scope="module")
def strict_grpc_agent(
    tmp_path_factory: pytest.TempPathFactory, backend: str
) -> Iterator[RunningAgent]:
    """An agent whose card declares a required (test-only) extension, serving gRPC."""
    required = AgentExtension(
        uri=TEST_REQUIRED_EXTENSION, description="test-only required extension", required=True
    )
    home = tmp_path_factory.mktemp("grpc-strict")
    running = start_agent(home, extra_extensions=[required], backend=backend, grpc=True)
    yield running
    running.stop()


async def test_a_required_extension_is_enforced_on_grpc(strict_grpc_agent: RunningAgent) -> None:
    strict = strict_grpc_agent
    token = strict.token("alice")
    both = [EXTENSION_URI, TEST_REQUIRED_EXTENSION]
    outcome = await call(
        strict.base_url, token, "check_link_capacity", LINK, binding=GRPC, extensions=both
    )
    assert outcome.state == "TASK_STATE_COMPLETED"
    request = SendMessageRequest(message=data_message({"skill": "check_link_capacity"}))
    error = await refused(strict, "SendMessage", request, [VERSION, bearer(token)])
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION  # A2A 5.4
    info = error_info(error)
    assert info.reason == "EXTENSION_SUPPORT_REQUIRED"
    assert info.metadata["missing"] == TEST_REQUIRED_EXTENSION
