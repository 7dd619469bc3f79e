"""A pytest plugin for the A2A TCK: every client it makes sends our bearer token.

The TCK (a2a-tck 1.0-dev) has no option for credentials, and this agent refuses anonymous
callers (only the public card and describe_skill are open). ``scripts/tck.py`` loads this
module into the TCK's own pytest run (``-p tck_bearer_plugin``, this folder on PYTHONPATH)
with the token in ``TCK_BEARER_TOKEN``: every httpx client gets an ``Authorization`` header,
every gRPC channel (``grpc.insecure_channel``) ``authorization`` metadata on each call. It
imports nothing from the project: it runs in the TCK's virtual environment.
"""

from __future__ import annotations

import os
from typing import Any

import httpx

TOKEN_VARIABLE = "TCK_BEARER_TOKEN"


def _with_token(kwargs: dict[str, Any]) -> None:
    token = os.environ.get(TOKEN_VARIABLE)
    if token:
        headers = httpx.Headers(kwargs.get("headers"))
        headers.setdefault("Authorization", f"Bearer {token}")
        kwargs["headers"] = headers


def _wrap(cls: type[httpx.Client] | type[httpx.AsyncClient]) -> None:
    original = cls.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        _with_token(kwargs)
        original(self, *args, **kwargs)

    cls.__init__ = init  # type: ignore[method-assign]


class _Details:
    """The call's details with the token added to its metadata."""

    def __init__(self, details: Any, token: str) -> None:
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = [*(details.metadata or ()), ("authorization", f"Bearer {token}")]
        self.credentials = details.credentials
        self.wait_for_ready = getattr(details, "wait_for_ready", None)
        self.compression = getattr(details, "compression", None)


def _interceptor(token: str) -> Any:
    import grpc

    class Bearer(
        grpc.UnaryUnaryClientInterceptor,
        grpc.UnaryStreamClientInterceptor,
        grpc.StreamUnaryClientInterceptor,
        grpc.StreamStreamClientInterceptor,
    ):
        def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
            return continuation(_Details(details, token), request)

        def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
            return continuation(_Details(details, token), request)

        def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
            return continuation(_Details(details, token), requests)

        def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
            return continuation(_Details(details, token), requests)

    return Bearer()


def _wrap_grpc() -> None:
    token = os.environ.get(TOKEN_VARIABLE)
    try:
        import grpc
    except ImportError:  # a TCK without its gRPC dependency runs no gRPC test
        return
    if not token:
        return
    original = grpc.insecure_channel

    def channel(target: str, *args: Any, **kwargs: Any) -> Any:
        return grpc.intercept_channel(original(target, *args, **kwargs), _interceptor(token))

    grpc.insecure_channel = channel


def pytest_configure(config: Any) -> None:
    """Patch before the TCK's session fixtures build their clients."""
    _wrap(httpx.Client)
    _wrap(httpx.AsyncClient)
    _wrap_grpc()
