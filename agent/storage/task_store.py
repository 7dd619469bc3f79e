"""The SDK's task table: its store, the states a stored task can be in, and parked tasks.

``UpsertDatabaseTaskStore`` is the SDK's ``DatabaseTaskStore`` with a one-statement save and
start-up recovery. Every write of a task goes by the group-committing writer
(agent/storage/group_commit.py), which uses ``row``/``upsert`` from here so the rows stay
exactly the SDK's; the SDK's reads (``get``, ``list``) serve GetTask and ListTasks.

``ParkedTasks``: tasks waiting for input (input-required, auth-required), how many a caller
has, and the end of those that waited too long. A parked task has no runner: nothing ends it
but its caller's answer or cancel. Left alone it would be kept, with its history, for ever, so
the request handler bounds how many one caller may have (``count``), and a sweeper
(agent/server/bounds.py) ends those parked longer than ``parked_task_ttl`` (``stale``,
``expire``): CANCELED, a status message saying why, and an audit row, in one transaction. The
end is one conditional UPDATE (still parked, not touched since the cutoff), so however many
processes sweep at once, each task is ended once, and a task a follow-up took up meanwhile is
left alone.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.tasks import DatabaseTaskStore
from a2a.types import Message, Part, Role, Task, TaskState, TaskStatus
from google.protobuf.json_format import MessageToDict
from sqlalchemy import (
    ColumnElement,
    Insert,
    Select,
    String,
    Table,
    Update,
    and_,
    cast,
    delete,
    func,
    inspect,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.base.ids import random_hex
from agent.edge.proto_json import message_to_dict
from agent.storage.audit import AGENT_TOOL, AuditRecord
from agent.storage.engine import dialect_module
from agent.storage.recovery import (
    ANONYMOUS_PRINCIPAL,
    RUNNING,
    VERSIONS,
    Locked,
    Runner,
    append_event,
    end_task,
    has_versions,
)
from agent.storage.schema import principal_audit, task_runner

log = logging.getLogger(__name__)
RUNNING_STATES = frozenset({TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING})
"""A task in these states has a runner (a ``task_runner`` row); in any other it has none."""
PARKED_STATES = frozenset({TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED})
"""A task in these states waits for its caller: no one runs it until a follow-up claims it."""
ENDED_STATES = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    }
)
"""Terminal states: once one is durable (and so may have been acknowledged), no write replaces
it."""

ENDED_NAMES = tuple(sorted(TaskState.Name(state) for state in ENDED_STATES))
"""The terminal states as a row's status JSON names them."""
_ROW_KEYS = frozenset(
    {
        "id", "context_id", "kind", "owner", "last_updated", "status", "artifacts", "history",
        "task_metadata", "protocol_version",
    }
)  # fmt: skip
"""The SDK task model's attributes, which ``row`` fills itself (another model: the SDK's way)."""


class UpsertDatabaseTaskStore(DatabaseTaskStore):
    """The SDK's database store, saving with one INSERT ... ON CONFLICT UPDATE.

    The SDK saves with ``session.merge``: a SELECT by primary key, then an INSERT or UPDATE.
    One statement does both, and its condition keeps a row's owner and a row's end: a save
    under another owner changes nothing (merge would have handed the task over), and neither
    does a save over a task stored in a terminal state (acknowledged, it stays as it was).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        mapper = inspect(self.task_model)
        table = mapper.local_table
        assert isinstance(table, Table)
        self._table = table
        # (ORM attribute, column): the model's ``task_metadata`` is the column ``metadata``
        self._columns = [(a.key, a.columns[0].name) for a in mapper.column_attrs]
        self._dialect = dialect_module(self.engine.dialect.name)
        self._upsert = self.upsert()
        self._own_row = {key for key, _ in self._columns} == _ROW_KEYS

    @property
    def table(self) -> Table:
        """The SDK's task table (what ``row`` fills)."""
        return self._table

    @property
    def takes_printed(self) -> bool:
        """Whether ``row`` takes an artifact in ``printed`` as it is (its own row); else it
        walks the task, which must then be whole (``Settlement.whole_task``)."""
        return self.core_to_model_conversion is None and self._own_row

    def row(
        self, task: Task, owner: str, printed: Mapping[str, dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """The column values the SDK's store writes for ``task`` of ``owner``.

        The values of the SDK's ``_to_orm``, computed without building an ORM instance and
        with ``proto_json.message_to_dict`` (its output is ``MessageToDict``'s, property-
        tested; shared: the values are only serialized), so the row is the SDK's at a fraction
        of the cost: the writer thread holds the GIL for less. An artifact in ``printed`` (by
        id: a record as the answer printed it, ``TaskRun.wire_artifacts``) is taken as it is,
        not walked again: the same JSON value, with its integral numbers written as integers
        (``300``, where ``MessageToDict`` writes ``300.0``), which ``ParseDict`` reads back
        into the same Task (a negative zero as the zero the answer printed; a capacity
        check's 24 records: 0.7 ms of CPU a call). A store
        given its own ``core_to_model_conversion`` keeps it.
        """
        if not self.takes_printed:
            model = self._to_orm(task, owner)
            return {column: getattr(model, key) for key, column in self._columns}
        values = {
            "id": task.id,
            "context_id": task.context_id,
            "kind": "task",
            "owner": owner,
            "last_updated": (
                task.status.timestamp.ToDatetime() if task.status.HasField("timestamp") else None
            ),
            "status": message_to_dict(task.status, shared=True),
            "artifacts": [
                (printed and printed.get(artifact.artifact_id))
                or message_to_dict(artifact, shared=True)
                for artifact in task.artifacts
            ],
            "history": [message_to_dict(message, shared=True) for message in task.history],
            "task_metadata": message_to_dict(task.metadata) if task.metadata.fields else None,
            "protocol_version": "1.0",
        }
        return {column: values[key] for key, column in self._columns}

    def upsert(self) -> Insert:
        """INSERT ... ON CONFLICT UPDATE of ``row`` values, keeping the row's owner and its end.

        Without values: executed with one ``row`` or many (a group commit's batch).
        """
        table = self._table
        insert = self._dialect.insert(table)
        statement: Insert = insert.on_conflict_do_update(
            index_elements=[table.c.id],
            set_={name: insert.excluded[name] for _, name in self._columns if name != "id"},
            where=and_(
                table.c.owner == insert.excluded.owner,
                # one comparison per state: an IN list would be an expanding parameter,
                # which an executemany (a batch of rows) cannot take
                *(self.stored_state() != name for name in ENDED_NAMES),
            ),
        )
        return statement

    def stored_state(self) -> ColumnElement[str]:
        """The state in a row's status JSON (its proto enum name; '' if there is none)."""
        return func.coalesce(self._table.c.status["state"].as_string(), "")

    def owned(self, rows: Sequence[dict[str, Any]]) -> Select[tuple[str]]:
        """The ids of those ``rows``' tasks stored under the row's owner."""
        table = self._table
        return select(table.c.id).where(
            or_(*((table.c.id == row["id"]) & (table.c.owner == row["owner"]) for row in rows))
        )

    def transition(self, row: dict[str, Any], expect: Iterable[str]) -> Update:
        """UPDATE of the owner's row to ``row`` while its state is one of ``expect`` (enum
        names); RETURNING its id: no id, no change (another request moved the task first)."""
        table = self._table
        return (
            update(table)
            .where(
                table.c.id == row["id"],
                table.c.owner == row["owner"],
                self.stored_state().in_(sorted(expect)),
            )
            .values({name: value for name, value in row.items() if name != "id"})
            .returning(table.c.id)
        )

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
        do it (``ReplicaLease``, agent/storage/recovery.py). One transaction: each ended task
        gets its invocation audit row (whose: its ``task_runner`` row, else its owner), and
        every ``task_runner`` row goes, since nothing runs here yet. Returns the ids it ended.
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


PARKED = (
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_AUTH_REQUIRED",
    "input-required",  # rows an 0.3 store wrote, as the SDK's own queries read them
    "auth-required",
)
EXPIRE_OPERATION = "expire"
EXPIRED_REASON = "expired"
"""The audit row of an expired task: ``tool`` agent, ``operation`` expire, ``reason`` expired."""
STALE_BATCH = 500
"""Stale tasks one sweep reads at most (the oldest first); the next sweep takes the rest."""


@dataclass(frozen=True)
class Stale:
    """A task parked since before the cutoff, when the sweep listed it."""

    task_id: str
    context_id: str
    owner: str


def expired_text(ttl: timedelta) -> str:
    """The status message of an expired task: what happened and the bound that did it."""
    seconds = f"{ttl.total_seconds():g}"
    return (
        f"canceled: no input came within {seconds} s (parked_task_ttl); "
        "send a new message to start again"
    )


class ParkedTasks:
    """Parked tasks in the SDK's task table ``tasks`` (the store's ``table``)."""

    def __init__(self, engine: AsyncEngine, tasks: Table, ttl_seconds: float | None = None) -> None:
        """``ttl_seconds``: how long a task may stay parked; ``count`` then reads only the
        caller's tasks changed since (the index on owner and time), not all it ever had."""
        self._engine = engine
        self._tasks = tasks
        self._ttl = None if ttl_seconds is None else timedelta(seconds=ttl_seconds)
        self._versioned: bool | None = None

    def _parked(self) -> ColumnElement[bool]:
        """Rows whose stored status is a parked state (the SDK's JSON path, both databases)."""
        state: ColumnElement[str] = self._tasks.c.status["state"].as_string()
        return state.in_(PARKED)

    def _before(self, cutoff: datetime) -> ColumnElement[bool]:
        """Parked since before ``cutoff``; a row with no time (its status had no timestamp)
        cannot be shown to be recent, so it counts as stale too."""
        last_updated = self._tasks.c.last_updated
        return or_(last_updated < _naive(cutoff), last_updated.is_(None))

    async def count(self, owner: str) -> int:
        """How many tasks ``owner`` has waiting for input (those past the ttl are being
        ended, and are not counted)."""
        tasks = self._tasks
        query = select(func.count()).where(tasks.c.owner == owner, self._parked())
        if self._ttl is not None:
            query = query.where(tasks.c.last_updated >= _naive(datetime.now(UTC) - self._ttl))
        async with self._engine.connect() as connection:
            return int((await connection.execute(query)).scalar_one())

    async def stale(self, cutoff: datetime) -> list[Stale]:
        """Tasks parked since before ``cutoff``, the oldest first (at most ``STALE_BATCH``)."""
        tasks = self._tasks
        query = (
            select(tasks.c.id, tasks.c.context_id, tasks.c.owner)
            .where(self._parked(), self._before(cutoff))
            .order_by(tasks.c.last_updated, tasks.c.id)
            .limit(STALE_BATCH)
        )
        async with self._engine.connect() as connection:
            rows = (await connection.execute(query)).all()
        return [
            Stale(task_id, context_id or "", owner or "") for task_id, context_id, owner in rows
        ]

    async def expire(self, task: Stale, cutoff: datetime, now: datetime, ttl: timedelta) -> bool:
        """End ``task`` CANCELED if it is still parked since before ``cutoff``; True if this
        call ended it. With the cluster store's version table, its version row is locked
        first (the store's lock order), the version goes up and the status joins its event
        log, so subscribers on every replica read the end."""
        if self._versioned is None:
            async with self._engine.connect() as connection:
                self._versioned = await has_versions(connection)
        status = _expired_status(task, now, ttl)
        tasks = self._tasks
        this = tasks.c.id == task.task_id
        # The claim: a write that changes nothing, taken only while the task is still parked
        # since before the cutoff; it holds the row (PostgreSQL) or the database (SQLite)
        # until the end is written, so no two sweepers, and no follow-up's write, come between.
        claim = (
            update(tasks)
            .where(this, self._parked(), self._before(cutoff))
            .values(last_updated=tasks.c.last_updated)
        )
        async with self._engine.begin() as connection:
            if self._versioned:
                locked = select(VERSIONS.c.version).where(VERSIONS.c.task_id == task.task_id)
                await connection.execute(locked.with_for_update())
            if (await connection.execute(claim)).rowcount != 1:
                return False
            before = (
                await connection.execute(select(tasks.c.status, tasks.c.history).where(this))
            ).one()
            end = update(tasks).where(this)
            await connection.execute(
                end.values(
                    status=MessageToDict(status),
                    history=_with_question(before.status, before.history),
                    last_updated=_naive(now),
                )
            )
            if self._versioned:
                row = Locked(task.task_id, task.context_id, task.owner, running=False)
                await append_event(connection, row, status)
            await connection.execute(principal_audit.insert(), [_audit_row(task, now)])
        return True


def _naive(moment: datetime) -> datetime:
    """The SDK's ``last_updated`` is naive UTC."""
    return moment.astimezone(UTC).replace(tzinfo=None)


def _with_question(status: Any, history: Any) -> list[Any]:
    """The history with the parked status's message (the question asked) at its end: the SDK
    TaskManager's rule for a new status."""
    kept = list(history) if isinstance(history, list) else []
    if isinstance(status, dict) and status.get("message"):
        kept.append(status["message"])
    return kept


def _expired_status(task: Stale, now: datetime, ttl: timedelta) -> TaskStatus:
    """CANCELED, its message one text part saying why."""
    status = TaskStatus(
        state=TaskState.TASK_STATE_CANCELED,
        message=Message(
            message_id=random_hex(),
            role=Role.ROLE_AGENT,
            task_id=task.task_id,
            context_id=task.context_id,
            parts=[Part(text=expired_text(ttl))],
        ),
    )
    status.timestamp.FromDatetime(now.astimezone(UTC))
    return status


def _audit_row(task: Stale, now: datetime) -> dict[str, Any]:
    """Whose task it was (from its owner key), that it expired, when."""
    whose = Runner.of_owner(task.owner)
    record = AuditRecord(
        principal=(whose.principal or ANONYMOUS_PRINCIPAL)[:255],
        tenant=whose.tenant[:64] if whose.tenant else None,
        tool=AGENT_TOOL,
        operation=EXPIRE_OPERATION,
        decision="allow",
        reason=EXPIRED_REASON,
        task_id=task.task_id,
        ts=now.astimezone(UTC),
    )
    return record.as_row()
