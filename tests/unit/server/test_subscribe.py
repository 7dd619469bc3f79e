"""SubscribeToTask follows a task until it is terminal (A2A 3.1.6), across the runs of its
follow-ups: a task parked for input is not the end of the stream (the TCK's STREAM-SUB-002)."""

from __future__ import annotations

import asyncio

from a2a.server.events import Event
from a2a.types import (
    CancelTaskRequest,
    SubscribeToTaskRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)

from agent.security.principal import Principal
from tests.unit.server.harness import Agent, data_message, text_message
from tests.unit.server.test_request_handler import parked, question

STREAM_SECONDS = 10.0


class Subscription:
    """A subscriber's events, read in the background until the stream closes."""

    def __init__(self, agent: Agent, task_id: str, who: Principal) -> None:
        self.events: list[Event] = []
        self.first = asyncio.Event()
        stream = agent.handler.on_subscribe_to_task(
            SubscribeToTaskRequest(id=task_id), agent.context(who)
        )
        self.reader = asyncio.ensure_future(self._read(stream))

    async def _read(self, stream: object) -> None:
        async for event in stream:  # type: ignore[attr-defined]
            self.events.append(event)
            self.first.set()

    async def started(self) -> None:
        await asyncio.wait_for(self.first.wait(), STREAM_SECONDS)

    async def closed(self) -> list[str]:
        """The states the stream carried (Task and status events), once it has closed."""
        await asyncio.wait_for(self.reader, STREAM_SECONDS)
        return [
            TaskState.Name(e.status.state)
            for e in self.events
            if isinstance(e, Task | TaskStatusUpdateEvent)
        ]


async def test_a_subscription_to_a_parked_task_follows_its_answers_until_it_completes(
    agent: Agent,
) -> None:
    vic = agent.caller("vic")
    asked = await parked(agent, vic)
    subscription = Subscription(agent, asked.id, vic)
    await subscription.started()
    assert isinstance(subscription.events[0], Task)
    await asyncio.sleep(0.05)
    assert not subscription.reader.done(), "the stream closed at a task waiting for input"

    offered = [c["skill_id"] for c in question(asked)["candidates"]]
    number = str(offered.index("lookup_inventory") + 1)  # the router offers the close ones
    picked = await agent.send(text_message(number, task_id=asked.id), vic)  # asks for arguments
    assert TaskState.Name(picked.status.state) == "TASK_STATE_INPUT_REQUIRED"
    await asyncio.sleep(0.05)
    assert not subscription.reader.done(), "the stream closed at a task waiting for input"
    done = await agent.send(data_message({"kind": "sites"}, task_id=asked.id), vic)
    assert TaskState.Name(done.status.state) == "TASK_STATE_COMPLETED"

    states = await subscription.closed()
    assert states[0] == "TASK_STATE_INPUT_REQUIRED"
    assert states[-1] == "TASK_STATE_COMPLETED", states
    assert "TASK_STATE_INPUT_REQUIRED" in states[1:-1], states  # the second question
    assert any(isinstance(e, TaskArtifactUpdateEvent) for e in subscription.events)


async def test_a_subscription_to_a_parked_task_ends_when_the_task_is_cancelled(
    agent: Agent,
) -> None:
    vic = agent.caller("vic")
    asked = await parked(agent, vic)
    subscription = Subscription(agent, asked.id, vic)
    await subscription.started()
    await agent.handler.on_cancel_task(CancelTaskRequest(id=asked.id), agent.context(vic))
    assert await subscription.closed() == ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_CANCELED"]
