"""The straight send path answers exactly as the SDK's JSON-RPC dispatcher does.

Two real agents on uvicorn, seeded alike: one as shipped (agent/edge/jsonrpc_send.py takes a
well-formed SendMessage), one whose JSON-RPC endpoint always hands the request to the SDK's
dispatcher (as it does when a tracer provider records the SDK's spans). Every request below,
the well-formed and the hostile, goes to both; status, content type and the JSON answer must
be the same, member order included, once the ids and clocks each run makes up are replaced by
placeholders.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import agent.app.transports
from tests.conftest import RunningAgent, start_agent

JSONRPC = "/a2a/jsonrpc"
VERSION = {"A2A-Version": "1.0"}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningAgent, RunningAgent]]:
    straight = start_agent(tmp_path_factory.mktemp("straight"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(agent.app.transports, "sdk_spans_recorded", lambda: True)
        dispatched = start_agent(tmp_path_factory.mktemp("dispatched"))
    yield straight, dispatched
    straight.stop()
    dispatched.stop()


def _message(*parts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": list(parts), **extra}


def _data(skill: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"mediaType": "application/json", "data": {"skill": skill, "arguments": arguments}}


def _rpc(
    params: Any, request_id: Any = "r-1", method: str = "SendMessage", **members: Any
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": params,
        **members,
    }


WORKED = {
    "resource_id": "network-resource-123",
    "metric": "utilization",
    "operator": "gte",
    "threshold": 80,
}
EVALUATE = {"message": _message(_data("evaluate_resource_condition", WORKED))}
DESCRIBE = {"message": _message(_data("describe_skill", {"skill_id": "lookup_inventory"}))}
TEXT = {"message": _message({"text": "is the utilization of network-resource-123 at least 80%?"})}

# (name, body as bytes, extra headers); each body is sent as it is
CASES: list[tuple[str, bytes, dict[str, str]]] = [
    (name, json.dumps(body).encode(), headers)
    for name, body, headers in [
        ("evaluate by Data Part", _rpc(EVALUATE), VERSION),
        ("describe_skill", _rpc(DESCRIBE), VERSION),
        ("text routed", _rpc(TEXT), VERSION),
        ("text that asks back", _rpc({"message": _message({"text": "hello there"})}), VERSION),
        (
            "invalid arguments",
            _rpc({"message": _message(_data("evaluate_resource_condition", {"metric": 3}))}),
            VERSION,
        ),
        ("a skill nobody has", _rpc({"message": _message(_data("no_such_skill", {}))}), VERSION),
        (
            "a follow-up to an unknown task",
            _rpc({"message": _message({"text": "x"}, taskId="nope")}),
            VERSION,
        ),
        ("unknown params member", _rpc({**EVALUATE, "futureField": 1}), VERSION),
        (
            "unknown enum value",
            _rpc({"message": {**EVALUATE["message"], "role": "ROLE_WHO"}}),
            VERSION,
        ),
        ("params of the wrong type", _rpc({"message": "text"}), VERSION),
        ("params a list", _rpc([EVALUATE]), VERSION),
        ("params missing", {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}, VERSION),
        ("empty params", _rpc({}), VERSION),
        ("integer id", _rpc(EVALUATE, 7), VERSION),
        ("zero id", _rpc(EVALUATE, 0), VERSION),
        ("huge id", _rpc(EVALUATE, 2**70), VERSION),
        ("empty id", _rpc(EVALUATE, ""), VERSION),
        ("boolean id", _rpc(EVALUATE, True), VERSION),
        ("null id", _rpc(EVALUATE, None), VERSION),
        ("float id", _rpc(EVALUATE, 1.5), VERSION),
        ("object id", _rpc(EVALUATE, {"a": 1}), VERSION),
        (
            "no id (a notification)",
            {"jsonrpc": "2.0", "method": "SendMessage", "params": EVALUATE},
            VERSION,
        ),
        ("an extra member", _rpc(EVALUATE, extra=1), VERSION),
        ("jsonrpc 2.1", {**_rpc(EVALUATE), "jsonrpc": "2.1"}, VERSION),
        ("jsonrpc a number", {**_rpc(EVALUATE), "jsonrpc": 2.0}, VERSION),
        ("method in another case", {**_rpc(EVALUATE), "method": "sendMessage"}, VERSION),
        ("method an object", {**_rpc(EVALUATE), "method": {"a": 1}}, VERSION),
        ("method a list", {**_rpc(EVALUATE), "method": ["SendMessage"]}, VERSION),
        ("method a number", {**_rpc(EVALUATE), "method": 1}, VERSION),
        ("method null", {**_rpc(EVALUATE), "method": None}, VERSION),
        ("no version header", _rpc(EVALUATE), {}),
        ("version 0.3", _rpc(EVALUATE), {"A2A-Version": "0.3"}),
        ("version 1.1", _rpc(EVALUATE), {"A2A-Version": "1.1"}),
        ("version 2.0", _rpc(EVALUATE), {"A2A-Version": "2.0"}),
        ("version garbage", _rpc(EVALUATE), {"A2A-Version": "one"}),
        ("version lower-case header", _rpc(EVALUATE), {"a2a-version": "1.0"}),
    ]
]
CASES += [
    ("a batch", json.dumps([_rpc(EVALUATE)]).encode(), VERSION),
    ("an empty batch", b"[]", VERSION),
    ("not JSON", b"{not json", VERSION),
    ("a JSON string", b'"SendMessage"', VERSION),
    (
        "deep JSON",
        b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":'
        + b"[" * 5000
        + b"]" * 5000
        + b"}",
        VERSION,
    ),
    (
        "NUL in the text",
        json.dumps(_rpc({"message": _message({"text": "cpu\u0000 above 90"})})).encode(),
        VERSION,
    ),
    (
        "duplicate members",
        b'{"jsonrpc":"2.0","id":1,"id":2,"method":"SendMessage","params":{}}',
        VERSION,
    ),
]

# SendStreamingMessage: the same bodies as a stream (its first event eager, refusals before the
# task as JSON, every event of a run as SSE, a refusal mid-stream as an error event)
STREAM = "SendStreamingMessage"
LOCK = json.loads((Path(__file__).resolve().parents[2] / "skills/interfaces.lock.json").read_text())


def _governed(skill: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A Data Part with the interface pinned (skill_version, interface_digest): it runs."""
    part = _data(skill, arguments)
    pin = {key: LOCK[skill][key] for key in ("skill_version", "interface_digest")}
    return {**part, "data": {**part["data"], **pin}}


EXAMPLE = {  # the draft's worked example, as evaluate_resource_condition's schema takes it
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
GOVERNED = {"message": _message(_governed("evaluate_resource_condition", EXAMPLE))}
CAPACITY = {
    "message": _message(
        _governed("check_link_capacity", {"link_id": "acme-lnk-00002", "requested_bps": 10**9})
    )
}
CASES += [
    (f"stream: {name}", json.dumps(body).encode(), headers)
    for name, body, headers in [
        ("evaluate by Data Part, not pinned", _rpc(EVALUATE, method=STREAM), VERSION),
        ("evaluate by Data Part, pinned", _rpc(GOVERNED, method=STREAM), VERSION),
        ("describe_skill", _rpc(DESCRIBE, method=STREAM), VERSION),
        ("a capacity check with its records", _rpc(CAPACITY, method=STREAM), VERSION),
        ("text routed", _rpc(TEXT, method=STREAM), VERSION),
        (
            "text that asks back",
            _rpc({"message": _message({"text": "hello there"})}, method=STREAM),
            VERSION,
        ),
        (
            "invalid arguments",
            _rpc(
                {"message": _message(_data("evaluate_resource_condition", {"metric": 3}))},
                method=STREAM,
            ),
            VERSION,
        ),
        (
            "a skill nobody has",
            _rpc({"message": _message(_data("no_such_skill", {}))}, method=STREAM),
            VERSION,
        ),
        (
            "a follow-up to an unknown task",
            _rpc({"message": _message({"text": "x"}, taskId="nope")}, method=STREAM),
            VERSION,
        ),
        (
            "a push config inside the send",
            _rpc(
                {**EVALUATE, "configuration": {"taskPushNotificationConfig": {"url": "http://x"}}},
                method=STREAM,
            ),
            VERSION,
        ),
        ("params of the wrong type", _rpc({"message": "text"}, method=STREAM), VERSION),
        ("empty params", _rpc({}, method=STREAM), VERSION),
        ("integer id", _rpc(EVALUATE, 7, method=STREAM), VERSION),
        ("null id", _rpc(EVALUATE, None, method=STREAM), VERSION),
        ("an extra member", _rpc(EVALUATE, method=STREAM, extra=1), VERSION),
        ("no version header", _rpc(EVALUATE, method=STREAM), {}),
        ("version 2.0", _rpc(EVALUATE, method=STREAM), {"A2A-Version": "2.0"}),
        (
            "NUL in the text",
            _rpc({"message": _message({"text": "cpu\u0000 above 90"})}, method=STREAM),
            VERSION,
        ),
    ]
]

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")


def _normalized(text: str) -> str:
    return _TIME.sub("<time>", _UUID.sub("<id>", text))


def _post(running: RunningAgent, body: bytes, headers: dict[str, str]) -> httpx.Response:
    token = running.token("alice")
    head = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", **headers}
    return httpx.post(running.base_url + JSONRPC, content=body, headers=head, timeout=30)


@pytest.mark.parametrize(("name", "body", "headers"), CASES, ids=[c[0] for c in CASES])
def test_both_ways_answer_alike(
    pair: tuple[RunningAgent, RunningAgent], name: str, body: bytes, headers: dict[str, str]
) -> None:
    straight, dispatched = pair
    ours, theirs = _post(straight, body, headers), _post(dispatched, body, headers)
    assert ours.status_code == theirs.status_code
    assert ours.status_code < 500
    assert ours.headers.get("content-type") == theirs.headers.get("content-type")
    assert _normalized(ours.text) == _normalized(theirs.text)


def test_the_straight_path_is_taken(pair: tuple[RunningAgent, RunningAgent]) -> None:
    """The shipped agent answers SendMessage without the dispatcher (a test that the pair
    above compares two different ways, not one way twice)."""
    straight, dispatched = pair
    app_routes = [
        r for r in straight.server.config.app.router.routes if getattr(r, "path", "") == JSONRPC
    ]
    endpoint = app_routes[0].endpoint  # type: ignore[attr-defined]
    assert endpoint.__self__._straight is True  # type: ignore[attr-defined]
    other = [
        r for r in dispatched.server.config.app.router.routes if getattr(r, "path", "") == JSONRPC
    ]
    assert other[0].endpoint.__self__._straight is False  # type: ignore[attr-defined]


def test_a_stream_takes_the_straight_path(pair: tuple[RunningAgent, RunningAgent]) -> None:
    """SendStreamingMessage goes the straight way too (the stream cases above compare two
    different ways), and a malformed one still goes to the dispatcher."""
    straight, _ = pair
    route = next(
        r for r in straight.server.config.app.router.routes if getattr(r, "path", "") == JSONRPC
    ).endpoint.__self__  # type: ignore[attr-defined]
    taken: list[str | int] = []
    original = route._stream

    async def counted(message: Any, context: Any, request_id: str | int) -> Any:
        taken.append(request_id)
        return await original(message, context, request_id)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(route, "_stream", counted)
        answer = _post(straight, json.dumps(_rpc(GOVERNED, "s-1", method=STREAM)).encode(), VERSION)
        assert answer.status_code == 200
        events = [
            json.loads(line[6:]) for line in answer.text.split("\r\n") if line[:6] == "data: "
        ]
        kinds = [next(iter(e["result"])) for e in events]
        assert kinds[0] == "task" and "artifactUpdate" in kinds, kinds
        assert events[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        batch = json.dumps([_rpc(EVALUATE, "s-2", method=STREAM)]).encode()
        assert _post(straight, batch, VERSION).status_code < 500
    assert taken == ["s-1"]


@pytest.mark.parametrize("method", ["SendMessage", STREAM])
def test_a_refusal_is_logged_as_the_dispatcher_logs_it(
    pair: tuple[RunningAgent, RunningAgent], method: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A protocol error the handler raises (a follow-up to a task nobody has) is logged the
    same both ways: the dispatcher logs a stream's refusal as one WARNING line naming the
    request and the code, and a blocking send's not at all (its answer says it)."""
    straight, dispatched = pair
    logged = []
    for running, request_id in ((straight, "log-straight"), (dispatched, "log-dispatched")):
        follow_up = _message({"text": "and now?"}, taskId=str(uuid.uuid4()))
        body = json.dumps(_rpc({"message": follow_up}, request_id, method=method)).encode()
        with caplog.at_level(logging.WARNING):
            caplog.clear()
            answer = _post(running, body, VERSION)
            assert answer.status_code == 200
            lines = [
                (r.levelno, r.getMessage().replace(request_id, "<id>"))
                for r in caplog.records
                if f"(ID: {request_id})" in r.getMessage()
            ]
        logged.append(lines)
    assert logged[0] == logged[1]
    if method == STREAM:
        ((level, line),) = logged[0]
        assert level == logging.WARNING and "Code=-32001" in line, line
    else:
        assert logged[0] == []


def test_a_straight_answers_records_are_what_the_store_and_the_other_bindings_read(
    pair: tuple[RunningAgent, RunningAgent],
) -> None:
    """The straight answer prints its records from what the run kept as JSON, and the task
    leaves them out of its Structs (no one read them): the stored task, read back over
    JSON-RPC and HTTP+JSON, holds every record as the answer printed it."""
    straight, _ = pair
    token = straight.token("alice")
    head = {"Authorization": f"Bearer {token}", **VERSION}
    sent = httpx.post(
        straight.base_url + JSONRPC, json=_rpc(CAPACITY), headers=head, timeout=30
    ).json()["result"]["task"]
    assert sent["status"]["state"] == "TASK_STATE_COMPLETED"
    assert len(sent["artifacts"]) > 2 and all(a["parts"] for a in sent["artifacts"])
    got = httpx.post(
        straight.base_url + JSONRPC,
        json=_rpc({"id": sent["id"]}, method="GetTask"),
        headers=head,
        timeout=30,
    ).json()["result"]
    rest = httpx.get(f"{straight.base_url}/a2a/rest/tasks/{sent['id']}", headers=head, timeout=30)
    assert rest.status_code == 200, rest.text
    for read in (got, rest.json()):
        assert read["artifacts"] == sent["artifacts"]
