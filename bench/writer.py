"""The settlement writers under concurrent callers (a measurement, not a test; asserts nothing).

    .venv/bin/python -m bench.writer --backend sqlite --concurrency 32 --n 5000
    .venv/bin/python -m bench.writer --backend postgresql --concurrency 32 --n 5000
    .venv/bin/python -m bench.writer --backend sqlite --push-triggers   # with the push outbox

Each caller runs invocations one after another, each two settlements as the request handler
makes them: the accepted state (SUBMITTED, with its runner row), then the terminal one
(COMPLETED with two artifacts, three audit rows and the binding). Per writer it prints
settlements/s, transactions, settlements per transaction, the commit latency a caller waits
(p50, p99), and CPU ms per settlement: this process (event loop and writer thread) plus, on
PostgreSQL, the server's processes. SQLite cells run at synchronous=FULL and NORMAL; the
PostgreSQL cluster (tests/pg_cluster.py, which starts it with fsync off) is switched to
fsync=on, synchronous_commit=on, so a commit costs what a durable one costs. ``store`` is the
reference writer: each settlement through the stores, one transaction per store call.
``--push-triggers``: the task table carries the push outbox's triggers, as an agent's does
(agent/push/outbox.py; no task here has a push config, the common case).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from a2a.types import Artifact, Message, Part, Role, Task, TaskState, TaskStatus
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.push.outbox import Outbox
from agent.storage.audit import AuditRecord, DatabaseAuditLog
from agent.storage.bindings import Binding, DatabaseBindingStore, Phase
from agent.storage.engine import make_engine
from agent.storage.group_commit import AsyncGroupWriter, SqliteThreadWriter
from agent.storage.schema import upgrade
from agent.storage.settlement import Runner, Settlement, StoreTaskWriter, TaskWriter
from agent.storage.task_store import UpsertDatabaseTaskStore
from bench.perf.postgres import Postgres

OWNER = "acme:alice"
RUNNER = Runner("replica-a", "alice", "acme", "ping")


@dataclass(frozen=True)
class Cell:
    name: str
    synchronous: str | None  # SQLite only
    make: Callable[[AsyncEngine, UpsertDatabaseTaskStore, str], TaskWriter]


def thread_writer(engine: AsyncEngine, tasks: UpsertDatabaseTaskStore, sync: str) -> TaskWriter:
    return SqliteThreadWriter(engine, tasks, synchronous=sync)


def async_writer(engine: AsyncEngine, tasks: UpsertDatabaseTaskStore, _: str) -> TaskWriter:
    return AsyncGroupWriter(engine, tasks)


def store_writer(engine: AsyncEngine, tasks: UpsertDatabaseTaskStore, _: str) -> TaskWriter:
    return StoreTaskWriter(tasks, DatabaseAuditLog(engine), DatabaseBindingStore(engine))


CELLS = {
    "sqlite": [
        Cell(f"{name} {sync}", sync, make)
        for sync in ("FULL", "NORMAL")
        for name, make in (
            ("thread", thread_writer),
            ("async", async_writer),
            ("store", store_writer),
        )
    ],
    "postgresql": [Cell("async", None, async_writer), Cell("store", None, store_writer)],
}


def accepted(task_id: str) -> Settlement:
    status = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
    status.timestamp.FromDatetime(datetime.now(UTC))
    task = Task(id=task_id, context_id=task_id, status=status, history=[question(task_id)])
    return Settlement(OWNER, task, runner=RUNNER)


def question(task_id: str) -> Message:
    return Message(message_id=f"q-{task_id}", role=Role.ROLE_USER, parts=[Part(text="ping r1")])


def completed(task_id: str) -> Settlement:
    status = TaskStatus(
        state=TaskState.TASK_STATE_COMPLETED,
        message=Message(message_id=f"m-{task_id}", role=Role.ROLE_AGENT, parts=[Part(text="ok")]),
    )
    status.timestamp.FromDatetime(datetime.now(UTC))
    task = Task(
        id=task_id,
        context_id=task_id,
        status=status,
        history=[question(task_id)],
        artifacts=[
            Artifact(artifact_id=f"a-{n}", parts=[Part(text=f"record {n} " + "x" * 200)])
            for n in range(2)
        ],
    )
    audit = tuple(
        AuditRecord(
            principal="alice",
            tenant="acme",
            tool=tool,
            operation="invoke",
            decision="allow",
            reason="ok",
            actor_chain=("alice",),
            skill_id="ping",
            task_id=task_id,
            resource_ids=("r1",),
        )
        for tool in ("inventory", "ping", "agent")
    )
    binding = Binding(task_id, OWNER, Phase.BOUND, "ping", (), {"host": "r1"}, "ping r1")
    return Settlement(OWNER, task, audit=audit, binding=binding)


async def run_cell(
    url: str,
    cell: Cell,
    concurrency: int,
    n: int,
    server_cpu: Callable[[], float],
    push_triggers: bool = False,
) -> dict[str, Any]:
    engine = make_engine(url)
    if cell.synchronous is not None:  # the async engine's own connection, for async and store
        event.listen(
            engine.sync_engine,
            "connect",
            lambda c, _r: c.cursor().execute(f"PRAGMA synchronous={cell.synchronous}"),
        )
    tasks = UpsertDatabaseTaskStore(engine, create_table=True)
    if push_triggers:
        await tasks.initialize()
        await Outbox(engine).initialize()
    writer = cell.make(engine, tasks, cell.synchronous or "")
    await writer.start()
    await writer.commit(accepted("warm-up"))
    base = writer.stats.commits, writer.stats.settlements
    latencies: list[float] = []

    async def commit(settlement: Settlement) -> None:
        started = time.perf_counter()
        await writer.commit(settlement)
        latencies.append(time.perf_counter() - started)

    async def caller(invocations: int) -> None:
        for _ in range(invocations):
            task_id = str(uuid.uuid4())
            await commit(accepted(task_id))
            await commit(completed(task_id))

    per_caller = max(1, n // (2 * concurrency))
    cpu, server, wall = time.process_time(), server_cpu(), time.perf_counter()
    await asyncio.gather(*(caller(per_caller) for _ in range(concurrency)))
    wall = time.perf_counter() - wall
    cpu, server = time.process_time() - cpu, server_cpu() - server
    commits = writer.stats.commits - base[0]
    settlements = writer.stats.settlements - base[1]
    await writer.stop()
    await engine.dispose()
    latencies.sort()
    return {
        "writer": cell.name,
        "settlements/s": settlements / wall,
        "commits": commits,
        "per commit": settlements / commits,
        "p50 ms": 1000 * statistics.median(latencies),
        "p99 ms": 1000 * latencies[int(0.99 * (len(latencies) - 1))],
        "CPU ms/settlement": 1000 * (cpu + (server if server == server else 0.0)) / settlements,
        "of which server": 1000 * server / settlements if server == server else float("nan"),
    }


async def durable_postgres(url: str) -> None:
    """The test cluster runs with fsync off; a benchmark of commits needs it on."""
    engine = make_engine(url)
    async with engine.connect() as connection:
        autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
        for setting in ("fsync = on", "synchronous_commit = on", "full_page_writes = on"):
            await autocommit.execute(text(f"ALTER SYSTEM SET {setting}"))
        await autocommit.execute(text("SELECT pg_reload_conf()"))
    await engine.dispose()


async def main(backend: str, concurrency: int, n: int, push_triggers: bool = False) -> None:
    postgres = Postgres()
    try:
        print(
            f"backend {backend}, {concurrency} concurrent callers, {n} settlements per writer"
            + (", push outbox triggers" if push_triggers else "")
        )
        header = (
            "writer",
            "settlements/s",
            "commits",
            "per commit",
            "p50 ms",
            "p99 ms",
            "CPU ms/settlement",
            "of which server",
        )
        print("  ".join(f"{h:>17}" for h in header))
        for index, cell in enumerate(CELLS[backend]):
            if backend == "sqlite":
                folder = Path(tempfile.mkdtemp(prefix="bench-writer-"))
                url = f"sqlite+aiosqlite:///{folder / 'writer.db'}"
                server_cpu: Callable[[], float] = lambda: float("nan")  # noqa: E731
            else:
                url = postgres.database(f"writer_{index}_{uuid.uuid4().hex[:8]}")
                if index == 0:
                    await durable_postgres(url)
                server_cpu = postgres.cpu_seconds
            await upgrade(url)
            row = await run_cell(url, cell, concurrency, n, server_cpu, push_triggers)
            print(
                "  ".join(
                    f"{v:>17.1f}" if isinstance(v, float) else f"{v!s:>17}" for v in row.values()
                )
            )
    finally:
        postgres.stop()


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=sorted(CELLS), default="sqlite")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--push-triggers", action="store_true")
    arguments = parser.parse_args()
    asyncio.run(
        main(arguments.backend, arguments.concurrency, arguments.n, arguments.push_triggers)
    )


if __name__ == "__main__":
    cli()
