"""A pytest plugin for the A2A TCK: every HTTP client it makes sends our bearer token.

The TCK (a2a-tck 1.0-dev) has no option for credentials, and this agent refuses anonymous
callers (only the public card and describe_skill are open). ``scripts/tck.py`` loads this
module into the TCK's own pytest run (``-p tck_bearer_plugin``, this folder on PYTHONPATH)
with the token in ``TCK_BEARER_TOKEN``. It imports nothing from the project: it runs in the
TCK's virtual environment.
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


def pytest_configure(config: Any) -> None:
    """Patch before the TCK's session fixtures build their clients."""
    _wrap(httpx.Client)
    _wrap(httpx.AsyncClient)
