"""Interaction is a promise: every declared response mode works, and cancellation where declared."""

from __future__ import annotations

import asyncio
import json

import pytest
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageRequest,
    TaskNotCancelableError,
    TaskState,
)

from agent.registry.loader import load_registry
from netops.deployment import SKILLS_DIR
from tests.a2a_helpers import binding_of, call, call_context, data_message, make_client

ARGUMENTS = {
    "describe_skill": {"skill_id": "lookup_inventory"},
    "lookup_inventory": {"kind": "sites"},
    "evaluate_resource_condition": {
        "resource_id": "network-resource-123",
        "condition": {
            "metric": "utilization",
            "operator": "gte",
            "threshold": 80,
            "unit": "percent",
        },
    },
    "check_link_capacity": {"link_id": "acme-lnk-00002", "requested_bps": 1000},
    "link_headroom": {"link_id": "acme-lnk-00001"},
    # A check_link_capacity result (the skill's input schema is that skill's output schema);
    # the plan reads only link_id, requested_bps and fits, and the rest from the inventory.
    "plan_link_upgrade": {
        "link_id": "acme-lnk-00002",
        "a_device": "nyc1-core-01",
        "b_device": "nyc1-edge-01",
        "status": "connected",
        "capacity_bps": 100_000_000_000,
        "window_seconds": 3600,
        "window_end": "2026-11-29T12:00:00Z",
        "available_bps": 50_000_000_000,
        "fits": None,
        "verdict": "50 Gbit/s available at worst in the window",
        "directions": [],
        "supporting_record_refs": [],
    },
}
DECLARED = [
    (c.id, mode)
    for c in load_registry(SKILLS_DIR)
    if c.interface is not None
    for mode in c.interface.response_modes
]
TERMINAL = {
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_CANCELED",
}


def test_every_declared_skill_has_arguments_here() -> None:
    assert {skill for skill, _ in DECLARED} == set(ARGUMENTS)


async def wait_for(client, task_id: str, states: set[str], timeout: float = 15) -> str:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        task = await client.get_task(GetTaskRequest(id=task_id), context=call_context())
        state = TaskState.Name(task.status.state)
        if state in states or asyncio.get_running_loop().time() > deadline:
            return state
        await asyncio.sleep(0.05)


async def start_polling(base_url: str, token: str, skill: str, arguments: dict, client) -> str:
    """Non-blocking SendMessage: answered at once with the task; returns its id."""
    data = {"skill": skill, "arguments": arguments, **await binding_of(base_url, token, skill)}
    async for event in client.send_message(
        SendMessageRequest(message=data_message(data)), context=call_context()
    ):
        assert event.HasField("task")
        return event.task.id
    raise AssertionError("no task returned")


@pytest.mark.parametrize(("skill", "mode"), DECLARED)
async def test_declared_mode_works(agent, skill: str, mode: str) -> None:
    token = agent.token("paula")
    if mode == "poll":
        async with make_client(agent.base_url, token, "JSONRPC", polling=True) as client:
            task_id = await start_polling(agent.base_url, token, skill, ARGUMENTS[skill], client)
            assert await wait_for(client, task_id, TERMINAL) == "TASK_STATE_COMPLETED"
        return
    outcome = await call(agent.base_url, token, skill, ARGUMENTS[skill], streaming=mode == "stream")
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    results = outcome.artifacts(skill)
    assert len(results) == 1
    if mode == "stream":
        names = [
            e.artifact_update.artifact.name for e in outcome.events if e.HasField("artifact_update")
        ]
        assert names[-1] == skill and skill not in names[:-1]  # records stream before the result
        assert any(e.HasField("status_update") for e in outcome.events)


async def test_streamed_records_all_arrive_before_the_result(agent) -> None:
    outcome = await call(
        agent.base_url,
        agent.token("alice"),
        "check_link_capacity",
        {"link_id": "acme-lnk-00002"},
        streaming=True,
    )
    names = [
        e.artifact_update.artifact.name for e in outcome.events if e.HasField("artifact_update")
    ]
    assert len(names) > 2 and set(names[:-1]) == {"link-utilization-sample"}
    assert names[-1] == "check_link_capacity"
    refs = outcome.result("check_link_capacity")["supporting_record_refs"]
    assert refs == [a["artifactId"] for a in outcome.artifacts("link-utilization-sample")]


CANCELABLE = [c.id for c in load_registry(SKILLS_DIR) if c.interface and c.interface.cancelable]


def test_cancelable_skills_are_the_expected_ones() -> None:
    assert sorted(CANCELABLE) == ["check_link_capacity", "plan_link_upgrade"]


@pytest.mark.parametrize("skill", [*CANCELABLE, "slow_probe"])
async def test_cancel_stops_the_handler_and_the_task_ends_canceled(lab_agent, skill: str) -> None:
    token = lab_agent.token("paula")
    arguments = {"seconds": 10} if skill == "slow_probe" else ARGUMENTS[skill]
    async with make_client(lab_agent.base_url, token, "JSONRPC", polling=True) as client:
        task_id = await start_polling(lab_agent.base_url, token, skill, arguments, client)
        assert await wait_for(client, task_id, {"TASK_STATE_WORKING"}) == "TASK_STATE_WORKING"
        canceled = await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())
        assert TaskState.Name(canceled.status.state) == "TASK_STATE_CANCELED"
        await asyncio.sleep(0.5)  # a handler that ignored the cancel would now overwrite the state
        task = await client.get_task(GetTaskRequest(id=task_id), context=call_context())
        assert TaskState.Name(task.status.state) == "TASK_STATE_CANCELED"
        assert [a.name for a in task.artifacts if a.name == skill] == []


async def test_a_non_cancelable_skill_refuses_cancel_and_completes(lab_agent) -> None:
    token = lab_agent.token("alice")
    async with make_client(lab_agent.base_url, token, "JSONRPC", polling=True) as client:
        task_id = await start_polling(
            lab_agent.base_url,
            token,
            "evaluate_resource_condition",
            ARGUMENTS["evaluate_resource_condition"],
            client,
        )
        assert await wait_for(client, task_id, {"TASK_STATE_WORKING"}) == "TASK_STATE_WORKING"
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())
        assert await wait_for(client, task_id, TERMINAL) == "TASK_STATE_COMPLETED"


async def test_concurrency_limit_rejects_before_acceptance(lab_agent) -> None:
    token = lab_agent.token("carl")
    async with make_client(lab_agent.base_url, token, "JSONRPC", polling=True) as client:
        first = await start_polling(lab_agent.base_url, token, "slow_probe", {"seconds": 2}, client)
        assert await wait_for(client, first, {"TASK_STATE_WORKING"}) == "TASK_STATE_WORKING"
        second = await call(lab_agent.base_url, token, "slow_probe", {"seconds": 0})
        assert second.state == "TASK_STATE_REJECTED"
        assert second.error["code"] == "resource_limit_exceeded"
        assert await wait_for(client, first, TERMINAL) == "TASK_STATE_COMPLETED"
    again = await call(lab_agent.base_url, token, "slow_probe", {"seconds": 0})
    assert again.state == "TASK_STATE_COMPLETED", json.dumps(again.error)
