"""The SDK's request handler with the checks that belong before any task exists.

Here: required extensions, identifier lengths the task store can hold, the per-caller
extended card, and a guard that turns any unexpected exception into a generic error with a
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
    GetExtendedAgentCardRequest,
    InternalError,
    InvalidParamsError,
    SendMessageRequest,
    TaskNotCancelableError,
)
from a2a.utils.errors import A2AError

from agent.cards import CardFactory
from agent.executor import SkillExecutor
from agent.extensions import require_extensions
from agent.principal import principal_of

log = logging.getLogger(__name__)
MAX_ID_LENGTH = 36  # the SDK task store's VARCHAR(36) columns


def _internal(exc: Exception) -> InternalError:
    correlation = uuid.uuid4().hex
    log.error("request failed (correlation id %s)", correlation, exc_info=exc)
    return InternalError(message=f"internal error; correlation id {correlation}")


def _guarded(method: Callable[..., Any]) -> Callable[..., Any]:
    """Let protocol errors through; hide everything else behind a correlation id."""
    if inspect.isasyncgenfunction(method):

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
    for name in ("context_id", "task_id"):
        value = getattr(params.message, name)
        if len(value) > MAX_ID_LENGTH:
            raise InvalidParamsError(message=f"message.{name} is longer than {MAX_ID_LENGTH}")


class GovernedRequestHandler(DefaultRequestHandler):
    """DefaultRequestHandler plus the pre-task checks this agent promises."""

    def __init__(self, *, cards: CardFactory, agent_executor: SkillExecutor, **kwargs: Any) -> None:
        super().__init__(agent_card=cards.public_card, agent_executor=agent_executor, **kwargs)
        self._skills = agent_executor
        self._cards = cards
        self._declared = list(cards.public_card.capabilities.extensions)

    def _precheck(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        require_extensions(self._declared, context.requested_extensions)
        _check_ids(params)

    @_guarded
    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Any:
        """Refuse before a task exists when extensions or identifiers are wrong."""
        self._precheck(params, context)
        return await super().on_message_send(params, context)

    @_guarded
    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Any, None]:
        """As on_message_send, for the streaming method."""
        self._precheck(params, context)
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


for _name in (
    "on_get_task",
    "on_list_tasks",
    "on_subscribe_to_task",
    "on_create_task_push_notification_config",
    "on_get_task_push_notification_config",
    "on_list_task_push_notification_configs",
    "on_delete_task_push_notification_config",
):
    setattr(GovernedRequestHandler, _name, _guarded(getattr(DefaultRequestHandler, _name)))
