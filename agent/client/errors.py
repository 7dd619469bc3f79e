"""What the governed client raises.

Local failures (found before anything is sent, or after a remote completion) carry a draft
error code and are never dressed up as a remote task state; a remote refusal or failure is a
RemoteTaskError carrying the task's own state and error object.

* GovernedClientError(code, message, details)        local, per the draft's client steps
  - SkillNotAdvertisedError   step 2: the card does not advertise describe_skill or the skill
  - InterfaceInvalidError     steps 3-6: describe failed, digests differ, document invalid
  - InputInvalidError         step 7: arguments fail input_schema (nothing is sent)
  - OutputInvalidError        step 10: the result or a record fails its schema
* CompositionRefusedError                            references differ: no direct composition
* RemoteTaskError(state, error)                      the agent's task ended REJECTED or FAILED
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent.errors import ClientError
from agent.interfaces import ErrorCode


class GovernedClientError(ClientError):
    """A local failure of the draft's validation sequence."""

    code: ErrorCode = ErrorCode.INTERFACE_INVALID

    def __init__(self, message: str, details: Sequence[Any] = ()) -> None:
        super().__init__(f"{self.code.value}: {message}")
        self.message = message
        self.details = list(details)


class SkillNotAdvertisedError(GovernedClientError):
    """Step 2: the card does not advertise what we would call."""

    code = ErrorCode.SKILL_NOT_ADVERTISED


class InterfaceInvalidError(GovernedClientError):
    """Steps 3-6: the interface document cannot be trusted."""

    code = ErrorCode.INTERFACE_INVALID


class InputInvalidError(GovernedClientError):
    """Step 7: the arguments fail the input schema; the request was not sent."""

    code = ErrorCode.INPUT_INVALID


class OutputInvalidError(GovernedClientError):
    """Step 10: what came back fails its schema; the result is unusable."""

    code = ErrorCode.OUTPUT_INVALID


class CompositionRefusedError(ClientError):
    """Upstream output and downstream input are not the same schema (by reference)."""

    def __init__(self, differences: Sequence[str]) -> None:
        super().__init__("no direct composition: " + "; ".join(differences))
        self.differences = list(differences)


class RemoteTaskError(ClientError):
    """The agent ended the task REJECTED or FAILED (or left it waiting for input)."""

    def __init__(self, task_id: str, state: str, error: dict[str, Any]) -> None:
        code = error.get("code", "unknown")
        super().__init__(f"task {task_id} ended {state}: {code}: {error.get('message', '')}")
        self.task_id = task_id
        self.state = state
        self.error = error
        self.code = code
