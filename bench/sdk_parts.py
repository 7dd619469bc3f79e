"""The SDK's server parts against ours, in process (a measurement, not a test; asserts nothing).

    .venv/bin/python -m bench.sdk_parts [--n 400] [--concurrency 32] [--rounds 3]

The SDK's own echo agent (bench/echo_agent.py's ``EchoExecutor``: the Task, WORKING, one
artifact, COMPLETED) behind a2a-sdk 1.3's two request handlers, called through their public
``on_message_send`` with no HTTP in between, over the SDK's stores:

- ``legacy``: ``LegacyRequestHandler`` (an event queue and a consumer per send, the
  ``TaskManager`` writing the store once per event);
- ``v2``: ``DefaultRequestHandlerV2`` (what ``DefaultRequestHandler`` names in 1.3): an
  ``ActiveTask`` per task in its ``ActiveTaskRegistry``, a producer and a consumer task, the
  ``TaskManager`` writing the store once per event;
- stores: ``InMemoryTaskStore``; ``DatabaseTaskStore`` on aiosqlite; ``server/cluster/``'s
  ``VersionedDatabaseTaskStore`` (a version row and an event row per write), alone and with
  its ``DatabaseTaskEventStream``. Every SQLite file is opened by agent/storage/engine.py's
  ``make_engine``, as ours is (WAL, synchronous=NORMAL, a busy timeout): the cells differ in
  their parts, not their pragmas (with the SDK's plain engine, 32 sends at once fail with
  "database is locked" on a loaded machine).

and the same executor driven by this agent's parts alone (no routing, no governance, no audit):
``ours``: a ``TaskRun`` as the executor's event queue (agent/server/task_run.py) and the
settled state committed by ``task_writer`` (agent/storage/group_commit.py: a thread with its own
connection, WAL, synchronous=FULL) over the migrated task table, as a blocking send does.

Per cell it prints the CPU per send (this process, every thread: aiosqlite's and the writer's
included), sequential and with ``--concurrency`` sends at once, and the SQL statements and
commits per send (SQLAlchemy's ``before_cursor_execute`` and ``commit`` events on every
``Engine``). The figure is the median of ``--rounds`` rounds; the spread is printed beside it.

Then two probes of behaviour on the v2 handler (an executor that asks once, then completes): a
follow-up naming only its task, and two follow-ups to one parked task sent at once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.cluster import DatabaseTaskEventStream, VersionedDatabaseTaskStore
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import (
    DefaultRequestHandlerV2,
    LegacyRequestHandler,
    RequestHandler,
)
from a2a.server.tasks import DatabaseTaskStore, InMemoryTaskStore, TaskUpdater
from a2a.types import Message, Part, Role, SendMessageRequest, Task, TaskState
from sqlalchemy import Engine, event
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.server.task_run import TaskRun
from agent.storage.audit import InMemoryAuditLog
from agent.storage.bindings import InMemoryBindingStore
from agent.storage.engine import make_engine
from agent.storage.group_commit import task_writer
from agent.storage.schema import upgrade
from agent.storage.settlement import StoreTaskWriter, TaskWriter
from agent.storage.task_store import UpsertDatabaseTaskStore
from bench.echo_agent import EchoExecutor, agent_card

WARM_UP = 20
OWNER = ""  # an unauthenticated caller: the SDK's default owner resolver's owner


@dataclass
class Counts:
    """SQL statements and commits seen on every Engine since the last reset."""

    statements: int = 0
    commits: int = 0

    def reset(self) -> None:
        self.statements = self.commits = 0


COUNTS = Counts()


def _on_statement(*_: Any) -> None:
    COUNTS.statements += 1


def _on_commit(*_: Any) -> None:
    COUNTS.commits += 1


def _message(text: str, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )


Send = Callable[[Message], Awaitable[Task | Message]]


@dataclass
class Cell:
    """One handler over one store: how to send, and how to close it."""

    name: str
    send: Send
    close: Callable[[], Awaitable[None]]
    notes: list[str] = field(default_factory=list)


def _sdk_send(handler: RequestHandler) -> Send:
    async def send(message: Message) -> Task | Message:
        return await handler.on_message_send(
            SendMessageRequest(message=message), ServerCallContext()
        )

    return send


async def _sdk_cell(name: str, handler_kind: str, store_kind: str, folder: Path) -> Cell:
    """An SDK handler (legacy or v2) over one of the SDK's stores."""
    engine: AsyncEngine | None = None
    store: Any
    stream = None
    if store_kind == "memory":
        store = InMemoryTaskStore()
    else:
        engine = make_engine(f"sqlite+aiosqlite:///{folder / f'{name}.db'}")
        if store_kind == "database":
            store = DatabaseTaskStore(engine, create_table=True)
        else:
            store = VersionedDatabaseTaskStore(engine, create_table=True)
            if store_kind == "versioned+stream":
                stream = DatabaseTaskEventStream(engine, create_table=True)
        await store.initialize()
    card = agent_card("http://bench")
    handler: Any
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a versioned store without a stream warns
        if handler_kind == "legacy":
            handler = LegacyRequestHandler(
                agent_executor=EchoExecutor(), task_store=store, agent_card=card
            )
        else:
            handler = DefaultRequestHandlerV2(
                agent_executor=EchoExecutor(),
                task_store=store,
                agent_card=card,
                event_stream=stream,
            )

    async def close() -> None:
        closing = getattr(handler, "aclose", None)
        if closing is not None:
            await closing()
        if engine is not None:
            await engine.dispose()

    return Cell(name, _sdk_send(handler), close)


async def _ours_cell(folder: Path | None) -> Cell:
    """The echo executor driven as GovernedRequestHandler drives a blocking send's run: over
    the SQLite file, or (``folder`` None) the in-memory stores the unit tests stand on."""
    engine: AsyncEngine | None = None
    writer: TaskWriter
    if folder is None:
        writer = StoreTaskWriter(InMemoryTaskStore(), InMemoryAuditLog(), InMemoryBindingStore())
    else:
        url = f"sqlite+aiosqlite:///{folder / 'ours.db'}"
        await upgrade(url)
        engine = make_engine(url)
        tasks = UpsertDatabaseTaskStore(engine, create_table=True)
        await tasks.initialize()
        writer = task_writer(engine, tasks)
    await writer.start()
    executor = EchoExecutor()

    async def drive(run: TaskRun, request: RequestContext) -> None:
        await executor.execute(request, run)
        settlement = run.settlement([])
        if settlement is not None:
            await writer.commit(settlement)
        run.finish()

    async def send(message: Message) -> Task | Message:
        message.task_id = uuid.uuid4().hex[:32]
        message.context_id = uuid.uuid4().hex[:32]
        params = SendMessageRequest(message=message)
        request = RequestContext(
            ServerCallContext(),
            request=params,
            task_id=message.task_id,
            context_id=message.context_id,
        )
        run = TaskRun(OWNER, writer)
        run.runner = asyncio.get_running_loop().create_task(drive(run, request))
        await asyncio.shield(run.runner)
        assert run.task is not None
        return run.task

    async def close() -> None:
        await writer.stop()
        if engine is not None:
            await engine.dispose()

    if folder is None:
        return Cell("ours      TaskRun + StoreTaskWriter (in memory)", send, close)
    return Cell("ours      TaskRun + task_writer (SQLite)", send, close)


async def _measure(send: Send, n: int, concurrency: int) -> tuple[float, float, float, int]:
    """CPU ms per send, statements per send, commits per send, sends that failed."""
    gate = asyncio.Semaphore(concurrency)
    failed = [0]

    async def one(index: int) -> None:
        try:
            async with gate:
                answer = await send(_message(f"echo {index}"))
        except Exception:  # counted: a store that refuses under load is a figure too
            failed[0] += 1
            return
        if not isinstance(answer, Task) or answer.status.state != TaskState.TASK_STATE_COMPLETED:
            failed[0] += 1

    COUNTS.reset()
    started = time.process_time()
    if concurrency == 1:
        for index in range(n):
            await one(index)
    else:
        await asyncio.gather(*(one(index) for index in range(n)))
    cpu = time.process_time() - started
    return 1000 * cpu / n, COUNTS.statements / n, COUNTS.commits / n, failed[0]


CELLS: list[tuple[str, str, str]] = [
    ("legacy    InMemoryTaskStore", "legacy", "memory"),
    ("v2        InMemoryTaskStore", "v2", "memory"),
    ("legacy    DatabaseTaskStore (SQLite)", "legacy", "database"),
    ("v2        DatabaseTaskStore (SQLite)", "v2", "database"),
    ("v2        VersionedDatabaseTaskStore (SQLite)", "v2", "versioned"),
    ("v2        Versioned + DatabaseTaskEventStream", "v2", "versioned+stream"),
]


OURS = 2  # cells after the SDK's: ours in memory, ours on SQLite


async def _cell(index: int, folder: Path) -> Cell:
    if index == len(CELLS):
        return await _ours_cell(None)
    if index == len(CELLS) + 1:
        return await _ours_cell(folder)
    name, handler_kind, store_kind = CELLS[index]
    cell = await _sdk_cell(f"cell{index}", handler_kind, store_kind, folder)
    cell.name = name
    return cell


def _figure(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} ({min(values):.2f}-{max(values):.2f})"


async def measure_all(n: int, concurrency: int, rounds: int) -> None:
    """Every cell, ``rounds`` times, in turn (so drift in the machine's load hits all)."""
    results: dict[int, dict[str, list[float]]] = {}
    names: dict[int, str] = {}
    for _ in range(rounds):
        for index in range(len(CELLS) + OURS):
            with tempfile.TemporaryDirectory(prefix="bench-sdk-parts-") as tmp:
                cell = await _cell(index, Path(tmp))
                names[index] = cell.name
                try:
                    for _ in range(WARM_UP):
                        await cell.send(_message("warm-up"))
                    row = results.setdefault(index, {})
                    for key, c in (("seq", 1), ("conc", concurrency)):
                        cpu, statements, commits, failed = await _measure(cell.send, n, c)
                        row.setdefault("failed", []).append(failed)
                        row.setdefault(f"{key} cpu", []).append(cpu)
                        row.setdefault(f"{key} stmts", []).append(statements)
                        row.setdefault(f"{key} commits", []).append(commits)
                finally:
                    await cell.close()
    print(
        f"{n} sends per figure, median of {rounds} rounds (min-max); "
        f"concurrent: {concurrency} at once"
    )
    print(
        f"{'cell':<46} {'CPU ms/send seq':>22} {'CPU ms/send conc':>22} "
        f"{'SQL/send':>9} {'commits/send seq':>17} {'conc':>5} {'failed':>7}"
    )
    for index, row in results.items():
        print(
            f"{names[index]:<46} {_figure(row['seq cpu']):>22} {_figure(row['conc cpu']):>22} "
            f"{statistics.median(row['seq stmts']):9.1f} "
            f"{statistics.median(row['seq commits']):17.1f} "
            f"{statistics.median(row['conc commits']):5.2f} {sum(row['failed']):7d}"
        )


class AskOnce(AgentExecutor):
    """A new task asks for input; a follow-up completes it. ``seen``: the context id each
    follow-up's RequestContext carried."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.current_task is None and context.message is not None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
            updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
            await updater.requires_input()
            return
        self.seen.append(str(context.context_id))
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await asyncio.sleep(0.05)  # long enough for a second follow-up to arrive meanwhile
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, str(context.task_id), str(context.context_id)).cancel()


async def _outcome(call: Awaitable[Task | Message]) -> str:
    try:
        answer = await call
    except Exception as error:  # the probe prints what the handler did
        return f"{type(error).__name__}: {str(error)[:90]}"
    if isinstance(answer, Task):
        return f"Task {TaskState.Name(answer.status.state)}, context {answer.context_id[:8]}"
    return "Message"


async def probes() -> None:
    """What the v2 handler does where ours is documented to differ."""
    executor, store = AskOnce(), InMemoryTaskStore()
    handler = DefaultRequestHandlerV2(
        agent_executor=executor, task_store=store, agent_card=agent_card("x")
    )
    send = _sdk_send(handler)
    try:
        asked = await send(_message("ask"))
        assert isinstance(asked, Task)
        print(f"\nv2 probes (InMemoryTaskStore); the parked task's context {asked.context_id[:8]}")
        follow = await _outcome(send(_message("answer", task_id=asked.id)))
        print(f"  a follow-up naming only its task:      {follow}")
        print(f"    the context its executor was given:  {executor.seen[-1][:8]}")
        stored = await store.get(asked.id, ServerCallContext())
        if stored is not None:
            contexts = [m.context_id[:8] for m in stored.history if m.role == Role.ROLE_USER]
            print(f"    its stored user messages' contexts:  {contexts}")
        asked = await send(_message("ask"))
        assert isinstance(asked, Task)
        first, second = await asyncio.gather(
            _outcome(send(_message("one", asked.id, asked.context_id))),
            _outcome(send(_message("two", asked.id, asked.context_id))),
        )
        print(f"  two follow-ups at once, the first:     {first}")
        print(f"  two follow-ups at once, the second:    {second}")
        stored = await store.get(asked.id, ServerCallContext())
        if stored is not None:
            kept = [m.parts[0].text for m in stored.history if m.role == Role.ROLE_USER]
            print(f"  the task's user messages afterwards:   {kept}")
        asked = await send(_message("ask"))
        assert isinstance(asked, Task)
        follow_up = SendMessageRequest(message=_message("answer", asked.id, asked.context_id))
        stream = handler.on_message_send_stream(follow_up, ServerCallContext())
        kinds = [type(item).__name__ async for item in stream]
        print(f"  a streamed follow-up's events:         {kinds}")
    finally:
        await handler.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400, help="sends per figure")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the SDK logs a warning per versioned store
    event.listen(Engine, "before_cursor_execute", _on_statement)
    event.listen(Engine, "commit", _on_commit)
    asyncio.run(measure_all(args.n, args.concurrency, args.rounds))
    asyncio.run(probes())


if __name__ == "__main__":
    main()
