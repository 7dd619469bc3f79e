"""The ten codes, their terminal-state rules and the error object shape (project choices 1, 7)."""

from __future__ import annotations

import json

import pytest

from agent.interfaces import (
    TASK_STATE_FAILED,
    TASK_STATE_REJECTED,
    ErrorCode,
    Phase,
    SkillError,
    error_object,
)

REJECTED, FAILED = "TASK_STATE_REJECTED", "TASK_STATE_FAILED"

# code -> (state before acceptance, state during processing)
STATES = {
    "skill_not_advertised": (REJECTED, REJECTED),
    "interface_unavailable": (FAILED, FAILED),
    "interface_invalid": (FAILED, FAILED),
    "interface_mismatch": (REJECTED, REJECTED),
    "input_invalid": (REJECTED, REJECTED),
    "output_invalid": (FAILED, FAILED),
    "constraint_rejected": (REJECTED, REJECTED),
    "authorization_failed": (REJECTED, REJECTED),
    "resource_limit_exceeded": (REJECTED, FAILED),
    "execution_failed": (FAILED, FAILED),
}


def test_exactly_the_ten_codes() -> None:
    assert [code.value for code in ErrorCode] == list(STATES)
    assert (TASK_STATE_REJECTED, TASK_STATE_FAILED) == (REJECTED, FAILED)


@pytest.mark.parametrize("code", list(STATES))
def test_terminal_state_rule(code: str) -> None:
    before, during = STATES[code]
    assert ErrorCode(code).terminal_state(Phase.BEFORE_ACCEPTANCE) == before
    assert ErrorCode(code).terminal_state(Phase.PROCESSING) == during
    error = SkillError(code, "m")
    assert (error.terminal_state(accepted=False), error.terminal_state(accepted=True)) == (
        before,
        during,
    )


def test_client_local_codes_and_details_permission() -> None:
    local = {c.value for c in ErrorCode if c.client_local}
    assert local == {"skill_not_advertised", "interface_invalid", "input_invalid", "output_invalid"}
    assert {c.value for c in ErrorCode if c.allows_details} == {"input_invalid", "output_invalid"}


def test_error_object_has_exactly_the_draft_members() -> None:
    detail = {"instance_path": "/condition/threshold", "keyword": "type"}
    assert error_object(ErrorCode.AUTHORIZATION_FAILED) == {"code": "authorization_failed"}
    assert error_object("constraint_rejected", "too wide") == {
        "code": "constraint_rejected",
        "message": "too wide",
    }
    full = error_object(ErrorCode.INPUT_INVALID, "bad input", [detail])
    assert full == {"code": "input_invalid", "message": "bad input", "details": [detail]}
    assert json.loads(json.dumps(full)) == full
    assert type(full["code"]) is str
    assert error_object(ErrorCode.INPUT_INVALID, "", []) == {"code": "input_invalid"}


def test_error_object_refuses_misuse() -> None:
    with pytest.raises(ValueError, match="does not carry details"):
        error_object(ErrorCode.CONSTRAINT_REJECTED, "x", [{"instance_path": "/a"}])
    with pytest.raises(ValueError, match="instance_path"):
        error_object(ErrorCode.OUTPUT_INVALID, "x", [{"keyword": "type"}])
    with pytest.raises(ValueError):
        error_object("no_such_code")


def test_skill_error_carries_code_message_details() -> None:
    details = [{"instance_path": "/x", "keyword": "type", "expected": "number", "actual": "string"}]
    error = SkillError(ErrorCode.INPUT_INVALID, "arguments do not match input_schema", details)
    assert (error.code, error.message, list(error.details)) == (
        ErrorCode.INPUT_INVALID,
        "arguments do not match input_schema",
        details,
    )
    assert error.to_object() == {
        "code": "input_invalid",
        "message": "arguments do not match input_schema",
        "details": details,
    }
    details[0]["actual"] = "changed after raising"
    assert error.to_object()["details"][0]["actual"] == "string"
    assert str(error) == "input_invalid: arguments do not match input_schema"
    with pytest.raises(ValueError):
        SkillError(ErrorCode.EXECUTION_FAILED, "boom", details)
