"""bench.perf counts an answer only when its task is COMPLETED with its result.

Against real servers (the echo agent on both stores, `netagent serve` on SQLite, each a real
process on loopback): every real answer of every cell counts, and the same answer with its
result removed, its state changed, or its stream cut short does not; nor does a real refusal.
Run by hand (bench/ is outside the suite's testpaths):

    PYTHONPATH=. .venv/bin/python -m pytest bench/perf/test_answers.py -p no:cacheprovider -q
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from bench.perf import answers
from bench.perf.client import Connection, Target, run_load
from bench.perf.scenarios import governed_targets, reference_targets
from bench.perf.servers import Server, agent_server, echo_server, tokens


def exchange(target: Target, n: int = 1) -> bytes:
    async def go() -> tuple[int, bytes]:
        connection = Connection(target.port)
        try:
            return await connection.exchange(target.request(n))
        finally:
            await connection.close()

    status, body = asyncio.run(go())
    assert status == 200, body[:300]
    return body


def without_artifacts(body: bytes) -> bytes:
    answer = json.loads(body)
    answer["result"]["task"].pop("artifacts")
    return json.dumps(answer).encode()


def stream_cut(body: bytes) -> bytes:
    """The stream without its last event (the COMPLETED status update)."""
    events = [e for e in body.split(b"\n\n") if e.strip()]
    return b"\n\n".join(events[:-1]) + b"\n\n"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("perf-answers")


@pytest.fixture(scope="module", params=["memory", "sqlite"])
def echo(request: pytest.FixtureRequest, workdir: Path) -> Iterator[Server]:
    server = echo_server(workdir, sdk_tracing=True, store=request.param).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def agent(workdir: Path) -> Iterator[tuple[Server, tuple[str, ...]]]:
    home = workdir / "home"
    bearers = tokens(home, "paula", 2)
    url = f"sqlite+aiosqlite:///{home / 'netagent.db'}"
    server = agent_server(workdir, home, url, sdk_tracing=True).start()
    try:
        yield server, bearers
    finally:
        server.stop()


def test_echo_answers_count_and_altered_ones_do_not(echo: Server) -> None:
    targets = reference_targets(echo.port, ("unused",))
    send, stream = targets["send"], targets["stream"]
    body = exchange(send)
    assert send.check(body) is None
    assert "echoed" in (send.check(without_artifacts(body)) or "")
    working = body.replace(b'"TASK_STATE_COMPLETED"', b'"TASK_STATE_WORKING"')
    assert "TASK_STATE_WORKING" in (send.check(working) or "")
    other = answers.completed_with(answers.echoed({"skill": "echo", "arguments": {}}))
    assert other(body) is not None
    streamed = exchange(stream)
    assert stream.check(streamed) is None
    assert stream.check(stream_cut(streamed)) is not None
    assert targets["card"].check(exchange(targets["card"])) is None


def test_a_json_rpc_error_does_not_count(echo: Server) -> None:
    send = reference_targets(echo.port, ())["send"]
    broken = replace(send, body=send.body.replace(b'"SendMessage"', b'"NoSuchMethod"'))
    assert "JSON-RPC error" in (send.check(exchange(broken)) or "")


def test_the_database_echo_stores_its_tasks(echo: Server) -> None:
    """--store sqlite is the SDK's DatabaseTaskStore: the tasks are rows in its SQLite file."""
    send = reference_targets(echo.port, ())["send"]
    cell = asyncio.run(run_load(send, 4, 20, 30))
    assert (cell.ok, cell.errors) == (20, 0)
    files = [fd.resolve() for fd in Path(f"/proc/{echo.pid}/fd").iterdir()]
    databases = [f for f in files if f.name == "echo-tasks.db"]
    if "memory" in echo.name:
        assert databases == []
        return
    assert databases, files
    with sqlite3.connect(databases[0]) as connection:
        stored = connection.execute(
            "SELECT count(*) FROM tasks WHERE status LIKE '%COMPLETED%'"
        ).fetchone()[0]
    assert stored >= 20


def test_governed_answers_count_and_altered_ones_do_not(
    agent: tuple[Server, tuple[str, ...]],
) -> None:
    server, bearers = agent
    targets = governed_targets(server.port, server.base_url, bearers)
    bodies = {key: exchange(target) for key, target in targets.items()}
    for key, target in targets.items():
        assert target.check(bodies[key]) is None, (key, target.check(bodies[key]))
    for key in ("describe", "evaluate", "text", "capacity"):
        assert targets[key].check(without_artifacts(bodies[key])) is not None, key
    assert targets["stream"].check(stream_cut(bodies["stream"])) is not None
    # the evaluate check takes no other skill's result, nor describe another skill's document
    assert targets["evaluate"].check(bodies["describe"]) is not None
    assert answers.completed_with(answers.described("check_link_capacity"))(bodies["describe"]) == (
        "completed without the description of check_link_capacity"
    )
    # check_link_capacity counts its records: 24 in the window, not 25
    assert answers.completed_with(answers.capacity_checked(25))(bodies["capacity"]) is not None
    assert answers.completed_with(answers.capacity_checked(None))(bodies["capacity"]) is None
    # an MCP tools/call counts with its result and its records, not as a tool error
    assert targets["mcp"].check(bodies["evaluate"]) is not None
    mcp = json.loads(bodies["mcp"])
    mcp["result"]["content"] = mcp["result"]["content"][:1]
    assert "records not embedded" in (answers.mcp_evaluated(json.dumps(mcp).encode()) or "")
    refused = {"result": {"isError": True, "structuredContent": {"code": "input_invalid"}}}
    assert "tool error" in (answers.mcp_evaluated(json.dumps(refused).encode()) or "")


def test_a_refused_invocation_does_not_count(agent: tuple[Server, tuple[str, ...]]) -> None:
    server, bearers = agent
    evaluate = governed_targets(server.port, server.base_url, bearers)["evaluate"]
    stale = evaluate.body.replace(b'"interface_digest":"sha256:', b'"interface_digest":"sha256:0')
    body = exchange(replace(evaluate, body=stale))
    assert "TASK_STATE_REJECTED" in (evaluate.check(body) or ""), body[:300]
