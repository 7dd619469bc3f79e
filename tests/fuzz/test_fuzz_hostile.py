"""Issue 18's classes as fuzz targets, in full on SQLite and on PostgreSQL.

* NUL (and, where JSON can carry one, an unpaired surrogate) in every string parameter of the
  A2A methods on both bindings and in every REST query parameter: a client error or a result,
  never a 5xx or -32603, and the marker the value carries never in an error.
* The console's pages and APIs: its filters and ``since`` values, and arguments of any shape
  and depth for ``/api/validate`` and ``/api/invoke``: never a 5xx.
* Eight follow-ups and a CancelTask at once on one parked task, round after round: every
  answer a task or a protocol error, and the task ends in one terminal state.
* A text part beside a Data Part whose ``arguments`` is not an object (item 7): a clear
  ``input_invalid``, never -32603.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

import httpx
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import CrashLog, Fuzzer, check, closing_checks, fuzz
from tests.fuzz.strategies import json_values

TARGET = "hostile"
MARKER = "Zq7h"
AUDITOR = ["inventory.read", "assurance.read", "capacity.read", "audit.read"]

hostile_text = st.builds(
    lambda head, bad, tail: f"{MARKER}{head}{bad}{tail}",
    st.text(max_size=8),
    st.sampled_from(["\x00", "\x00\x00", "a\x00b", "\x00" * 40]),
    st.text(max_size=8),
)
"""A string with a NUL in it, marked so an echo would show."""
json_text = st.one_of(hostile_text, hostile_text.map(lambda s: s.replace("\x00", "\ud800", 1)))
"""What JSON can carry besides: an unpaired surrogate."""

A2A_PLACES = (
    "GetTask.id",
    "CancelTask.id",
    "SubscribeToTask.id",
    "ListTasks.contextId",
    "ListTasks.pageToken",
    "SendMessage.messageId",
    "SendMessage.contextId",
    "SendMessage.taskId",
    "SendMessage.text",
    "SendMessage.metadata",
    "SendMessage.metadata_key",
    "SendMessage.data",
    "SendMessage.data_key",
    "SendMessage.arguments",
    "SendMessage.extensions",
    "SendMessage.referenceTaskIds",
    "SendMessage.acceptedOutputModes",
    "GetTaskPushNotificationConfig.taskId",
)


def _message(**extra: Any) -> dict[str, Any]:
    return {
        "messageId": "hostile",
        "role": "ROLE_USER",
        "parts": [{"text": "check link acme-lnk-00002"}],
        **extra,
    }


def _params(place: str, value: str) -> tuple[str, dict[str, Any]]:
    method, member = place.split(".")
    if method != "SendMessage":
        return method, {member: value}
    data = {"skill": "lookup_inventory", "arguments": {"link_id": "acme-lnk-00001"}}
    message: dict[str, Any] = {
        "messageId": _message,
        "contextId": _message,
        "taskId": _message,
        "text": lambda: _message(parts=[{"text": value}]),
        "metadata": lambda: _message(metadata={"k": value}),
        "metadata_key": lambda: _message(metadata={value: 1}),
        "data": lambda: _message(parts=[{"data": {"skill": value}}]),
        "data_key": lambda: _message(parts=[{"data": {value: 1}}]),
        "arguments": lambda: _message(parts=[{"data": {**data, "arguments": {"link_id": value}}}]),
        "extensions": lambda: _message(extensions=[value]),
        "referenceTaskIds": lambda: _message(referenceTaskIds=[value]),
        "acceptedOutputModes": _message,
    }[member]()
    if member in ("messageId", "contextId", "taskId"):
        message[member] = value
    params: dict[str, Any] = {"message": message}
    if member == "acceptedOutputModes":
        params["configuration"] = {"acceptedOutputModes": [value]}
    return method, params


def _rest(fuzzer: Fuzzer, method: str, params: dict[str, Any]) -> Any:
    """The same call on HTTP+JSON (ids in the path, ListTasks' members in the query)."""
    if method == "SendMessage":
        body = fuzzer.dumps(params)
        return fuzzer.send(TARGET, "POST", "/a2a/rest/message:send", binding="rest", content=body)
    if method == "ListTasks":
        return fuzzer.send(TARGET, "GET", "/a2a/rest/tasks", binding="rest", params=params)
    task_id = quote(next(iter(params.values())), safe="")
    path = {
        "GetTask": ("GET", f"/a2a/rest/tasks/{task_id}"),
        "CancelTask": ("POST", f"/a2a/rest/tasks/{task_id}:cancel"),
        "SubscribeToTask": ("GET", f"/a2a/rest/tasks/{task_id}:subscribe"),
        "GetTaskPushNotificationConfig": (
            "GET",
            f"/a2a/rest/tasks/{task_id}/pushNotificationConfigs/x",
        ),
    }[method]
    return fuzzer.send(TARGET, *path, binding="rest")


def _no_echo(answer: Any) -> None:
    errors = [answer.error, *(e.get("error") for e in answer.events if isinstance(e, dict))]
    assert all(MARKER not in json.dumps(e) for e in errors if e), errors


@fuzz(200)
@given(
    place=st.sampled_from(A2A_PLACES), binding=st.sampled_from(["jsonrpc", "rest"]), data=st.data()
)
def test_nul_in_every_a2a_string(fuzzer: Fuzzer, place, binding, data):
    """Each string parameter of each method, on both bindings: a client error, unechoed."""
    value = data.draw(json_text if binding == "jsonrpc" else hostile_text)
    method, params = _params(place, value)
    if binding == "jsonrpc":
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        answer = fuzzer.rpc(TARGET, body)
    else:
        answer = _rest(fuzzer, method, params)
    _no_echo(answer)
    if place.startswith(("GetTask.", "CancelTask.", "ListTasks.")):
        assert answer.kind in ("rpc_error", "rest_error"), answer


QUERY_KEYS = (
    "historyLength",
    "pageSize",
    "pageToken",
    "status",
    "contextId",
    "includeArtifacts",
    "statusTimestampAfter",
    "tenant",
)


@fuzz(80)
@given(query=st.dictionaries(st.sampled_from(QUERY_KEYS), hostile_text, min_size=1, max_size=3))
def test_nul_in_every_rest_query_parameter(fuzzer: Fuzzer, query):
    answer = fuzzer.send(TARGET, "GET", "/a2a/rest/tasks", binding="rest", params=query)
    _no_echo(answer)  # (the SDK reads an unknown ``status`` or ``tenant`` as no filter at all)


since_values = st.one_of(
    hostile_text,
    st.builds(lambda n, u: f"{n}{u}", st.integers(0, 10**30), st.sampled_from("mhdsx")),
    st.builds(
        lambda d, u: f"{d}{u}",
        st.text(alphabet="\u00b2\u0663\u06f1\uff11\u2075", min_size=1, max_size=4),
        st.sampled_from("mhd"),
    ),
    st.builds(
        lambda y, h, m, sign: f"{y:04d}-01-01T00:00:00{sign}{h:02d}:{m:02d}",
        st.sampled_from([1, 2, 1970, 9998, 9999]),
        st.integers(0, 23),
        st.integers(0, 59),
        st.sampled_from(["+", "-"]),
    ),
    st.text(max_size=20),
)
CONSOLE_PAGES = {
    "network": {"link": hostile_text, "window": st.one_of(hostile_text, st.text(max_size=5))},
    "audit": {"task": hostile_text, "principal": hostile_text, "since": since_values},
    "try": {"skill": hostile_text},
    "skills": {},
    "tasks": {},
}


@fuzz(80)
@given(page=st.sampled_from(sorted(CONSOLE_PAGES)), data=st.data())
def test_console_pages(fuzzer: Fuzzer, page, data):
    """Every console page with hostile filters: a page or a client error, never a 5xx."""
    members = CONSOLE_PAGES[page]
    names = data.draw(st.lists(st.sampled_from(sorted(members)), unique=True)) if members else []
    query = {name: data.draw(members[name]) for name in names}
    headers = {"Authorization": f"Bearer {fuzzer.tokens['auditor']}"}
    response = fuzzer.client.get(f"/console/{page}", params=query, headers=headers)
    fuzzer.counts[TARGET] += 1
    assert response.status_code < 500, (page, query, response.text[:300])


def _deep(depth: int, opener: str) -> str:
    closer = {"[": "]", '{"k":': "}"}[opener]
    return opener * depth + "1" + closer * depth


@fuzz(60)
@given(
    api=st.sampled_from(["validate", "invoke"]),
    skill=st.one_of(
        st.sampled_from(["lookup_inventory", "check_link_capacity", "describe_skill"]), hostile_text
    ),
    arguments=st.one_of(
        json_values,
        st.dictionaries(hostile_text, json_values, max_size=3),
        st.builds(lambda d, o: _deep(d, o), st.integers(30, 3000), st.sampled_from(["[", '{"k":'])),
    ),
)
def test_console_apis(fuzzer: Fuzzer, api, skill, arguments):
    """validate and invoke with any arguments, any depth: the A2A limits, never a 5xx."""
    raw = (
        arguments if isinstance(arguments, str) and arguments[:1] in "[{" else json.dumps(arguments)
    )
    body = '{"skill": ' + json.dumps(skill) + ', "arguments": ' + raw + "}"
    headers = {
        "Authorization": f"Bearer {fuzzer.tokens['auditor']}",
        "Content-Type": "application/json",
    }
    response = fuzzer.client.post(f"/console/api/{api}", content=body.encode(), headers=headers)
    fuzzer.counts[TARGET] += 1
    assert response.status_code < 500, response.text[:300]
    assert '"code": -32603' not in response.text and '"code":-32603' not in response.text
    if response.status_code == 400:
        assert MARKER not in response.text, response.text[:300]


# -- follow-ups racing a cancel ----------------------------------------------------------------

RACE_ROUNDS = 8
FOLLOW_UPS = 8


async def _round(client: httpx.AsyncClient, fuzzer: Fuzzer) -> None:
    headers = fuzzer.headers()

    async def call(method: str, params: Any) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        response = await client.post("/a2a/jsonrpc", json=body, headers=headers)
        fuzzer.counts[TARGET] += 1
        return check(response, "jsonrpc")

    ask = {
        "messageId": "ask",
        "role": "ROLE_USER",
        "parts": [{"text": "is the cpu utilisation over 90 percent?"}],
    }
    first = await call("SendMessage", {"message": ask})
    assert first.state == "TASK_STATE_INPUT_REQUIRED", first
    follow = {
        "role": "ROLE_USER",
        "taskId": first.task_id,
        "parts": [{"data": {"resource_id": "network-resource-123"}}],
    }
    calls = [
        call("SendMessage", {"message": {**follow, "messageId": f"f{i}"}})
        for i in range(FOLLOW_UPS)
    ]
    calls.insert(FOLLOW_UPS // 2, call("CancelTask", {"id": first.task_id}))
    for answer in await asyncio.gather(*calls):
        assert answer.kind == "rpc_result" or answer.code in (-32001, -32002, -32004), answer
    final = await call("GetTask", {"id": first.task_id})
    assert final.state in ("TASK_STATE_CANCELED", "TASK_STATE_COMPLETED"), final
    fuzzer.tasks[first.task_id] = (fuzzer.token, final.state)


def test_follow_ups_racing_a_cancel(fuzzer: Fuzzer) -> None:
    async def rounds() -> None:
        async with httpx.AsyncClient(base_url=fuzzer.client.base_url, timeout=60) as client:
            for _ in range(RACE_ROUNDS):
                await _round(client, fuzzer)

    asyncio.run(rounds())


# -- item 7 ------------------------------------------------------------------------------------

NON_OBJECTS: list[Any] = [0, 5, -1.5, "x", "", [1], [], None, True, False]


def test_text_beside_a_data_part_with_non_object_arguments(fuzzer: Fuzzer) -> None:
    """Counted apart ("mixed"), so the plan does not depend on this mark."""
    crashed = []
    for arguments in NON_OBJECTS:
        for skill in (None, "lookup_inventory", "check_link_capacity"):
            for text_first in (True, False):
                data: dict[str, Any] = {"arguments": arguments}
                if skill:
                    data["skill"] = skill
                parts = [{"text": "check link acme-lnk-00002"}, {"data": data}]
                message = _message(parts=parts if text_first else parts[::-1])
                body = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendMessage",
                    "params": {"message": message},
                }
                try:
                    fuzzer.rpc("mixed", body)
                except AssertionError as failure:
                    crashed.append((arguments, skill, text_first, str(failure)[:80]))
    assert not crashed, crashed


def test_zz_closing_checks(fuzzer: Fuzzer, crash_log: CrashLog, record_property) -> None:
    """Last in the module: the plan met, nothing crashed, nothing lost (harness.closing_checks)."""
    closing_checks(fuzzer, crash_log, TARGET, record_property)
