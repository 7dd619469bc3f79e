"""Parked-task expiry with two real replicas on one PostgreSQL (docs/security.md, bounds).

Both replicas sweep; each task parked past ``NETAGENT_PARKED_TASK_TTL`` ends CANCELED once,
with one audit row, whichever replica parked it and whichever swept it, and a subscriber on
the other replica sees the end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from a2a.types import GetTaskRequest, TaskState

from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from tests.a2a_helpers import call_context, follow_states, make_client, send, text_message
from tests.conftest import postgres_available
from tests.replicas import Pair, running_pair

pytestmark = pytest.mark.skipif(not postgres_available(), reason="needs the session's PostgreSQL")
TTL_SECONDS = 4
EXPIRY_WAIT_SECONDS = 30.0  # the sweepers look every ttl/4; never, before the bound existed
PER_REPLICA = 4


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    home = tmp_path_factory.mktemp("bounds-replicas")
    env = {"NETAGENT_PARKED_TASK_TTL": str(TTL_SECONDS)}
    with running_pair(home, "bounds_replicas", env=env) as replicas:
        yield replicas


async def test_tasks_parked_on_either_replica_expire_once_and_subscribers_see_it(
    pair: Pair,
) -> None:
    parked, watchers = [], []
    replicas = [pair.a, pair.b] * PER_REPLICA
    for index, replica in enumerate(replicas):
        asked = await send(replica.base_url, pair.token, text_message("hello there"))
        assert asked.state == "TASK_STATE_INPUT_REQUIRED", asked.task.status
        parked.append(asked.task.id)
        if index < 2:  # followed on the other replica from now until it ends
            other = replicas[index + 1]
            watchers.append(
                asyncio.ensure_future(follow_states(other.base_url, pair.token, parked[-1]))
            )
    deadline = time.monotonic() + EXPIRY_WAIT_SECONDS
    states: dict[str, int] = {}
    async with make_client(pair.a.base_url, pair.token, "JSONRPC") as client:
        while time.monotonic() < deadline:
            for task_id in parked:
                task = await client.get_task(GetTaskRequest(id=task_id), context=call_context())
                states[task_id] = task.status.state
            if all(s == TaskState.TASK_STATE_CANCELED for s in states.values()):
                break
            await asyncio.sleep(0.25)
    assert set(states.values()) == {TaskState.TASK_STATE_CANCELED}, states
    for watched in await asyncio.wait_for(asyncio.gather(*watchers), EXPIRY_WAIT_SECONDS):
        assert watched[0] == TaskState.TASK_STATE_INPUT_REQUIRED
        assert watched[-1] == TaskState.TASK_STATE_CANCELED
    engine = make_engine(pair.database_url)
    try:
        rows = await DatabaseAuditLog(engine).query(limit=10_000)
    finally:
        await engine.dispose()
    expired = sorted(r["task_id"] for r in rows if r["operation"] == "expire")
    assert expired == sorted(parked)  # once each, whichever replica swept it
