"""A small asyncio HTTP/1.1 client and a closed-loop load runner, for bench.perf.

Why not httpx: on this machine an httpx request costs the generator a few hundred µs of CPU,
as much as some of the server paths measured, so at concurrency 32 the generator (one core)
would be the bottleneck. This client writes a pre-built request (only the message id changes)
and reads the answer by Content-Length or chunked framing (SSE streams are chunked), on
keep-alive connections, one per simulated client: about 30-60 µs of generator CPU a request,
plus parsing the answer to check it (bench/perf/answers.py).
It speaks only what the servers under test answer; it is not a general HTTP client.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.perf.answers import Check

MID = b"@@MID@@"  # placeholder for the message id in a request body template


@dataclass(frozen=True)
class Target:
    """One measured request: method, path, headers and a body template; what success looks like."""

    name: str
    port: int
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    check: Check
    """Whether an answer's body counts (bench/perf/answers.py): None, or why it does not."""
    bearers: tuple[str, ...] = ()
    """Bearer tokens, one per simulated client (round robin): 32 clients are 32 callers."""
    ports: tuple[int, ...] = ()
    """Several servers of the same agent: simulated client i talks to ports[i % len(ports)]."""

    def port_of(self, client: int) -> int:
        """The port simulated client ``client`` sends to (load spread round robin)."""
        return self.ports[client % len(self.ports)] if self.ports else self.port

    def head(self, length: int, client: int) -> bytes:
        lines = [f"{self.method} {self.path} HTTP/1.1", f"Host: 127.0.0.1:{self.port_of(client)}"]
        lines += [f"{k}: {v}" for k, v in self.headers.items()]
        if self.bearers:
            lines.append(f"Authorization: Bearer {self.bearers[client % len(self.bearers)]}")
        if self.method != "GET":
            lines.append(f"Content-Length: {length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    def request(self, n: int, client: int = 0) -> bytes:
        """The raw request bytes, with a fresh message id, as simulated client ``client``."""
        body = self.body.replace(MID, f"perf-{n}".encode()) if self.body else b""
        return self.head(len(body), client) + body


class Connection:
    """One keep-alive connection to the server under test."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(
            "127.0.0.1", self.port, limit=2**22
        )

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
            self.writer = None

    async def exchange(self, raw: bytes) -> tuple[int, bytes]:
        """Send one request and read the whole answer (status, body)."""
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        self.writer.write(raw)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split(b" ", 2)[1])
        length = None
        chunked = close = False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
            elif name == b"connection" and b"close" in value.lower():
                close = True
        if chunked:
            pieces = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                pieces.append((await self.reader.readexactly(size + 2))[:-2])
            body = b"".join(pieces)
        else:
            body = await self.reader.readexactly(length or 0)
        if close:
            await self.close()
        return status, body


@dataclass
class Cell:
    """What one (target, concurrency) run measured."""

    concurrency: int
    latencies: list[float] = field(default_factory=list)
    elapsed: float = 0.0
    errors: int = 0
    first_error: str = ""
    server_cpu: float = float("nan")
    """CPU seconds the server processes used during the cell (user + system, all threads,
    children included; several processes summed)."""

    @property
    def cpu_ms(self) -> float:
        """Server CPU per answered request, in ms: unlike req/s, barely moved by other load."""
        return 1000 * self.server_cpu / (self.ok + self.errors) if self.ok else float("nan")

    @property
    def ok(self) -> int:
        return len(self.latencies)

    @property
    def rps(self) -> float:
        return self.ok / self.elapsed if self.elapsed else float("nan")

    def quantile(self, q: float) -> float:
        """Latency quantile in ms (nearest rank)."""
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


_ids = itertools.count()


async def run_load(
    target: Target,
    concurrency: int,
    count: int,
    seconds: float,
    on_sample: Callable[[int], None] | None = None,
    cpu: Callable[[], float] | None = None,
) -> Cell:
    """Closed loop: ``concurrency`` clients, each sending the next request when its answer is in,
    until ``count`` requests are sent or ``seconds`` have passed (whichever comes first).

    A request whose status is not 200 or whose answer the target's check refuses counts as an
    error (its latency is not kept). ``on_sample(n)`` is called after every answer, for the
    memory mode.
    """
    cell = Cell(concurrency)
    connections = [Connection(target.port_of(i)) for i in range(concurrency)]
    for connection in connections:
        await connection.open()
    sent = itertools.count()
    done = itertools.count(1)
    deadline = time.perf_counter() + seconds

    async def client(index: int, connection: Connection) -> None:
        while next(sent) < count and time.perf_counter() < deadline:
            raw = target.request(next(_ids), index)
            started = time.perf_counter()
            try:
                status, body = await connection.exchange(raw)
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                cell.errors += 1
                cell.first_error = cell.first_error or f"{type(exc).__name__}: {exc}"
                await connection.close()
                continue
            latency = time.perf_counter() - started
            refused = f"HTTP {status}" if status != 200 else target.check(body)
            if refused is None:
                cell.latencies.append(latency)
            else:
                cell.errors += 1
                cell.first_error = cell.first_error or f"{refused}: {body[:300]!r}"
            if on_sample is not None:
                on_sample(next(done))

    cpu_before = cpu() if cpu is not None else 0.0
    started = time.perf_counter()
    await asyncio.gather(*(client(i, c) for i, c in enumerate(connections)))
    cell.elapsed = time.perf_counter() - started
    if cpu is not None:
        cell.server_cpu = cpu() - cpu_before
    for connection in connections:
        await connection.close()
    return cell
