"""Background work begins once the app serves (agent/edge/first_request.py): at the first HTTP
request, or a delay after the lifespan armed it if none comes; never twice, never after the
lifespan has ended."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from agent.edge.first_request import WARM_UP_DELAY_SECONDS, FirstRequestMiddleware, WarmUp
from agent.settings import Settings
from netops.app import create_app


async def _ok(scope: Any, receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def test_the_first_http_request_begins_it_once() -> None:
    begun: list[str] = []
    warm_up = WarmUp(delay=60)
    warm_up.arm(lambda: begun.append("now"))
    app = FirstRequestMiddleware(_ok, warm_up)
    await app({"type": "lifespan"}, None, None)  # not a request
    assert begun == [] and warm_up.armed
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://a") as c:
        assert (await c.get("/")).status_code == 204
        assert begun == ["now"] and not warm_up.armed
        await c.get("/")
    assert begun == ["now"]


async def test_without_a_request_it_begins_after_the_delay() -> None:
    begun = asyncio.Event()
    warm_up = WarmUp(delay=0.05)
    warm_up.arm(begun.set)
    await asyncio.wait_for(begun.wait(), 5)
    assert not warm_up.armed


async def test_disarmed_it_never_begins() -> None:
    begun: list[str] = []
    warm_up = WarmUp(delay=0.01)
    warm_up.arm(lambda: begun.append("late"))
    warm_up.disarm()
    warm_up.fire()
    await asyncio.sleep(0.05)
    assert begun == []


def _app(home: Path) -> Any:
    settings = Settings(home=home, seed_on_start=False, grpc_port=0)
    return create_app(settings, live_telemetry=False)


async def test_the_app_warms_up_at_its_first_request(tmp_path: Path) -> None:
    """Started, the app has begun nothing in the background; its first request (here the
    card) begins the classifier's training and the MCP endpoint's build."""
    app = _app(tmp_path)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://agent") as client,
    ):
        assert not app.state.mcp.started
        card = await client.get("/.well-known/agent-card.json")
        assert card.status_code == 200
        assert app.state.mcp.started
        await app.state.mcp.projection()  # built, then


async def test_the_app_warms_up_without_a_request_too(tmp_path: Path) -> None:
    app = _app(tmp_path)
    async with app.router.lifespan_context(app):
        assert not app.state.mcp.started
        await asyncio.sleep(WARM_UP_DELAY_SECONDS + 0.3)
        assert app.state.mcp.started
