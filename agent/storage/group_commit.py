"""Group commit: the settlements pending at once share one transaction.

Each ``commit`` waits until the batch its settlement went into has committed; a writer takes
whatever is pending when it finishes a batch, so under load batches grow by themselves and a
lone request waits for no one. If a batch fails, its settlements are retried one per
transaction, so one bad settlement fails only its own ``commit``.

- ``SqliteThreadWriter``: one thread with its own connection to the file (WAL,
  ``synchronous=FULL``: a commit survives power loss, not only a killed process), so the
  event loop never waits for an fsync and SQLite has one writer.
- ``AsyncGroupWriter``: an asyncio task on the async engine (PostgreSQL via asyncpg, and
  SQLite in memory, which a second connection cannot share).

``task_writer`` picks one by the engine. Both run the same statements, built and driven by
agent/storage/settlement.py (``batch_steps``, ``run_sync``, ``run_async``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Generator, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.pool import StaticPool

from agent.storage.engine import SQLITE_TIMEOUT_S, sqlite_in_memory
from agent.storage.settlement import (
    BatchStatements,
    Settlement,
    StaleTaskError,
    TaskWriter,
    WriterStats,
    batch_steps,
    run_async,
    run_sync,
)
from agent.storage.task_store import UpsertDatabaseTaskStore

log = logging.getLogger(__name__)
MAX_BATCH = 256
"""Settlements per transaction at most (bounds a batch's statements and a failed batch's
retries; 256 task rows stay far below SQLite's and PostgreSQL's bound-parameter limits)."""

_Item = tuple[Settlement, "asyncio.Future[None]"]
Isolation = Generator[Sequence[Settlement], BaseException | set[int], list[BaseException | None]]
_STOP = object()


def take_batch(pending: list[_Item], max_batch: int) -> list[_Item]:
    """Remove and return the next batch from ``pending``: up to ``max_batch`` settlements,
    a transition (``Settlement.expect``) alone, so it is one transaction of its own."""
    if pending[0][0].expect is not None:
        size = 1
    else:
        size = min(len(pending), max_batch)
        for index in range(1, size):
            if pending[index][0].expect is not None:
                size = index
                break
    batch = pending[:size]
    del pending[:size]
    return batch


def task_writer(
    engine: AsyncEngine, tasks: UpsertDatabaseTaskStore, *, notify: bool = False
) -> TaskWriter:
    """The writer for ``engine``: a thread on a SQLite file, an asyncio task otherwise.
    ``notify``: PostgreSQL replicas hear of each task row written (``BatchStatements``)."""
    if engine.dialect.name == "sqlite" and not sqlite_in_memory(engine.url):
        return SqliteThreadWriter(engine, tasks)
    return AsyncGroupWriter(engine, tasks, notify=notify)


class _Batcher:
    """What both writers share: stats, and writing a batch with per-settlement isolation."""

    def __init__(self, tasks: UpsertDatabaseTaskStore, dialect: str, notify: bool = False) -> None:
        self._statements = BatchStatements(tasks, dialect, notify)
        self._stats = WriterStats()

    @property
    def stats(self) -> WriterStats:
        """Counts so far."""
        return self._stats

    def _isolated(self, batch: Sequence[Settlement]) -> Isolation:
        """What to write for ``batch``, one transaction per step: the batch, then, if it
        failed, each settlement alone. Send each step its error, or the indices (in the step)
        of the settlements it refused; returns each settlement's outcome."""
        sent = yield batch
        if not isinstance(sent, BaseException):
            self._stats.commits += 1
            return self._count([_refusal(s) if i in sent else None for i, s in enumerate(batch)])
        if len(batch) == 1:
            return self._count([sent])
        self._stats.isolations += 1
        log.warning("a batch of %d settlements failed; writing each alone", len(batch))
        outcomes: list[BaseException | None] = []
        for settlement in batch:
            sent = yield [settlement]
            if isinstance(sent, BaseException):
                outcomes.append(sent)
                continue
            self._stats.commits += 1
            outcomes.append(_refusal(settlement) if sent else None)
        return self._count(outcomes)

    def _count(self, outcomes: list[BaseException | None]) -> list[BaseException | None]:
        failed = sum(o is not None for o in outcomes)
        self._stats.failures += failed
        self._stats.settlements += len(outcomes) - failed
        return outcomes


def _refusal(settlement: Settlement) -> StaleTaskError:
    """What the ``commit`` of a refused settlement raises."""
    return StaleTaskError(settlement.task.id if settlement.task is not None else "")


def _failed(cause: BaseException) -> RuntimeError:
    """What a commit the writer could not finish raises: the writer broke, and why."""
    error = RuntimeError(f"the task writer failed: {cause!r}")
    error.__cause__ = cause
    return error


def _retrieved(task: asyncio.Task[None]) -> None:
    """Mark the writer task's exception seen: ``_run`` logged it and answered everyone."""
    if not task.cancelled():
        task.exception()


def _resolve(items: Sequence[_Item], outcomes: Sequence[BaseException | None]) -> None:
    """Answer each waiting ``commit`` (on the loop's thread); a cancelled one is past caring."""
    for (_, future), outcome in zip(items, outcomes, strict=True):
        if future.done():
            continue
        if outcome is None:
            future.set_result(None)
        else:
            future.set_exception(outcome)


class SqliteThreadWriter(_Batcher, TaskWriter):
    """Batches written by one thread on its own connection to the SQLite file."""

    def __init__(
        self,
        engine: AsyncEngine,
        tasks: UpsertDatabaseTaskStore,
        *,
        synchronous: str = "FULL",
        max_batch: int = MAX_BATCH,
    ) -> None:
        super().__init__(tasks, "sqlite")
        self._tasks = tasks
        self._url = engine.url.set(drivername="sqlite")
        self._synchronous = synchronous
        self._max_batch = max_batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()  # orders commit()'s enqueue against the thread's end
        self._closed: BaseException | None = None  # why commit() is refused, once it is
        self._thread: threading.Thread | None = None
        self._started = asyncio.Lock()
        self._engine: Engine | None = None
        self.pragmas: dict[str, Any] = {}
        """What the writer's connection reports once it is open (journal_mode, synchronous)."""

    async def start(self) -> None:
        """Create the task table if needed and start the thread (once)."""
        async with self._started:
            if self._thread is not None:
                return
            if self._closed is not None:
                raise RuntimeError(str(self._closed)) from self._closed
            await self._tasks.initialize()
            self._engine = self._sync_engine()
            self._thread = threading.Thread(target=self._run, name="settlement-writer", daemon=True)
            self._thread.start()

    def _sync_engine(self) -> Engine:
        """The writer's own engine on the file (same dialect, so the same column types)."""
        engine = create_engine(
            self._url, poolclass=StaticPool, connect_args={"timeout": SQLITE_TIMEOUT_S}
        )
        event.listen(engine, "connect", self._pragmas)
        return engine

    def _pragmas(self, connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute(f"PRAGMA synchronous={self._synchronous}")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute(f"PRAGMA busy_timeout={int(SQLITE_TIMEOUT_S * 1000)}")
            for name in ("journal_mode", "synchronous"):
                self.pragmas[name] = cursor.execute(f"PRAGMA {name}").fetchone()[0]
        finally:
            cursor.close()

    async def stop(self) -> None:
        """Let the thread write what was submitted, then wait for it to end."""
        with self._lock:
            if self._closed is None:
                self._closed = RuntimeError("the task writer is stopped")
                self._queue.put(_STOP)
        thread = self._thread
        if thread is not None:
            await asyncio.to_thread(thread.join)

    async def commit(self, settlement: Settlement) -> None:
        """Queue ``settlement`` for the thread; return once its batch committed."""
        if self._thread is None:
            await self.start()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._lock:
            if self._closed is not None:
                raise RuntimeError(str(self._closed)) from self._closed
            self._queue.put((settlement, future))
        await future

    def _run(self) -> None:
        """The thread: drain the queue, a batch per transaction, until told to stop."""
        assert self._engine is not None
        reason: BaseException = RuntimeError("the task writer is stopped")
        try:
            with self._engine.connect() as connection:
                self._drain(connection)
        except BaseException as exc:  # the thread is going: no commit() may wait for it
            log.exception("the settlement writer thread failed")
            reason = _failed(exc)
        finally:
            self._abandon(reason)
            self._engine.dispose()  # here: SQLite connections belong to the thread that made them

    def _drain(self, connection: Connection) -> None:
        held: list[_Item] = []  # taken from the queue, not yet written
        stop = False
        while True:
            if not held and not stop:
                item = self._queue.get()
                stop = item is _STOP
                if not stop:
                    held.append(item)
            while not stop and len(held) < self._max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                stop = item is _STOP
                if not stop:
                    held.append(item)
            if held:
                items = take_batch(held, self._max_batch)
                try:
                    outcomes = self._write_isolated(connection, [s for s, _ in items])
                except BaseException as exc:  # the thread is going: answer what it holds too
                    self._answer([*items, *held], [_failed(exc)] * (len(items) + len(held)))
                    raise
                self._answer(items, outcomes)
            if stop and not held:
                return

    def _write_isolated(
        self, connection: Connection, batch: Sequence[Settlement]
    ) -> list[BaseException | None]:
        steps = self._isolated(batch)
        try:
            step = next(steps)
            while True:
                try:
                    refused = self._write(connection, step)
                except Exception as exc:
                    step = steps.send(exc)
                else:
                    step = steps.send(refused)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def _write(self, connection: Connection, batch: Sequence[Settlement]) -> set[int]:
        with connection.begin():
            return run_sync(connection, batch_steps(self._statements, batch))

    def _answer(self, items: Sequence[_Item], outcomes: Sequence[BaseException | None]) -> None:
        """Hand the outcomes to the loop each ``commit`` waits on (one call per loop)."""
        by_loop: dict[asyncio.AbstractEventLoop, list[int]] = {}
        for index, (_, future) in enumerate(items):
            by_loop.setdefault(future.get_loop(), []).append(index)
        for loop, indices in by_loop.items():
            with contextlib.suppress(RuntimeError):  # the loop is closed: no one is waiting
                loop.call_soon_threadsafe(
                    _resolve, [items[i] for i in indices], [outcomes[i] for i in indices]
                )

    def _abandon(self, reason: BaseException) -> None:
        """Refuse new commits and fail the queued ones (after a stop there are none)."""
        with self._lock:
            if self._closed is None:
                self._closed = reason
        items: list[_Item] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not _STOP:
                items.append(item)
        if items:
            self._answer(items, [reason] * len(items))


class AsyncGroupWriter(_Batcher, TaskWriter):
    """Batches written by an asyncio task on the async engine."""

    def __init__(
        self,
        engine: AsyncEngine,
        tasks: UpsertDatabaseTaskStore,
        *,
        max_batch: int = MAX_BATCH,
        notify: bool = False,
    ) -> None:
        super().__init__(tasks, engine.dialect.name, notify)
        self._engine = engine
        self._tasks = tasks
        self._max_batch = max_batch
        self._pending: list[_Item] = []
        self._wake = asyncio.Event()
        self._closed: BaseException | None = None
        self._writer: asyncio.Task[None] | None = None
        self._started = asyncio.Lock()

    async def start(self) -> None:
        """Create the task table if needed and start the writer task (once)."""
        async with self._started:
            if self._writer is not None:
                return
            if self._closed is not None:
                raise RuntimeError(str(self._closed)) from self._closed
            await self._tasks.initialize()
            self._writer = asyncio.get_running_loop().create_task(self._run())
            self._writer.add_done_callback(_retrieved)

    async def stop(self) -> None:
        """Let the writer write what was submitted, then wait for it to end."""
        if self._closed is None:
            self._closed = RuntimeError("the task writer is stopped")
        self._wake.set()
        if self._writer is not None:  # wait without raising: _run has answered everyone
            await asyncio.wait([self._writer])

    async def commit(self, settlement: Settlement) -> None:
        """Queue ``settlement``; return once its batch committed."""
        if self._writer is None:
            await self.start()
        if self._closed is not None:
            raise RuntimeError(str(self._closed)) from self._closed
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((settlement, future))
        self._wake.set()
        await future

    async def _run(self) -> None:
        reason: BaseException = RuntimeError("the task writer is stopped")
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._pending:
                    items = take_batch(self._pending, self._max_batch)
                    try:
                        outcomes = await self._write_isolated([s for s, _ in items])
                    except BaseException as exc:  # the writer is going: answer this batch
                        _resolve(items, [_failed(exc)] * len(items))
                        raise
                    _resolve(items, outcomes)
                if self._closed is not None:
                    return
        except BaseException as exc:  # the writer is going: no commit() may wait for it
            log.exception("the settlement writer task failed")
            reason = _failed(exc)
            raise
        finally:
            if self._closed is None:
                self._closed = reason
            items, self._pending = self._pending, []
            _resolve(items, [reason] * len(items))

    async def _write_isolated(self, batch: Sequence[Settlement]) -> list[BaseException | None]:
        steps = self._isolated(batch)
        try:
            step = next(steps)
            while True:
                try:
                    refused = await self._write(step)
                except Exception as exc:
                    step = steps.send(exc)
                else:
                    step = steps.send(refused)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    async def _write(self, batch: Sequence[Settlement]) -> set[int]:
        async with self._engine.begin() as connection:
            return await run_async(connection, batch_steps(self._statements, batch))
