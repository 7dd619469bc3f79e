"""The SDK's request handler with the checks that belong before any task exists.

Here: required extensions, identifier lengths the task store can hold, routing (so that a
message no skill accepts gets the protocol's ContentTypeNotSupportedError, and the executor
reuses the decision), accepted output modes, the per-caller extended card, and a guard that
turns any unexpected exception into a generic error with a
correlation id (the SDK would otherwise send the exception's text, SQL included).
"""

from __future__ import annotations

import functools
import inspect
import logging
import uuid
from collections.abc import AsyncGenerator, Callable
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    ContentTypeNotSupportedError,
    GetExtendedAgentCardRequest,
    InternalError,
    InvalidParamsError,
    ListTasksRequest,
    SendMessageRequest,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
)
from a2a.utils.errors import A2AError

from agent.cards import CardFactory
from agent.conformance_skill import CONFORMANCE_STATE_KEY, ConformanceExecutor
from agent.executor import ROUTE_STATE_KEY, TEXT, SkillExecutor
from agent.extensions import require_extensions
from agent.limits import Limits, check_message
from agent.principal import principal_of
from agent.registry import Capability, Registry
from agent.router import Action

log = logging.getLogger(__name__)
MAX_ID_LENGTH = 36  # the SDK task store's VARCHAR(36) columns


def _internal(exc: Exception) -> InternalError:
    correlation = uuid.uuid4().hex
    log.error("request failed (correlation id %s)", correlation, exc_info=exc)
    return InternalError(message=f"internal error; correlation id {correlation}")


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    """Let protocol errors through; hide everything else behind a correlation id."""
    if inspect.isasyncgenfunction(inspect.unwrap(method)):  # SDK methods are decorated

        @functools.wraps(method)
        async def stream(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
            try:
                async for item in method(*args, **kwargs):
                    yield item
            except A2AError:
                raise
            except Exception as exc:
                raise _internal(exc) from None

        return stream

    @functools.wraps(method)
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except A2AError:
            raise
        except Exception as exc:
            raise _internal(exc) from None

    return call


def _check_ids(params: SendMessageRequest) -> None:
    """Identifiers the task store cannot hold: no such task, or a context we cannot keep."""
    task_id = params.message.task_id
    if len(task_id) > MAX_ID_LENGTH:  # no task of ours has such an id (A2A 3.4.2)
        raise TaskNotFoundError(message="Task not found")  # the id is not echoed
    if len(params.message.context_id) > MAX_ID_LENGTH:
        raise InvalidParamsError(message=f"message.context_id is longer than {MAX_ID_LENGTH}")


def _check_output_modes(params: SendMessageRequest, capability: Capability) -> None:
    """Honour acceptedOutputModes: refuse up front when we can produce none of them."""
    accepted = {m.lower() for m in params.configuration.accepted_output_modes}
    if not accepted:
        return
    producible = set(capability.manifest.output_modes) | {TEXT}
    wildcards = {m.split("/")[0] + "/*" for m in producible} | {"*/*"}
    if accepted & (producible | wildcards):
        return
    raise ContentTypeNotSupportedError(
        message=f"{capability.id} produces {', '.join(sorted(producible))}; "
        f"none is in acceptedOutputModes"
    )


class GovernedRequestHandler(DefaultRequestHandler):
    """DefaultRequestHandler plus the pre-task checks this agent promises."""

    def __init__(
        self,
        *,
        cards: CardFactory,
        agent_executor: SkillExecutor,
        limits: Limits | None = None,
        conformance: Registry | None = None,
        **kwargs: Any,
    ) -> None:
        """``conformance``: the internal conformance skills (``--conformance``), else None."""
        self._conformance = (
            ConformanceExecutor(conformance, agent_executor) if conformance is not None else None
        )
        super().__init__(
            agent_card=cards.public_card,
            agent_executor=self._conformance or agent_executor,
            **kwargs,
        )
        self._limits = limits or Limits()
        self._skills = agent_executor
        self._cards = cards
        self._declared = list(cards.public_card.capabilities.extensions)

    async def _precheck(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        """Everything that must be refused with a protocol error, before a task exists."""
        check_message(params, self._limits)  # first: nothing oversize is routed or stored
        require_extensions(self._declared, context.requested_extensions)
        _check_ids(params)
        message = params.message
        if message.task_id and not message.context_id:
            # A follow-up that names only its task keeps the task's context (the SDK would
            # otherwise invent a new one once the task is no longer live in this process).
            stored = await self._versioned_store.get(message.task_id, context)
            if stored is not None:
                message.context_id = stored.task.context_id
        if self._conformance is not None:
            claimed = self._conformance.claim(message)
            if claimed is not None:  # a test kit's scenario message: the router never sees it
                context.state[CONFORMANCE_STATE_KEY] = claimed
                return
        decision = await self._skills.decide(params.message, principal_of(context.user))
        if decision.action is Action.RUN and decision.capability is not None:
            _check_output_modes(params, decision.capability)
        context.state[ROUTE_STATE_KEY] = decision

    @_guarded
    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Any:
        """Refuse before a task exists when extensions or identifiers are wrong."""
        await self._precheck(params, context)
        return await super().on_message_send(params, context)

    @_guarded
    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        """As on_message_send, for the streaming method."""
        await self._precheck(params, context)
        async for event in super().on_message_send_stream(params, context):
            yield event

    @_guarded
    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Any:
        """Refuse, with the task untouched, when the running skill is not cancelable."""
        if self._skills.refuses_cancel(params.id):
            raise TaskNotCancelableError(message="this skill's invocations cannot be cancelled")
        return await super().on_cancel_task(params, context)

    @_guarded
    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        """The caller's own projection; the edge has already refused anonymous callers."""
        principal = principal_of(context.user)
        if not principal.authenticated:
            raise InvalidParamsError(message="the extended card needs an authenticated caller")
        return self._cards.extended_card(principal)

    @_guarded
    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> Any:
        """Refuse a status filter that is no task state (a number the store cannot name)."""
        if params.status not in TaskState.values():
            raise InvalidParamsError(message="status is not a task state")
        return await super().on_list_tasks(params, context)


for _name in (
    "on_get_task",
    "on_subscribe_to_task",
    "on_create_task_push_notification_config",
    "on_get_task_push_notification_config",
    "on_list_task_push_notification_configs",
    "on_delete_task_push_notification_config",
):
    setattr(GovernedRequestHandler, _name, _guarded(getattr(DefaultRequestHandler, _name)))
