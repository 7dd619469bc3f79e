"""Bounds per caller and per task, on both databases and every binding (docs/security.md).

A caller's parked tasks (``max_parked_tasks``), a task's history across follow-ups
(``max_history_messages``, ``max_history_bytes``), one ListTasks page's bytes
(``max_list_bytes``): past each, the protocol's InvalidParamsError naming the bound, and
nothing stored. A task parked longer than ``parked_task_ttl`` ends CANCELED, with a status
message naming the bound and an audit row.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
import pytest
from a2a.types import (
    ListTasksRequest,
    SendMessageRequest,
    Task,
    a2a_pb2_grpc,
)
from a2a.utils.grpc_status import status_from_call
from google.protobuf.json_format import MessageToDict, ParseDict
from google.rpc import error_details_pb2

from agent.base.settings import Limits
from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from tests.conftest import IDENTITIES, RunningAgent, start_agent

BINDINGS = ("jsonrpc", "rest", "grpc")
JSONRPC = "/a2a/jsonrpc"
REST = "/a2a/rest"
SCOPES = IDENTITIES["alice"][1]
PARKED = "TASK_STATE_INPUT_REQUIRED"
# The bounds of the agents below, small enough to reach in a test.
MAX_PARKED = 3
MAX_MESSAGES = 7
MAX_HISTORY_BYTES = 40_000
MAX_LIST_BYTES = 30_000
PAD = 15_000  # characters of metadata a padded follow-up carries
LIST_PAD = 8_000  # and a listed task's first message: three tasks to a page
TTL_SECONDS = 1
EXPIRY_WAIT_SECONDS = 15.0  # the sweeper looks every ttl/4; never, before the bound existed


@pytest.fixture(scope="module")
def bounded(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    limits = Limits(
        max_parked_tasks=MAX_PARKED,
        max_history_messages=MAX_MESSAGES,
        max_history_bytes=MAX_HISTORY_BYTES,
        max_list_bytes=MAX_LIST_BYTES,
    )
    running = start_agent(
        tmp_path_factory.mktemp("bounded"),
        backend=backend,
        grpc=True,
        settings_overrides={"limits": limits},
    )
    yield running
    running.stop()


@pytest.fixture(scope="module")
def expiring(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    running = start_agent(
        tmp_path_factory.mktemp("expiring"),
        backend=backend,
        settings_overrides={"limits": Limits(parked_task_ttl=TTL_SECONDS)},
    )
    yield running
    running.stop()


@dataclass
class Answer:
    """A send's or a list's answer on any binding: the result, or the refusal's ErrorInfo."""

    result: dict[str, Any] | None = None
    limit: str | None = None
    maximum: str | None = None
    text: str = ""


def _caller(agent: RunningAgent) -> str:
    """A token for a caller of its own (no other test's tasks count against it)."""
    return agent.token(f"bounds-{uuid.uuid4().hex[:10]}", "acme", SCOPES)


def _message(text: str, task_id: str = "", pad: int = 0) -> dict[str, Any]:
    message: dict[str, Any] = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"text": text}],
    }
    if task_id:
        message["taskId"] = task_id
    if pad:
        message["metadata"] = {"pad": "p" * pad}
    return message


async def _grpc(agent: RunningAgent, token: str, method: str, request: Any) -> Answer:
    metadata = [("a2a-version", "1.0"), ("authorization", f"Bearer {token}")]
    async with grpc.aio.insecure_channel(agent.grpc_target) as channel:
        stub = a2a_pb2_grpc.A2AServiceStub(channel)
        try:
            response = await getattr(stub, method)(request, metadata=metadata, timeout=30)
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error
            status = status_from_call(error)
            assert status is not None
            for detail in status.details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return Answer(
                        None, info.metadata["limit"], info.metadata["max"], status.message
                    )
            raise AssertionError("no ErrorInfo") from None
    return Answer(MessageToDict(response))


def _http_answer(response: httpx.Response, binding: str) -> Answer:
    body = response.json()
    if binding == "jsonrpc":
        assert response.status_code == 200, response.text
        if "error" not in body:
            return Answer(body["result"])
        error = body["error"]
        assert error["code"] == -32602, error
        [info] = error["data"]
    else:
        if "error" not in body:
            assert response.status_code == 200, response.text
            return Answer(body)
        error = body["error"]
        assert response.status_code == 400 and error["status"] == "INVALID_ARGUMENT", error
        [info] = error["details"]
    metadata = info["metadata"]
    return Answer(None, metadata["limit"], metadata["max"], error["message"])


def _headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}


async def send(agent: RunningAgent, token: str, binding: str, message: dict[str, Any]) -> Answer:
    """SendMessage on ``binding``: the task, or the refusal."""
    if binding == "grpc":
        request = ParseDict({"message": message}, SendMessageRequest())
        answer = await _grpc(agent, token, "SendMessage", request)
        if answer.result is not None:
            answer.result = answer.result["task"]
        return answer
    async with httpx.AsyncClient(base_url=agent.base_url, timeout=60) as http:
        if binding == "jsonrpc":
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
            body["params"] = {"message": message}
            response = await http.post(JSONRPC, json=body, headers=_headers(token))
        else:
            response = await http.post(
                f"{REST}/message:send", json={"message": message}, headers=_headers(token)
            )
    answer = _http_answer(response, binding)
    if answer.result is not None:
        answer.result = answer.result["task"]
    return answer


async def list_tasks(agent: RunningAgent, token: str, binding: str, page_token: str = "") -> Answer:
    """ListTasks (100 a page, with their artifacts) on ``binding``."""
    params: dict[str, Any] = {"pageSize": 100, "includeArtifacts": True}
    if page_token:
        params["pageToken"] = page_token
    if binding == "grpc":
        return await _grpc(agent, token, "ListTasks", ParseDict(params, ListTasksRequest()))
    async with httpx.AsyncClient(base_url=agent.base_url, timeout=60) as http:
        if binding == "jsonrpc":
            body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": params}
            response = await http.post(JSONRPC, json=body, headers=_headers(token))
        else:
            query = {k: str(v).lower() if isinstance(v, bool) else v for k, v in params.items()}
            response = await http.get(f"{REST}/tasks", params=query, headers=_headers(token))
    return _http_answer(response, binding)


async def rpc(agent: RunningAgent, token: str, method: str, params: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=agent.base_url, timeout=60) as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = await http.post(JSONRPC, json=body, headers=_headers(token))
    payload: dict[str, Any] = response.json()
    return payload


async def park(agent: RunningAgent, token: str, binding: str, pad: int = 0) -> dict[str, Any]:
    """A task waiting for input: the router asks which skill was meant."""
    answer = await send(agent, token, binding, _message("hello there", pad=pad))
    assert answer.result is not None, answer
    assert answer.result["status"]["state"] == PARKED, answer.result["status"]
    return answer.result


async def audit_rows(agent: RunningAgent, **where: Any) -> list[dict[str, Any]]:
    engine = make_engine(agent.settings.resolved_database_url)
    try:
        return await DatabaseAuditLog(engine).query(limit=10_000, **where)
    finally:
        await engine.dispose()


def history_bytes(task: dict[str, Any]) -> int:
    parsed = ParseDict(task, Task(), ignore_unknown_fields=True)
    return sum(message.ByteSize() for message in parsed.history)


# -- parked tasks per caller -------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_caller_may_park_only_max_parked_tasks(bounded: RunningAgent, binding: str) -> None:
    subject = f"bounds-{uuid.uuid4().hex[:10]}"
    token, other = bounded.token(subject, "acme", SCOPES), _caller(bounded)
    parked = [await park(bounded, token, binding) for _ in range(MAX_PARKED)]
    rows = await audit_rows(bounded, principal=subject)
    refused = await send(bounded, token, binding, _message("hello there"))
    assert (refused.limit, refused.maximum) == ("max_parked_tasks", str(MAX_PARKED)), refused
    assert f"at most {MAX_PARKED} tasks waiting for input" in refused.text
    listed = (await rpc(bounded, token, "ListTasks", {}))["result"]
    assert len(listed["tasks"]) == MAX_PARKED  # the refused send left no task
    assert await audit_rows(bounded, principal=subject) == rows  # and no audit row
    await park(bounded, other, binding)  # another caller's bound is its own
    cancelled = await rpc(bounded, token, "CancelTask", {"id": parked[0]["id"]})
    assert cancelled["result"]["status"]["state"] == "TASK_STATE_CANCELED", cancelled
    await park(bounded, token, binding)  # room again


@pytest.mark.parametrize("binding", BINDINGS)
async def test_sends_at_once_cannot_pass_max_parked_tasks_together(
    bounded: RunningAgent, binding: str
) -> None:
    """Sends made at once: none is parked yet when each is counted, yet at most the bound
    are accepted, and every other one is refused naming it (no task made)."""
    token = _caller(bounded)
    answers = await asyncio.gather(
        *(send(bounded, token, binding, _message("hello there")) for _ in range(4 * MAX_PARKED))
    )
    accepted = [a for a in answers if a.result is not None]
    # (one settling as another is counted may be counted twice for that moment: fewer, never more)
    assert 1 <= len(accepted) <= MAX_PARKED, [a.limit for a in answers]
    assert all(a.result["status"]["state"] == PARKED for a in accepted if a.result)
    assert {a.limit for a in answers if a.result is None} == {"max_parked_tasks"}
    listed = (await rpc(bounded, token, "ListTasks", {}))["result"]
    assert len(listed["tasks"]) == len(accepted)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_at_max_parked_tasks_a_send_routed_to_a_skill_still_runs(
    bounded: RunningAgent, binding: str
) -> None:
    """The bound counts tasks waiting for input: a send the router takes to a skill ends
    terminal and never waits, so it runs (uncounted) at the bound, alone or with sends that
    would park made at once, of which the bound still lets none past."""
    token = _caller(bounded)
    for _ in range(MAX_PARKED):
        await park(bounded, token, binding)
    ran = await send(bounded, token, binding, _describe())
    assert ran.result is not None, ran
    assert ran.result["status"]["state"] == "TASK_STATE_COMPLETED", ran.result["status"]
    mixed = [_describe() if n % 2 else _message("hello there") for n in range(4 * MAX_PARKED)]
    answers = await asyncio.gather(*(send(bounded, token, binding, m) for m in mixed))
    for message, answer in zip(mixed, answers, strict=True):
        if "data" in message["parts"][0]:
            assert answer.result is not None, answer
            assert answer.result["status"]["state"] == "TASK_STATE_COMPLETED", answer.result
        else:
            assert answer.limit == "max_parked_tasks", answer
    listed = (await rpc(bounded, token, "ListTasks", {"pageSize": 100}))["result"]
    states = [task["status"]["state"] for task in listed["tasks"]]
    assert states.count(PARKED) == MAX_PARKED, states


def _describe() -> dict[str, Any]:
    """A message the router takes to a skill (describe_skill), which completes."""
    message = _message("")
    data = {"skill": "describe_skill", "arguments": {"skill_id": "describe_skill"}}
    message["parts"] = [{"mediaType": "application/json", "data": data}]
    return message


# -- a task's history --------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_follow_ups_stop_at_max_history_messages(bounded: RunningAgent, binding: str) -> None:
    token = _caller(bounded)
    task = await park(bounded, token, binding)
    answers = []
    for _ in range(MAX_MESSAGES):
        answer = await send(bounded, token, binding, _message("hello there", task["id"]))
        answers.append(answer)
        if answer.result is None:
            break
        assert answer.result["status"]["state"] == PARKED
    refused = answers[-1]
    assert (refused.limit, refused.maximum) == ("max_history_messages", str(MAX_MESSAGES))
    assert f"at most {MAX_MESSAGES} messages" in refused.text
    stored = (await rpc(bounded, token, "GetTask", {"id": task["id"]}))["result"]
    assert MAX_MESSAGES - 2 <= len(stored["history"]) <= MAX_MESSAGES  # filled, not past
    assert stored["status"]["state"] == PARKED  # refused before anything was stored


@pytest.mark.parametrize("binding", BINDINGS)
async def test_follow_ups_stop_at_max_history_bytes(bounded: RunningAgent, binding: str) -> None:
    token = _caller(bounded)
    task = await park(bounded, token, binding)
    refused = None
    for _ in range(MAX_MESSAGES):
        answer = await send(bounded, token, binding, _message("hello there", task["id"], PAD))
        if answer.result is None:
            refused = answer
            break
    assert refused is not None
    assert (refused.limit, refused.maximum) == ("max_history_bytes", str(MAX_HISTORY_BYTES))
    assert f"at most {MAX_HISTORY_BYTES} bytes" in refused.text
    stored = (await rpc(bounded, token, "GetTask", {"id": task["id"]}))["result"]
    assert history_bytes(stored) <= MAX_HISTORY_BYTES
    assert stored["status"]["state"] == PARKED


# -- a ListTasks page --------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_list_page_stops_at_max_list_bytes_and_the_pages_hold_every_task(
    bounded: RunningAgent, binding: str
) -> None:
    token = _caller(bounded)
    made = set()
    for _ in range(6):  # parked, answered (cancelled) to stay under max_parked_tasks
        task = await park(bounded, token, binding, pad=LIST_PAD)
        await rpc(bounded, token, "CancelTask", {"id": task["id"]})
        made.add(task["id"])
    seen: list[str] = []
    page_token, pages = "", 0
    for _ in range(10):
        answer = await list_tasks(bounded, token, binding, page_token)
        assert answer.result is not None, answer
        tasks = [ParseDict(t, Task(), ignore_unknown_fields=True) for t in answer.result["tasks"]]
        assert tasks
        if len(tasks) > 1:
            assert sum(t.ByteSize() for t in tasks) <= MAX_LIST_BYTES
        pages += 1
        seen.extend(t.id for t in tasks)
        page_token = answer.result.get("nextPageToken", "")
        if not page_token:
            break
    assert len(seen) == len(made) and set(seen) == made  # each once, none skipped
    assert pages > 1
    too_many = await rpc(bounded, token, "ListTasks", {"pageSize": 101})
    assert too_many["error"]["code"] == -32602  # the SDK's page size bound: 100


# -- parked tasks expire -----------------------------------------------------------------------


async def test_a_task_parked_past_its_ttl_ends_canceled_with_its_reason_and_audit_row(
    expiring: RunningAgent,
) -> None:
    subject = f"bounds-{uuid.uuid4().hex[:10]}"
    token = expiring.token(subject, "acme", SCOPES)
    task = await park(expiring, token, "jsonrpc")
    question = task["status"]["message"]
    deadline = time.monotonic() + EXPIRY_WAIT_SECONDS
    while True:
        stored = (await rpc(expiring, token, "GetTask", {"id": task["id"]}))["result"]
        if stored["status"]["state"] != PARKED or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    status = stored["status"]
    assert status["state"] == "TASK_STATE_CANCELED", status
    [part] = status["message"]["parts"]
    assert "parked_task_ttl" in part["text"] and f"{TTL_SECONDS} s" in part["text"]
    assert stored["history"][-1]["messageId"] == question["messageId"]  # the question kept
    follow = await rpc(expiring, token, "SendMessage", {"message": _message("x", task["id"])})
    assert "error" in follow  # the task has ended
    rows = await audit_rows(expiring, task_id=task["id"])
    expired = [r for r in rows if r["operation"] == "expire"]
    assert [(r["principal"], r["tenant"], r["reason"]) for r in expired] == [
        (subject, "acme", "expired")
    ]
