"""Malformed JSON-RPC envelopes, params, bytes and headers against the real agent.

Every answer is checked by the harness (no 5xx, no internal error, a JSON-RPC error object or
a task with a draft code); where the generator knows what it broke, the code is asserted.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from packaging.version import InvalidVersion, Version

from tests.fuzz.harness import CrashLog, Fuzzer, closing_checks, fuzz
from tests.fuzz.strategies import (
    METHODS,
    SAFE_METHODS,
    ids,
    json_values,
    method_params,
    send_params,
)

TARGET = "jsonrpc"
INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, PARSE_ERROR = -32600, -32601, -32602, -32700
VERSION_NOT_SUPPORTED = -32009


@fuzz(700, postgresql=80)
@given(
    method=st.one_of(st.sampled_from(SAFE_METHODS), st.text(max_size=30), json_values),
    request_id=ids,
    version=st.one_of(st.just("2.0"), json_values),
    drop=st.lists(st.sampled_from(["jsonrpc", "id", "method", "params"]), max_size=2),
    params=json_values,
)
def test_envelopes(fuzzer: Fuzzer, method, request_id, version, drop, params):
    """Wrong types and missing members in the envelope itself."""
    body = {"jsonrpc": version, "id": request_id, "method": method, "params": params}
    for key in drop:
        body.pop(key, None)
    answer = fuzzer.rpc(TARGET, body)
    envelope_ok = (
        body.get("jsonrpc") == "2.0"
        and isinstance(body.get("method"), str)
        and body["method"]
        and (body.get("id") is None or type(body["id"]) in (str, int))
        and ("params" not in body or isinstance(body["params"], dict | list))  # JSON-RPC 2.0 §4.2
    )
    if not envelope_ok:
        assert answer.kind == "rpc_error", answer
        assert answer.code in (INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS), answer
    elif body["method"] not in METHODS:
        assert answer.code == METHOD_NOT_FOUND, answer


@fuzz(600, postgresql=200)
@given(method=st.sampled_from(SAFE_METHODS), data=st.data())
def test_params_of_every_method(fuzzer: Fuzzer, method, data):
    """Known non-send methods with params of every shape: a protocol error, never a crash."""
    params = data.draw(method_params(method))
    answer = fuzzer.rpc(TARGET, {"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
    if params is None:  # read as absent; the method's request cannot be built from it
        assert answer.kind == "rpc_error", answer
    elif not isinstance(params, dict | list):  # JSON-RPC 2.0 §4.2: params is structured
        assert answer.code == INVALID_REQUEST, answer


@fuzz(600, postgresql=150)
@given(
    method=st.sampled_from(["SendMessage", "SendStreamingMessage"]),
    params=send_params(),
)
def test_send_params(fuzzer: Fuzzer, method, params):
    """SendMessage with mutated messages: a protocol error, or a task with a draft code."""
    answer = fuzzer.rpc(TARGET, {"jsonrpc": "2.0", "id": "s", "method": method, "params": params})
    if params is not None and not isinstance(params, dict | list):
        assert answer.code == INVALID_REQUEST, answer
    elif not isinstance(params, dict) or not isinstance(params.get("message"), dict):
        assert answer.kind == "rpc_error", answer


@fuzz(1100, postgresql=50)
@given(raw=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)))
def test_garbage_bytes(fuzzer: Fuzzer, raw):
    """Bytes that are not JSON are a parse error (-32700); JSON that is no request, -32600."""
    answer = fuzzer.send(TARGET, "POST", "/a2a/jsonrpc", binding="jsonrpc", content=raw)
    try:
        parsed = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        assert answer.code == PARSE_ERROR, answer
        return
    if not isinstance(parsed, dict):
        assert answer.code == INVALID_REQUEST, answer


@fuzz(400, postgresql=25)
@given(
    cut=st.integers(min_value=0, max_value=200),
    method=st.sampled_from(METHODS),
)
def test_truncated_requests(fuzzer: Fuzzer, cut, method):
    """A well-formed request cut short anywhere is a parse error."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": method,
            "params": {
                "message": {"messageId": "t", "role": "ROLE_USER", "parts": [{"text": "x"}]}
            },
        }
    ).encode()
    raw = body[: min(cut, len(body) - 1)]
    answer = fuzzer.send(TARGET, "POST", "/a2a/jsonrpc", binding="jsonrpc", content=raw)
    assert answer.code == PARSE_ERROR, answer


PRINTABLE = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=1)
HEADER_VALUES = st.one_of(
    st.sampled_from(["1.0", "1", "1.0.9", "2.0", "0.3", "abc", "1.0, 2.0", "v1", "1.0 beta"]),
    PRINTABLE.filter(lambda v: len(v) <= 30),
)


@fuzz(400, postgresql=25)
@given(
    version=st.one_of(st.none(), HEADER_VALUES),
    media=st.one_of(
        st.none(),
        st.sampled_from(
            ["text/plain", "application/xml", "multipart/form-data", "application/json; x=y"]
        ),
        PRINTABLE.filter(lambda v: len(v) <= 40),
    ),
    extensions=st.one_of(st.none(), HEADER_VALUES),
    method=st.sampled_from(["GetTask", "ListTasks", "GetExtendedAgentCard", "CancelTask"]),
)
def test_headers(fuzzer: Fuzzer, version, media, extensions, method):
    """Odd A2A-Version, Content-Type and A2A-Extensions headers."""
    headers = fuzzer.headers()
    for name, value in (
        ("A2A-Version", version),
        ("Content-Type", media),
        ("A2A-Extensions", extensions),
    ):
        if value is None:
            headers.pop(name, None)
        else:
            headers[name] = value
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": method, "params": {"id": "nope"}})
    answer = fuzzer.send(
        TARGET, "POST", "/a2a/jsonrpc", binding="jsonrpc", content=body.encode(), headers=headers
    )
    if not _speaks_1_x(version):
        assert answer.code == VERSION_NOT_SUPPORTED, answer
    else:
        assert answer.code != VERSION_NOT_SUPPORTED, answer


def _speaks_1_x(header: str | None) -> bool:
    """The SDK's rule: no header means 0.3; otherwise the major version must be 1."""
    value = (header or "").strip()
    if not value:
        return False
    try:
        return value == "1.0" or Version(value).major == 1
    except InvalidVersion:
        return False


def test_an_unauthenticated_caller_is_refused_before_parsing(fuzzer: Fuzzer):
    """No token or a junk one: 401 with the edge's error body, whatever the request."""
    headers = fuzzer.headers()
    del headers["Authorization"]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}).encode()
    for auth in (None, "Bearer not-a-jwt", "Basic Zm9vOmJhcg==", "Bearer", "Bearer a.b.c"):
        if auth is not None:
            headers["Authorization"] = auth
        answer = fuzzer.send(
            TARGET, "POST", "/a2a/jsonrpc", binding="jsonrpc", content=body, headers=headers
        )
        assert answer.code == 401, answer


def test_zz_closing_checks(fuzzer: Fuzzer, crash_log: CrashLog, record_property) -> None:
    """Last in the module: the plan met, nothing crashed, nothing lost (harness.closing_checks)."""
    closing_checks(fuzzer, crash_log, TARGET, record_property)
