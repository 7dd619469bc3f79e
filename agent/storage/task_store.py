"""The task table: the SDK's ``DatabaseTaskStore`` with a one-statement save, and start-up recovery.

Every write of a task goes by the group-committing writer (agent/storage/group_commit.py),
which uses ``row``/``upsert`` from here so the rows stay exactly the SDK's; the SDK's reads
(``get``, ``list``) serve GetTask and ListTasks.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.tasks import DatabaseTaskStore
from a2a.types import Task, TaskState
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

from agent.edge.proto_json import message_to_dict
from agent.storage.engine import dialect_module
from agent.storage.interrupted import INTERRUPTED as INTERRUPTED  # its old home: app, tests
from agent.storage.interrupted import RUNNING, Runner, end_task, has_versions
from agent.storage.settlement import ENDED_STATES
from agent.storage.tables import task_runner

log = logging.getLogger(__name__)
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
