"""The HTTP+JSON binding fuzzed: every route, bad paths, methods, query parameters and bodies.

The SDK's REST routes come with no OpenAPI document (they are plain Starlette routes mounted
under /a2a/rest), so schemathesis has nothing to drive; hypothesis generates the requests.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import CrashLog, Fuzzer, closing_checks, fuzz
from tests.fuzz.strategies import json_values, send_params, task_ids
from tests.fuzz.test_fuzz_jsonrpc import PRINTABLE

TARGET = "rest"
REST = "/a2a/rest"
ROUTES = {
    "/message:send": {"POST"},
    "/message:stream": {"POST"},
    "/tasks/{id}": {"GET"},
    "/tasks/{id}:cancel": {"POST"},
    "/tasks/{id}:subscribe": {"GET", "POST"},
    "/tasks/{id}/pushNotificationConfigs": {"GET", "POST"},
    "/tasks/{id}/pushNotificationConfigs/{push_id}": {"GET", "DELETE"},
    "/tasks": {"GET"},
    "/extendedAgentCard": {"GET"},
}
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
query_values = st.one_of(
    st.text(max_size=20),
    st.integers(min_value=-(2**65), max_value=2**65).map(str),
    st.sampled_from(["true", "TASK_STATE_COMPLETED", "2026-11-29T12:00:00Z", "-1", "1e9", ""]),
)
segments = st.one_of(task_ids, st.text(max_size=20)).map(lambda s: quote(s, safe=""))


@fuzz(1800, postgresql=300)
@given(
    route=st.sampled_from(sorted(ROUTES)),
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH"]),
    task_id=segments,
    push_id=segments,
    tenant=st.one_of(st.none(), segments.filter(bool)),
    query=st.dictionaries(st.sampled_from(QUERY_KEYS), query_values, max_size=3),
    body=st.one_of(st.none(), json_values),
)
def test_routes(fuzzer: Fuzzer, route, method, task_id, push_id, tenant, query, body):
    """Every route and method with odd ids, tenants, query parameters and bodies."""
    path = route.replace("{id}", task_id or "x").replace("{push_id}", push_id or "y")
    prefix = f"{REST}/{tenant}" if tenant else REST
    content = None if body is None else json.dumps(body).encode()
    answer = fuzzer.send(
        TARGET, method, prefix + path, binding="rest", content=content, params=query
    )
    if answer.kind == "rest_error" and answer.reason == "TASK_NOT_FOUND":
        assert answer.status == 404, answer
    if route in ("/tasks/{id}", "/tasks/{id}:cancel") and method in ROUTES[route]:
        # nobody's task has this id: not found, or an id that is no id at all: invalid
        assert answer.status in (400, 404), answer


@fuzz(600, postgresql=100)
@given(stream=st.booleans(), params=send_params())
def test_send_bodies(fuzzer: Fuzzer, stream, params):
    """message:send and message:stream with mutated SendMessageRequest bodies."""
    path = f"{REST}/message:stream" if stream else f"{REST}/message:send"
    answer = fuzzer.send(TARGET, "POST", path, binding="rest", content=json.dumps(params).encode())
    if not isinstance(params, dict) or not isinstance(params.get("message"), dict):
        assert answer.kind == "rest_error" and answer.status == 400, answer


@fuzz(500, postgresql=25)
@given(
    raw=st.one_of(st.binary(max_size=120), st.text(max_size=120).map(str.encode)),
    version=st.one_of(st.none(), st.sampled_from(["1.0", "2.0", "0.3"]), PRINTABLE),
    path=st.sampled_from(["/message:send", "/message:stream", "/tasks/abc:cancel"]),
)
def test_bytes_and_versions(fuzzer: Fuzzer, raw, version, path):
    """Bytes that are no request, with and without a usable A2A-Version."""
    headers = fuzzer.headers()
    if version is None:
        del headers["A2A-Version"]
    else:
        headers["A2A-Version"] = version
    answer = fuzzer.send(TARGET, "POST", REST + path, binding="rest", content=raw, headers=headers)
    assert answer.kind == "rest_error" and 400 <= answer.status < 500, answer


def test_zz_closing_checks(fuzzer: Fuzzer, crash_log: CrashLog, record_property) -> None:
    """Last in the module: the plan met, nothing crashed, nothing lost (harness.closing_checks)."""
    closing_checks(fuzzer, crash_log, TARGET, record_property)
