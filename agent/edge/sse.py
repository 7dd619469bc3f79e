"""The SSE response of both HTTP bindings, with one helper task per stream instead of five.

The SDK answers a streaming call with sse-starlette's ``EventSourceResponse``: per stream an
anyio task group with a task that streams, one that pings, one that waits for the client to go,
one that waits for the server to stop, each wrapped to cancel the others. On a streamed
call that machinery costs more CPU than the call's own work (measure it with ``python -m
bench.perf --profile``). This response keeps what those tasks are for, at a fraction of the cost:

- the same bytes (status, headers, each event encoded exactly as ``ServerSentEvent.encode``);
- a client that goes away ends the stream (the event source is closed, so the handler forgets
  its listener; the task itself runs on, as it would without a stream);
- a comment line every ``PING_SECONDS`` while nothing else is sent, for proxies that close
  quiet connections;
- when the server is told to stop, open streams get ``shutdown_grace_period`` seconds to end
  by themselves, then are ended (with the closing empty body, so the client sees the end).

One task per stream waits for the client's disconnect and sends the pings; one task per event
loop watches for the server's exit, as sse-starlette's does, and reads the same two signals
(its ``AppStatus.should_exit``, which its patch of uvicorn's exit handler sets, and the uvicorn
server behind the SIGTERM handler).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from sse_starlette.event import ServerSentEvent
from sse_starlette.sse import AppStatus
from starlette.datastructures import MutableHeaders
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

PING_SECONDS = 15.0
"""sse-starlette's default ping interval."""
EXIT_POLL_SECONDS = 0.5
"""How often the per-loop watcher looks for the server's exit (sse-starlette's interval)."""
SEPARATOR = "\r\n"


def encode_event(item: Any) -> bytes:
    """One event's bytes, exactly as sse-starlette's ``ensure_bytes`` with its separator.

    The bindings yield ``{"data": json}`` or ``{"event": "error", "data": json}`` (JSON-RPC)
    and ``ServerSentEvent(data=json)`` (HTTP+JSON); JSON text has no raw line break, so the
    common case is one format string. Anything else goes through ``ServerSentEvent`` itself.
    """
    if isinstance(item, bytes | memoryview):
        return bytes(item)
    if isinstance(item, dict) and item.keys() <= {"data", "event"}:
        data, event = item.get("data"), item.get("event", "")
        if isinstance(data, str) and isinstance(event, str) and _plain(data) and _plain(event):
            head = f"event: {event}{SEPARATOR}" if "event" in item else ""
            return f"{head}data: {data}{SEPARATOR}{SEPARATOR}".encode()
    if isinstance(item, ServerSentEvent):
        return item.encode()
    if isinstance(item, dict):
        return ServerSentEvent(**{**item, "sep": SEPARATOR}).encode()
    return ServerSentEvent(str(item), sep=SEPARATOR).encode()


def _plain(text: str) -> bool:
    return "\n" not in text and "\r" not in text


def server_exiting() -> bool:
    """Whether the server was told to stop (sse-starlette's two signals)."""
    if AppStatus.should_exit:
        return True
    if not AppStatus.enable_automatic_graceful_drain:
        return False
    handler = signal.getsignal(signal.SIGTERM)
    server = getattr(handler, "__self__", None)
    return bool(getattr(server, "should_exit", False))


class _Streams:
    """The open streams of one event loop, and the one task that watches for the exit."""

    def __init__(self) -> None:
        self.open: set[EventStreamResponse] = set()
        self.watcher: asyncio.Task[None] | None = None
        self.exiting = False

    def add(self, stream: EventStreamResponse) -> None:
        self.open.add(stream)
        if self.exiting:
            stream.exit_after_grace()
        elif self.watcher is None or self.watcher.done():
            self.watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while not server_exiting():
            if not self.open:
                return  # started again by the next stream
            await asyncio.sleep(EXIT_POLL_SECONDS)
        self.exiting = True
        for stream in list(self.open):
            stream.exit_after_grace()


_BY_LOOP: dict[asyncio.AbstractEventLoop, _Streams] = {}


def _streams() -> _Streams:
    loop = asyncio.get_running_loop()
    streams = _BY_LOOP.get(loop)
    if streams is None:
        for old in [old for old in _BY_LOOP if old.is_closed()]:
            del _BY_LOOP[old]
        streams = _BY_LOOP[loop] = _Streams()
    return streams


class EventStreamResponse(Response):
    """``text/event-stream`` from an (async) iterable of events; see the module docstring."""

    media_type = "text/event-stream"

    def __init__(
        self,
        content: AsyncIterable[Any] | Iterable[Any],
        *,
        headers: Mapping[str, str] | None = None,
        shutdown_grace_period: float = 0,
        ping_seconds: float = PING_SECONDS,
    ) -> None:
        if shutdown_grace_period < 0:
            raise ValueError("shutdown_grace_period must be >= 0")
        self.content = content
        self.status_code = 200
        self.background = None
        all_headers = MutableHeaders(headers=dict(headers or {}))
        all_headers.setdefault("Cache-Control", "no-store")
        all_headers["Connection"] = "keep-alive"
        all_headers["X-Accel-Buffering"] = "no"
        self.init_headers(all_headers)
        self.grace = shutdown_grace_period
        self.ping_seconds = ping_seconds
        self.active = False
        self._task: asyncio.Task[Any] | None = None
        self._ended_by: str | None = None  # "client" or "shutdown", once it cancelled the stream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        start = {"type": "http.response.start", "status": 200, "headers": self.raw_headers}
        if scope.get("method", "").upper() == "HEAD":
            await send(start)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        self._task = asyncio.current_task()
        streams = _streams()
        self.active = True
        await send(start)
        helper = asyncio.get_running_loop().create_task(self._client_side(receive, send))
        streams.add(self)
        try:
            await self._stream(send)
        except asyncio.CancelledError:
            ended_by, self._ended_by = self._ended_by, None
            if ended_by is None or self._task is None or self._task.uncancel() > 0:
                raise  # not ours to absorb: the server is cancelling this request
            if ended_by == "shutdown":
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self.active = False
            streams.open.discard(self)
            helper.cancel()

    async def _stream(self, send: Send) -> None:
        content = self.content
        try:
            if isinstance(content, AsyncIterable):
                async for item in content:
                    await send(
                        {
                            "type": "http.response.body",
                            "body": encode_event(item),
                            "more_body": True,
                        }
                    )
            else:
                for item in content:
                    await send(
                        {
                            "type": "http.response.body",
                            "body": encode_event(item),
                            "more_body": True,
                        }
                    )
        finally:
            closing = getattr(content, "aclose", None)
            if closing is not None:  # its finally blocks run: the handler forgets its listener
                await closing()
        self.active = False  # from here no ping and no cancel: the last body goes out
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _client_side(self, receive: Receive, send: Send) -> None:
        """Until the stream ends: the client's disconnect ends it; quiet spells get a ping."""
        while self.active:
            try:
                async with asyncio.timeout(self.ping_seconds or None):
                    message = await receive()
            except TimeoutError:
                if self.active:
                    await send({"type": "http.response.body", "body": _ping(), "more_body": True})
                continue
            if message.get("type") == "http.disconnect":
                self._end("client")
                return

    def exit_after_grace(self) -> None:
        """The server is stopping: end this stream once its grace period is over."""
        if self.grace <= 0:
            self._end("shutdown")
            return
        asyncio.get_running_loop().call_later(self.grace, self._end, "shutdown")

    def _end(self, by: str) -> None:
        if self.active and self._task is not None and self._ended_by is None:
            self.active = False
            self._ended_by = by
            self._task.cancel()


def _ping() -> bytes:
    return f": ping - {datetime.now(UTC)}{SEPARATOR}{SEPARATOR}".encode()


def create_event_stream_response(
    content: AsyncIterator[Any] | Iterable[Any], shutdown_grace_period: float = 0
) -> EventStreamResponse:
    """The SDK's ``create_event_source_response``, with this response."""
    return EventStreamResponse(content, shutdown_grace_period=shutdown_grace_period)
