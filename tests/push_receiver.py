"""A webhook receiver on loopback for the push notification tests: it records each POST and
answers what the test tells it to (200, an error, a redirect), or is not listening at all; and
what the agent's push outbox still holds."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from agent.storage.engine import make_engine
from agent.storage.schema import push_outbox

OUTBOX_WAIT_S = 30.0


@dataclass
class Received:
    """One notification as it arrived."""

    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def document(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.body)
        return value

    @property
    def state(self) -> str:
        document = self.document
        status = (document.get("task") or document.get("statusUpdate") or {}).get("status", {})
        return str(status.get("state", ""))


@dataclass
class Receiver:
    """Records every POST; ``answer`` is the status it replies with (a 3xx adds a Location)."""

    port: int = 0
    answer: int = 200
    received: list[Received] = field(default_factory=list)
    _server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                receiver.received.append(Received(self.path, dict(self.headers.items()), body))
                self.send_response(receiver.answer)
                if 300 <= receiver.answer < 400:
                    self.send_header("Location", receiver.url + "/moved")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = int(server.server_address[1])
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def wait_for(self, done: Callable[[list[Received]], bool], timeout: float = 30) -> None:
        """Until ``done(received)`` (a deadline, not a measurement: fails if never)."""
        deadline = time.monotonic() + timeout
        while not done(self.received):
            if time.monotonic() > deadline:
                raise AssertionError(f"not received in time: {[r.state for r in self.received]}")
            time.sleep(0.05)

    def states(self, task_id: str) -> list[str]:
        def task_of(r: Received) -> str:
            d = r.document
            return str(d.get("task", {}).get("id") or d.get("statusUpdate", {}).get("taskId"))

        return [r.state for r in self.received if task_of(r) == task_id]


async def outbox_rows(database_url: str) -> list[tuple[str, int]]:
    """The undelivered notifications: (task id, attempts so far)."""
    engine = make_engine(database_url)
    try:
        async with engine.connect() as connection:
            query = select(push_outbox.c.task_id, push_outbox.c.attempts)
            return [(row.task_id, row.attempts) for row in await connection.execute(query)]
    finally:
        await engine.dispose()


async def wait_tried(database_url: str, task_id: str) -> None:
    """Until the task's notification has been tried at least once (and is still owed)."""
    deadline = time.monotonic() + OUTBOX_WAIT_S
    while not any(t == task_id and n >= 1 for t, n in await outbox_rows(database_url)):
        assert time.monotonic() < deadline, "never tried"
        await asyncio.sleep(0.1)


async def wait_outbox_empty(database_url: str) -> None:
    """Until every notification has been delivered and its row is gone."""
    deadline = time.monotonic() + OUTBOX_WAIT_S
    while await outbox_rows(database_url):
        assert time.monotonic() < deadline, "the row stayed"
        await asyncio.sleep(0.1)
