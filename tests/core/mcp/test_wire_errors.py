"""The fixed JSON-RPC errors of MCP (agent/mcp/wire_errors.py), code by code."""

from __future__ import annotations

import json

import pytest

from agent.mcp import wire_errors

MARK = "<html>" + "m" * 60_000


def rewritten(error: dict[str, object], status: int = 200) -> dict[str, object]:
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "error": error}).encode()
    fixed = wire_errors.fixed_body(body, status)
    assert fixed is not None
    answer = json.loads(fixed)
    assert answer["id"] == 3 and MARK not in fixed.decode()
    return dict(answer["error"])


@pytest.mark.parametrize("code", [*wire_errors.TEXTS, 0, -1, 7, "x", None, 10**400])
def test_every_code_gets_its_fixed_text_and_no_data(code: object) -> None:
    error = rewritten({"code": code, "message": MARK, "data": MARK})
    expected = code if code in wire_errors.TEXTS else wire_errors.INTERNAL_ERROR
    assert error["code"] == expected
    assert error["message"] == wire_errors.TEXTS[int(str(expected))]
    if expected != wire_errors.UNSUPPORTED_VERSION:
        assert "data" not in error


def test_an_unsupported_version_keeps_the_versions_to_negotiate_with() -> None:
    """A client of the MCP SDK picks a version from ``data.supported`` (its ``mode="auto"``
    falls back on it): those stay, a requested value that is no version is not repeated."""
    data = {"supported": ["2025-11-25", MARK, 5], "requested": MARK}
    error = rewritten({"code": wire_errors.UNSUPPORTED_VERSION, "message": MARK, "data": data})
    assert error["data"] == {"supported": ["2025-11-25"], "requested": ""}
    data = {"supported": ["2025-11-25"], "requested": "2026-07-28"}
    error = rewritten({"code": wire_errors.UNSUPPORTED_VERSION, "message": "x", "data": data})
    assert error["data"] == data


@pytest.mark.parametrize(("status", "text"), [(405, wire_errors.NOT_ALLOWED), (415, None)])
def test_a_plain_text_refusal_becomes_a_json_rpc_error(status: int, text: str | None) -> None:
    fixed = wire_errors.fixed_body(b"Invalid Content-Type header " + MARK.encode(), status)
    assert fixed is not None
    error = json.loads(fixed)["error"]
    assert error["code"] == wire_errors.INVALID_REQUEST
    assert error["message"] == (text or wire_errors.UNSUPPORTED_TYPE)


def test_a_successful_answer_is_left_alone() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"error"}]}}'
    assert wire_errors.fixed_body(body, 200) is None
