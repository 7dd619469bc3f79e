"""SubscribeToTask reaches a running task on both bindings (it once broke in our error guard)."""

from __future__ import annotations

import pytest
from a2a.types import SubscribeToTaskRequest, TaskState

from tests.a2a_helpers import BINDINGS, call_context, make_client
from tests.integration.test_interaction import start_polling, wait_for


@pytest.mark.parametrize("binding", BINDINGS)
async def test_subscribe_follows_a_running_task_to_the_end(lab_agent, binding: str) -> None:
    token = lab_agent.token(f"subscriber-{binding}", tenant="acme", scopes=[])
    async with make_client(lab_agent.base_url, token, binding, polling=True) as client:
        # 2 s, under the probe's 3 s limit: a 1 s probe can end before the subscription
        task_id = await start_polling(
            lab_agent.base_url, token, "slow_probe", {"seconds": 2}, client
        )
        assert await wait_for(client, task_id, {"TASK_STATE_WORKING"}) == "TASK_STATE_WORKING"
    async with make_client(lab_agent.base_url, token, binding, streaming=True) as client:
        states = []
        async for event in client.subscribe(
            SubscribeToTaskRequest(id=task_id), context=call_context()
        ):
            kind = event.WhichOneof("payload")
            if kind == "status_update":
                states.append(TaskState.Name(event.status_update.status.state))
            elif kind == "task":
                states.append(TaskState.Name(event.task.status.state))
        assert states[-1] == "TASK_STATE_COMPLETED", states
