"""A task store that writes a running task's intermediate states behind, settled ones at once.

The SDK saves the whole task (history and every artifact so far) on each event and reads it
back before the next: for a call that goes submitted, working, record, result, completed that
is five full writes and as many reads, and for a skill with 24 supporting records it grows
quadratically. Only some of those writes matter to anyone outside this process:

- the first one: once a caller has seen a task, it must survive a crash (issue 7's
  durability bar), so a task's first save goes to the database before the save returns;
- settled states (completed, failed, canceled, rejected, input-required, auth-required):
  what a follow-up, another replica or a restart reads, so they are written at once too;
- everything between (working, each artifact) is kept in memory and written only if the
  task is still running ``flush_after`` seconds later (a long task is visible in the database
  with at most that delay), before a ListTasks of its owner, and at shutdown.

Reads of a task running here come from memory (copies, owner-checked like the store's own
reads), so the SDK's re-reads before each event cost nothing. A crash loses at most the
intermediate states of tasks that were running, which stop at their last written state either
way. Only for one process: replicas sharing a database use the SDK's versioned cluster store,
whose every write also feeds the event log other replicas follow; it is not wrapped.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.id_generator import IDGenerator, IDGeneratorContext
from a2a.server.owner_resolver import OwnerResolver, resolve_user_scope
from a2a.server.tasks import DatabaseTaskStore, TaskStore
from a2a.types import (
    ListTasksRequest,
    ListTasksResponse,
    Task,
    TaskState,
)
from sqlalchemy import Insert, String, Table, cast, delete, inspect, or_, select
from sqlalchemy.dialects import postgresql, sqlite

from agent.storage.interrupted import INTERRUPTED as INTERRUPTED  # its old home: app, tests
from agent.storage.interrupted import RUNNING, Runner, end_task, has_versions
from agent.storage.tables import task_runner

log = logging.getLogger(__name__)
FLUSH_AFTER_SECONDS = 0.5
FRESH_IDS = 4096  # ids handed out and not yet saved (a request that fails first leaves one)
SETTLED_STATES = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
)


def _copy(task: Task) -> Task:
    copy = Task()
    copy.CopyFrom(task)
    return copy


@dataclass
class _Live:
    """A task running in this process: its newest state, and whether the database has it."""

    owner: str
    context: ServerCallContext
    task: Task
    dirty: bool = False
    timer: asyncio.TimerHandle | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class WriteBehindTaskStore(TaskStore):
    """Wraps a ``TaskStore``; see the module docstring for what is written when."""

    def __init__(
        self,
        store: TaskStore,
        *,
        flush_after: float = FLUSH_AFTER_SECONDS,
        owner_resolver: OwnerResolver = resolve_user_scope,
    ) -> None:
        self._store = store
        self._flush_after = flush_after
        self._owner = owner_resolver
        self._live: dict[str, _Live] = {}
        self._flushing: set[asyncio.Task[None]] = set()
        self._fresh: dict[str, None] = {}

    @property
    def store(self) -> TaskStore:
        """The wrapped store."""
        return self._store

    def fresh_ids(self) -> IDGenerator:
        """The SDK's task id generator for new tasks, telling this store which ids are new.

        The SDK looks a new task up several times before its first save; an id generated here
        a moment ago cannot be in the database, so those lookups need no query.
        """
        return _FreshTaskIds(self)

    def _expect(self, task_id: str) -> None:
        if len(self._fresh) >= FRESH_IDS:
            del self._fresh[next(iter(self._fresh))]
        self._fresh[task_id] = None

    async def initialize(self) -> None:
        """Create the wrapped store's tables (start-up calls this under its lock)."""
        initialize = getattr(self._store, "initialize", None)
        if initialize is not None:
            await initialize()

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """First and settled states now; states in between behind (see the module docstring)."""
        owner = self._owner(context)
        self._fresh.pop(task.id, None)
        live = self._live.get(task.id)
        if live is not None and live.owner != owner:  # not this task's owner: the store decides
            await self._store.save(task, context)
            return
        if live is not None and task.status.state not in SETTLED_STATES:
            live.task = _copy(task)
            live.context = context
            live.dirty = True
            if live.timer is None:
                live.timer = asyncio.get_running_loop().call_later(
                    self._flush_after, self._flush_soon, task.id
                )
            return
        first = live is None
        if live is None:
            live = _Live(owner, context, _copy(task))
            if task.status.state not in SETTLED_STATES:
                self._live[task.id] = live
        async with live.lock:
            try:
                await self._store.save(task, context)
            except BaseException:
                if first:  # never stored: nothing may be read or written behind for it
                    self._forget(task.id, live)
                raise
            if task.status.state in SETTLED_STATES:
                self._forget(task.id, live)
            else:
                live.task, live.dirty = _copy(task), False

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """A task running here from memory (its owner only); any other from the store."""
        live = self._live.get(task_id)
        if live is not None and live.owner == self._owner(context):
            return _copy(live.task)
        if task_id in self._fresh:
            return None
        return await self._store.get(task_id, context)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The store's list, after writing the owner's running tasks, so it shows them now."""
        owner = self._owner(context)
        for task_id, live in list(self._live.items()):
            if live.owner == owner:
                await self._flush(task_id)
        return await self._store.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Forget it here and delete it in the store."""
        live = self._live.get(task_id)
        if live is not None and live.owner == self._owner(context):
            async with live.lock:
                self._forget(task_id, live)
        await self._store.delete(task_id, context)

    async def flush_all(self) -> None:
        """Write every running task's newest state (at shutdown)."""
        for task_id in list(self._live):
            await self._flush(task_id)
        if self._flushing:
            await asyncio.gather(*self._flushing, return_exceptions=True)

    def _forget(self, task_id: str, live: _Live) -> None:
        if live.timer is not None:
            live.timer.cancel()
        if self._live.get(task_id) is live:
            del self._live[task_id]

    def _flush_soon(self, task_id: str) -> None:
        flushing = asyncio.get_running_loop().create_task(self._flush(task_id))
        self._flushing.add(flushing)
        flushing.add_done_callback(self._flushing.discard)

    async def _flush(self, task_id: str) -> None:
        live = self._live.get(task_id)
        if live is None:
            return
        async with live.lock:
            if live.timer is not None:
                live.timer.cancel()  # a no-op when the timer is what called this
                live.timer = None
            if self._live.get(task_id) is not live or not live.dirty:
                return  # settled (and written) or already flushed while this waited
            snapshot = live.task
            try:
                await self._store.save(snapshot, live.context)
            except Exception:  # the next save or flush tries again; the settled one raises
                log.exception("could not write task %s behind", task_id)
                return
            if live.task is snapshot:
                live.dirty = False


class _FreshTaskIds(IDGenerator):
    """UUIDs, like the SDK's own generator, each announced to the store as new."""

    def __init__(self, store: WriteBehindTaskStore) -> None:
        self._store = store

    def generate(self, context: IDGeneratorContext) -> str:
        task_id = str(uuid.uuid4())
        self._store._expect(task_id)
        return task_id


class UpsertDatabaseTaskStore(DatabaseTaskStore):
    """The SDK's database store, saving with one INSERT ... ON CONFLICT UPDATE.

    The SDK saves with ``session.merge``: a SELECT by primary key, then an INSERT or UPDATE.
    One statement does both, and its condition keeps a row's owner: a save under another
    owner changes nothing (merge would have handed the task over).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        mapper = inspect(self.task_model)
        table = mapper.local_table
        assert isinstance(table, Table)
        self._table = table
        # (ORM attribute, column): the model's ``task_metadata`` is the column ``metadata``
        self._columns = [(a.key, a.columns[0].name) for a in mapper.column_attrs]
        self._dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        self._upsert = self.upsert()

    @property
    def table(self) -> Table:
        """The SDK's task table (what ``row`` fills)."""
        return self._table

    def row(self, task: Task, owner: str) -> dict[str, Any]:
        """The column values the SDK's store writes for ``task`` of ``owner``."""
        model = self._to_orm(task, owner)
        return {column: getattr(model, key) for key, column in self._columns}

    def upsert(self) -> Insert:
        """INSERT ... ON CONFLICT UPDATE of ``row`` values, keeping the row's owner.

        Without values: executed with one ``row`` or many (a group commit's batch).
        """
        table = self._table
        insert = self._dialect.insert(table)
        statement: Insert = insert.on_conflict_do_update(
            index_elements=[table.c.id],
            set_={name: insert.excluded[name] for _, name in self._columns if name != "id"},
            where=table.c.owner == insert.excluded.owner,
        )
        return statement

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Insert the task or replace its row (for the same owner only)."""
        await self._ensure_initialized()
        values = self.row(task, self.owner_resolver(context))
        async with self.engine.begin() as connection:
            await connection.execute(self._upsert, values)

    async def end_interrupted(self, now: datetime) -> list[str]:
        """End every task left SUBMITTED or WORKING: FAILED, ``execution_failed``, interrupted.

        For a single process, at start-up before it serves: whatever it finds running was
        running in a process that is gone, and no one would ever settle it (a GetTask would
        say WORKING forever, a cancel would find nothing to cancel). Replicas sharing the
        database must not do this (another replica may be running those tasks); their leases
        do it (agent/storage/leases.py). One transaction: each ended task gets its invocation
        audit row (whose: its ``task_runner`` row, else its owner), and every ``task_runner``
        row goes, since nothing runs here yet. Returns the ids it ended.
        """
        await self._ensure_initialized()
        table = self._table
        assert isinstance(table, Table)  # a declarative model's own table
        text = cast(table.c.status, String)
        query = select(table.c.id, table.c.status).where(
            or_(*(text.like(f"%{state}%") for state in RUNNING))
        )
        ended: list[str] = []
        async with self.engine.begin() as connection:
            runners = {
                row.task_id: Runner(row.principal, row.tenant, row.skill_id)
                for row in (await connection.execute(select(task_runner))).all()
            }
            versioned = await has_versions(connection)
            for task_id, stored in (await connection.execute(query)).all():
                if not isinstance(stored, dict) or stored.get("state") not in RUNNING:
                    continue  # the text matched elsewhere (say, inside a message)
                runner = runners.get(task_id)
                if await end_task(
                    connection, task_id, runner, now, versioned=versioned, tasks=table
                ):
                    ended.append(task_id)
            await connection.execute(delete(task_runner))
        return ended
