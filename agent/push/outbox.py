"""The outbox of push notifications: filled in the database, emptied by the delivery workers.

A trigger on the task table adds one row per config of a task whenever the task's status row
changes (inserted, or its status replaced), in the transaction that changed it: every writer of
tasks (the group-committing writer, a restart ending interrupted tasks, a survivor ending a dead
replica's, the sweeper ending parked ones) fills it without knowing of it, and a change that
commits has its notifications durable with it. The triggers are installed at start-up, once the
a2a-sdk has created its task table (after the core's migrations, which create the outbox).

Workers claim due rows with a conditional UPDATE (``claimed_until``), so replicas sharing the
database send each notification once; a replica that dies mid-send lets its claim lapse. Only
the oldest row of each (task, config) is due, so one receiver hears a task's states in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, exists, func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import aliased

from agent.storage.schema import push_notification_configs, push_outbox

TASK_TABLE = "tasks"
_ENQUEUE = (
    "INSERT INTO push_outbox (task_id, config_id, owner, status, attempts) "
    "SELECT NEW.id, c.config_id, NEW.owner, NEW.status, 0 FROM push_notification_configs c "
    "WHERE c.task_id = NEW.id;"
)
SQLITE_TRIGGERS = (
    f"CREATE TRIGGER IF NOT EXISTS push_outbox_on_insert AFTER INSERT ON {TASK_TABLE} "
    f"BEGIN {_ENQUEUE} END",
    f"CREATE TRIGGER IF NOT EXISTS push_outbox_on_update AFTER UPDATE OF status ON {TASK_TABLE} "
    f"WHEN NEW.status IS NOT OLD.status BEGIN {_ENQUEUE} END",
)
POSTGRESQL_TRIGGERS = (
    "CREATE OR REPLACE FUNCTION push_outbox_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN IF TG_OP = 'INSERT' OR NEW.status::text IS DISTINCT FROM OLD.status::text THEN "
    f"{_ENQUEUE} END IF; RETURN NULL; END $$",
    # created once: creating a trigger locks the task table, which other replicas are writing
    "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'push_outbox_enqueue' "
    f"AND tgrelid = '{TASK_TABLE}'::regclass) THEN "
    f"CREATE TRIGGER push_outbox_enqueue AFTER INSERT OR UPDATE OF status ON {TASK_TABLE} "
    "FOR EACH ROW EXECUTE FUNCTION push_outbox_enqueue(); END IF; END $$",
)


@dataclass(frozen=True)
class Pending:
    """One claimed notification: which config of which task, and the status it announces."""

    id: int
    task_id: str
    config_id: str
    owner: str
    status: dict[str, Any]
    attempts: int


class Outbox:
    """The outbox table's reads and writes (one short transaction each)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def initialize(self) -> None:
        """Install the triggers (idempotent); after the task table exists, under the
        start-up lock (agent/app.py ``prepare_storage``)."""
        postgresql = self._engine.dialect.name == "postgresql"
        async with self._engine.begin() as connection:
            for statement in POSTGRESQL_TRIGGERS if postgresql else SQLITE_TRIGGERS:
                await connection.execute(text(statement))

    async def claim(self, now: datetime, hold: timedelta, limit: int) -> list[Pending]:
        """Up to ``limit`` due rows, each claimed until ``now + hold`` by this caller alone."""
        older = aliased(push_outbox)
        due = (
            select(push_outbox)
            .where(
                or_(push_outbox.c.due_at.is_(None), push_outbox.c.due_at <= now),
                or_(push_outbox.c.claimed_until.is_(None), push_outbox.c.claimed_until < now),
                ~exists().where(
                    older.c.task_id == push_outbox.c.task_id,
                    older.c.config_id == push_outbox.c.config_id,
                    older.c.id < push_outbox.c.id,
                ),
            )
            .order_by(push_outbox.c.id)
            .limit(limit)
        )
        claimed: list[Pending] = []
        async with self._engine.begin() as connection:
            rows = (await connection.execute(due)).all()
            for row in rows:
                taken = await connection.execute(
                    update(push_outbox)
                    .where(
                        push_outbox.c.id == row.id,
                        or_(
                            push_outbox.c.claimed_until.is_(None),
                            push_outbox.c.claimed_until < now,
                        ),
                    )
                    .values(claimed_until=now + hold)
                )
                if taken.rowcount == 1:
                    claimed.append(
                        Pending(
                            row.id,
                            row.task_id,
                            row.config_id,
                            row.owner or "",
                            row.status,
                            row.attempts,
                        )
                    )
        return claimed

    async def done(self, pending: Pending) -> None:
        """Delivered, or given up: the row goes."""
        async with self._engine.begin() as connection:
            await connection.execute(delete(push_outbox).where(push_outbox.c.id == pending.id))

    async def retry(self, pending: Pending, due: datetime) -> None:
        """Failed this time: one more attempt counted, due again at ``due``, unclaimed."""
        async with self._engine.begin() as connection:
            await connection.execute(
                update(push_outbox)
                .where(push_outbox.c.id == pending.id)
                .values(attempts=pending.attempts + 1, due_at=due, claimed_until=None)
            )

    async def count_configs(self, owner: str) -> int:
        """How many push configs ``owner`` has, over all their tasks."""
        query = select(func.count()).where(push_notification_configs.c.owner == owner)
        async with self._engine.connect() as connection:
            return int(await connection.scalar(query) or 0)

    async def forget_task_config(self, task_id: str, config_id: str | None) -> None:
        """A deleted config's (or all a task's configs') undelivered notifications go too."""
        condition = push_outbox.c.task_id == task_id
        if config_id is not None:
            condition = and_(condition, push_outbox.c.config_id == config_id)
        async with self._engine.begin() as connection:
            await connection.execute(delete(push_outbox).where(condition))
