"""No request leaves a task running in the server's event loop, whatever its outcome (#20 item 7).

The SDK's own handler left two background tasks behind each message sent into a terminal
task ("Task was destroyed but it is pending!" plus an OpenTelemetry traceback at ERROR). The
handler is ours now; this counts the server loop's tasks before and after each kind of
request, through a test-only route added to the app of an agent of this module's own (it
runs in the server's loop, so it can ask ``asyncio.all_tasks()``), and fails if any task a
request started is still there after a short settle, or if anything was logged at ERROR.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.conftest import RunningAgent, start_agent

DIAGNOSTICS = "/_test/tasks"
JSONRPC = "/a2a/jsonrpc"
REST = "/a2a/rest"
HEADERS = {"A2A-Version": "1.0"}
SETTLE_SECONDS = 3.0


def _describe(task: asyncio.Task[Any]) -> str:
    coro = task.get_coro()
    name = getattr(coro, "__qualname__", type(coro).__name__)
    return f"{name} ({task.get_name()})" if not task.get_name().startswith("Task-") else name


async def _tasks(request: Request) -> JSONResponse:
    gc.collect()  # an abandoned pending task is destroyed (and logged) now, not later
    await asyncio.sleep(0)
    me = asyncio.current_task()
    return JSONResponse(sorted(_describe(t) for t in asyncio.all_tasks() if t is not me))


class ErrorRecords(logging.Handler):
    """Everything logged at ERROR in this process while the module runs (the server's too)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    running = start_agent(tmp_path_factory.mktemp("tasks-home"), backend=backend)
    app = running.server.config.app
    app.router.routes.insert(0, Route(DIAGNOSTICS, _tasks, methods=["GET"]))
    # sse-starlette starts one shutdown watcher per event loop with its first stream, and it
    # lives as long as the loop: started here, it is part of every baseline.
    warm = httpx.post(
        f"{running.base_url}{REST}/message:stream",
        json={"message": describe()},
        headers=HEADERS,
        timeout=30,
    )
    assert warm.status_code == 200, warm.text
    yield running
    running.stop()


@pytest.fixture
def errors() -> Iterator[ErrorRecords]:
    handler = ErrorRecords()
    logging.getLogger().addHandler(handler)
    try:
        yield handler
    finally:
        logging.getLogger().removeHandler(handler)


@pytest.fixture
async def client(diagnosed: RunningAgent) -> AsyncIterator[httpx.AsyncClient]:
    headers = {**HEADERS, "Authorization": f"Bearer {diagnosed.token('alice')}"}
    async with httpx.AsyncClient(base_url=diagnosed.base_url, headers=headers, timeout=30) as c:
        yield c


async def server_tasks(client: httpx.AsyncClient) -> Counter[str]:
    response = await client.get(DIAGNOSTICS)
    assert response.status_code == 200, response.text
    return Counter(response.json())


async def assert_leaves_no_task(
    client: httpx.AsyncClient, errors: ErrorRecords, request: Callable[[], Awaitable[Any]]
) -> None:
    before = await server_tasks(client)
    await request()
    deadline = asyncio.get_running_loop().time() + SETTLE_SECONDS
    while True:
        left = await server_tasks(client) - before
        if not left or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.1)
    assert not left, f"tasks left running after the request: {dict(left)}"
    logged = [f"{r.name}: {r.getMessage()}" for r in errors.records]
    assert not logged, logged


def _message(data: Any = None, text: str | None = None, task_id: str = "") -> dict[str, Any]:
    part = {"text": text} if text is not None else {"mediaType": "application/json", "data": data}
    message: dict[str, Any] = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [part]}
    if task_id:
        message["taskId"] = task_id
    return message


def describe(task_id: str = "") -> dict[str, Any]:
    data = {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}
    return _message(data, task_id=task_id)


async def rpc(client: httpx.AsyncClient, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    response = await client.post(JSONRPC, json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def completed_task(client: httpx.AsyncClient) -> str:
    answer = await rpc(client, "SendMessage", {"message": describe()})
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
    return str(task["id"])


async def parked_task(client: httpx.AsyncClient) -> str:
    """A task waiting for input: the router asks which skill was meant."""
    answer = await rpc(client, "SendMessage", {"message": _message(text="hello there")})
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
    return str(task["id"])


async def sse(client: httpx.AsyncClient, path: str, **kwargs: Any) -> list[str]:
    async with client.stream("POST", path, **kwargs) as response:
        assert response.status_code == 200
        return [line async for line in response.aiter_lines() if line.startswith("data:")]


# -- one test per kind of request -------------------------------------------------------------


async def test_an_idle_agent_holds_only_its_long_lived_tasks(client: httpx.AsyncClient) -> None:
    """A background loop that waits with a timeout holds no task per wait: with
    ``asyncio.wait_for`` on 3.11 each poll wraps the wait in a task of its own, which comes and
    goes with the poll and makes every snapshot of the agent's tasks depend on when it is taken."""
    tasks = await server_tasks(client)
    assert not [name for name in tasks if name.endswith(".wait")], dict(tasks)


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_send(client: httpx.AsyncClient, errors: ErrorRecords, binding: str) -> None:
    async def request() -> None:
        if binding == "jsonrpc":
            await completed_task(client)
        else:
            response = await client.post(f"{REST}/message:send", json={"message": describe()})
            assert response.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

    await assert_leaves_no_task(client, errors, request)


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_send_to_a_terminal_task(
    client: httpx.AsyncClient, errors: ErrorRecords, binding: str, stream: bool
) -> None:
    task_id = await completed_task(client)

    async def request() -> None:
        message = describe(task_id)
        if binding == "jsonrpc":
            method = "SendStreamingMessage" if stream else "SendMessage"
            answer = await rpc(client, method, {"message": message})
            assert answer["error"]["code"] == -32004, answer
        else:
            path = f"{REST}/message:{'stream' if stream else 'send'}"
            response = await client.post(path, json={"message": message})
            assert response.status_code == 400, response.text

    await assert_leaves_no_task(client, errors, request)


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_bad_request(client: httpx.AsyncClient, errors: ErrorRecords, binding: str) -> None:
    async def request() -> None:
        if binding == "jsonrpc":
            for body in (b"{not json", b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}'):
                response = await client.post(JSONRPC, content=body)
                assert "error" in response.json(), response.text
            answer = await rpc(client, "GetTask", {"id": str(uuid.uuid4())})
            assert answer["error"]["code"] == -32001
        else:
            response = await client.post(f"{REST}/message:send", content=b"{not json")
            assert response.status_code == 400
            response = await client.post(f"{REST}/message:send", json={"message": {"parts": []}})
            assert response.status_code == 400

    await assert_leaves_no_task(client, errors, request)


async def test_a_cancel(client: httpx.AsyncClient, errors: ErrorRecords) -> None:
    parked = await parked_task(client)
    ended = await completed_task(client)

    async def request() -> None:
        answer = await rpc(client, "CancelTask", {"id": parked})
        assert answer["result"]["status"]["state"] == "TASK_STATE_CANCELED", answer
        refused = await client.post(f"{REST}/tasks/{ended}:cancel")
        assert refused.status_code == 400, refused.text

    await assert_leaves_no_task(client, errors, request)


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_stream(client: httpx.AsyncClient, errors: ErrorRecords, binding: str) -> None:
    async def request() -> None:
        if binding == "jsonrpc":
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendStreamingMessage",
                "params": {"message": describe()},
            }
            events = await sse(client, JSONRPC, json=body)
        else:
            events = await sse(client, f"{REST}/message:stream", json={"message": describe()})
        assert "TASK_STATE_COMPLETED" in events[-1]

    await assert_leaves_no_task(client, errors, request)


async def test_a_subscription_that_ends(client: httpx.AsyncClient, errors: ErrorRecords) -> None:
    """Subscribed to a parked task, which is then cancelled: the stream ends CANCELED."""
    task_id = await parked_task(client)

    async def request() -> None:
        async with client.stream("POST", f"{REST}/tasks/{task_id}:subscribe") as response:
            lines = response.aiter_lines()
            first = await anext(line async for line in lines if line.startswith("data:"))
            assert "TASK_STATE_INPUT_REQUIRED" in first
            answer = await rpc(client, "CancelTask", {"id": task_id})
            assert "result" in answer, answer
            rest = [line async for line in lines if line.startswith("data:")]
        assert "TASK_STATE_CANCELED" in rest[-1], rest

    await assert_leaves_no_task(client, errors, request)


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_subscriber_that_goes_away(
    client: httpx.AsyncClient, errors: ErrorRecords, binding: str
) -> None:
    """Subscribed to a parked task, the client drops the stream after the first event."""
    task_id = await parked_task(client)

    async def request() -> None:
        if binding == "jsonrpc":
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SubscribeToTask",
                "params": {"id": task_id},
            }
            stream = client.stream("POST", JSONRPC, json=body)
        else:
            stream = client.stream("GET", f"{REST}/tasks/{task_id}:subscribe")
        async with stream as response:
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    break  # and close the connection mid-stream

    await assert_leaves_no_task(client, errors, request)


async def test_a_subscription_to_a_terminal_task(
    client: httpx.AsyncClient, errors: ErrorRecords
) -> None:
    task_id = await completed_task(client)

    async def request() -> None:
        answer = await rpc(client, "SubscribeToTask", {"id": task_id})
        assert answer["error"]["code"] == -32004, answer

    await assert_leaves_no_task(client, errors, request)


async def test_an_authentication_refusal(
    diagnosed: RunningAgent, client: httpx.AsyncClient, errors: ErrorRecords
) -> None:
    async def request() -> None:
        async with httpx.AsyncClient(base_url=diagnosed.base_url, headers=HEADERS) as anonymous:
            for headers in ({}, {"Authorization": "Bearer nope"}):
                response = await anonymous.post(
                    JSONRPC,
                    json={"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}},
                    headers=headers,
                )
                assert response.status_code == 401
                response = await anonymous.post(
                    f"{REST}/message:stream", json={"message": describe()}, headers=headers
                )
                assert response.status_code in (200, 401)  # describe_skill is anonymous

    await assert_leaves_no_task(client, errors, request)


async def test_the_check_can_fail(client: httpx.AsyncClient, errors: ErrorRecords) -> None:
    """A task a request leaves behind is caught (here a subscriber kept open on purpose)."""
    task_id = await parked_task(client)
    before = await server_tasks(client)
    async with client.stream("GET", f"{REST}/tasks/{task_id}:subscribe") as response:
        lines = response.aiter_lines()  # held: an abandoned one would close the stream
        while not (await anext(lines)).startswith("data:"):
            pass
        left = await server_tasks(client) - before
        assert left["RequestResponseCycle.run_asgi"] == 1, left  # the open stream is counted
