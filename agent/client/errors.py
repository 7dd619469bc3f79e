"""What the governed client raises.

Local failures (found before anything is sent, or after a remote completion) carry a draft
error code and are never dressed up as a remote task state; a remote refusal or failure is a
RemoteTaskError carrying the task's own state and error object.

* GovernedClientError(code, message, details)        local, per the draft's client steps
  - SkillNotAdvertisedError   step 2: the card does not advertise describe_skill or the skill
  - InterfaceInvalidError     steps 3-6: describe failed, digests differ, document invalid
  - CardSignatureRefusedError step 1: the card's signature does not verify (or is missing
                              and required)
  - InputInvalidError         step 7: arguments fail input_schema (nothing is sent)
  - OutputInvalidError        step 10: the result or a record fails its schema
* CompositionRefusedError                            references differ: no direct composition
* RemoteTaskError(state, error)                      the agent's task ended REJECTED or FAILED
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from agent.base.errors import ClientError
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


class CardSignatureRefusedError(GovernedClientError):
    """Step 1: the card's signature did not verify, or the card has none and the client
    requires one; nothing was sent on that card."""

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


class CredentialRefusedError(ClientError):
    """The agent refused the caller's credential (HTTP 401 or 403; gRPC UNAUTHENTICATED or
    PERMISSION_DENIED), with the reason it gave in its binding's error shape."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        reason: str = "",
        metadata: dict[str, str] | None = None,
        url: str = "",
    ) -> None:
        super().__init__(f"the agent refused the credential ({status}): {message}")
        self.status = status
        self.message = message
        self.reason = reason
        self.metadata = dict(metadata or {})
        self.url = url


REFUSED_STATUSES = (401, 403)
_GRPC_STATUS = {"UNAUTHENTICATED": 401, "PERMISSION_DENIED": 403}


def refusal_from_body(status: int, body: Any, url: str = "") -> CredentialRefusedError:
    """Read the agent's own reason from either error shape (docs/interop.md "Error shapes"):
    ``{"error": {"message", "details": [ErrorInfo]}}`` (HTTP+JSON) or the JSON-RPC error,
    ``{"error": {"message", "data": [ErrorInfo]}}``. A body of neither shape leaves the
    status's own words."""
    error = body.get("error") if isinstance(body, dict) else None
    message = ""
    info: dict[str, Any] = {}
    if isinstance(error, dict):
        message = str(error.get("message") or "")
        for detail in [*_list(error.get("details")), *_list(error.get("data"))]:
            if isinstance(detail, dict) and isinstance(detail.get("reason"), str):
                info = detail
                break
    metadata = info.get("metadata")
    return CredentialRefusedError(
        status,
        message or ("unauthorized" if status == 401 else "forbidden"),
        reason=str(info.get("reason") or ""),
        metadata={str(k): str(v) for k, v in metadata.items()}
        if isinstance(metadata, dict)
        else None,
        url=url,
    )


def refusal_in(exc: BaseException) -> CredentialRefusedError | None:
    """The credential refusal behind ``exc`` (an SDK error wraps the HTTP or gRPC one), if any."""
    import httpx

    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, CredentialRefusedError):
            return seen
        if isinstance(seen, httpx.HTTPStatusError):
            response = seen.response
            if response.status_code not in REFUSED_STATUSES:
                return None
            try:
                body: Any = response.json()
            except (httpx.ResponseNotRead, ValueError):
                body = None
            return refusal_from_body(response.status_code, body, str(seen.request.url))
        if "grpc.aio" in sys.modules:  # a gRPC error is raised only where gRPC is imported
            import grpc.aio

            if isinstance(seen, grpc.aio.AioRpcError):
                status = _GRPC_STATUS.get(seen.code().name)
                if status is None:
                    return None
                return CredentialRefusedError(status, seen.details() or seen.code().name.lower())
        seen = seen.__cause__ or seen.__context__
    return None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
