"""The delivery worker: posts each claimed notification, retries with backoff, gives up at a
bound. It runs beside the requests, never in their way: its own asyncio task, its own bounded
HTTP client (a short timeout, no redirect followed, the response's body never read), a few
notifications at a time, and nothing a request waits on.

Each notification is the A2A ``StreamResponse`` of the change: the whole task when the task is
still in the status the change gave it, else that status alone (``statusUpdate``), so a late
delivery never announces a newer state under an older change's name.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
from a2a.server.context import ServerCallContext
from a2a.server.tasks import PushNotificationConfigStore, TaskStore
from a2a.types import TaskPushNotificationConfig, TaskStatus, TaskStatusUpdateEvent
from a2a.utils.proto_utils import to_stream_response
from google.protobuf import json_format

from agent.push.outbox import Outbox, Pending
from agent.push.signing import NotificationSigner
from agent.push.targets import PushTargets
from agent.storage.settlement import OwnerUser

log = logging.getLogger(__name__)
TOKEN_HEADER = "X-A2A-Notification-Token"
TIMEOUT_SECONDS = 5.0
BACKOFF_SECONDS = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
"""The wait before each next try."""
MAX_ATTEMPTS = len(BACKOFF_SECONDS) + 1
"""Tries per notification (the first, then one after each wait: two minutes in all); then it
is given up."""
POLL_SECONDS = 1.0
"""How often a worker looks for notifications another replica's change made due."""
BATCH = 8
HOLD = timedelta(seconds=60)
"""A claim's lifetime: more than a delivery can take, so only a dead worker's claim lapses."""
_RETRIED = frozenset({408, 425, 429})
"""4xx answers that mean 'later', not 'never'."""


def http_client() -> httpx.AsyncClient:
    """The workers' client: bounded, no proxy from the environment, redirects not followed."""
    return httpx.AsyncClient(
        timeout=TIMEOUT_SECONDS,
        follow_redirects=False,
        trust_env=False,
        limits=httpx.Limits(max_connections=BATCH, max_keepalive_connections=BATCH),
    )


class PushDelivery:
    """One process's worker over the shared outbox."""

    def __init__(
        self,
        outbox: Outbox,
        configs: PushNotificationConfigStore,
        tasks: TaskStore,
        targets: PushTargets,
        signer: NotificationSigner,
        http: httpx.AsyncClient,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._outbox, self._configs, self._tasks = outbox, configs, tasks
        self._targets, self._signer, self._http = targets, signer, http
        self._now = clock
        self._woken = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """A task changed here: look now rather than at the next poll."""
        self._woken.set()

    def start(self) -> None:
        """Start the worker (its first look delivers what a previous run left)."""
        self._worker = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop the worker; what it had not delivered stays in the outbox."""
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        await self._http.aclose()

    async def _run(self) -> None:
        while True:
            self._woken.clear()
            try:
                batch = await self._outbox.claim(self._now(), HOLD, BATCH)
                outcomes = await asyncio.gather(
                    *(self._deliver(pending) for pending in batch), return_exceptions=True
                )
                for outcome in outcomes:  # its claim lapses, and it is tried again then
                    if isinstance(outcome, Exception):
                        log.error("push delivery failed", exc_info=outcome)
            except Exception:
                log.exception("push delivery: the outbox could not be read; trying again")
                batch = []
            if len(batch) < BATCH:
                # asyncio.timeout, not wait_for: on 3.11 wait_for wraps the wait in a task per poll
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(POLL_SECONDS):
                        await self._woken.wait()

    async def _deliver(self, pending: Pending) -> None:
        """Post one notification and record the outcome."""
        configs = await self._configs.get_info_for_dispatch(pending.task_id)
        config = next((c for c in configs if c.id == pending.config_id), None)
        if config is None:  # deleted meanwhile
            await self._outbox.done(pending)
            return
        refusal = await self._targets.refusal(config.url)
        if refusal is not None:
            log.warning("push config %s of task %s: %s", config.id, pending.task_id, refusal)
            await self._outbox.done(pending)
            return
        body = await self._body(pending)
        try:
            async with self._http.stream(
                "POST", config.url, content=body, headers=self._headers(config, body)
            ) as response:
                status = response.status_code  # the body is never read
        except httpx.HTTPError as exc:
            await self._failed(pending, f"{type(exc).__name__}")
            return
        if 200 <= status < 300:
            await self._outbox.done(pending)
        elif status < 400 or (status < 500 and status not in _RETRIED):
            log.warning("push to config %s answered %d: given up", config.id, status)
            await self._outbox.done(pending)
        else:
            await self._failed(pending, f"HTTP {status}")

    async def _failed(self, pending: Pending, why: str) -> None:
        attempt = pending.attempts + 1
        if attempt >= MAX_ATTEMPTS:
            log.warning("push of task %s dropped after %d tries: %s", pending.task_id, attempt, why)
            await self._outbox.done(pending)
            return
        delay = BACKOFF_SECONDS[min(pending.attempts, len(BACKOFF_SECONDS) - 1)]
        log.info("push for task %s failed (%s); again in %.0f s", pending.task_id, why, delay)
        await self._outbox.retry(pending, self._now() + timedelta(seconds=delay))

    def _headers(self, config: TaskPushNotificationConfig, body: bytes) -> dict[str, str]:
        """The config's token; its own credentials, else the agent's signed token."""
        headers = {"Content-Type": "application/json"}
        if config.token:
            headers[TOKEN_HEADER] = config.token
        auth = config.authentication
        if config.HasField("authentication") and auth.scheme and auth.credentials:
            headers["Authorization"] = f"{auth.scheme} {auth.credentials}"
        else:
            headers["Authorization"] = "Bearer " + self._signer.token(
                config.url, config.task_id, body
            )
        return headers

    async def _body(self, pending: Pending) -> bytes:
        """The StreamResponse announcing the change (see the module docstring)."""
        status = json_format.ParseDict(pending.status, TaskStatus(), ignore_unknown_fields=True)
        context = ServerCallContext(user=OwnerUser(pending.owner))
        task = await self._tasks.get(pending.task_id, context)
        if task is not None and task.status == status:
            event = to_stream_response(task)
        else:
            event = to_stream_response(
                TaskStatusUpdateEvent(
                    task_id=pending.task_id,
                    context_id=task.context_id if task is not None else "",
                    status=status,
                )
            )
        return json.dumps(json_format.MessageToDict(event), separators=(",", ":")).encode()
