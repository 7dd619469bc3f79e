"""The SDK's request handler with the checks that belong before any task exists.

Here: required extensions, identifiers the task store can hold (length, no control
characters), the task a follow-up names (owner-scoped, before anything else looks at it),
routing (so that a message no skill accepts gets the protocol's ContentTypeNotSupportedError,
and the executor reuses the decision), accepted output modes, the per-caller extended card, and
a guard that turns any unexpected exception into a generic error with a correlation id (the SDK
would otherwise send the exception's text, SQL included). Errors raised here carry fixed text:
never an identifier or other input value.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import re
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
    GetTaskRequest,
    InternalError,
    InvalidParamsError,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
)
from a2a.utils.errors import A2AError

from agent._sdk import running_here, versioned_store
from agent.edge.extensions import require_extensions
from agent.edge.limits import check_message
from agent.registry.cards import CardFactory
from agent.registry.loader import Capability, Registry
from agent.routing.router import Action
from agent.security.principal import Principal, PrincipalUser, principal_of
from agent.server.cancel_relay import CancelRelay
from agent.server.conformance import CONFORMANCE_STATE_KEY, ConformanceExecutor
from agent.server.executor import ROUTE_STATE_KEY, TEXT, SkillExecutor
from agent.settings import Limits

log = logging.getLogger(__name__)
MAX_ID_LENGTH = 36  # the SDK task store's VARCHAR(36) columns
# C0 and C1 controls, DEL included: PostgreSQL refuses NUL in text outright (a driver error,
# that is a 500), and no identifier of ours holds any of them.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
TASK_NOT_FOUND = "Task not found"
# A cancel for a task another replica runs: how long to wait for that replica to cancel it.
RELAY_WAIT_SECONDS = 5.0
RELAY_POLL_SECONDS = 0.1
_RUNNING = (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)


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


def _storable(identifier: str) -> bool:
    """Whether the task store can hold (or look up) this id: its length, no control characters."""
    return len(identifier) <= MAX_ID_LENGTH and not _CONTROL.search(identifier)


def _check_task_id(task_id: str) -> None:
    """A lookup by an id no task of ours can have is TaskNotFound (A2A 3.4.2), before the store."""
    if not _storable(task_id):
        raise TaskNotFoundError(message=TASK_NOT_FOUND)  # the id is not echoed


def _check_context_id(context_id: str, field: str) -> None:
    """A context id the store cannot hold is the caller's mistake: InvalidParams, named by field."""
    if len(context_id) > MAX_ID_LENGTH:
        raise InvalidParamsError(message=f"{field} is longer than {MAX_ID_LENGTH}")
    if _CONTROL.search(context_id):
        raise InvalidParamsError(message=f"{field} holds a control character")


def _check_ids(params: SendMessageRequest) -> None:
    """Identifiers the task store cannot hold: no such task, or a context we cannot keep."""
    _check_task_id(params.message.task_id)
    _check_context_id(params.message.context_id, "message.context_id")


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
        relay: CancelRelay | None = None,
        **kwargs: Any,
    ) -> None:
        """``conformance``: the internal conformance skills (``--conformance``), else None.

        ``relay``: how a cancel reaches the replica running the task, when there are several.
        """
        self._conformance = (
            ConformanceExecutor(conformance, agent_executor) if conformance is not None else None
        )
        super().__init__(
            agent_card=cards.public_card,
            agent_executor=self._conformance or agent_executor,
            **kwargs,
        )
        self._limits = limits or Limits()
        self._relay = relay
        self._skills = agent_executor
        self._cards = cards
        self._declared = list(cards.public_card.capabilities.extensions)

    async def _precheck(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        """Everything that must be refused with a protocol error, before a task exists."""
        check_message(params, self._limits)  # first: nothing oversize is routed or stored
        require_extensions(self._declared, context.requested_extensions)
        _check_ids(params)
        message = params.message
        if message.task_id:
            # Owner-scoped: another caller's task is answered exactly like a missing one, and
            # in fixed text (the SDK's own answers quote the ids back).
            stored = await versioned_store(self).get(message.task_id, context)
            if stored is None:
                raise TaskNotFoundError(message=TASK_NOT_FOUND)
            if not message.context_id:
                # A follow-up that names only its task keeps the task's context (the SDK would
                # otherwise invent a new one once the task is no longer live in this process).
                message.context_id = stored.task.context_id
            elif message.context_id != stored.task.context_id:
                raise InvalidParamsError(
                    message="message.context_id is not the context of the task it names"
                )
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
        """Refuse, with the task untouched, when the running skill is not cancelable.

        The caller's own task first: asking the executor about an id the caller cannot see
        would tell it that someone's task runs under that id.
        """
        _check_task_id(params.id)
        if not params.id:
            return await super().on_cancel_task(params, context)  # the SDK's InvalidParams
        stored = await versioned_store(self).get(params.id, context)
        if stored is None:
            raise TaskNotFoundError(message=TASK_NOT_FOUND)
        if await self._skills.refuses_cancel_anywhere(stored.task, principal_of(context.user)):
            raise TaskNotCancelableError(message="this skill's invocations cannot be cancelled")
        if (
            self._relay is not None
            and stored.task.status.state in _RUNNING
            and not await running_here(self, params.id)
        ):
            return await self._cancel_where_it_runs(params, context)
        return await super().on_cancel_task(params, context)

    async def _cancel_where_it_runs(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Any:
        """The task runs on another replica, or on none any more (its runner died).

        Writing CANCELED here would be overwritten by the runner's result, so the runner is
        asked to cancel it; the caller gets what the store then says. If no replica acts in
        time, none runs the task, and the store's CANCELED is the last word.
        """
        assert self._relay is not None
        await self._relay.request(params.id, principal_of(context.user))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + RELAY_WAIT_SECONDS
        while loop.time() < deadline:
            await asyncio.sleep(RELAY_POLL_SECONDS)
            stored = await versioned_store(self).get(params.id, context)
            if stored is not None and stored.task.status.state not in _RUNNING:
                if stored.task.status.state == TaskState.TASK_STATE_CANCELED:
                    return stored.task
                raise TaskNotCancelableError(message="the task ended before it was cancelled")
        log.warning("no replica runs task %s any more; cancelling it in the store", params.id)
        return await super().on_cancel_task(params, context)

    async def cancel_if_running_here(self, task_id: str, principal: Principal) -> None:
        """A cancel relayed by a peer: act on it only for a task this replica runs."""
        if not await running_here(self, task_id):
            return
        context = ServerCallContext(user=PrincipalUser(principal))
        try:
            await self.on_cancel_task(CancelTaskRequest(id=task_id), context)
        except A2AError as error:  # the asking replica reports the outcome from the store
            log.info("a relayed cancel was refused here: %s", type(error).__name__)

    @_guarded
    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Any:
        """An id the store cannot hold names no task: TaskNotFound, before the store sees it."""
        _check_task_id(params.id)
        return await super().on_get_task(params, context)

    @_guarded
    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        """As on_get_task, for subscriptions."""
        _check_task_id(params.id)
        async for event in super().on_subscribe_to_task(params, context):
            yield event

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
        """Refuse a status filter that is no task state (a number the store cannot name), and
        a context id the store cannot compare (PostgreSQL refuses NUL in text)."""
        if params.status not in TaskState.values():
            raise InvalidParamsError(message="status is not a task state")
        if _CONTROL.search(params.context_id):
            raise InvalidParamsError(message="context_id holds a control character")
        return await super().on_list_tasks(params, context)


for _name in (
    "on_create_task_push_notification_config",
    "on_get_task_push_notification_config",
    "on_list_task_push_notification_configs",
    "on_delete_task_push_notification_config",
):
    setattr(GovernedRequestHandler, _name, _guarded(getattr(DefaultRequestHandler, _name)))
