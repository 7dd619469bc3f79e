"""terminal_error: the one place that turns an exception into the task's error object."""

from __future__ import annotations

import logging
import re

import pytest

from agent.interfaces import ErrorCode, SkillError
from agent.security.auth import TokenError
from agent.security.credentials import ExchangeError
from agent.server.executor import terminal_error
from agent.server.skill_context import ToolRefusedError

LOGGER = "agent.server.executor"
REFUSED = "tool access refused for this caller"


def test_a_skill_error_is_its_own_outcome() -> None:
    error = SkillError(ErrorCode.CONSTRAINT_REJECTED, "too many links")
    assert terminal_error(error, "t1") is error


@pytest.mark.parametrize(
    "error",
    [
        ToolRefusedError("inventory.read: tenant mismatch"),
        ExchangeError("invalid_scope", "no requested scope is held by the subject"),
        ExchangeError("invalid_grant", "an anonymous caller has no token to exchange"),
    ],
)
def test_a_refusal_is_the_callers(error: Exception, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        outcome = terminal_error(error, "t1")
    assert outcome.to_object() == {"code": "authorization_failed", "message": REFUSED}
    assert outcome.terminal_state(accepted=True) == "TASK_STATE_REJECTED"
    (record,) = caplog.records
    assert record.levelno == logging.INFO and record.getMessage().startswith(
        "tool access refused for task t1: "
    )


@pytest.mark.parametrize("code", ["temporarily_unavailable", "invalid_response"])
def test_an_unreachable_token_service_is_not(code: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=LOGGER):
        outcome = terminal_error(ExchangeError(code, "token service unreachable"), "t1")
    assert outcome.to_object() == {
        "code": "execution_failed",
        "message": "the token service is unavailable; try again later",
    }
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and "token exchange unavailable" in record.message


@pytest.mark.parametrize(
    "error",
    [RuntimeError("database is down"), TokenError("a project error the executor does not map")],
)
def test_anything_else_is_execution_failed_with_a_correlation_id(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    try:
        raise error
    except Exception as raised:
        with caplog.at_level(logging.INFO, logger=LOGGER):
            outcome = terminal_error(raised, "t1")
    wire = outcome.to_object()
    assert wire["code"] == "execution_failed"
    found = re.fullmatch(r"internal error; correlation id ([0-9a-f]{32})", wire.get("message", ""))
    assert found is not None and str(error) not in wire.get("message", "")
    (record,) = caplog.records
    assert record.levelno == logging.ERROR
    assert record.getMessage() == f"invocation failed (correlation id {found[1]})"
    assert record.exc_info is not None and record.exc_info[1] is error
