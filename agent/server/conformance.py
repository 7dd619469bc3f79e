"""The conformance layer: internal skills that answer a test kit's in-band scenario messages.

Only ``netagent serve --conformance`` (NETAGENT_CONFORMANCE) loads their folder
(``agent/builtin/conformance``) as a skills directory. Its skills are ``internal``: no card
lists them and the router never chooses them.
The request handler asks ``claim`` first; a message is a conformance skill's only when the
arguments taken from it (messageId, text) validate against that skill's input schema, so the
skill's own schema says which messages it serves. The skill returns a script of A2A events
(validated against its output schema) and this layer plays it; every other message goes to
the real skills, unchanged.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from typing import Any

from a2a.helpers import new_data_part, new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message, Part, Role, TaskState

from agent.base.ids import random_hex
from agent.interfaces import ErrorCode, SkillError, error_details
from agent.registry.fixed_result import FixedResult
from agent.registry.loader import Capability, Registry
from agent.registry.manifest import Visibility
from agent.routing.messages import message_text
from agent.security.principal import principal_of
from agent.server.skill_context import SkillContext

log = logging.getLogger(__name__)
CONFORMANCE_STATE_KEY = "netagent.conformance"
"""Where the request handler leaves the claiming capability in the call context's state."""
JSON = "application/json"
STATES = {
    "working": TaskState.TASK_STATE_WORKING,
    "completed": TaskState.TASK_STATE_COMPLETED,
    "input_required": TaskState.TASK_STATE_INPUT_REQUIRED,
    "rejected": TaskState.TASK_STATE_REJECTED,
}


def _no_tools(name: str, grant: Any) -> Any:
    raise LookupError(f"conformance skills reach no tools ({name!r})")


def _part(spec: dict[str, Any]) -> Part:
    """One Part of a script (the output schema admits exactly these four shapes)."""
    if "text" in spec:
        return Part(text=spec["text"])
    if "raw_base64" in spec:
        return Part(
            raw=base64.b64decode(spec["raw_base64"]),
            media_type=spec["media_type"],
            filename=spec["filename"],
        )
    if "url" in spec:
        return Part(url=spec["url"], media_type=spec["media_type"], filename=spec["filename"])
    return new_data_part(spec["data"], media_type=JSON)


def arguments_of(message: Message) -> dict[str, Any]:
    """What a conformance skill is asked: the messageId and the message's text."""
    return {"message_id": message.message_id, "text": message_text(message)}


class ConformanceExecutor(AgentExecutor):
    """Plays a conformance skill's script for claimed messages; delegates everything else."""

    def __init__(self, registry: Registry, inner: AgentExecutor) -> None:
        exposed = [c.id for c in registry if c.manifest.visibility is not Visibility.INTERNAL]
        if exposed:  # a conformance behaviour on a card would be a lie about the agent
            raise ValueError(f"conformance skills must be internal: {', '.join(exposed)}")
        self._skills = [c for c in registry if c.interface is not None and c.handler is not None]
        self._inner = inner

    def claim(self, message: Message | None) -> Capability | None:
        """The conformance skill whose input schema accepts this message, if any."""
        if message is None or not message.message_id:
            return None
        arguments = arguments_of(message)
        for capability in self._skills:
            assert capability.interface is not None
            if not error_details(capability.interface.input_validator, arguments):
                return capability
        return None

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """A claimed message gets its script; any other goes to the real skills."""
        capability = context.call_context.state.get(CONFORMANCE_STATE_KEY)
        if not isinstance(capability, Capability) or context.message is None:
            await self._inner.execute(context, event_queue)
            return
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        try:
            script = await self._script(capability, context, task_id, context_id)
        except Exception as exc:
            await self._fail(context, event_queue, updater, exc)
            return
        log.info("conformance scenario %s for task %s", script["scenario"], task_id)
        if script["reply"] == "message":
            await event_queue.enqueue_event(
                Message(
                    message_id=random_hex(),
                    role=Role.ROLE_AGENT,
                    context_id=context_id,
                    parts=[_part(p) for p in script["message"]],
                )
            )
            return
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        artifact_id = random_hex()
        for step in script["steps"]:
            if "sleep_seconds" in step:
                await asyncio.sleep(float(step["sleep_seconds"]))
            elif "artifact" in step:
                artifact = step["artifact"]
                append = bool(artifact.get("append", False))
                if not append:
                    artifact_id = random_hex()
                await updater.add_artifact(
                    [_part(p) for p in artifact["parts"]],
                    artifact_id=artifact_id,
                    append=append or None,
                    last_chunk=artifact.get("last_chunk") or None,
                )
            else:
                parts = step.get("message")
                message = updater.new_agent_message([_part(p) for p in parts]) if parts else None
                await updater.update_status(STATES[step["status"]], message=message)

    async def _script(
        self, capability: Capability, context: RequestContext, task_id: str, context_id: str
    ) -> dict[str, Any]:
        """Ask the skill, then hold its answer to the output schema like any skill's result."""
        assert capability.handler is not None and capability.interface is not None
        assert context.message is not None
        skill_context = SkillContext(
            principal=principal_of(context.call_context.user),
            skill_id=capability.id,
            task_id=task_id,
            context_id=context_id,
            limits=capability.manifest.limits,
            declared_tools=capability.manifest.tools,
            _tool_factory=_no_tools,
        )
        answer = await capability.handler.handle(arguments_of(context.message), skill_context)
        script = answer.build() if isinstance(answer, FixedResult) else answer
        details = error_details(capability.interface.output_validator, script)
        if details:
            raise SkillError(ErrorCode.OUTPUT_INVALID, "script does not match its schema", details)
        return script

    @staticmethod
    async def _fail(
        context: RequestContext, event_queue: EventQueue, updater: TaskUpdater, exc: Exception
    ) -> None:
        """A broken script fails its task with the error object, never with a traceback."""
        error = exc if isinstance(exc, SkillError) else None
        if error is None:
            correlation = random_hex()
            log.error("conformance script failed (correlation id %s)", correlation, exc_info=exc)
            error = SkillError(
                ErrorCode.EXECUTION_FAILED, f"internal error; correlation id {correlation}"
            )
        if context.current_task is None and context.message is not None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        message = updater.new_agent_message([new_data_part(error.to_object(), media_type=JSON)])
        await updater.failed(message=message)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancelling is the same for both: the real skills' executor ends the task CANCELED."""
        await self._inner.cancel(context, event_queue)
