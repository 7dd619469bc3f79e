"""The delivery worker's outcomes, on a real SQLite database with the outbox trigger, against
httpx's mock transport and a clock the test moves: which answers are retried, how many times,
and that a notification is gone once sent or given up."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from a2a.server.context import ServerCallContext
from a2a.server.tasks import DatabasePushNotificationConfigStore
from a2a.types import Task, TaskPushNotificationConfig, TaskState, TaskStatus
from sqlalchemy import func, select

from agent.push.delivery import MAX_ATTEMPTS, PushDelivery
from agent.push.outbox import Outbox
from agent.push.signing import NotificationSigner
from agent.push.targets import PushTargets
from agent.security.auth import load_or_create_signing_key
from agent.storage.engine import make_engine
from agent.storage.schema import push_outbox, upgrade
from agent.storage.settlement import OwnerUser
from agent.storage.task_store import UpsertDatabaseTaskStore

HOOK = "http://127.0.0.1:9/hook"
OWNER = ServerCallContext(user=OwnerUser("4:acme:alice"))


@dataclass
class World:
    """A worker over a real outbox, a receiver answering ``answer``, and a movable clock."""

    tasks: UpsertDatabaseTaskStore
    answer: int = 503
    posts: list[httpx.Request] = field(default_factory=list)
    now: datetime = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    delivery: PushDelivery | None = None

    async def change(self, task_id: str, state: int) -> None:
        """A status change of the task (the trigger queues its notification)."""
        task = Task(id=task_id, context_id="ctx", status=TaskStatus(state=state))
        task.status.timestamp.FromDatetime(self.now)
        await self.tasks.save(task, OWNER)

    async def queued(self) -> int:
        async with self.tasks.engine.connect() as connection:
            return int(await connection.scalar(select(func.count()).select_from(push_outbox)))

    async def until(self, done: Callable[[], bool]) -> None:
        """Until ``done()`` (a deadline, not a measurement)."""
        for _ in range(1000):
            if done():
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"not reached; {len(self.posts)} posts")

    def later(self, seconds: float) -> None:
        """Move the clock on and let the worker look."""
        self.now += timedelta(seconds=seconds)
        assert self.delivery is not None
        self.delivery.wake()


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    url = f"sqlite+aiosqlite:///{tmp_path / 'push.db'}"
    await upgrade(url)
    engine = make_engine(url)
    tasks = UpsertDatabaseTaskStore(engine, create_table=True)
    await tasks.initialize()
    outbox = Outbox(engine)
    await outbox.initialize()
    configs = DatabasePushNotificationConfigStore(engine, create_table=False)
    await configs.set_info("t-1", TaskPushNotificationConfig(url=HOOK, id="c"), OWNER)
    made = World(tasks)

    def receive(request: httpx.Request) -> httpx.Response:
        made.posts.append(request)
        return httpx.Response(made.answer, headers={"Location": HOOK + "/moved"})

    key = load_or_create_signing_key(tmp_path)
    signer = NotificationSigner(key, "http://agent", "http://agent/.well-known/jwks.json")
    http = httpx.AsyncClient(transport=httpx.MockTransport(receive))
    made.delivery = PushDelivery(
        outbox, configs, tasks, PushTargets.parse("127.0.0.1"), signer, http, lambda: made.now
    )
    made.delivery.start()
    yield made
    await made.delivery.stop()
    await engine.dispose()


async def test_a_receiver_that_keeps_failing_is_tried_a_bounded_number_of_times(
    world: World,
) -> None:
    await world.change("t-1", TaskState.TASK_STATE_COMPLETED)
    world.later(0)
    for tries in range(1, MAX_ATTEMPTS + 1):
        await world.until(lambda tries=tries: len(world.posts) == tries)
        world.later(300)  # past any backoff
    await world.until(lambda: len(world.posts) == MAX_ATTEMPTS)
    for _ in range(3):  # given up: no more tries, whatever the time
        world.later(3600)
        await asyncio.sleep(0.05)
    assert len(world.posts) == MAX_ATTEMPTS
    assert await world.queued() == 0


async def test_a_retry_waits_for_its_backoff(world: World) -> None:
    await world.change("t-1", TaskState.TASK_STATE_COMPLETED)
    world.later(0)
    await world.until(lambda: len(world.posts) == 1)
    for _ in range(3):  # the clock stands still: not due yet
        world.later(0)
        await asyncio.sleep(0.05)
    assert len(world.posts) == 1
    world.answer = 200
    world.later(1)
    await world.until(lambda: len(world.posts) == 2)
    for _ in range(100):  # (the row goes just after the answer)
        if await world.queued() == 0:
            break
        await asyncio.sleep(0.01)
    assert await world.queued() == 0


@pytest.mark.parametrize(("answer", "tries"), [(200, 1), (204, 1), (302, 1), (404, 1)])
async def test_a_final_answer_ends_it_at_once(world: World, answer: int, tries: int) -> None:
    world.answer = answer
    await world.change("t-1", TaskState.TASK_STATE_FAILED)
    world.later(0)
    await world.until(lambda: len(world.posts) == tries)
    world.later(3600)
    await asyncio.sleep(0.1)
    assert len(world.posts) == tries
    assert world.posts[0].url == HOOK  # never the redirect's Location


@pytest.mark.parametrize("answer", [429, 500, 503, 408])
async def test_a_passing_answer_is_tried_again(world: World, answer: int) -> None:
    world.answer = answer
    await world.change("t-1", TaskState.TASK_STATE_INPUT_REQUIRED)
    world.later(0)
    await world.until(lambda: len(world.posts) == 1)
    world.answer = 200
    world.later(60)
    await world.until(lambda: len(world.posts) == 2)


async def test_a_tasks_changes_are_sent_in_order(world: World) -> None:
    world.answer = 200
    await world.change("t-1", TaskState.TASK_STATE_WORKING)
    await world.change("t-1", TaskState.TASK_STATE_INPUT_REQUIRED)
    world.later(0)
    await world.until(lambda: len(world.posts) == 2)
    states = [r.read().decode() for r in world.posts]
    assert "TASK_STATE_WORKING" in states[0] and "TASK_STATE_INPUT_REQUIRED" in states[1]
    assert '"statusUpdate"' in states[0] and '"task"' in states[1]  # the first is not current
