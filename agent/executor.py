"""The AgentExecutor: one message in, one governed skill run out.

Order of checks (DECISIONS #13): skill-level entitlement, interface match, input validation,
resource-level authorization, constraints; only then is the task accepted (WORKING) and the
handler run. Refusals before acceptance end REJECTED, failures after it end FAILED, and the
final status message always holds exactly one Data Part: the error object.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from a2a.helpers import new_data_part, new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message, Role, TaskState

from agent.interfaces import DESCRIBE_SKILL_ID, EXTENSION_URI, ErrorCode, SkillError, error_details
from agent.manifest import State
from agent.policy import entitled, visible
from agent.principal import Principal, principal_of
from agent.registry import Capability, Registry
from agent.skill_context import RESULT_ARTIFACT_ID, SkillContext, ToolFactory
from agent.skill_request import SkillRequest, explicit_request

log = logging.getLogger(__name__)
JSON = "application/json"
NOT_FOUND = "resource not found or not accessible"


@dataclass(frozen=True)
class Selection:
    """What the executor will run: the capability and the request that named it."""

    capability: Capability
    request: SkillRequest


class SkillExecutor(AgentExecutor):
    """Runs the capability a message asks for, for the principal that asked."""

    def __init__(
        self,
        registry: Registry,
        tool_factory: ToolFactory,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._registry = registry
        self._tool_factory = tool_factory
        self._clock = clock
        self._running: dict[str, Capability] = {}
        self._inflight: Counter[tuple[str, str]] = Counter()

    # -- selection -------------------------------------------------------------------------

    def select(self, message: Message | None, principal: Principal) -> Selection:
        """Find the capability the message names and check the caller may use it."""
        request = explicit_request(message)
        if request is None:
            raise SkillError(
                ErrorCode.INPUT_INVALID,
                'send one Data Part {"skill": <id>, "arguments": {...}} naming a skill '
                "from the agent card",
            )
        capability = self._registry.get(request.skill)
        if capability is not None and capability.manifest.state is State.REMOVED:
            raise SkillError(
                ErrorCode.SKILL_NOT_ADVERTISED,
                f"skill {request.skill!r} was removed; use {capability.manifest.replacement!r}",
            )
        if capability is None or not visible(capability.manifest, principal):
            raise SkillError(ErrorCode.SKILL_NOT_ADVERTISED, "no such skill is advertised to you")
        if not entitled(capability.manifest, principal):
            raise SkillError(
                ErrorCode.AUTHORIZATION_FAILED,
                f"skill {request.skill!r} needs scopes: "
                + " ".join(sorted(capability.manifest.requires_scopes)),
            )
        return Selection(capability, request)

    @staticmethod
    def check_interface(capability: Capability, request: SkillRequest) -> None:
        """The request must name the interface the agent runs now (skipped for describe)."""
        interface = capability.interface
        if interface is None or capability.id == DESCRIBE_SKILL_ID:
            return
        if request.skill_version is None or request.interface_digest is None:
            raise SkillError(
                ErrorCode.INTERFACE_MISMATCH,
                "skill_version and interface_digest are required; call describe_skill first",
            )
        if (
            request.skill_version != interface.skill_version
            or request.interface_digest != interface.interface_digest
        ):
            raise SkillError(
                ErrorCode.INTERFACE_MISMATCH,
                f"active interface is {interface.skill_version} {interface.interface_digest}",
            )

    # -- execution -------------------------------------------------------------------------

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run one invocation to a terminal state; never lets an exception escape."""
        if context.current_task is None and context.message is not None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        extensions = [EXTENSION_URI] if EXTENSION_URI in context.requested_extensions else []
        principal = principal_of(context.call_context.user)
        accepted = False
        try:
            selection = self.select(context.message, principal)
            capability, request = selection.capability, selection.request
            self.check_interface(capability, request)
            arguments = request.arguments
            interface = capability.interface
            if interface is not None:
                details = error_details(interface.input_validator, arguments)
                if details:
                    raise SkillError(
                        ErrorCode.INPUT_INVALID, "arguments do not match input_schema", details
                    )
            skill_context = self._skill_context(capability, principal, task_id, context_id)
            skill_context.emit = self._record_emitter(capability, updater, extensions)
            handler = capability.handler
            assert handler is not None  # removed skills never get here
            if handler.authorize is not None:
                await handler.authorize(arguments, skill_context)
            if handler.check_constraints is not None:
                handler.check_constraints(arguments, capability.manifest.limits)
            slot = self._admit(capability, principal)
            accepted = True
            self._running[task_id] = capability
            try:
                await updater.start_work()
                output = await self._run(capability, arguments, skill_context)
                await self._emit_result(capability, output, updater, extensions)
                await updater.complete()
            finally:
                self._release(slot)
        except SkillError as error:
            await self._finish_with_error(updater, error, accepted, extensions)
        except asyncio.CancelledError:
            raise
        except Exception:
            correlation = uuid.uuid4().hex
            log.exception("invocation failed (correlation id %s)", correlation)
            error = SkillError(
                ErrorCode.EXECUTION_FAILED, f"internal error; correlation id {correlation}"
            )
            await self._finish_with_error(updater, error, accepted, extensions)
        finally:
            self._running.pop(task_id, None)

    def _admit(self, capability: Capability, principal: Principal) -> tuple[str, str]:
        """Enforce ``limits.max_concurrent`` per caller and skill before accepting the task."""
        slot = (capability.id, principal.owner)
        limit = capability.manifest.limits.get("max_concurrent")
        if limit is not None and self._inflight[slot] >= int(limit):
            raise SkillError(
                ErrorCode.RESOURCE_LIMIT_EXCEEDED,
                f"at most {limit} concurrent invocations of this skill per caller",
            )
        self._inflight[slot] += 1
        return slot

    def _release(self, slot: tuple[str, str]) -> None:
        self._inflight[slot] -= 1
        if self._inflight[slot] <= 0:
            del self._inflight[slot]

    def _skill_context(
        self, capability: Capability, principal: Principal, task_id: str, context_id: str
    ) -> SkillContext:
        extra: dict[str, Any] = {"clock": self._clock} if self._clock else {}

        def can_see(skill_id: str) -> bool:
            other = self._registry.get(skill_id)
            return other is not None and visible(other.manifest, principal)

        def interface_of(skill_id: str) -> Any:
            other = self._registry.get(skill_id)
            return other.interface if other is not None and can_see(skill_id) else None

        return SkillContext(
            principal=principal,
            skill_id=capability.id,
            task_id=task_id,
            context_id=context_id,
            limits=capability.manifest.limits,
            declared_tools=capability.manifest.tools,
            tool_factory=self._tool_factory,
            can_see=can_see,
            interface_of=interface_of,
            **extra,
        )

    async def _run(
        self, capability: Capability, arguments: dict[str, Any], context: SkillContext
    ) -> dict[str, Any]:
        handler = capability.handler
        assert handler is not None
        timeout = capability.manifest.limits.get("timeout_seconds")
        try:
            async with asyncio.timeout(float(timeout) if timeout else None):
                return await handler.handle(arguments, context)
        except TimeoutError as exc:
            raise SkillError(
                ErrorCode.RESOURCE_LIMIT_EXCEEDED, f"skill ran longer than {timeout} s"
            ) from exc

    def _record_emitter(
        self, capability: Capability, updater: TaskUpdater, extensions: list[str]
    ) -> Callable[[str, str, dict[str, Any]], Any]:
        interface = capability.interface

        async def emit(kind: str, artifact_id: str, record: dict[str, Any]) -> None:
            if interface is None or kind not in interface.record_validators:
                raise SkillError(ErrorCode.OUTPUT_INVALID, f"undeclared record kind {kind!r}")
            details = error_details(interface.record_validators[kind], record)
            if details:
                raise SkillError(
                    ErrorCode.OUTPUT_INVALID, f"{kind} record does not match its schema", details
                )
            await updater.add_artifact(
                [new_data_part(record, media_type=JSON)],
                artifact_id=artifact_id,
                name=kind,
                extensions=extensions or None,
            )

        return emit

    @staticmethod
    async def _emit_result(
        capability: Capability,
        output: dict[str, Any],
        updater: TaskUpdater,
        extensions: list[str],
    ) -> None:
        interface = capability.interface
        if interface is not None:
            details = error_details(interface.output_validator, output)
            if details:
                raise SkillError(
                    ErrorCode.OUTPUT_INVALID, "result does not match output_schema", details
                )
        await updater.add_artifact(
            [new_data_part(output, media_type=JSON)],
            artifact_id=RESULT_ARTIFACT_ID,
            name=capability.id,
            extensions=extensions or None,
        )

    @staticmethod
    async def _finish_with_error(
        updater: TaskUpdater, error: SkillError, accepted: bool, extensions: list[str]
    ) -> None:
        state = error.terminal_state(accepted=accepted)
        message = Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_AGENT,
            task_id=updater.task_id,
            context_id=updater.context_id,
            parts=[new_data_part(error.to_object(), media_type=JSON)],
            extensions=extensions,
        )
        await updater.update_status(TaskState.Value(state), message=message)

    def refuses_cancel(self, task_id: str) -> bool:
        """True while ``task_id`` runs a skill whose interface declares it not cancelable."""
        capability = self._running.get(task_id)
        return bool(capability and capability.interface and not capability.interface.cancelable)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """End the task CANCELED; the SDK then cancels the running handler.

        Non-cancelable skills never get here: the request handler refuses first, because an
        exception raised here would mark the task FAILED.
        """
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await updater.cancel()
