"""A parked (input-required) task changes state once per caller action, and each is audited.

On every binding and both databases: cancelling a parked task writes its audit row, and a
follow-up racing a cancel of the same parked task in one process gives one outcome that the
store, the callers and the audit trail all agree on.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    SendMessageRequest,
    TaskNotCancelableError,
    TaskState,
    UnsupportedOperationError,
)

from agent.storage.audit import AuditLog, DatabaseAuditLog
from agent.storage.engine import make_engine
from tests.a2a_helpers import (
    ANSWER,
    call_context,
    make_client,
    park,
    text_message,
    wait_trained,
)
from tests.a2a_helpers import EVERY_BINDING as BINDINGS
from tests.conftest import RunningAgent, start_agent


@pytest.fixture(scope="module")
def parked_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """The demo skills, serving gRPC beside HTTP."""
    running = start_agent(tmp_path_factory.mktemp("parked-home"), backend=backend, grpc=True)
    wait_trained(running.base_url)
    yield running
    running.stop()


@pytest.fixture(scope="module")
async def audit(parked_agent: RunningAgent) -> AsyncIterator[AuditLog]:
    engine = make_engine(parked_agent.settings.resolved_database_url)
    yield DatabaseAuditLog(engine)
    await engine.dispose()


def trail(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """The agent's own rows of a task, oldest first: (operation, decision, reason, who)."""
    mine = sorted((r for r in rows if r["tool"] == "agent"), key=lambda r: r["id"])
    return [(r["operation"], r["decision"], r["reason"], r["principal"]) for r in mine]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_cancelling_a_parked_task_is_audited(
    parked_agent: RunningAgent, audit: AuditLog, binding: str
) -> None:
    token = parked_agent.token("alice")
    task_id = await park(parked_agent.base_url, token, binding)
    async with make_client(parked_agent.base_url, token, binding) as client:
        cancelled = await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())
        assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(TaskNotCancelableError):  # once: the second changes nothing
            await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())
    rows = await audit.query(task_id=task_id, limit=100)
    assert trail(rows) == [
        ("invoke", "allow", "input_required", "alice"),
        ("cancel", "allow", "canceled", "alice"),
    ]
    (row,) = [r for r in rows if r["operation"] == "cancel"]
    assert row["tenant"] == "acme" and row["projection"] == "a2a"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_follow_up_racing_a_cancel_has_one_outcome(
    parked_agent: RunningAgent, audit: AuditLog, binding: str
) -> None:
    """The answer and the cancel sent at once: either the cancel ended the parked task (the
    answer is refused) or the answer's run took it (the cancel reached that run, or found it
    ended); never both, and the audit trail says which."""
    token = parked_agent.token("alice")
    task_id = await park(parked_agent.base_url, token, binding)
    async with make_client(parked_agent.base_url, token, binding) as client:

        async def answer() -> Any:
            message = text_message(ANSWER, task_id=task_id)
            async for event in client.send_message(
                SendMessageRequest(message=message), context=call_context()
            ):
                return event.task
            return None

        async def cancel() -> Any:
            return await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())

        answered, cancelled = await asyncio.gather(answer(), cancel(), return_exceptions=True)
        stored = await client.get_task(GetTaskRequest(id=task_id), context=call_context())
    final = TaskState.Name(stored.status.state)
    rows = trail(await audit.query(task_id=task_id, limit=100))
    if isinstance(answered, UnsupportedOperationError):  # the cancel won
        assert final == "TASK_STATE_CANCELED"
        assert TaskState.Name(cancelled.status.state) == final
        assert rows[1:] == [("cancel", "allow", "canceled", "alice")]
        return
    assert not isinstance(answered, BaseException), answered
    assert TaskState.Name(answered.status.state) == final
    if isinstance(cancelled, TaskNotCancelableError):  # the answer's run ended first
        assert final == "TASK_STATE_COMPLETED"
        assert rows[1:] == [("invoke", "allow", "completed", "alice")]
    else:  # the cancel reached the answer's run
        assert not isinstance(cancelled, BaseException), cancelled
        assert final == TaskState.Name(cancelled.status.state) == "TASK_STATE_CANCELED"
        assert rows[1:] == [("invoke", "allow", "canceled", "alice")]
