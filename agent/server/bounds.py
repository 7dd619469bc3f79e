"""Bounds per caller and per task: what one caller can make the agent keep and send.

The message limits (agent/edge/limits.py) bound one request; these bound what requests add up
to: tasks a caller leaves waiting for input (``max_parked_tasks``), a task's history across its
follow-ups (``max_history_messages``, ``max_history_bytes``), the bytes of one ListTasks page
(``max_list_bytes``), and how long a task may wait for input (``parked_task_ttl``: the sweeper
here ends it CANCELED). A refusal is the protocol's ``InvalidParamsError`` naming the bound
and its value (``data``: ``limit``, ``max``), as the message limits' are; never an input value.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from a2a.types import InvalidParamsError, ListTasksResponse, Message, Task
from a2a.utils.task import ListTasksCursor, encode_list_tasks_cursor
from google.protobuf.timestamp_pb2 import Timestamp

from agent.base.settings import Limits
from agent.storage.task_store import ParkedTasks

log = logging.getLogger(__name__)
MAX_SWEEP_SECONDS = 60.0
"""The longest pause between two sweeps for expired parked tasks."""


def refusal(limit: str, maximum: int, text: str) -> InvalidParamsError:
    """The protocol's error for a bound: its text and ``data`` name the bound, not the input."""
    return InvalidParamsError(message=text, data={"limit": limit, "max": str(maximum)})


def check_parked(parked: int, limits: Limits) -> None:
    """A new task that would wait for input, from a caller who already has
    ``max_parked_tasks`` waiting, is refused: each would otherwise be kept (and its history)
    until someone answers it."""
    if parked >= limits.max_parked_tasks:
        raise refusal(
            "max_parked_tasks",
            limits.max_parked_tasks,
            f"a caller may have at most {limits.max_parked_tasks} tasks waiting for input; "
            "answer or cancel one first",
        )


class NewRuns:
    """New tasks started in this process that may park, per caller: with the caller's parked
    tasks in the database, what ``max_parked_tasks`` counts.

    Only a run that may park is admitted here (and pays the database's count): the request
    handler knows before the task exists whether it can (agent/server/request_handler.py,
    ``may_park``), and a run that cannot never parks (agent/server/task_run.py fails it).
    Sends made at once must not all pass a count none of them is in yet. So the count is the
    database's (a run that parks is written there before it stops being counted here), plus
    every new run of the caller that may park and was running when the database was asked or
    started since; and the run starts with no await after the check.
    """

    def __init__(self) -> None:
        self._started: dict[str, int] = {}
        self._running: dict[str, int] = {}
        self._asking: dict[str, int] = {}
        """Admissions waiting for the database's count (their ``started`` must stay)."""

    async def admit(
        self, owner: str, count: Callable[[str], Awaitable[int]], limits: Limits
    ) -> None:
        """Refuse a new task of ``owner`` at the bound; the caller starts the run (``track``)
        right after this returns, with no await in between."""
        started, running = self._started.get(owner, 0), self._running.get(owner, 0)
        self._asking[owner] = self._asking.get(owner, 0) + 1
        try:
            parked = await count(owner)
        finally:
            since = self._started.get(owner, 0) - started  # (before it may be forgotten)
            self._asking[owner] -= 1
            self._forget(owner)
        check_parked(parked + running + since, limits)

    def track(self, owner: str, runner: asyncio.Task[None]) -> None:
        """Count ``runner`` until it is done (its settled state written, or failed)."""
        self._started[owner] = self._started.get(owner, 0) + 1
        self._running[owner] = self._running.get(owner, 0) + 1
        runner.add_done_callback(lambda _: self._done(owner))

    def _done(self, owner: str) -> None:
        self._running[owner] -= 1
        self._forget(owner)

    def _forget(self, owner: str) -> None:
        """A caller with nothing running here and no count open takes no memory."""
        if self._running.get(owner, 0) == 0 and self._asking.get(owner, 0) == 0:
            for counts in (self._started, self._running, self._asking):
                counts.pop(owner, None)


def check_history(task: Task, message: Message, limits: Limits) -> None:
    """A follow-up that would take the task's history past its bounds is refused, before any
    part of it is stored (the task stays as it was, waiting for a shorter answer or a cancel).

    What the follow-up's run stores: the history, the status message it moves there, and the
    new message."""
    held = [*task.history, message]
    if task.status.HasField("message"):
        held.append(task.status.message)
    if len(held) > limits.max_history_messages:
        raise refusal(
            "max_history_messages",
            limits.max_history_messages,
            f"a task's history may hold at most {limits.max_history_messages} messages; "
            "start a new task",
        )
    if sum(item.ByteSize() for item in held) > limits.max_history_bytes:
        raise refusal(
            "max_history_bytes",
            limits.max_history_bytes,
            f"a task's history may hold at most {limits.max_history_bytes} bytes; start a new task",
        )


def cursor_of(task: Task) -> ListTasksCursor:
    """The SDK store's position of a stored task (its ``last_updated`` column is the status
    timestamp, at microsecond precision), as its page tokens name it."""
    if not task.status.HasField("timestamp"):
        return ListTasksCursor(timestamp_ns=None, task_id=task.id)
    stamp = Timestamp()
    stamp.FromDatetime(task.status.timestamp.ToDatetime())
    return ListTasksCursor(timestamp_ns=stamp.ToNanoseconds(), task_id=task.id)


def fit_page(page: ListTasksResponse, cursors: list[ListTasksCursor], max_bytes: int) -> None:
    """Cut ``page`` after the tasks that fit in ``max_bytes`` (at least one), its next page
    token then naming the last task kept: the caller reads the rest page by page.

    ``cursors``: each task's position as the store listed it (before a task running here
    took its newer state), so the next page starts where this one ended."""
    total = 0
    for index, task in enumerate(page.tasks):
        total += task.ByteSize()
        if index and total > max_bytes:
            del page.tasks[index:]
            page.next_page_token = encode_list_tasks_cursor(cursors[index - 1])
            return


Lock = Callable[[str], Awaitable[Callable[[], None]]]
"""Takes a task's lock in this process (the one its follow-ups take); returns the release."""


class ParkedSweeper:
    """Ends tasks that waited for input longer than ``parked_task_ttl``: CANCELED, with a
    status message saying why and an audit row (agent/storage/task_store.py).

    Every process sweeps (one alone, or each replica); the end is a conditional write, so a
    task is ended once whoever sweeps it. In this process a task's lock is held while it is
    ended, so a follow-up here either runs first (and the task is no longer stale) or finds
    it ended.
    """

    def __init__(
        self,
        parked: ParkedTasks,
        ttl_seconds: float,
        lock: Lock,
        changed: Callable[[str], None],
        *,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._parked = parked
        self._ttl = timedelta(seconds=ttl_seconds)
        self._lock = lock
        self._changed = changed
        self._clock = clock or (lambda: datetime.now(UTC))
        self._loop: asyncio.Task[None] | None = None
        self.interval = min(ttl_seconds / 4, MAX_SWEEP_SECONDS)
        """A stale task waits at most a quarter of its time (at most a minute) more."""

    async def sweep(self) -> list[str]:
        """End every task parked longer than the ttl; returns the ids this call ended."""
        now = self._clock()
        cutoff = now - self._ttl
        ended: list[str] = []
        for stale in await self._parked.stale(cutoff):
            release = await self._lock(stale.task_id)
            try:
                if await self._parked.expire(stale, cutoff, now, self._ttl):
                    ended.append(stale.task_id)
            except Exception:  # that task is tried again at the next sweep
                log.exception("could not end parked task %s", stale.task_id)
            finally:
                release()
            self._changed(stale.task_id)  # its subscribers here read the end
        if ended:
            log.warning("ended %d task(s) that waited too long for input", len(ended))
        return ended

    def start(self) -> None:
        """Sweep in the background, every ``interval`` seconds."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop().create_task(
                self._sweep_forever(), name="parked-task-sweeper"
            )

    async def stop(self) -> None:
        """Stop sweeping (a sweep in progress is cancelled; its transaction rolls back)."""
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop
            self._loop = None

    async def _sweep_forever(self) -> None:
        """A failed sweep is logged, and the next one tries again."""
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.sweep()
            except Exception:
                log.exception("the sweep for expired parked tasks failed")
