"""Push configs as a caller sees them: checked, bounded and owner-scoped.

The a2a-sdk's database store keeps them (its table made by the core's migrations), one owner's
apart from another's; the request handler has already established that the task is the caller's
(another caller's task is answered as a missing one), and this checks the config itself: a URL
the agent may post to (agent/push/targets.py), values that fit in a header, and the bounds on
how many a task and a caller may have.
"""

from __future__ import annotations

import asyncio

from a2a.server.context import ServerCallContext
from a2a.server.tasks import DatabasePushNotificationConfigStore
from a2a.types import InvalidParamsError, TaskNotFoundError, TaskPushNotificationConfig

from agent.push.outbox import Outbox
from agent.push.targets import PushTargets

MAX_CONFIGS_PER_TASK = 10
MAX_CONFIGS_PER_CALLER = 100
MAX_ID_CHARS = 64
MAX_TOKEN_CHARS = 1024
MAX_CREDENTIALS_CHARS = 4096
MAX_SCHEME_CHARS = 32
CONFIG_NOT_FOUND = "Push notification config not found"
MAX_WATCHED = 10_000


def _printable(value: str) -> bool:
    """No control character (a header value cannot hold one; an id is kept clean)."""
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in value)


def _check_fields(config: TaskPushNotificationConfig) -> None:
    """Values the store and the delivery's headers can hold; fixed text, no value echoed."""
    auth = config.authentication
    fields = (
        ("id", config.id, MAX_ID_CHARS),
        ("token", config.token, MAX_TOKEN_CHARS),
        ("authentication.scheme", auth.scheme, MAX_SCHEME_CHARS),
        ("authentication.credentials", auth.credentials, MAX_CREDENTIALS_CHARS),
    )
    for name, value, limit in fields:
        if len(value) > limit or not _printable(value):
            raise InvalidParamsError(
                message=f"{name} is longer than {limit} characters or holds a control character"
            )
    if auth.scheme and (" " in auth.scheme or not auth.scheme.isascii()):
        raise InvalidParamsError(message="authentication.scheme is not a single ASCII word")


def _bound(limit: str, maximum: int, text: str) -> InvalidParamsError:
    """A bound's refusal, shaped as the other per-caller bounds' (agent/server/bounds.py)."""
    return InvalidParamsError(message=text, data={"limit": limit, "max": str(maximum)})


class PushConfigs:
    """Create, read, list and delete the caller's push configs of one of their tasks."""

    def __init__(
        self, store: DatabasePushNotificationConfigStore, outbox: Outbox, targets: PushTargets
    ) -> None:
        self._store, self._outbox, self._targets = store, outbox, targets
        self._creating = asyncio.Lock()
        """Creates one at a time in this process, so that the bounds hold for creates at once
        (replicas each hold them for their own: at once on n replicas, up to n over)."""
        self.watched: set[str] = set()
        """Tasks given a config through this process: their changes here wake the worker at
        once (any other change waits for its next look, at most a second)."""

    async def check(self, config: TaskPushNotificationConfig) -> None:
        """Refuse a config that may not be stored (InvalidParams, in fixed text)."""
        if not config.url:
            raise InvalidParamsError(message="url is required")
        _check_fields(config)
        refusal = await self._targets.refusal(config.url)
        if refusal is not None:
            raise InvalidParamsError(message=f"url is not a push target here: {refusal}")

    async def create(
        self, task_id: str, config: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """Store (or replace, by id) a checked config under the caller, within the bounds."""
        await self.check(config)
        async with self._creating:
            return await self._create(task_id, config, context)

    async def _create(
        self, task_id: str, config: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        config_id = config.id or task_id  # (the SDK's default id)
        existing = await self._store.get_info(task_id, context)
        if all(c.id != config_id for c in existing):
            if len(existing) >= MAX_CONFIGS_PER_TASK:
                raise _bound(
                    "max_push_configs_per_task",
                    MAX_CONFIGS_PER_TASK,
                    "this task has as many push configs as it may; delete one first",
                )
            owner = self._store.owner_resolver(context)
            if await self._outbox.count_configs(owner) >= MAX_CONFIGS_PER_CALLER:
                raise _bound(
                    "max_push_configs",
                    MAX_CONFIGS_PER_CALLER,
                    "you have as many push configs as you may; delete one first",
                )
        stored = await self._store.set_info(task_id, config, context)
        if len(self.watched) >= MAX_WATCHED:
            self.watched.clear()
        self.watched.add(task_id)
        return stored

    async def get(
        self, task_id: str, config_id: str, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        """The caller's config by id (the task's id when none is given)."""
        wanted = config_id or task_id
        for config in await self._store.get_info(task_id, context):
            if config.id == wanted:
                return config
        raise TaskNotFoundError(message=CONFIG_NOT_FOUND)

    async def list(
        self, task_id: str, context: ServerCallContext
    ) -> list[TaskPushNotificationConfig]:
        """The caller's configs of the task (at most ``MAX_CONFIGS_PER_TASK``: one page)."""
        return await self._store.get_info(task_id, context)

    async def delete(self, task_id: str, config_id: str, context: ServerCallContext) -> None:
        """Delete the caller's config (a missing one is already deleted) and what it had
        not been sent yet."""
        wanted = config_id or task_id
        if all(c.id != wanted for c in await self._store.get_info(task_id, context)):
            return
        await self._store.delete_info(task_id, context, wanted)
        await self._outbox.forget_task_config(task_id, wanted)
