"""Every error code the server can produce, with its terminal state and its error object."""

from __future__ import annotations

import json

import pytest
from google.protobuf.json_format import MessageToDict

from tests.a2a_helpers import BINDINGS, binding_of, call, data_message, describe, invoke, send

REJECTED, FAILED = "TASK_STATE_REJECTED", "TASK_STATE_FAILED"
WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}


def without_unit() -> dict:
    arguments = json.loads(json.dumps(WORKED))
    del arguments["condition"]["unit"]
    return arguments


def assert_error(outcome, state: str, code: str) -> dict:
    assert outcome.state == state, MessageToDict(outcome.task.status)
    error = outcome.error
    assert error["code"] == code
    assert set(error) <= {"code", "message", "details"}
    return error


@pytest.mark.parametrize("binding", BINDINGS)
async def test_input_invalid_missing_unit_points_at_the_member(agent, binding: str) -> None:
    token = agent.token("alice")
    interface = await binding_of(agent.base_url, token, "evaluate_resource_condition")
    outcome = await invoke(
        agent.base_url,
        token,
        "evaluate_resource_condition",
        without_unit(),
        interface,
        binding=binding,
    )
    error = assert_error(outcome, REJECTED, "input_invalid")
    assert error["details"] == [
        {
            "instance_path": "/condition/unit",
            "schema_path": "/properties/condition/required",
            "keyword": "required",
            "expected": "string",
            "actual": "missing",
        }
    ]
    assert outcome.artifacts() == []


async def test_input_invalid_type_names_the_type_never_the_value(agent) -> None:
    token = agent.token("alice")
    arguments = json.loads(json.dumps(WORKED))
    arguments["condition"]["threshold"] = "eighty-secret"
    outcome = await call(agent.base_url, token, "evaluate_resource_condition", arguments)
    error = assert_error(outcome, REJECTED, "input_invalid")
    (detail,) = error["details"]
    assert detail["instance_path"] == "/condition/threshold"
    assert (detail["keyword"], detail["expected"], detail["actual"]) == ("type", "number", "string")
    assert "eighty-secret" not in json.dumps(MessageToDict(outcome.task.status))


async def test_skill_request_with_unknown_member_is_input_invalid(agent) -> None:
    token = agent.token("alice")
    message = data_message(
        {"skill": "lookup_inventory", "arguments": {"kind": "sites"}, "extra": 1}
    )
    error = assert_error(await send(agent.base_url, token, message), REJECTED, "input_invalid")
    assert "skill_version" in error["message"]  # it names the members a request may have
    assert "extra" not in json.dumps(error)  # and echoes nothing the caller sent


@pytest.mark.parametrize(
    "interface",
    [
        None,
        {"skill_version": "1.0"},
        {"skill_version": "2.0", "interface_digest": "sha256:" + "0" * 64},
        {"skill_version": "1.0", "interface_digest": "sha256:" + "0" * 64},
    ],
    ids=["missing-both", "missing-digest", "wrong-version", "wrong-digest"],
)
async def test_interface_mismatch_is_checked_before_input(agent, interface) -> None:
    outcome = await invoke(
        agent.base_url,
        agent.token("alice"),
        "evaluate_resource_condition",
        without_unit(),
        interface,
    )
    assert_error(outcome, REJECTED, "interface_mismatch")


async def test_authorization_failed_for_missing_scope_before_anything_else(agent) -> None:
    # vic may see lookup_inventory but not use check_link_capacity; a public skill without
    # the scope is authorization_failed, checked before the interface and the input.
    outcome = await invoke(
        agent.base_url, agent.token("anon-ish", scopes=[]), "lookup_inventory", {"kind": "nonsense"}
    )
    assert_error(outcome, REJECTED, "authorization_failed")


async def test_unknown_and_invisible_skills_answer_alike(agent) -> None:
    token = agent.token("vic")  # cannot see evaluate_resource_condition
    unknown = assert_error(
        await invoke(agent.base_url, token, "no_such_skill", {}), REJECTED, "skill_not_advertised"
    )
    hidden = assert_error(
        await invoke(agent.base_url, token, "evaluate_resource_condition", WORKED),
        REJECTED,
        "skill_not_advertised",
    )
    assert unknown == hidden
    d_unknown = assert_error(
        await describe(agent.base_url, token, "no_such_skill"), REJECTED, "skill_not_advertised"
    )
    d_hidden = assert_error(
        await describe(agent.base_url, token, "evaluate_resource_condition"),
        REJECTED,
        "skill_not_advertised",
    )
    assert d_unknown == d_hidden


async def test_removed_skill_names_its_replacement(agent) -> None:
    error = assert_error(
        await invoke(agent.base_url, agent.token("alice"), "port_report", {}),
        REJECTED,
        "skill_not_advertised",
    )
    assert "lookup_inventory" in error["message"]


async def test_resource_of_another_tenant_looks_absent(agent) -> None:
    gary = agent.token("gary")
    other = assert_error(
        await call(agent.base_url, gary, "evaluate_resource_condition", WORKED),
        REJECTED,
        "authorization_failed",
    )
    absent_args = {**WORKED, "resource_id": "network-resource-999999"}
    absent = assert_error(
        await call(agent.base_url, gary, "evaluate_resource_condition", absent_args),
        REJECTED,
        "authorization_failed",
    )
    assert (
        other
        == absent
        == {"code": "authorization_failed", "message": "resource not found or not accessible"}
    )


async def test_constraint_rejected_for_a_window_beyond_the_advertised_limit(agent) -> None:
    outcome = await call(
        agent.base_url,
        agent.token("alice"),
        "check_link_capacity",
        {"link_id": "acme-lnk-00002", "window_seconds": 90000},
    )
    assert "max_window_seconds" in assert_error(outcome, REJECTED, "constraint_rejected")["message"]


async def test_constraint_rejected_for_a_unit_the_metric_is_not_observed_in(agent) -> None:
    arguments = json.loads(json.dumps(WORKED))
    arguments["condition"]["unit"] = "ratio"
    outcome = await call(
        agent.base_url, agent.token("alice"), "evaluate_resource_condition", arguments
    )
    assert_error(outcome, REJECTED, "constraint_rejected")


async def test_execution_failed_when_no_observation_exists(agent) -> None:
    arguments = json.loads(json.dumps(WORKED))
    arguments["condition"].update(metric="errors", unit="count", threshold=0, operator="gt")
    outcome = await call(
        agent.base_url, agent.token("alice"), "evaluate_resource_condition", arguments
    )
    assert_error(outcome, FAILED, "execution_failed")
    assert outcome.artifacts() == []


@pytest.mark.parametrize("broken", ["result", "record"])
async def test_output_invalid_fails_and_emits_no_invalid_output(lab_agent, broken: str) -> None:
    outcome = await call(
        lab_agent.base_url, lab_agent.token("alice"), "broken_output", {"break": broken}
    )
    error = assert_error(outcome, FAILED, "output_invalid")
    assert outcome.artifacts("broken_output") == []
    assert outcome.artifacts("probe-record") == []
    if broken == "record":
        assert "probe-record" in error["message"]
        assert error["details"][0]["instance_path"] == "/observed_at"
    else:
        assert error["details"][0]["instance_path"] == "/result"


async def test_broken_output_fixture_can_succeed(lab_agent) -> None:
    outcome = await call(
        lab_agent.base_url, lab_agent.token("alice"), "broken_output", {"break": "nothing"}
    )
    assert outcome.state == "TASK_STATE_COMPLETED"


async def test_interface_unavailable_when_describe_cannot_return_it(lab_agent) -> None:
    outcome = await describe(lab_agent.base_url, lab_agent.token("alice"), "link_headroom")
    assert_error(outcome, FAILED, "interface_unavailable")


async def test_resource_limit_exceeded_during_processing_fails(lab_agent) -> None:
    outcome = await call(lab_agent.base_url, lab_agent.token("alice"), "slow_probe", {"seconds": 5})
    assert "3" in assert_error(outcome, FAILED, "resource_limit_exceeded")["message"]
