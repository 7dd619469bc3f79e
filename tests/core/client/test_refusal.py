"""The agent's reason for a refused credential, read from either binding's error shape."""

from __future__ import annotations

import httpx

from agent.client import InterfaceInvalidError, refusal_in
from agent.client.errors import refusal_from_body
from agent.edge.wire_errors import UNAUTHENTICATED, jsonrpc_payload, rest_payload

METADATA = {"scheme": "Bearer", "error": "invalid_token"}


def test_the_rest_shape_gives_message_reason_and_metadata() -> None:
    refusal = refusal_from_body(401, rest_payload(UNAUTHENTICATED, "token has expired", METADATA))
    assert (refusal.status, refusal.message, refusal.reason) == (
        401,
        "token has expired",
        "UNAUTHENTICATED",
    )
    assert refusal.metadata == METADATA


def test_the_jsonrpc_shape_gives_the_same() -> None:
    body = jsonrpc_payload(UNAUTHENTICATED, "token is malformed", 7, METADATA)
    refusal = refusal_from_body(401, body)
    assert (refusal.message, refusal.reason, refusal.metadata) == (
        "token is malformed",
        "UNAUTHENTICATED",
        METADATA,
    )


def test_a_body_of_neither_shape_keeps_the_status_words() -> None:
    assert refusal_from_body(403, "<html>").message == "forbidden"
    assert refusal_from_body(401, None).reason == ""


def test_a_wrapped_http_refusal_is_found_behind_the_sdk_error() -> None:
    request = httpx.Request("POST", "http://agent/a2a/jsonrpc")
    body = jsonrpc_payload(UNAUTHENTICATED, "token has expired", 1, METADATA)
    response = httpx.Response(401, json=body, request=request)
    try:
        try:
            response.raise_for_status()
        except httpx.HTTPStatusError as exc:
            raise InterfaceInvalidError("wrapped") from exc
    except InterfaceInvalidError as wrapped:
        refusal = refusal_in(wrapped)
    assert refusal is not None and refusal.message == "token has expired"
    assert refusal.url == "http://agent/a2a/jsonrpc"


def test_other_failures_are_no_refusal() -> None:
    request = httpx.Request("GET", "http://agent/")
    error = httpx.HTTPStatusError("x", request=request, response=httpx.Response(500))
    assert refusal_in(error) is None
    assert refusal_in(ValueError("x")) is None
