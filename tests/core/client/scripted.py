"""A scripted A2A agent on loopback (uvicorn, Starlette): it serves ``card`` as its agent card
and answers every JSON-RPC call with the bytes it was given last, recording what it got.

``tests/core/client/test_calls.py`` has the governed client call it;
``tests/unit/test_cli_misshapen_answer.py`` the network agent's command line.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.conftest import free_port


@dataclass
class Scripted:
    """What the server answers next, and every request it got."""

    status: int = 200
    body: bytes = b"{}"
    delay: float = 0.0
    card: dict[str, Any] = field(default_factory=dict)
    requests: list[tuple[dict[str, str], Any]] = field(default_factory=list)

    def answer(self, body: Any, status: int = 200, delay: float = 0.0) -> None:
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.status = status
        self.delay = delay


@contextmanager
def scripted_agent() -> Iterator[tuple[Scripted, str]]:
    """The agent's script, and its JSON-RPC endpoint's URL (``<base>/rpc``), while it serves."""
    script = Scripted()

    async def rpc(request: Request) -> Response:
        raw = await request.body()
        script.requests.append((dict(request.headers), json.loads(raw)))
        if script.delay:
            await asyncio.sleep(script.delay)
        return Response(script.body, status_code=script.status, media_type="application/json")

    async def agent_card(request: Request) -> Response:
        return Response(json.dumps(script.card), media_type="application/json")

    port = free_port()
    routes = [
        Route("/rpc", rpc, methods=["POST"]),
        Route("/.well-known/agent-card.json", agent_card, methods=["GET"]),
    ]
    app = Starlette(routes=routes)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    try:
        yield script, f"http://127.0.0.1:{port}/rpc"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def governed_card(url: str, tenant: str = "") -> dict[str, Any]:
    """A card advertising describe_skill and one skill, bound by the extension, at ``url``."""
    from agent.interfaces import EXTENSION_URI, INTERFACE_VERSION

    binding = {"skill_id": "x", "skill_version": "1.0", "interface_digest": "sha256:" + "0" * 64}
    interface = {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    if tenant:
        interface["tenant"] = tenant
    return {
        "name": "scripted",
        "supportedInterfaces": [interface],
        "capabilities": {
            "extensions": [
                {
                    "uri": EXTENSION_URI,
                    "params": {"interface_version": INTERFACE_VERSION, "skills": [binding]},
                }
            ]
        },
        "skills": [{"id": "describe_skill"}, {"id": "x"}],
    }
