"""How long one caller's largest text message holds up every other caller.

A real agent (SQLite, gRPC on) serves; a second caller, in a thread of its own, asks
``/healthz`` and makes a cheap A2A call (its agent card; with ``--stored`` a task look-up
too, which also waits for the database) over and over, while the first sends the largest text
message the limits let through (``max_parts`` text parts of ``max_string_length`` characters,
as many as fit the body limit) of several adversarial shapes, on JSON-RPC, HTTP+JSON and gRPC.
Prints the second caller's worst latency, per binding and overall; asserts nothing.

    .venv/bin/python -m bench.routing_stall [--shapes x,digit,...] [--bindings GRPC,...]
        [--chars N] [--stored]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from a2a.helpers import new_text_part
from a2a.types import Message, Part, Role

from agent.base.settings import Limits
from tests.a2a_helpers import send

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
SPACES = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
SHAPES: dict[str, str] = {
    "x": "x",
    "digit": "1",
    "space": " ",
    "unicode-spaces": SPACES,
    "dash": "a-",
    "dot": "1.",
    "separators": "; ",
    "and": "and ",
    "either": "either ",
    "enough-more": "enough more ",
    "is-spaces": ". is " + " " * 60,
    "rate-spaces": "1" + " " * 60,
    "digit-runs": "1" * 4300 + " ",  # just short of a number too long for json, over and over
}
"""Units repeated into each part: long runs that cost a backtracking pattern its square."""
ENVELOPE_BYTES = 8192
"""Room left in the body for the request around the parts."""


LIMITS = Limits()


def largest_message(unit: str, limits: Limits = LIMITS, chars: int | None = None) -> Message:
    """The most text of ``unit`` a message may carry: ``max_parts`` parts of at most
    ``max_string_length`` characters, within ``max_body_bytes`` as JSON (escaped) or UTF-8
    (``chars``: at most that many characters in all)."""
    per_char = max((len(json.dumps(unit)) - 2) / len(unit), len(unit.encode("utf-8")) / len(unit))
    budget = int((limits.max_body_bytes - ENVELOPE_BYTES) / per_char)
    budget = budget if chars is None else min(budget, chars)
    parts: list[Part] = []
    while budget > 0 and len(parts) < limits.max_parts:
        size = min(limits.max_string_length, budget)
        parts.append(new_text_part((unit * (size // len(unit) + 1))[:size]))
        budget -= size + 64
    return Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=parts)


@dataclass
class Watcher:
    """The other caller: ``/healthz`` and a cheap A2A call (the agent card) in turn, in its own
    thread; ``stored`` times a task look-up as well, which also waits for the database."""

    base_url: str
    token: str
    stored: bool = False
    latencies: list[float] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Watcher:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _run(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        lookup = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "none"}}
        with httpx.Client(base_url=self.base_url, headers=headers, timeout=60) as client:
            while not self._stop.is_set():
                requests: list[Callable[[], httpx.Response]] = [
                    lambda: client.get("/healthz"),
                    lambda: client.get("/.well-known/agent-card.json"),
                ]
                if self.stored:
                    requests.append(
                        lambda: client.post("/", json=lookup, headers={"A2A-Version": "1.0"})
                    )
                for request in requests:
                    start = time.perf_counter()
                    request()
                    self.latencies.append(time.perf_counter() - start)
                time.sleep(0.01)

    def reset(self) -> list[float]:
        """The latencies since the last reset."""
        seen, self.latencies = self.latencies, []
        return seen


def wait_trained(base_url: str, timeout: float = 120.0) -> None:
    """Until ``/healthz`` says the classifier is trained. Its training (begun by the agent's
    first request, in a worker thread) holds the interpreter for seconds: a figure taken during
    it is the training's, not the message's (the binding measured first read 0.2-0.5 s, any
    binding, where the same one measured last read 0.07)."""
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=base_url, timeout=30) as client:
        while client.get("/healthz").json().get("classifier") != "ready":
            if time.monotonic() > deadline:
                raise TimeoutError("the classifier did not finish training")
            time.sleep(0.1)


def worst_latency(
    base_url: str,
    token: str,
    shapes: Sequence[str],
    bindings: Sequence[str] = BINDINGS,
    chars: int | None = None,
    stored: bool = False,
) -> dict[str, float]:
    """The other caller's worst latency while each binding carries each shape's largest
    message (the message's own answer is awaited, whatever it is)."""
    worst: dict[str, float] = {}
    wait_trained(base_url)
    with Watcher(base_url, token, stored) as watcher:
        time.sleep(0.3)
        watcher.reset()
        for binding in bindings:
            for shape in shapes:
                message = largest_message(SHAPES[shape], chars=chars)
                try:
                    asyncio.run(send(base_url, token, message, binding=binding))
                except Exception as error:  # the sender's fate is not the figure; say it
                    print(f"{binding} {shape}: the sender got {type(error).__name__}")
            time.sleep(0.1)
            seen = watcher.reset()
            worst[binding] = max(seen, default=0.0)
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--bindings", default=",".join(BINDINGS))
    parser.add_argument("--chars", type=int, default=None, help="text per message (max: limits)")
    parser.add_argument("--stored", action="store_true", help="also time a task look-up")
    args = parser.parse_args()
    bindings = [b for b in args.bindings.split(",") if b]
    shapes = [s for s in args.shapes.split(",") if s]
    from tests.conftest import start_agent, use_backend

    use_backend("sqlite")
    with tempfile.TemporaryDirectory() as home:
        agent = start_agent(Path(home) / "agent", grpc=True)
        try:
            token = agent.token("paula")
            worst = worst_latency(agent.base_url, token, shapes, bindings, args.chars, args.stored)
        finally:
            agent.stop()
    for binding, seconds in worst.items():
        print(f"{binding:10} other caller's worst latency {seconds * 1000:8.1f} ms")
    print(f"{'all':10} other caller's worst latency {max(worst.values()) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
