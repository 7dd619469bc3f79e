"""The ten error codes of interface version 1.0 and the exception that carries them.

Taxonomy, with the terminal state the agent gives the task. REJECTED: understood but not
accepted for execution. FAILED: accepted but could not complete. A client that detects a
"client-local" code before any remote task exists (or after completion, for output) reports it
locally; it never presents it as the state of a remote task.

* SkillError(code, message?, details?)  raised by handlers, the executor and the client
  + TASK_STATE_REJECTED
    - skill_not_advertised      client-local: the request is never sent
    - interface_mismatch        skill_version / interface_digest differ from the active document
    - input_invalid             client-local; may carry details
    - constraint_rejected
    - authorization_failed
    - resource_limit_exceeded   when checked before acceptance
  + TASK_STATE_FAILED
    - interface_unavailable     describe_skill cannot return the document now
    - interface_invalid         client-local (digest or schema checks)
    - output_invalid            client-local; may carry details; also invalid supporting records
    - resource_limit_exceeded   when hit during processing
    - execution_failed          an accepted invocation could not complete

Codes 9 and 10 and the record rule are the project's choices (project choices 1 and 8,
docs/schema-interfaces.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any, Final, NotRequired, TypedDict

from agent.base.errors import NetagentError

__all__ = [
    "TASK_STATE_FAILED",
    "TASK_STATE_REJECTED",
    "ErrorCode",
    "ErrorObject",
    "Phase",
    "SkillError",
    "error_object",
]

TASK_STATE_REJECTED: Final = "TASK_STATE_REJECTED"
TASK_STATE_FAILED: Final = "TASK_STATE_FAILED"


class Phase(Enum):
    """Where an error arises; it decides the state only for codes whose rule says so."""

    BEFORE_ACCEPTANCE = TASK_STATE_REJECTED
    PROCESSING = TASK_STATE_FAILED


@dataclass(frozen=True)
class _Rule:
    state: str | None  # None: REJECTED before acceptance, FAILED during processing
    client_local: bool = False
    details: bool = False


_BY_PHASE: Final = None


class ErrorCode(StrEnum):
    """An error object's ``code``; its terminal-state rule is in ``_RULES`` below."""

    SKILL_NOT_ADVERTISED = "skill_not_advertised"
    INTERFACE_UNAVAILABLE = "interface_unavailable"
    INTERFACE_INVALID = "interface_invalid"
    INTERFACE_MISMATCH = "interface_mismatch"
    INPUT_INVALID = "input_invalid"
    OUTPUT_INVALID = "output_invalid"
    CONSTRAINT_REJECTED = "constraint_rejected"
    AUTHORIZATION_FAILED = "authorization_failed"
    RESOURCE_LIMIT_EXCEEDED = "resource_limit_exceeded"
    EXECUTION_FAILED = "execution_failed"

    @property
    def rule(self) -> _Rule:
        """This code's terminal-state rule."""
        return _RULES[self]

    @property
    def client_local(self) -> bool:
        """A client may raise this code itself and report it locally."""
        return self.rule.client_local

    @property
    def allows_details(self) -> bool:
        """Only input_invalid and output_invalid may carry a ``details`` array (draft §9.1)."""
        return self.rule.details

    def terminal_state(self, phase: Phase) -> str:
        """The agent's terminal state name; ``phase`` matters only for phase-dependent codes."""
        return self.rule.state if self.rule.state is not None else phase.value


# A mapping beside the enum rather than a tuple value per member: ``ErrorCode("input_invalid")``
# then type-checks as the by-value lookup it is.
_RULES: Final[Mapping[ErrorCode, _Rule]] = {
    ErrorCode.SKILL_NOT_ADVERTISED: _Rule(TASK_STATE_REJECTED, client_local=True),
    ErrorCode.INTERFACE_UNAVAILABLE: _Rule(TASK_STATE_FAILED),
    ErrorCode.INTERFACE_INVALID: _Rule(TASK_STATE_FAILED, client_local=True),
    ErrorCode.INTERFACE_MISMATCH: _Rule(TASK_STATE_REJECTED),
    ErrorCode.INPUT_INVALID: _Rule(TASK_STATE_REJECTED, client_local=True, details=True),
    ErrorCode.OUTPUT_INVALID: _Rule(TASK_STATE_FAILED, client_local=True, details=True),
    ErrorCode.CONSTRAINT_REJECTED: _Rule(TASK_STATE_REJECTED),
    ErrorCode.AUTHORIZATION_FAILED: _Rule(TASK_STATE_REJECTED),
    ErrorCode.RESOURCE_LIMIT_EXCEEDED: _Rule(_BY_PHASE),
    ErrorCode.EXECUTION_FAILED: _Rule(TASK_STATE_FAILED),
}


class ErrorObject(TypedDict):
    """The final status message's Data Part ``data``, unwrapped (project choice 7)."""

    code: str
    message: NotRequired[str]
    details: NotRequired[list[dict[str, Any]]]


def error_object(
    code: ErrorCode | str,
    message: str | None = None,
    details: Sequence[Mapping[str, Any]] | None = None,
) -> ErrorObject:
    """Exactly ``{"code", "message"?, "details"?}``; empty message/details are left out."""
    code = ErrorCode(code)
    result: ErrorObject = {"code": code.value}
    if message:
        result["message"] = str(message)
    if details:
        if not code.allows_details:
            raise ValueError(f"{code} does not carry details (only input/output_invalid do)")
        entries = [dict(entry) for entry in details]
        if not all(isinstance(e.get("instance_path"), str) for e in entries):
            raise ValueError("every details entry needs a string instance_path")
        result["details"] = entries
    return result


class SkillError(NetagentError):
    """A refusal or failure with its code; the executor turns it into the final status."""

    def __init__(
        self,
        code: ErrorCode | str,
        message: str | None = None,
        details: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        self._object = error_object(code, message, details)  # misuse surfaces at the raise
        self.code = ErrorCode(code)
        self.message = message
        self.details: tuple[dict[str, Any], ...] = tuple(self._object.get("details", ()))
        super().__init__(f"{self.code}: {message}" if message else self.code.value)

    def terminal_state(self, *, accepted: bool) -> str:
        """REJECTED or FAILED, given whether the task had been accepted when this arose."""
        return self.code.terminal_state(Phase.PROCESSING if accepted else Phase.BEFORE_ACCEPTANCE)

    def to_object(self) -> ErrorObject:
        """A fresh error object for the final status message."""
        return error_object(self.code, self.message, self.details)
