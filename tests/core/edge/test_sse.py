"""agent/edge/sse.py: sse-starlette's bytes and behaviours (disconnect, ping, server exit) on a
real uvicorn server, with one helper task per stream."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import uvicorn
from a2a.server.routes import jsonrpc_dispatcher, rest_dispatcher
from hypothesis import given
from hypothesis import strategies as st
from sse_starlette.event import ServerSentEvent, ensure_bytes
from sse_starlette.sse import AppStatus, EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from agent import _sdk
from agent.edge import sse
from agent.edge.sse import EventStreamResponse, encode_event

text = st.text(st.characters(codec="utf-8"), max_size=40)  # line breaks of every kind included
events = st.one_of(
    st.fixed_dictionaries({"data": text}),
    st.fixed_dictionaries({"data": text, "event": text}),
    st.builds(lambda d, e: ServerSentEvent(data=d, event=e), text, st.none() | text),
    st.builds(lambda c: ServerSentEvent(comment=c), text),
    st.builds(lambda d, i: {"data": d, "id": i}, text, text),
    text.map(str.encode),
    text,
    st.integers(),
)


@given(events)
def test_every_event_is_encoded_as_sse_starlette_encodes_it(item: Any) -> None:
    assert encode_event(item) == ensure_bytes(item, "\r\n")


def test_the_bindings_stream_with_this_response() -> None:
    _sdk.stream_events_lean()
    _sdk.stream_events_lean()  # idempotent
    for module in (jsonrpc_dispatcher, rest_dispatcher):
        assert module.create_event_source_response is sse.create_event_stream_response


@dataclass
class Probe:
    """What the endpoints' event sources did, as the server saw it."""

    closed: threading.Event = field(default_factory=threading.Event)
    sent: int = 0


PROBE = Probe()


async def endless() -> AsyncIterator[dict[str, str]]:
    try:
        while True:
            PROBE.sent += 1
            yield {"data": f'{{"n":{PROBE.sent}}}'}
            await asyncio.sleep(0.05)
    finally:
        PROBE.closed.set()


async def quiet_then_one() -> AsyncIterator[dict[str, str]]:
    await asyncio.sleep(0.7)
    yield {"data": "{}", "event": "error"}


def _endpoint(source: Any, **options: Any) -> Any:
    async def endpoint(request: Request) -> Response:
        content = source() if callable(source) else source
        return EventStreamResponse(content, **options)

    return endpoint


def _reference(request: Request) -> Response:
    return EventSourceResponse(iter([{"data": "{}"}]))


APP = Starlette(
    routes=[
        Route("/endless", _endpoint(endless)),
        Route("/graceful", _endpoint(endless, shutdown_grace_period=0.3)),
        Route("/pinged", _endpoint(quiet_then_one, ping_seconds=0.2)),
        Route("/sync", _endpoint(lambda: iter([{"data": "{}"}])), methods=["GET", "HEAD"]),
        Route("/reference", _reference),
    ]
)


@contextlib.contextmanager
def serving() -> Iterator[str]:
    """APP on a real uvicorn server (its own event loop) on a free loopback port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(APP, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with serving() as url:
        yield url


@pytest.fixture(autouse=True)
def fresh_probe() -> None:
    PROBE.closed.clear()
    PROBE.sent = 0


def test_status_headers_and_bytes_are_sse_starlettes(base_url: str) -> None:
    ours, theirs = httpx.get(f"{base_url}/sync"), httpx.get(f"{base_url}/reference")
    assert (ours.status_code, ours.content) == (theirs.status_code, theirs.content)
    assert ours.content == b"data: {}\r\n\r\n"
    assert _without_date(ours) == _without_date(theirs)


def _without_date(response: httpx.Response) -> list[tuple[str, str]]:
    return sorted((k, v) for k, v in response.headers.multi_items() if k != "date")


def test_head_gets_the_headers_and_no_body(base_url: str) -> None:
    response = httpx.head(f"{base_url}/sync")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
    assert response.content == b""


def test_a_client_that_goes_away_closes_the_event_source(base_url: str) -> None:
    with httpx.stream("GET", f"{base_url}/endless") as response:
        lines = response.iter_lines()
        assert next(lines) == 'data: {"n":1}'
    assert PROBE.closed.wait(5), "the event source was not closed after the disconnect"
    sent = PROBE.sent
    time.sleep(0.3)
    assert PROBE.sent == sent, "events kept being produced for a client that left"


def test_a_quiet_stream_is_pinged(base_url: str) -> None:
    response = httpx.get(f"{base_url}/pinged", timeout=10)
    chunks = response.content.split(b"\r\n\r\n")
    pings = [c for c in chunks if c.startswith(b": ping - ")]
    assert len(pings) >= 2, response.content
    assert chunks[-2] == b"event: error\r\ndata: {}"  # the event itself comes after the pings
    assert chunks[-1] == b""


@pytest.mark.parametrize(("path", "grace"), [("/endless", 0.0), ("/graceful", 0.3)])
def test_a_server_exit_ends_open_streams_after_their_grace(
    path: str, grace: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serving() as base_url, httpx.stream("GET", f"{base_url}{path}", timeout=10) as response:
        lines = response.iter_lines()
        assert next(lines).startswith("data: ")
        told = time.monotonic()
        monkeypatch.setattr(AppStatus, "should_exit", True)
        rest = []
        for line in lines:  # ends: the stream is closed with its final empty body
            rest.append(line)
            if time.monotonic() - told > 5:
                break  # still streaming: fails below
        ended = time.monotonic() - told
    assert PROBE.closed.wait(5)
    # asyncio runs a timer up to its clock's resolution early: the grace may end a hair short
    assert grace - 0.01 <= ended < grace + sse.EXIT_POLL_SECONDS + 1.0, ended
    assert all(line.startswith("data: ") or line == "" for line in rest)
