"""SIGKILL a replica under load: no task a client saw accepted is lost.

Clients keep several kinds of work in flight (completed skills, clarifications parked in
input-required, long tasks acknowledged while still running) until enough acknowledgements
have come back, then the process is killed with no chance to flush anything. After restart,
every acknowledged task must be in the store, and every parked one must still be continuable.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from a2a.types import GetTaskRequest, Message, SendMessageRequest, Task, TaskState
from a2a.utils.errors import A2AError
from google.protobuf.json_format import MessageToDict

from agent.storage.task_store import INTERRUPTED
from tests.a2a_helpers import binding_of, call_context, data_message, make_client, text_message
from tests.cluster.test_replicas import skills_with_slow_probe
from tests.conftest import postgres_database
from tests.replicas import Replica, prepare_shared_database, token_for

ACKNOWLEDGED_BEFORE_KILL = 40
WORKERS = 8


@dataclass
class Ledger:
    """What clients were told: task id -> the state they saw when it was acknowledged."""

    seen: dict[str, int] = field(default_factory=dict)
    cut_off: int = 0
    enough: asyncio.Event = field(default_factory=asyncio.Event)

    def acknowledge(self, task: Task) -> None:
        self.seen[task.id] = task.status.state
        if len(self.seen) >= ACKNOWLEDGED_BEFORE_KILL:
            self.enough.set()


def as_message(request: dict | str) -> Message:
    """A fresh message (new message id) for each send of a request."""
    return text_message(request) if isinstance(request, str) else data_message(request)


async def first_task(base_url: str, token: str, message: Message, polling: bool) -> Task:
    async with make_client(base_url, token, "JSONRPC", polling=polling) as client:
        async for event in client.send_message(
            SendMessageRequest(message=message), context=call_context()
        ):
            if event.HasField("task"):
                return event.task
    raise AssertionError("no task in the answer")


async def worker(
    replica: Replica, token: str, requests: itertools.cycle, ledger: Ledger, stop: asyncio.Event
) -> None:
    """Sends until told to stop; a request cut off by the kill was never acknowledged."""
    while not stop.is_set():
        request, polling = next(requests)
        try:
            task = await first_task(replica.base_url, token, as_message(request), polling)
        except (httpx.HTTPError, A2AError, OSError):
            ledger.cut_off += 1
            await asyncio.sleep(0.05)  # the replica is gone; nothing was acknowledged
            continue
        ledger.acknowledge(task)


def database_url(database: str, tmp: Path) -> str | None:
    if database == "postgresql":
        return postgres_database(f"durability_{tmp.name[-8:].lower()}")
    return f"sqlite+aiosqlite:///{tmp / 'durability.db'}"


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
async def test_sigkill_under_load_loses_no_acknowledged_task(tmp_path: Path, database: str) -> None:
    url = database_url(database, tmp_path)
    if url is None:
        pytest.skip("needs the session's PostgreSQL")
    await asyncio.to_thread(prepare_shared_database, url)
    skills = skills_with_slow_probe(tmp_path)
    token = token_for(tmp_path, "alice")
    replica = Replica(tmp_path, url, "victim", skills_dir=skills)
    await asyncio.to_thread(replica.start)
    try:
        probe = await binding_of(replica.base_url, token, "slow_probe")
        worked = await binding_of(replica.base_url, token, "evaluate_resource_condition")
        requests = itertools.cycle(
            [
                (
                    {
                        "skill": "evaluate_resource_condition",
                        "arguments": {
                            "resource_id": "network-resource-123",
                            "condition": {
                                "metric": "utilization",
                                "operator": "gte",
                                "threshold": 80,
                                "unit": "percent",
                            },
                        },
                        **worked,
                    },
                    False,
                ),
                ("check acme-lnk-00002", False),  # parks in input-required
                ({"skill": "slow_probe", "arguments": {"seconds": 1.5}, **probe}, True),
            ]
        )
        ledger, stop = Ledger(), asyncio.Event()
        workers = [
            asyncio.create_task(worker(replica, token, requests, ledger, stop))
            for _ in range(WORKERS)
        ]
        await asyncio.wait_for(ledger.enough.wait(), timeout=120)
        await asyncio.to_thread(replica.kill)  # requests are still in flight
        stop.set()
        for task in workers:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        acknowledged = dict(ledger.seen)
        assert ledger.cut_off > 0, "the kill interrupted no request: it was not under load"
        print(f"{database}: {len(acknowledged)} acknowledged, {ledger.cut_off} cut off")

        await asyncio.to_thread(replica.start)
        async with make_client(replica.base_url, token, "JSONRPC") as client:
            stored = {
                task_id: await client.get_task(GetTaskRequest(id=task_id), context=call_context())
                for task_id in acknowledged
            }
        assert set(stored) == set(acknowledged)
        if database == "sqlite":  # one process: its restart ends what it left running (#17)
            running = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
            assert [t for t, task in stored.items() if task.status.state in running] == []
            interrupted = [
                t
                for t, task in stored.items()
                if acknowledged[t] in running and task.status.state == TaskState.TASK_STATE_FAILED
            ]
            assert interrupted, "no acknowledged task was still running at the kill"
            for task_id in interrupted:
                (part,) = stored[task_id].status.message.parts
                assert MessageToDict(part)["data"]["message"] == INTERRUPTED
        parked = [
            task_id
            for task_id, task in stored.items()
            if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        ]
        assert parked, "the load parked no task in input-required"
        for task_id in parked:
            reply = await first_task(
                replica.base_url, token, text_message("1", task_id=task_id), polling=False
            )
            assert reply.id == task_id
            assert reply.status.state == TaskState.TASK_STATE_COMPLETED, reply.status
        completed = [t for t, s in acknowledged.items() if s == TaskState.TASK_STATE_COMPLETED]
        assert completed, "the load completed no task before the kill"
        for task_id in completed:
            assert stored[task_id].status.state == TaskState.TASK_STATE_COMPLETED
            assert stored[task_id].artifacts, "a completed task came back without its result"
    finally:
        await asyncio.to_thread(replica.stop)
