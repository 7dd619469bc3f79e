"""What a skill handler gets: the caller, its limits, its tools and a way to emit records.

Handlers see nothing else of the agent: no service credential, no database engine, no
registry. That keeps a forked skill from reaching past its declared tools.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agent.base.errors import SecurityError
from agent.interfaces import ErrorCode, SkillError
from agent.security.principal import Principal

if TYPE_CHECKING:
    from agent.security.credentials import ToolGrant

ToolFactory = Callable[[str, "ToolGrant"], Any]
"""Builds the client of one tool for one grant; the app supplies it (a seam for tests)."""
EmitRecord = Callable[[str, str, dict[str, Any]], Awaitable[None]]


class ToolRefusedError(SecurityError, PermissionError):
    """A tool refused a call (token, scope or tenant); the caller sees authorization_failed."""


_ARTIFACT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
RESULT_ARTIFACT_ID = "result"


@dataclass
class SkillContext:
    """Per-invocation context handed to ``authorize``, ``handle`` and friends."""

    principal: Principal
    skill_id: str
    task_id: str
    context_id: str
    limits: Mapping[str, Any]
    declared_tools: Mapping[str, frozenset[str]]
    _tool_factory: ToolFactory = field(repr=False)
    grant_context: Mapping[str, str | None] = field(default_factory=dict)
    emit: EmitRecord | None = None
    can_see: Callable[[str], bool] = field(default=lambda skill_id: False)
    interface_of: Callable[[str], Any] = field(default=lambda skill_id: None)
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    # One invocation's authorize and handle share this: what authorize looked up (and had
    # audited) handle can reuse instead of calling the tool again.
    found: dict[str, Any] = field(default_factory=dict)
    _tools: dict[str, Any] = field(default_factory=dict)
    _artifact_ids: set[str] = field(default_factory=lambda: {RESULT_ARTIFACT_ID})

    def now(self) -> datetime:
        """The current time (a seam so tests and replays can fix it)."""
        return self.clock()

    def tool(self, name: str) -> Any:
        """A tool the manifest declares, reached with a token downscoped to this caller.

        The grant asks for the caller's scopes intersected with the manifest's scopes for the
        tool; undeclared tools do not exist for the handler. Its context names the skill and
        interface, not the task, so the exchanged token serves every invocation of this skill
        by this caller token while fresh (agent/security/exchange_cache.py); the audit names
        the task (``AuditLog.batched``).
        """
        if name not in self.declared_tools:
            raise SkillError(ErrorCode.EXECUTION_FAILED, f"skill declares no tool {name!r}")
        if name not in self._tools:
            # Imported here: handlers import this module (through agent.sdk) with the registry,
            # and the credentials module brings PyJWT, cryptography and httpx.
            from agent.security.credentials import ToolGrant

            grant = ToolGrant(
                principal=self._caller,
                tool=name,
                scopes=self._caller.scopes & self.declared_tools[name],
                context={"skill_id": self.skill_id, **self.grant_context},
            )
            self._tools[name] = self._tool_factory(name, grant)
        return self._tools[name]

    def __post_init__(self) -> None:
        # The handler sees who is calling, never the caller's raw token: only the exchange
        # (inside the tool factory) gets that.
        self._caller = self.principal
        self.principal = replace(self.principal, token=None)

    async def emit_record(self, kind: str, record: dict[str, Any], artifact_id: str) -> str:
        """Validate and send one supporting record as its own artifact; returns its artifactId.

        Records go out as they are produced, so a streaming client sees them before the result.
        """
        if self.emit is None:
            raise SkillError(ErrorCode.EXECUTION_FAILED, "records cannot be emitted here")
        if not _ARTIFACT_ID.fullmatch(artifact_id) or artifact_id in self._artifact_ids:
            raise SkillError(ErrorCode.EXECUTION_FAILED, "record artifact id is invalid or reused")
        self._artifact_ids.add(artifact_id)
        await self.emit(kind, artifact_id, record)
        return artifact_id


def rfc3339(moment: datetime) -> str:
    """UTC timestamp in the RFC 3339 form the schemas assert (``...Z``)."""
    if moment.tzinfo is not UTC:  # the stores hand back UTC already: no conversion (40 %)
        moment = moment.astimezone(UTC)
    return moment.isoformat().replace("+00:00", "Z")
