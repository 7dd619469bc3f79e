"""The AgentExecutor: one message in, one governed skill run out.

Order of checks (project choice 13): skill-level entitlement, interface match, input validation,
resource-level authorization, constraints; only then is the task accepted (WORKING) and the
handler run. Refusals before acceptance end REJECTED, failures after it end FAILED, and the
final status message always holds exactly one Data Part: the error object.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from a2a.helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import ContentTypeNotSupportedError, Message, Part, Role, Task, TaskState

from agent.base.ids import random_hex
from agent.edge.proto_json import data_part
from agent.interfaces import DESCRIBE_SKILL_ID, EXTENSION_URI, ErrorCode, SkillError, error_details
from agent.observability.metrics import TaskObserver
from agent.registry.fixed_result import FixedResult
from agent.registry.loader import Capability, Registry
from agent.registry.manifest import State
from agent.registry.policy import entitled, visible
from agent.routing.decision import Action, Decision, Stage
from agent.routing.questions import clarification_text, missing_text
from agent.routing.router import Router
from agent.routing.skill_request import SkillRequest
from agent.security.credentials import ExchangeError
from agent.security.principal import Principal, principal_of
from agent.server.result_parts import FixedParts, check_output, result_part
from agent.server.skill_context import (
    RESULT_ARTIFACT_ID,
    SkillContext,
    ToolFactory,
    ToolRefusedError,
)
from agent.server.task_run import TaskRun
from agent.storage.audit import A2A, AGENT_TOOL, AuditLog, AuditRecord
from agent.storage.bindings import Binding, BindingStore, Phase

log = logging.getLogger(__name__)
JSON = "application/json"
TEXT = "text/plain"
ROUTE_STATE_KEY = "netagent.route"
"""Where the request handler leaves its routing decision in the call context's state."""
PROJECTION_STATE_KEY = "netagent.projection"
"""Where a projection other than A2A (agent/mcp/) names itself in the call context's state;
the invocation's audit rows carry it (absent: ``a2a``)."""
JSON_MODES = frozenset({JSON, "application/*", "*/*"})
REFUSALS = frozenset({"authorization_failed", "skill_not_advertised"})
"""Outcomes that are an access decision against the caller, whenever they happen."""
UNREFUSED = frozenset({"completed", "input_required", "canceled"})


def _wants_text(context: RequestContext) -> bool:
    """The caller accepts text/plain but no JSON: add a readable text part to the result."""
    accepted = set(context.configuration.accepted_output_modes) if context.configuration else set()
    return bool(accepted) and not accepted & JSON_MODES and TEXT in accepted


def projection_of(context: RequestContext) -> str:
    """The projection the request came through: ``a2a`` unless the call context names another."""
    projection = context.call_context.state.get(PROJECTION_STATE_KEY, A2A)
    return projection if isinstance(projection, str) else A2A


def summary_text(output: dict[str, Any]) -> str:
    """A short readable rendering of a result, for skills without their own ``summarize``."""
    lines = []
    for key, value in output.items():
        if isinstance(value, list):
            lines.append(f"{key}: {len(value)} item(s)")
        elif isinstance(value, dict):
            lines.append(f"{key}: {json.dumps(value, separators=(',', ':'))[:200]}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines)


@dataclass
class _Run:
    """One invocation's output side: where events go and how errors end it."""

    updater: TaskUpdater
    extensions: list[str]
    metadata: dict[str, Any]
    principal: Principal
    accepted: bool = False
    outcome: str = "completed"
    capability: Capability | None = None

    def message(self, parts: list[Part]) -> Message:
        """An agent message for this task, listing the activated extensions."""
        return Message(
            message_id=random_hex(),
            role=Role.ROLE_AGENT,
            task_id=self.updater.task_id,
            context_id=self.updater.context_id,
            parts=parts,
            extensions=self.extensions,
        )

    async def finish_with_error(self, error: SkillError) -> None:
        """REJECTED before acceptance, FAILED after; exactly one Data Part: the error object."""
        state = error.terminal_state(accepted=self.accepted)
        self.outcome = str(error.code)
        message = self.message([new_data_part(error.to_object(), media_type=JSON)])
        await self.updater.update_status(
            TaskState.Value(state),  # type: ignore[arg-type]  # the SDK annotates the enum class
            message=message,
            metadata=self.metadata,
        )


# The token service could not answer (or answered nonsense): the caller may well be entitled.
_SERVICE_FAILURES = frozenset({"temporarily_unavailable", "invalid_response"})


def _not_cancelable(capability: Capability | None) -> bool:
    """The capability's interface declares its invocations not cancelable."""
    return bool(capability and capability.interface and not capability.interface.cancelable)


def terminal_error(error: Exception, task_id: str) -> SkillError:
    """The error object any exception ends an invocation with; the one place that decides.

    A SkillError is its own outcome. A tool's refusal, or a refused token exchange, is the
    caller's (authorization_failed); a token service that cannot answer is not. Anything else
    is a defect: the caller gets a correlation id, the log gets the traceback under it.
    """
    match error:
        case SkillError():
            return error
        case ExchangeError(error=code) if code in _SERVICE_FAILURES:
            log.warning("token exchange unavailable for task %s: %s", task_id, error)
            return SkillError(
                ErrorCode.EXECUTION_FAILED, "the token service is unavailable; try again later"
            )
        case ExchangeError() | ToolRefusedError():
            log.info("tool access refused for task %s: %s", task_id, error)
            return SkillError(ErrorCode.AUTHORIZATION_FAILED, "tool access refused for this caller")
    correlation = random_hex()
    log.error("invocation failed (correlation id %s)", correlation, exc_info=error)
    return SkillError(ErrorCode.EXECUTION_FAILED, f"internal error; correlation id {correlation}")


class SkillExecutor(AgentExecutor):
    """Runs the capability the router chose, for the principal that asked."""

    def __init__(
        self,
        registry: Registry,
        tool_factory: ToolFactory,
        router: Router,
        bindings: BindingStore,
        audit: AuditLog | None = None,
        clock: Callable[[], datetime] | None = None,
        observer: TaskObserver | None = None,
    ) -> None:
        self._registry = registry
        self._observer = observer or TaskObserver()
        self._audit = audit
        self._tool_factory = tool_factory
        self._router = router
        self._bindings = bindings
        self._clock = clock
        self._running: dict[str, Capability] = {}
        self._inflight: Counter[tuple[str, str]] = Counter()
        self._fixed = FixedParts()

    # -- routing ---------------------------------------------------------------------------

    async def decide(self, message: Message | None, principal: Principal) -> Decision:
        """Route a message; a follow-up's task binding is read from the database."""
        binding = None
        if message is not None and message.task_id:
            binding = await self._bindings.get(message.task_id, principal.owner)
        decision = await self._router.route_async(message, principal, binding)
        self._observer.routed(decision)
        return decision

    @staticmethod
    def check_interface(capability: Capability, request: SkillRequest | None) -> None:
        """An explicit request must name the interface the agent runs now.

        describe_skill may name neither version nor digest (project choice 6), but what it names
        is checked; text-routed requests are skipped, since the agent assembled their
        arguments against its own current interface.
        """
        interface = capability.interface
        if interface is None or request is None:
            return
        unbound = request.skill_version is None and request.interface_digest is None
        if capability.id == DESCRIBE_SKILL_ID and unbound:  # project choice 6: may name neither
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

    @staticmethod
    def enforce(capability: Capability, principal: Principal) -> None:
        """Advertisement is not authorization: ask the policy again, whatever the router did."""
        if not entitled(capability.manifest, principal):
            raise SkillError(
                ErrorCode.AUTHORIZATION_FAILED,
                f"skill {capability.id!r} needs scopes: "
                + " ".join(sorted(capability.manifest.requires_scopes)),
            )

    # -- execution -------------------------------------------------------------------------

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Take one message to a terminal or input-required state; never lets an error escape.

        The invocation's audit rows (its tool calls', then its own) are written in batches:
        before any artifact leaves, and at the end, instead of one transaction per row; its
        tools' rows name its task through the batch (tool tokens carry no task id).
        """
        if self._audit is None or AuditLog.batching():  # none to flush, or the caller's batch
            await self._execute(context, event_queue)
            return
        with AuditLog.batched(str(context.task_id), projection=projection_of(context)):
            await self._execute(context, event_queue)

    async def _execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        extensions = [EXTENSION_URI] if EXTENSION_URI in context.requested_extensions else []
        principal = principal_of(context.call_context.user)
        decision = context.call_context.state.get(ROUTE_STATE_KEY)
        if not isinstance(decision, Decision):
            try:
                decision = await self.decide(context.message, principal)
            except ContentTypeNotSupportedError as error:
                decision = Decision(
                    Action.REFUSE,
                    Stage.ENTITLEMENT,
                    error=SkillError(ErrorCode.INPUT_INVALID, str(error.message)),
                )
        metadata = decision.routing_metadata()
        if context.current_task is None and context.message is not None:
            task = new_task_from_user_message(context.message)
            task.metadata.update(metadata)
            await event_queue.enqueue_event(task)
        run = _Run(updater, extensions, metadata, principal)
        watch = self._observer.started(task_id, context_id, principal, decision.capability)
        try:
            if decision.action is Action.REFUSE:
                assert decision.error is not None
                raise decision.error
            if decision.action in (Action.CLARIFY, Action.ASK):
                run.outcome = "input_required"
                await self._ask(decision, run, task_id)
                return
            await self._run_decision(decision, run, context)
        except asyncio.CancelledError:  # not an error: cancellation must propagate
            run.outcome = "canceled"
            raise
        except Exception as error:
            await run.finish_with_error(terminal_error(error, task_id))
        finally:
            self._running.pop(task_id, None)
            await self._audit_invocation(run, decision, task_id)
            self._observer.finished(
                watch, run.capability or decision.capability, run.outcome, run.accepted
            )

    async def _audit_invocation(self, run: _Run, decision: Decision, task_id: str) -> None:
        """One row per invocation: who asked for which skill, and how it ended."""
        if self._audit is None:
            return
        capability = run.capability or decision.capability
        interface = capability.interface if capability else None
        refused = run.outcome in REFUSALS or not (run.accepted or run.outcome in UNREFUSED)
        try:
            await self._audit.write(
                AuditRecord(
                    principal=run.principal.subject or "anonymous",
                    tenant=run.principal.tenant,
                    tool=AGENT_TOOL,
                    operation="invoke",
                    decision="deny" if refused else "allow",
                    reason=run.outcome,
                    skill_id=capability.id if capability else None,
                    skill_version=interface.skill_version if interface else None,
                    interface_digest=interface.interface_digest if interface else None,
                    task_id=task_id,
                )
            )
            await self._audit.flush()
        except Exception:  # the task's outcome stands; a lost audit row is logged loudly
            log.exception("could not write the invocation audit row for task %s", task_id)

    async def _ask(self, decision: Decision, run: _Run, task_id: str) -> None:
        """Input-required: which skill (clarify), or which arguments (ask)."""
        if decision.action is Action.CLARIFY:
            binding = Binding(
                task_id,
                run.principal.owner,
                Phase.CLARIFY,
                candidates=tuple(c.id for c in decision.candidates),
                arguments=decision.arguments,
                text=decision.text,
            )
            question = clarification_text(
                decision.candidates, decision.note, matched=decision.matched
            )
            data: dict[str, Any] = {
                "candidates": [
                    {"skill_id": c.id, "name": c.manifest.skill["name"]}
                    for c in decision.candidates
                ]
            }
            if decision.note:
                data["note"] = decision.note
            if not decision.matched:
                data["matched"] = False
            if decision.reason is not None:
                data["nothing_fits"] = decision.reason
        else:
            capability = decision.capability
            assert capability is not None and capability.interface is not None
            binding = Binding(
                task_id,
                run.principal.owner,
                Phase.ARGUMENTS,
                skill_id=capability.id,
                arguments=decision.arguments,
                text=decision.text,
            )
            question = missing_text(capability, decision.missing)
            data = {
                "skill": capability.id,
                "skill_version": capability.interface.skill_version,
                "interface_digest": capability.interface.interface_digest,
                "missing": list(decision.missing),
                "arguments": decision.arguments,
            }
        await self._bindings.put(binding)
        message = run.message([new_text_part(question), new_data_part(data, media_type=JSON)])
        await run.updater.update_status(
            TaskState.TASK_STATE_INPUT_REQUIRED, message=message, metadata=run.metadata
        )

    async def _run_decision(self, decision: Decision, run: _Run, context: RequestContext) -> None:
        capability = decision.capability
        assert capability is not None and capability.handler is not None
        run.capability = capability
        principal, updater = run.principal, run.updater
        task_id, context_id = updater.task_id, updater.context_id
        self.enforce(capability, principal)
        self.check_interface(capability, decision.request)
        arguments = decision.arguments
        interface = capability.interface
        if interface is not None:
            details = error_details(interface.input_validator, arguments)
            if details:
                raise SkillError(
                    ErrorCode.INPUT_INVALID, "arguments do not match input_schema", details
                )
        await self._bindings.put(
            Binding(task_id, principal.owner, Phase.BOUND, skill_id=capability.id)
        )
        skill_context = self._skill_context(capability, principal, task_id, context_id)
        skill_context.emit = self._record_emitter(capability, updater, run.extensions)
        handler = capability.handler
        if handler.authorize is not None:
            await handler.authorize(arguments, skill_context)
        if handler.check_constraints is not None:
            handler.check_constraints(arguments, capability.manifest.limits)
        slot = self._admit(capability, principal)
        run.accepted = True
        self._running[task_id] = capability
        try:
            queue = updater.event_queue
            if not (isinstance(queue, TaskRun) and queue.working(run.metadata)):
                await updater.update_status(TaskState.TASK_STATE_WORKING, metadata=run.metadata)
            output = await self._run(capability, arguments, skill_context)
            text = _wants_text(context)
            if self._audit is not None:  # the tool calls behind a result are on record first
                await self._audit.flush()
            await self._emit_result(capability, output, updater, run.extensions, text)
            await self._complete(capability, run)
        finally:
            self._release(slot)

    async def _complete(self, capability: Capability, run: _Run) -> None:
        """COMPLETED; a deprecated skill says so and names its replacement."""
        manifest = capability.manifest
        if manifest.state is not State.DEPRECATED:
            await run.updater.complete()
            return
        notice = f"Skill '{manifest.id}' is deprecated; use '{manifest.replacement}' instead."
        await run.updater.update_status(
            TaskState.TASK_STATE_COMPLETED,
            message=run.message([new_text_part(notice)]),
            metadata={
                "deprecation": {"skill_id": manifest.id, "replacement": manifest.replacement}
            },
        )

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
        interface = capability.interface
        if interface is not None:
            extra["grant_context"] = {
                "skill_version": interface.skill_version,
                "interface_digest": interface.interface_digest,
            }

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
            _tool_factory=self._tool_factory,
            can_see=can_see,
            interface_of=interface_of,
            **extra,
        )

    async def _run(
        self, capability: Capability, arguments: dict[str, Any], context: SkillContext
    ) -> dict[str, Any] | FixedResult:
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
        audit = self._audit

        async def emit(kind: str, artifact_id: str, record: dict[str, Any]) -> None:
            if interface is None or kind not in interface.record_validators:
                raise SkillError(ErrorCode.OUTPUT_INVALID, f"undeclared record kind {kind!r}")
            details = error_details(interface.record_validators[kind], record)
            if details:
                raise SkillError(
                    ErrorCode.OUTPUT_INVALID, f"{kind} record does not match its schema", details
                )
            if audit is not None:  # the tool calls behind a record are on record first
                await audit.flush()
            run = updater.event_queue
            if isinstance(run, TaskRun) and run.add_artifact(
                artifact_id, kind, data=record, media_type=JSON, extensions=extensions
            ):
                return
            await updater.add_artifact(
                [data_part(record, JSON)],
                artifact_id=artifact_id,
                name=kind,
                extensions=extensions or None,
            )

        return emit

    async def _emit_result(
        self,
        capability: Capability,
        output: dict[str, Any] | FixedResult,
        updater: TaskUpdater,
        extensions: list[str],
        with_text: bool,
    ) -> None:
        if isinstance(output, FixedResult):  # checked and converted on its first call only
            parts = [self._fixed.part(capability, output)]
        else:
            check_output(capability, output)
            parts = [result_part(output)]
        if with_text:
            summarize = capability.handler.summarize if capability.handler else None
            data = output.build() if isinstance(output, FixedResult) else output
            parts.append(new_text_part((summarize or summary_text)(data), media_type=TEXT))
        run = updater.event_queue
        if isinstance(run, TaskRun) and run.add_artifact(
            RESULT_ARTIFACT_ID, capability.id, parts, extensions=extensions
        ):
            return
        await updater.add_artifact(
            parts,
            artifact_id=RESULT_ARTIFACT_ID,
            name=capability.id,
            extensions=extensions or None,
        )

    def refuses_cancel(self, task_id: str) -> bool:
        """True while ``task_id`` runs here a skill whose interface declares it not cancelable."""
        return _not_cancelable(self._running.get(task_id))

    async def refuses_cancel_anywhere(self, task: Task, principal: Principal) -> bool:
        """As refuses_cancel, for a stored task that may be running on another replica.

        The binding (written before the skill starts, visible to its owner only) names the
        skill, so every replica refuses alike, not just the one that runs it.
        """
        if self.refuses_cancel(task.id):
            return True
        if task.status.state not in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING):
            return False
        binding = await self._bindings.get(task.id, principal.owner)
        if binding is None or binding.phase is not Phase.BOUND or binding.skill_id is None:
            return False
        return _not_cancelable(self._registry.get(binding.skill_id))

    async def bound_skill(self, task_id: str, principal: Principal) -> str | None:
        """The skill the task's binding names (none while the router asks which is meant)."""
        binding = await self._bindings.get(task_id, principal.owner)
        return binding.skill_id if binding is not None else None

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """End the task CANCELED; the SDK then cancels the running handler.

        Non-cancelable skills never get here: the request handler refuses first, because an
        exception raised here would mark the task FAILED.
        """
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await updater.cancel()
