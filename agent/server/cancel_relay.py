"""Cancel a task on the replica that runs it, whichever replica the request reached.

A running task lives in the memory of one replica. Writing CANCELED to the shared store from
another replica would tell the caller "cancelled" while the runner goes on and overwrites it
with its result. So the replica that receives the cancel asks its peers over PostgreSQL's
LISTEN/NOTIFY (no table, nothing to clean up); the one running the task cancels it locally,
exactly as if the request had reached it, and the asking replica answers with the stored
outcome. If no peer acts in time, no replica runs the task (its runner died), and the asking
replica may cancel it in the store itself.

The same connection listens for task changes: every transaction that writes a task row
notifies its id, so a subscription waits for a change of its task instead of polling the
store (an idle one costs nothing while nothing changes).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.security.principal import Principal
from agent.storage.settlement import TASK_CHANNEL

if TYPE_CHECKING:
    import asyncpg

log = logging.getLogger(__name__)
CHANNEL = "netagent_cancel"
RECONNECT_FIRST_SECONDS = 0.5
RECONNECT_MAX_SECONDS = 10.0
LocalCancel = Callable[[str, Principal], Coroutine[Any, Any, None]]
TaskChanged = Callable[[str], None]


def _payload(task_id: str, principal: Principal) -> str:
    """The owner travels with the request: the runner re-checks it against the stored task."""
    return json.dumps(
        {
            "task_id": task_id,
            "subject": principal.subject,
            "tenant": principal.tenant,
            "scopes": sorted(principal.scopes),
        }
    )


def _principal(data: dict[str, Any]) -> Principal:
    return Principal(
        subject=str(data["subject"]),
        tenant=data.get("tenant"),
        scopes=frozenset(str(s) for s in data.get("scopes", [])),
    )


class CancelRelay:
    """Publishes cancel requests to every replica and acts on those for tasks running here."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._listener: asyncpg.Connection | None = None
        self._on_cancel: LocalCancel | None = None
        self._on_change: TaskChanged | None = None
        self._pending: set[asyncio.Task[None]] = set()
        self._stopping = False
        self._reconnecting: asyncio.Task[None] | None = None

    async def start(self, on_cancel: LocalCancel, on_change: TaskChanged | None = None) -> None:
        """Listen on a dedicated connection (a pooled one would be handed to other work);
        ``on_change``: called with the id of each task whose row a replica wrote."""
        self._on_cancel = on_cancel
        self._on_change = on_change
        self._stopping = False
        await self._listen()

    async def _listen(self) -> None:
        import asyncpg  # a relay runs on PostgreSQL only: a SQLite agent never imports it

        url = make_url(self._engine.url).set(drivername="postgresql")
        listener = await asyncpg.connect(url.render_as_string(hide_password=False))
        await listener.add_listener(CHANNEL, self._received)
        if self._on_change is not None:
            await listener.add_listener(TASK_CHANNEL, self._changed)
        listener.add_termination_listener(self._lost)
        self._listener = listener

    def _lost(self, _connection: Any) -> None:
        """The listening connection died (PostgreSQL restarted, a connection cut): listen again.

        Until it is back, cancels sent to other replicas for tasks running here are missed.
        """
        if self._stopping or self._reconnecting is not None:
            return
        log.warning("cancel relay: lost its PostgreSQL connection; reconnecting")
        self._listener = None
        self._reconnecting = asyncio.get_running_loop().create_task(self._reconnect())

    async def _reconnect(self) -> None:
        delay = RECONNECT_FIRST_SECONDS
        try:
            while not self._stopping:
                try:
                    await self._listen()
                except Exception as exc:  # refused, timed out, not ready yet: all retried
                    log.warning("cancel relay: reconnect failed (%s); next in %.1f s", exc, delay)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, RECONNECT_MAX_SECONDS)
                else:
                    log.info("cancel relay: listening again")
                    return
        finally:
            self._reconnecting = None

    async def stop(self) -> None:
        self._stopping = True
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        if self._listener is not None:
            await self._listener.close()
            self._listener = None
        for pending in list(self._pending):
            pending.cancel()

    @property
    def listening(self) -> bool:
        """Whether cancels from other replicas reach this one right now."""
        return self._listener is not None and not self._listener.is_closed()

    async def request(self, task_id: str, principal: Principal) -> None:
        """Ask every replica (this one included) to cancel ``task_id`` if it runs it."""
        async with self._engine.begin() as connection:
            await connection.execute(
                text("SELECT pg_notify(:channel, :payload)"),
                {"channel": CHANNEL, "payload": _payload(task_id, principal)},
            )

    def _changed(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        """A task's row was written (by any replica): wake whoever waits on it here."""
        if self._on_change is not None:
            self._on_change(payload)

    def _received(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        try:
            data = json.loads(payload)
            task_id, principal = str(data["task_id"]), _principal(data)
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a malformed cancel request on %s", CHANNEL)
            return
        assert self._on_cancel is not None
        pending = asyncio.create_task(self._on_cancel(task_id, principal))
        self._pending.add(pending)
        pending.add_done_callback(self._pending.discard)
