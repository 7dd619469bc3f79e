"""The draft's worked example (digest §16), end to end over both bindings."""

from __future__ import annotations

import pytest

from tests.a2a_helpers import BINDINGS, binding_of, invoke

WORKED_ARGUMENTS = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("streaming", [False, True])
async def test_worked_example_condition_not_met(agent, binding: str, streaming: bool) -> None:
    token = agent.token("alice")
    interface = await binding_of(
        agent.base_url, token, "evaluate_resource_condition", binding=binding
    )
    outcome = await invoke(
        agent.base_url,
        token,
        "evaluate_resource_condition",
        WORKED_ARGUMENTS,
        interface,
        binding=binding,
        streaming=streaming,
    )
    assert outcome.state == "TASK_STATE_COMPLETED"
    result = outcome.result("evaluate_resource_condition")
    assert result["result"] == "condition_not_met"
    assert result["observed_value"] == 42
    assert result["unit"] == "percent"
    (record,) = outcome.artifacts("resource-observation")
    assert result["supporting_record_refs"] == [record["artifactId"]]
    data = record["parts"][0]["data"]
    assert data["observed_at"] == "2026-08-11T12:00:01Z"
    assert data["value"] == 42 and data["unit"] == "percent" and data["metric"] == "utilization"
    assert data["resource_id"] == "network-resource-123"
    assert len(outcome.task.artifacts) == 2
    if streaming:
        kinds = [
            e.artifact_update.artifact.name for e in outcome.events if e.HasField("artifact_update")
        ]
        assert kinds == ["resource-observation", "evaluate_resource_condition"]
