"""The request handler's rules, before and around a task (docs/architecture.md, step 3).

Through the SDK's RequestHandler interface only: message/send, tasks/get, tasks/cancel and
tasks/list with a caller per request, on in-memory stores. What is refused here is refused
with a protocol error and leaves no task, no binding and no audit row behind.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from a2a.helpers import new_text_part
from a2a.types import (
    CancelTaskRequest,
    ContentTypeNotSupportedError,
    GetTaskRequest,
    InvalidParamsError,
    ListTasksRequest,
    Part,
    Role,
    SendMessageRequest,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import UnsupportedOperationError

from agent.security.principal import Principal
from agent.storage.bindings import Phase
from tests.unit.server.conftest import MAX_PARTS
from tests.unit.server.harness import (
    Agent,
    data_message,
    question,
    result,
    state,
    text_message,
)

OUT_OF_SCOPE = "what's the weather in Paris tomorrow?"
TASK_NOT_FOUND = "Task not found"


async def nothing_was_left_behind(agent: Agent, who: Principal) -> None:
    assert await agent.tasks_of(who) == []
    assert await agent.audit.query() == []


async def parked(agent: Agent, who: Principal) -> Task:
    """A task of ``who`` waiting for an answer: which skill was meant."""
    task = await agent.send(text_message(OUT_OF_SCOPE), who)
    assert state(task) == "TASK_STATE_INPUT_REQUIRED", task.status
    return task


async def settled(agent: Agent, task_id: str, who: Principal) -> Task:
    """The task once it has left SUBMITTED and WORKING."""
    for _ in range(200):
        task = await agent.handler.on_get_task(GetTaskRequest(id=task_id), agent.context(who))
        if state(task) not in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"):
            return task
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {task_id} did not settle")


async def working(agent: Agent, skill: str, seconds: float, who: Principal) -> Task:
    """A probe's task, accepted and running (returned as soon as it is WORKING)."""
    task = await agent.invoke(skill, {"seconds": seconds}, who, return_immediately=True)
    for _ in range(200):
        task = await agent.handler.on_get_task(GetTaskRequest(id=task.id), agent.context(who))
        if state(task) == "TASK_STATE_WORKING":
            return task
        await asyncio.sleep(0.02)
    raise AssertionError(f"{skill} never started")


# -- the message itself ---------------------------------------------------------------------


async def test_a_message_over_the_parts_limit_is_refused_before_any_task(agent: Agent) -> None:
    alice = agent.caller("alice")
    message = text_message("list the sites")
    message.parts.extend(new_text_part(f"part {n}") for n in range(MAX_PARTS))
    with pytest.raises(InvalidParamsError) as refused:
        await agent.send(message, alice)
    assert "/message/parts" in str(refused.value.message)
    await nothing_was_left_behind(agent, alice)


async def test_a_string_over_its_limit_is_named_by_pointer_never_quoted(agent: Agent) -> None:
    alice = agent.caller("alice")
    secret = "x" * 70_000
    message = data_message({"skill": "lookup_inventory", "arguments": {"kind": secret}})
    with pytest.raises(InvalidParamsError) as refused:
        await agent.send(message, alice)
    text = str(refused.value.message)
    assert "/message/parts/0/data/arguments/kind" in text and "xxxx" not in text
    await nothing_was_left_behind(agent, alice)


@pytest.mark.parametrize(
    "task_id", ["t" * 37, "task\x00id", "task\nid"], ids=["too-long", "nul", "newline"]
)
async def test_a_task_id_no_task_can_have_is_task_not_found(agent: Agent, task_id: str) -> None:
    alice = agent.caller("alice")
    with pytest.raises(TaskNotFoundError) as refused:
        await agent.send(text_message("list the sites", task_id=task_id), alice)
    assert refused.value.message == TASK_NOT_FOUND
    with pytest.raises(TaskNotFoundError):
        await agent.handler.on_get_task(GetTaskRequest(id=task_id), agent.context(alice))
    await nothing_was_left_behind(agent, alice)


@pytest.mark.parametrize("context_id", ["c" * 37, "ctx\x7f"], ids=["too-long", "del"])
async def test_a_context_id_the_store_cannot_hold_is_invalid_params_naming_the_field(
    agent: Agent, context_id: str
) -> None:
    alice = agent.caller("alice")
    message = text_message("list the sites")
    message.context_id = context_id
    with pytest.raises(InvalidParamsError) as refused:
        await agent.send(message, alice)
    assert str(refused.value.message).startswith("message.context_id ")
    assert context_id not in str(refused.value.message)
    await nothing_was_left_behind(agent, alice)


async def test_a_message_no_skill_the_caller_may_use_accepts_is_content_type_not_supported(
    agent: Agent,
) -> None:
    vic = agent.caller("vic")
    message = text_message("")
    message.parts[0].CopyFrom(Part(raw=b"\x89PNG", media_type="image/png"))
    with pytest.raises(ContentTypeNotSupportedError):
        await agent.send(message, vic)
    await nothing_was_left_behind(agent, vic)


async def test_an_output_mode_the_skill_cannot_produce_is_refused_before_any_task(
    agent: Agent,
) -> None:
    vic = agent.caller("vic")
    request = data_message({"skill": "lookup_inventory", "arguments": {"kind": "sites"}})
    with pytest.raises(ContentTypeNotSupportedError) as refused:
        await agent.send(request, vic, accepted_output_modes=["image/png"])
    assert "acceptedOutputModes" in str(refused.value.message)
    await nothing_was_left_behind(agent, vic)
    control = await agent.invoke(
        "lookup_inventory", {"kind": "sites"}, vic, accepted_output_modes=["application/*"]
    )
    assert state(control) == "TASK_STATE_COMPLETED", control.status


# -- follow-ups -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "tenant"),
    [("gary", "globex"), ("carl", "acme"), ("vic", "globex")],
    ids=["other-tenant", "same-tenant-other-subject", "same-subject-other-tenant"],
)
async def test_a_follow_up_to_another_owners_task_is_task_not_found(
    agent: Agent, subject: str, tenant: str
) -> None:
    vic = agent.caller("vic")
    own = await parked(agent, vic)
    other = agent.caller(subject, tenant=tenant, scopes=["inventory.read"])
    with pytest.raises(TaskNotFoundError) as foreign:
        await agent.send(text_message("lookup_inventory", task_id=own.id), other)
    with pytest.raises(TaskNotFoundError) as missing:
        await agent.send(text_message("lookup_inventory", task_id=str(uuid.uuid4())), other)
    assert foreign.value.message == missing.value.message == TASK_NOT_FOUND
    with pytest.raises(TaskNotFoundError):
        await agent.handler.on_get_task(GetTaskRequest(id=own.id), agent.context(other))
    with pytest.raises(TaskNotFoundError):
        await agent.handler.on_cancel_task(CancelTaskRequest(id=own.id), agent.context(other))
    assert await agent.tasks_of(other) == []
    still = await agent.handler.on_get_task(GetTaskRequest(id=own.id), agent.context(vic))
    assert state(still) == "TASK_STATE_INPUT_REQUIRED"
    binding = await agent.bindings.get(own.id, vic.owner)
    assert binding is not None and binding.phase is Phase.CLARIFY
    assert await agent.bindings.get(own.id, other.owner) is None


async def test_a_follow_up_naming_another_context_is_invalid_params(agent: Agent) -> None:
    vic = agent.caller("vic")
    own = await parked(agent, vic)
    reply = text_message("lookup_inventory", task_id=own.id)
    reply.context_id = str(uuid.uuid4())
    with pytest.raises(InvalidParamsError) as refused:
        await agent.send(reply, vic)
    assert refused.value.message == "message.context_id is not the context of the task it names"


async def test_a_follow_up_naming_only_its_task_keeps_the_tasks_context(agent: Agent) -> None:
    vic = agent.caller("vic")
    own = await parked(agent, vic)
    answered = await agent.send(text_message("lookup_inventory", task_id=own.id), vic)
    assert answered.id == own.id and answered.context_id == own.context_id
    # The run and the stored history got the task's context too (the SDK's v2 handler gives
    # the executor, and the message it stores, a context of their own: bench/sdk_parts.py).
    stored = await agent.handler.on_get_task(GetTaskRequest(id=own.id), agent.context(vic))
    user_messages = [m for m in stored.history if m.role == Role.ROLE_USER]
    assert len(user_messages) == 2, stored.history
    assert {m.context_id for m in user_messages} == {own.context_id}


async def parked_for_arguments(agent: Agent, who: Principal) -> Task:
    """A task waiting for lookup_inventory's arguments: the next answer completes it."""
    asked = await parked(agent, who)
    offered = [c["skill_id"] for c in question(asked)["candidates"]]
    number = str(offered.index("lookup_inventory") + 1)
    picked = await agent.send(text_message(number, task_id=asked.id), who)
    assert state(picked) == "TASK_STATE_INPUT_REQUIRED", picked.status
    return picked


async def test_of_two_follow_ups_at_once_the_second_finds_the_task_ended_and_is_refused(
    agent: Agent,
) -> None:
    """One after the other: the first completes the task; the second is refused, and its
    message is not in the task (the SDK's v2 handler answers it with the completed task and
    drops its message: bench/sdk_parts.py)."""
    vic = agent.caller("vic")
    picked = await parked_for_arguments(agent, vic)
    answers = [data_message({"kind": "sites"}, task_id=picked.id) for _ in range(2)]
    outcomes = await asyncio.gather(
        *(agent.send(answer, vic) for answer in answers), return_exceptions=True
    )
    done = [o for o in outcomes if isinstance(o, Task)]
    refused = [o for o in outcomes if isinstance(o, UnsupportedOperationError)]
    assert len(done) == 1 and len(refused) == 1, outcomes
    assert state(done[0]) == "TASK_STATE_COMPLETED", done[0].status
    stored = await agent.handler.on_get_task(GetTaskRequest(id=picked.id), agent.context(vic))
    kept = {m.message_id for m in stored.history} & {a.message_id for a in answers}
    assert len(kept) == 1, kept


async def test_a_streamed_follow_up_starts_with_the_task(agent: Agent) -> None:
    """The task as the follow-up took it up (WORKING), then its events, the settled state
    last (the SDK's v2 handler starts a follow-up's stream with a status update)."""
    vic = agent.caller("vic")
    picked = await parked_for_arguments(agent, vic)
    request = SendMessageRequest(message=data_message({"kind": "sites"}, task_id=picked.id))
    events = [e async for e in agent.handler.on_message_send_stream(request, agent.context(vic))]
    first, last = events[0], events[-1]
    assert isinstance(first, Task), events
    assert first.id == picked.id and state(first) == "TASK_STATE_WORKING", first.status
    assert isinstance(last, TaskStatusUpdateEvent), events
    assert TaskState.Name(last.status.state) == "TASK_STATE_COMPLETED"


async def test_a_follow_up_to_a_terminal_task_is_refused_and_changes_nothing(agent: Agent) -> None:
    vic = agent.caller("vic")
    done = await agent.invoke("lookup_inventory", {"kind": "sites"}, vic)
    assert state(done) == "TASK_STATE_COMPLETED", done.status
    rows = await agent.audit.query()
    with pytest.raises(UnsupportedOperationError):
        await agent.send(data_message({"kind": "devices"}, task_id=done.id), vic)
    after = await agent.handler.on_get_task(GetTaskRequest(id=done.id), agent.context(vic))
    assert after == done
    assert await agent.audit.query() == rows


# -- routing: the clarification and its follow-up through the binding ----------------------


async def test_an_unsure_router_asks_and_the_answers_run_the_skill_through_the_binding(
    agent: Agent,
) -> None:
    vic = agent.caller("vic")
    asked = await parked(agent, vic)
    # The router offers the candidates close to the best (issue 19), among vic's skills only.
    offered = [c["skill_id"] for c in question(asked)["candidates"]]
    assert "lookup_inventory" in offered and set(offered) <= {"describe_skill", "lookup_inventory"}
    assert dict(asked.metadata)["routing"]["stage"] == "clarification"
    binding = await agent.bindings.get(asked.id, vic.owner)
    assert binding is not None and binding.phase is Phase.CLARIFY
    assert (binding.candidates, binding.text) == (tuple(offered), OUT_OF_SCOPE)
    (row,) = await agent.audit.query()
    assert (row["task_id"], row["principal"], row["reason"]) == (asked.id, "vic", "input_required")

    number = str(offered.index("lookup_inventory") + 1)
    picked = await agent.send(text_message(number, task_id=asked.id), vic)
    assert state(picked) == "TASK_STATE_INPUT_REQUIRED", picked.status
    (missing,) = question(picked)["missing"]
    assert missing["pointer"] == "/kind"
    assert all(kind in missing["description"] for kind in ("sites", "devices", "links"))
    binding = await agent.bindings.get(asked.id, vic.owner)
    assert binding is not None and (binding.phase, binding.skill_id) == (
        Phase.ARGUMENTS,
        "lookup_inventory",
    )

    done = await agent.send(data_message({"kind": "sites"}, task_id=asked.id), vic)
    assert state(done) == "TASK_STATE_COMPLETED", done.status
    assert done.id == asked.id
    assert dict(done.metadata)["routing"]["stage"] == "task_binding"
    listed = result(done, "lookup_inventory")
    assert (listed["kind"], listed["tenant"]) == ("sites", "acme") and listed["count"] > 0
    binding = await agent.bindings.get(asked.id, vic.owner)
    assert binding is not None and (binding.phase, binding.skill_id) == (
        Phase.BOUND,
        "lookup_inventory",
    )
    invocations = [r for r in await agent.audit.query(task_id=asked.id) if r["tool"] == "agent"]
    assert [r["reason"] for r in invocations] == ["completed", "input_required", "input_required"]


async def test_an_answer_that_picks_no_candidate_asks_the_same_question_again(
    agent: Agent,
) -> None:
    vic = agent.caller("vic")
    asked = await parked(agent, vic)
    again = await agent.send(data_message({"unsure": True}, task_id=asked.id), vic)
    assert state(again) == "TASK_STATE_INPUT_REQUIRED"
    assert question(again)["candidates"] == question(asked)["candidates"]
    binding = await agent.bindings.get(asked.id, vic.owner)
    assert binding is not None and (binding.phase, binding.text) == (Phase.CLARIFY, OUT_OF_SCOPE)


# -- get, list, cancel ----------------------------------------------------------------------


async def test_tasks_are_listed_and_read_only_by_their_owner(agent: Agent) -> None:
    vic, carl = agent.caller("vic"), agent.caller("carl")
    own = await agent.invoke("lookup_inventory", {"kind": "sites"}, vic)
    theirs = await agent.invoke("lookup_inventory", {"kind": "sites"}, carl)
    assert [t.id for t in await agent.tasks_of(vic) if t.id in (own.id, theirs.id)] == [own.id]
    got = await agent.handler.on_get_task(GetTaskRequest(id=own.id), agent.context(vic))
    assert got.id == own.id and state(got) == "TASK_STATE_COMPLETED"
    with pytest.raises(TaskNotFoundError):
        await agent.handler.on_get_task(GetTaskRequest(id=own.id), agent.context(carl))


@pytest.mark.parametrize(
    "request_",
    [ListTasksRequest(status=99), ListTasksRequest(context_id="c\x00")],
    ids=["no-such-state", "nul-in-context"],
)
async def test_a_list_filter_the_store_cannot_apply_is_invalid_params(
    agent: Agent, request_: ListTasksRequest
) -> None:
    with pytest.raises(InvalidParamsError):
        await agent.handler.on_list_tasks(request_, agent.context(agent.caller("vic")))


async def test_a_non_cancelable_skill_refuses_the_cancel_and_runs_on(agent: Agent) -> None:
    alice = agent.caller("alice")
    running = await working(agent, "steady_probe", 0.3, alice)
    with pytest.raises(TaskNotCancelableError):
        await agent.handler.on_cancel_task(CancelTaskRequest(id=running.id), agent.context(alice))
    assert state(await settled(agent, running.id, alice)) == "TASK_STATE_COMPLETED"


async def test_a_cancelable_skill_is_cancelled(agent: Agent) -> None:
    alice = agent.caller("alice")
    running = await working(agent, "slow_probe", 20, alice)
    cancelled = await agent.handler.on_cancel_task(
        CancelTaskRequest(id=running.id), agent.context(alice)
    )
    assert state(cancelled) == "TASK_STATE_CANCELED"
    assert state(await settled(agent, running.id, alice)) == "TASK_STATE_CANCELED"
    (row,) = [r for r in await agent.audit.query(task_id=running.id) if r["tool"] == "agent"]
    assert (row["decision"], row["reason"]) == ("allow", "canceled")
