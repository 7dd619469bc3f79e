"""What every fuzzed answer must look like, and the count that proves the fuzz ran.

One real agent serves the whole fuzz session (``conftest.py``); every request goes over real
HTTP through ``Fuzzer.send``, which counts it per target and checks the answer's shape before
the test looks at the specific code:

* never a 5xx, never a JSON-RPC internal error (-32603): both mean the agent crashed on input;
* a JSON-RPC answer is a JSON-RPC 2.0 response (``result`` or ``error{code, message}``);
* a REST error is the binding's ``{"error": {code, status, message}}`` body;
* a task in a terminal failure state carries exactly one Data Part, an error object whose
  ``code`` is one of the draft's, and never ``execution_failed`` (an unexpected exception).
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings

from agent.interfaces import ErrorCode
from tests.a2a_helpers import edge_reason
from tests.conftest import RunningAgent

DRAFT_CODES = frozenset(code.value for code in ErrorCode)
JSONRPC_INTERNAL_ERROR = -32603
TERMINAL_ERRORS = frozenset({"TASK_STATE_REJECTED", "TASK_STATE_FAILED"})
TASK_STATES = frozenset(
    {
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
        "TASK_STATE_FAILED",
        "TASK_STATE_CANCELED",
        "TASK_STATE_INPUT_REQUIRED",
        "TASK_STATE_REJECTED",
        "TASK_STATE_AUTH_REQUIRED",
    }
)

PLANNED: dict[str, dict[str, int]] = {
    "hostile": {"sqlite": 480, "postgresql": 480},
    "jsonrpc": {"sqlite": 3800, "postgresql": 530},
    "rest": {"sqlite": 2900, "postgresql": 425},
    "skill_arguments": {"sqlite": 1300, "postgresql": 210},
    "messages": {"sqlite": 1200, "postgresql": 220},
    "body_limits": {"sqlite": 1250, "postgresql": 75},
}
"""Requests each fuzz target (one module each) must send on each backend; its closing checks
hold it to that. Every target runs on both. On PostgreSQL the older targets run a planned share
(``fuzz(..., postgresql=n)`` per test, weighted to the requests that reach the database), which
keeps CI within its budget; ``hostile`` (its classes are about the database) runs in full."""
MINIMUM_TOTAL: dict[str, int] = {"sqlite": 10_000, "postgresql": 1_900}
TASKS_AT_LEAST: dict[str, dict[str, int]] = {
    # about half of what a run reports (SQLite: 52, 57, 1076, 122; PostgreSQL: 11, 14, 198, 56);
    # body limits refuse every request before any task exists
    "jsonrpc": {"sqlite": 20, "postgresql": 5},
    "rest": {"sqlite": 20, "postgresql": 7},
    "skill_arguments": {"sqlite": 500, "postgresql": 100},
    "messages": {"sqlite": 60, "postgresql": 28},
    "hostile": {"sqlite": 10, "postgresql": 10},
}
"""Tasks each target's answers must report, so that "no task was lost" is never vacuous."""


def fuzz(examples: int, *, postgresql: int | None = None) -> Callable[[Any], Any]:
    """Reproducible settings (the same examples on every run, no deadline) for a ``@given`` test:
    ``examples`` on SQLite and ``postgresql`` (default: the same) on PostgreSQL.

    The count is the test's own ``max_examples`` on each backend, fixed when the tests are
    collected (``tests/fuzz/conftest.py`` gives each PostgreSQL item its own copy, see
    ``for_backend``); a test never skips examples, which would upset Hypothesis's replay of
    ``st.data()`` draws.
    """
    counts = {"sqlite": examples, "postgresql": examples if postgresql is None else postgresql}

    def apply(test: Any) -> Any:
        wrapped = settings(
            max_examples=examples,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        )(test)
        wrapped.fuzz_examples = counts
        return wrapped

    return apply


def for_backend(test: Any, backend: str) -> Any:
    """The ``@fuzz`` test to run on ``backend``: itself, or the same ``@given`` test built again
    around the same function with that backend's ``max_examples``."""
    counts = getattr(test, "fuzz_examples", None)
    current = getattr(test, "_hypothesis_internal_use_settings", None)
    if counts is None or current is None or counts[backend] == current.max_examples:
        return test
    handle = test.hypothesis  # Hypothesis's handle: the undecorated test and @given's strategies
    rebuilt = settings(current, max_examples=counts[backend])(
        given(**handle._given_kwargs)(handle.inner_test)
    )
    rebuilt.fuzz_examples = counts
    return rebuilt


@dataclass
class Answer:
    """One checked answer: what kind it was and the code a test may assert on."""

    status: int
    kind: str  # rpc_error | rpc_result | rest_error | rest_result | http_error
    code: int | str | None = None
    reason: str | None = None  # a REST error's google.rpc.ErrorInfo reason
    state: str | None = None
    task_id: str | None = None
    error: dict[str, Any] | None = None
    body: Any = None
    events: list[Any] = field(default_factory=list)


def _events(text: str) -> list[tuple[str, Any]]:
    """The (event, data) pairs of an SSE body."""
    events, name, data = [], "message", []
    for line in [*re.split(r"\r\n|\r|\n", text), ""]:  # not splitlines(): U+0085 is data
        if not line:
            if data:
                events.append((name, json.loads("\n".join(data))))
            name, data = "message", []
        elif line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
    return events


def _task_of(result: dict[str, Any]) -> dict[str, Any] | None:
    """The task in a SendMessage result, a StreamResponse, or a bare Task."""
    if "task" in result:
        return result["task"]
    if "statusUpdate" in result:
        update = result["statusUpdate"]
        return {"id": update.get("taskId"), "status": update["status"]}
    if "id" in result and "status" in result:
        return result
    return None


def check_task(task: dict[str, Any], answer: Answer) -> None:
    """A terminal failure carries a draft error object; no task ever ends execution_failed."""
    state = task.get("status", {}).get("state")
    assert state in TASK_STATES, f"unknown task state {state!r}"
    answer.state = state
    answer.task_id = task.get("id") or answer.task_id
    if state not in TERMINAL_ERRORS:
        return
    parts = task["status"]["message"]["parts"]
    assert len(parts) == 1 and "data" in parts[0], "an error status holds exactly one Data Part"
    error = parts[0]["data"]
    assert error["code"] in DRAFT_CODES, f"{error['code']!r} is not a draft error code"
    assert error["code"] != ErrorCode.EXECUTION_FAILED, f"the agent crashed: {error}"
    assert set(error) <= {"code", "message", "details"}, error
    answer.code, answer.error = error["code"], error


def _check_rpc(payload: Any, answer: Answer) -> None:
    assert isinstance(payload, dict) and payload.get("jsonrpc") == "2.0", payload
    assert ("result" in payload) != ("error" in payload), payload
    if "error" in payload:
        error = payload["error"]
        assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str)
        assert error["code"] != JSONRPC_INTERNAL_ERROR, f"internal error: {error}"
        answer.kind, answer.code, answer.error = "rpc_error", error["code"], error
        return
    answer.kind = "rpc_result"
    result = payload["result"]
    task = _task_of(result) if isinstance(result, dict) else None
    if task is not None:
        check_task(task, answer)


def _check_rest(payload: Any, status: int, answer: Answer) -> None:
    if status >= 400:
        assert isinstance(payload, dict) and isinstance(payload.get("error"), dict), payload
        error = payload["error"]
        assert error.get("code") == status and isinstance(error.get("message"), str), payload
        answer.kind, answer.code, answer.error = "rest_error", status, error
        infos = [d for d in error.get("details", []) if isinstance(d, dict) and "reason" in d]
        answer.reason = infos[0]["reason"] if infos else None
        return
    answer.kind = "rest_result"
    if isinstance(payload, dict):
        if "error" in payload:  # an error event inside a stream
            answer.kind, answer.error = "rest_error", payload["error"]
            answer.code = payload["error"].get("code")
            assert answer.code != 500, payload
            return
        task = _task_of(payload)
        if task is not None:
            check_task(task, answer)


def check(response: httpx.Response, binding: str) -> Answer:
    """Assert the invariants every answer to a malformed request keeps; classify it."""
    status = response.status_code
    assert status < 500, f"{status} from the agent: {response.text[:300]}"
    answer = Answer(status=status, kind="http_error")
    media = response.headers.get("content-type", "")
    if media.startswith("text/event-stream"):
        assert status == 200
        events = _events(response.text)
        answer.events = [data for _, data in events]
        for _, data in events:
            if binding == "jsonrpc":
                _check_rpc(data, answer)
            else:
                _check_rest(data, status, answer)
        return answer
    if 300 <= status < 400:
        # Starlette's redirect_slashes: a path with a trailing slash points at the one without
        assert status in (307, 308) and "location" in response.headers, response.headers
        return answer
    if "json" not in media:
        # Starlette's router: an unknown REST path or method is a bare 404/405
        assert status in (404, 405), f"{status} {media}: {response.text[:200]}"
        return answer
    payload = response.json()
    answer.body = payload
    if status in (404, 405) and isinstance(payload, dict) and set(payload) == {"detail"}:
        return answer  # FastAPI's router: a path outside every route (e.g. a newline in it)
    if status == 401:
        assert edge_reason(payload) == "UNAUTHENTICATED", payload
        answer.code = 401
        return answer
    if binding == "jsonrpc" and status in (200, 413):
        _check_rpc(payload, answer)
    else:
        _check_rest(payload, status, answer)
    return answer


class Fuzzer:
    """A keep-alive HTTP client against the fuzz agent that counts and checks every answer."""

    def __init__(self, agent: RunningAgent, backend: str = "sqlite") -> None:
        self.backend = backend
        self.client = httpx.Client(base_url=agent.base_url, timeout=60)
        self.tokens = {who: agent.token(who) for who in ("alice", "paula")}
        auditor = ["inventory.read", "assurance.read", "capacity.read", "audit.read"]
        self.tokens["auditor"] = agent.token("alice", scopes=auditor)
        self.token = self.tokens["alice"]
        self.limits = agent.settings.limits
        self.counts: Counter[str] = Counter()
        self.tasks: dict[str, tuple[str, str]] = {}
        """Every task an answer reported: id -> (the caller's token, its last state)."""

    @staticmethod
    def dumps(value: Any) -> bytes:
        """JSON as a client would send it (NaN and Infinity included)."""
        return json.dumps(value).encode()

    def headers(self, **extra: str) -> dict[str, str]:
        """The headers of a well-formed call; tests override or drop some."""
        return {
            "A2A-Version": "1.0",
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json",
            **extra,
        }

    def send(
        self,
        target: str,
        method: str,
        path: str,
        *,
        binding: str,
        content: bytes | Any = None,
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
    ) -> Answer:
        """One request, counted under ``target``, its answer checked."""
        response = self.client.request(
            method,
            path,
            content=content,
            headers=self.headers() if headers is None else headers,
            params=params,
        )
        self.counts[target] += 1
        answer = check(response, binding)
        if answer.task_id and answer.state:
            sent = (headers or {}).get("Authorization", f"Bearer {self.token}")
            self.tasks[answer.task_id] = (sent.removeprefix("Bearer "), answer.state)
        return answer

    def rpc(self, target: str, body: Any, *, token: str | None = None) -> Answer:
        """A JSON-RPC call with a JSON body."""
        headers = self.headers()
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return self.send(
            target,
            "POST",
            "/a2a/jsonrpc",
            binding="jsonrpc",
            content=json.dumps(body).encode(),
            headers=headers,
        )


class CrashLog(logging.Handler):
    """Keeps the ERROR records the agent's own modules log."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def closing_checks(
    fuzzer: Fuzzer,
    crash_log: CrashLog,
    target: str,
    record: Callable[[str, object], None] = lambda name, value: None,
) -> None:
    """What a fuzz module must leave behind: its planned requests sent, no crash, an agent that
    still works, and every task it was told about stored in the state it was told.

    Hypothesis stops early when a strategy runs out of distinct examples, so the request count,
    not ``max_examples``, is held to the plan.
    """
    sent, tasks = fuzzer.counts[target], len(fuzzer.tasks)
    planned = PLANNED[target][fuzzer.backend]
    record("backend", fuzzer.backend)
    record("requests", sent)
    record("tasks", tasks)
    print(f"\nfuzz {target} on {fuzzer.backend}: {sent} requests, {tasks} tasks", file=sys.stderr)
    assert sent >= planned, f"{target} sent {sent} of {planned} planned on {fuzzer.backend}"
    crashes = [f"{r.name}: {r.getMessage()}" for r in crash_log.records]
    assert not crashes, crashes[:5]
    _still_works(fuzzer)
    at_least = TASKS_AT_LEAST.get(target, {}).get(fuzzer.backend, 0)
    assert tasks >= at_least, (target, fuzzer.backend, tasks, at_least)
    _no_task_lost(fuzzer)


def _still_works(fuzzer: Fuzzer) -> None:
    """Healthy, and a valid request still runs to completion and can be read back."""
    health = fuzzer.client.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    data = {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}
    message = {
        "messageId": "after-fuzz",
        "role": "ROLE_USER",
        "parts": [{"mediaType": "application/json", "data": data}],
    }
    answer = fuzzer.rpc(
        "after",
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
    )
    assert answer.state == "TASK_STATE_COMPLETED", answer
    task_id = answer.body["result"]["task"]["id"]
    read = fuzzer.send("after", "GET", f"/a2a/rest/tasks/{task_id}", binding="rest")
    assert read.state == "TASK_STATE_COMPLETED", read


def _no_task_lost(fuzzer: Fuzzer) -> None:
    """Every task an answer reported is stored, in the state it reported."""
    for task_id, (token, state) in sorted(fuzzer.tasks.items())[:200]:
        headers = fuzzer.headers(Authorization=f"Bearer {token}")
        stored = fuzzer.send(
            "after", "GET", f"/a2a/rest/tasks/{task_id}", binding="rest", headers=headers
        )
        assert stored.state == state, (task_id, state, stored)
    tokens = {token for token, _ in fuzzer.tasks.values()}
    for token in tokens:
        mine = sum(1 for t, _ in fuzzer.tasks.values() if t == token)
        headers = fuzzer.headers(Authorization=f"Bearer {token}")
        listed = fuzzer.send(
            "after",
            "GET",
            "/a2a/rest/tasks",
            binding="rest",
            headers=headers,
            params={"pageSize": "1"},
        )
        assert listed.body["totalSize"] >= mine, (listed.body["totalSize"], mine)
