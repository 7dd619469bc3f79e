"""The executor's rules, from the routing decision to the task's end (docs/architecture.md,
steps 4-8): entitlement asked again, the schema interface, the handler's own checks, admission,
records and result, the final state and the audit rows.

Through the SDK's RequestHandler interface only (message/send with a caller per request), on
in-memory stores, with the real inventory tool behind its gate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from a2a.types import CancelTaskRequest, GetTaskRequest, Task
from google.protobuf.json_format import MessageToDict

from agent.security.credentials import AGENT_SUBJECT
from agent.security.principal import ANONYMOUS, Principal
from agent.storage.bindings import Phase
from tests.unit.server.harness import Agent, data_message, error, result, state, text_message

WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
NOT_ACCESSIBLE = "resource not found or not accessible"


async def rows(agent: Agent, task: Task) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The task's tool-call rows (oldest first) and its one invocation row."""
    found = list(reversed(await agent.audit.query(task_id=task.id)))
    (invocation,) = [r for r in found if r["tool"] == "agent"]
    assert found[-1] is invocation, "the invocation row is written last"
    return [r for r in found if r["tool"] != "agent"], invocation


def who_and_why(row: dict[str, Any]) -> tuple[str, str | None, str, str]:
    return row["principal"], row["tenant"], row["decision"], row["reason"]


# -- which refusal: not advertised, or not authorized -----------------------------------------


@pytest.mark.parametrize(
    ("subject", "skill", "code"),
    [
        (None, "lookup_inventory", "authorization_failed"),  # public: listed, needs a scope
        ("nobody", "lookup_inventory", "authorization_failed"),
        ("vic", "evaluate_resource_condition", "skill_not_advertised"),  # extended: unlisted
        ("gary", "plan_link_upgrade", "skill_not_advertised"),  # acme's only
        ("alice", "no_such_skill", "skill_not_advertised"),
        ("paula", "port_report", "skill_not_advertised"),  # removed
    ],
    ids=["anonymous", "no-scopes", "vic-extended", "other-tenant", "unknown", "removed"],
)
async def test_a_skill_the_card_lists_is_authorization_failed_any_other_not_advertised(
    agent: Agent, subject: str | None, skill: str, code: str
) -> None:
    who = ANONYMOUS if subject is None else agent.caller(subject)
    task = await agent.send(data_message({"skill": skill, "arguments": {"kind": "sites"}}), who)
    assert state(task) == "TASK_STATE_REJECTED"
    assert error(task)["code"] == code
    if code == "authorization_failed":
        assert error(task)["message"] == f"skill {skill!r} needs scopes: inventory.read"
    tools, invocation = await rows(agent, task)
    assert tools == []
    assert who_and_why(invocation) == (subject or "anonymous", who.tenant, "deny", code)


async def test_entitlement_is_asked_again_when_the_skill_runs(agent: Agent) -> None:
    """Advertisement is not authorization: a follow-up the binding routes to a skill the caller
    may no longer use (a new token without its scope) is refused before any tool is called."""
    alice = agent.caller("alice")
    asked = await agent.send(
        text_message("is it hot?", skill_id="evaluate_resource_condition"), alice
    )
    assert state(asked) == "TASK_STATE_INPUT_REQUIRED", asked.status
    binding = await agent.bindings.get(asked.id, alice.owner)
    assert binding is not None and binding.phase is Phase.ARGUMENTS
    revoked = agent.caller("alice", scopes=["inventory.read"])
    assert revoked.owner == alice.owner
    refused = await agent.send(data_message(WORKED, task_id=asked.id), revoked)
    assert state(refused) == "TASK_STATE_REJECTED"
    assert error(refused) == {
        "code": "authorization_failed",
        "message": "skill 'evaluate_resource_condition' needs scopes: assurance.read",
    }
    assert [r for r in await agent.audit.query(task_id=asked.id) if r["tool"] != "agent"] == []
    latest = (await agent.audit.query(task_id=asked.id, limit=1))[0]
    assert who_and_why(latest) == ("alice", "acme", "deny", "authorization_failed")


async def test_the_same_follow_up_runs_for_a_caller_still_entitled(agent: Agent) -> None:
    """The control for the test above."""
    alice = agent.caller("alice")
    asked = await agent.send(
        text_message("is it hot?", skill_id="evaluate_resource_condition"), alice
    )
    done = await agent.send(data_message(WORKED, task_id=asked.id), agent.caller("alice"))
    assert state(done) == "TASK_STATE_COMPLETED", done.status


# -- the schema interface ---------------------------------------------------------------------


REQUIRED = "skill_version and interface_digest are required; call describe_skill first"
OTHER_DIGEST = "sha256:" + "0" * 64
NAMED: dict[str, Callable[[dict[str, str]], dict[str, str]]] = {
    "neither": lambda active: {},
    "no-digest": lambda active: {"skill_version": active["skill_version"]},
    "no-version": lambda active: {"interface_digest": active["interface_digest"]},
    "old-version": lambda active: active | {"skill_version": "0.9"},
    "other-digest": lambda active: active | {"interface_digest": OTHER_DIGEST},
}


@pytest.mark.parametrize("case", list(NAMED))
async def test_an_explicit_request_must_name_the_active_interface(agent: Agent, case: str) -> None:
    alice = agent.caller("alice")
    active = await agent.describe("evaluate_resource_condition", alice)
    named = NAMED[case](active)
    request = {"skill": "evaluate_resource_condition", "arguments": WORKED} | named
    task = await agent.send(data_message(request), alice)
    assert state(task) == "TASK_STATE_REJECTED"
    expected = (
        REQUIRED
        if len(named) < 2
        else f"active interface is {active['skill_version']} {active['interface_digest']}"
    )
    assert error(task) == {"code": "interface_mismatch", "message": expected}
    tools, invocation = await rows(agent, task)
    assert tools == [], "nothing runs against an interface the caller did not name"
    assert who_and_why(invocation) == ("alice", "acme", "deny", "interface_mismatch")


async def test_describe_skill_may_name_no_interface_but_what_it_names_is_checked(
    agent: Agent,
) -> None:
    described = await agent.send(
        data_message({"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}})
    )
    assert state(described) == "TASK_STATE_COMPLETED", described.status
    assert result(described, "describe_skill")["skill_id"] == "lookup_inventory"
    stale = await agent.send(
        data_message(
            {
                "skill": "describe_skill",
                "skill_version": "0.9",
                "interface_digest": OTHER_DIGEST,
                "arguments": {"skill_id": "lookup_inventory"},
            }
        )
    )
    assert state(stale) == "TASK_STATE_REJECTED"
    assert error(stale)["code"] == "interface_mismatch"


async def test_arguments_off_the_input_schema_are_input_invalid_with_json_pointers(
    agent: Agent,
) -> None:
    alice = agent.caller("alice")
    arguments = {
        "resource_id": "network-resource-123",
        "condition": {"metric": "cpu", "operator": "between", "threshold": "high"},
    }
    task = await agent.invoke("evaluate_resource_condition", arguments, alice)
    assert state(task) == "TASK_STATE_REJECTED"
    found = error(task)
    assert (found["code"], found["message"]) == (
        "input_invalid",
        "arguments do not match input_schema",
    )
    assert [(d["instance_path"], d["keyword"]) for d in found["details"]] == [
        ("/condition/operator", "enum"),
        ("/condition/threshold", "type"),
        ("/condition/unit", "required"),
    ]
    assert "between" not in str(found) and "high" not in str(found), "no input value is echoed"
    tools, invocation = await rows(agent, task)
    assert tools == []
    assert who_and_why(invocation) == ("alice", "acme", "deny", "input_invalid")


# -- the handler's own checks, through the real inventory tool ----------------------------------


@pytest.mark.parametrize(
    "resource_id", ["network-resource-123", "network-resource-999999"], ids=["acme", "absent"]
)
async def test_another_tenants_resource_is_refused_like_an_absent_one(
    agent: Agent, resource_id: str
) -> None:
    gary = agent.caller("gary")
    task = await agent.invoke(
        "evaluate_resource_condition", WORKED | {"resource_id": resource_id}, gary
    )
    assert state(task) == "TASK_STATE_REJECTED"
    assert error(task) == {"code": "authorization_failed", "message": NOT_ACCESSIBLE}
    assert task.artifacts == []
    tools, invocation = await rows(agent, task)
    assert tools and all(
        who_and_why(r) == ("gary", "globex", "deny", "not found in the caller's tenant")
        for r in tools
    )
    assert all(r["resource_ids"] == [resource_id] for r in tools)
    assert who_and_why(invocation) == ("gary", "globex", "deny", "authorization_failed")


async def test_a_condition_beyond_what_is_observed_is_constraint_rejected(agent: Agent) -> None:
    alice = agent.caller("alice")
    latency = {"metric": "latency", "operator": "gt", "threshold": 5, "unit": "ms"}
    task = await agent.invoke("evaluate_resource_condition", WORKED | {"condition": latency}, alice)
    assert state(task) == "TASK_STATE_REJECTED"
    assert error(task)["code"] == "constraint_rejected"
    _, invocation = await rows(agent, task)
    assert who_and_why(invocation) == ("alice", "acme", "deny", "constraint_rejected")


async def test_the_worked_example_sends_its_record_then_its_result_and_audits_each_call(
    agent: Agent,
) -> None:
    alice = agent.caller("alice")
    interface = await agent.describe("evaluate_resource_condition", alice)
    task = await agent.invoke("evaluate_resource_condition", WORKED, alice)
    assert state(task) == "TASK_STATE_COMPLETED", task.status
    assert [a.name for a in task.artifacts] == [
        "resource-observation",
        "evaluate_resource_condition",
    ]
    answer = result(task, "evaluate_resource_condition")
    (record,) = MessageToDict(task.artifacts[0])["parts"]
    assert answer["supporting_record_refs"] == [record["data"]["record_id"]]
    tools, invocation = await rows(agent, task)
    assert [r["operation"] for r in tools] == ["resource_exists", "latest_metric"]
    for row in [*tools, invocation]:
        assert (row["principal"], row["tenant"], row["task_id"]) == ("alice", "acme", task.id)
        assert (row["skill_id"], row["skill_version"], row["interface_digest"]) == (
            "evaluate_resource_condition",
            interface["skill_version"],
            interface["interface_digest"],
        )
    for row in tools:
        assert (row["decision"], row["reason"], row["actor_chain"]) == (
            "allow",
            "ok",
            [AGENT_SUBJECT],
        )
        assert row["resource_ids"] == ["network-resource-123"]
    assert len({r["token_id"] for r in tools}) == 1 and tools[0]["token_id"]
    assert (invocation["decision"], invocation["reason"]) == ("allow", "completed")
    assert (invocation["actor_chain"], invocation["token_id"]) == ([], None)


async def test_one_caller_tokens_invocations_share_a_tool_token_and_each_names_its_task(
    agent: Agent,
) -> None:
    """The exchanged token is reused per caller token and skill; the audit still tells the
    tasks apart, and another token of the same caller gets a token of its own."""
    alice = agent.caller("alice")
    tasks = [await agent.invoke("evaluate_resource_condition", WORKED, alice) for _ in range(3)]
    other = await agent.invoke("evaluate_resource_condition", WORKED, agent.caller("alice"))
    token_ids = []
    for task in [*tasks, other]:
        assert state(task) == "TASK_STATE_COMPLETED", task.status
        tools, _ = await rows(agent, task)
        assert [r["operation"] for r in tools] == ["resource_exists", "latest_metric"]
        assert {(r["principal"], r["task_id"]) for r in tools} == {("alice", task.id)}
        (token_id,) = {r["token_id"] for r in tools}
        token_ids.append(token_id)
    assert len(set(token_ids[:3])) == 1 and token_ids[3] != token_ids[0]


async def test_an_anonymous_invocation_is_audited_as_anonymous(agent: Agent) -> None:
    task = await agent.invoke("describe_skill", {"skill_id": "lookup_inventory"})
    assert state(task) == "TASK_STATE_COMPLETED", task.status
    _, invocation = await rows(agent, task)
    assert who_and_why(invocation) == ("anonymous", None, "allow", "completed")


async def test_a_caller_accepting_only_text_gets_a_text_part_with_the_result(agent: Agent) -> None:
    task = await agent.invoke(
        "lookup_inventory",
        {"kind": "sites"},
        agent.caller("vic"),
        accepted_output_modes=["text/plain"],
    )
    assert state(task) == "TASK_STATE_COMPLETED", task.status
    (artifact,) = task.artifacts
    assert [p.WhichOneof("content") for p in artifact.parts] == ["data", "text"]
    assert "count: " in artifact.parts[1].text


async def test_a_deprecated_skill_completes_and_names_its_replacement(agent: Agent) -> None:
    carl = agent.caller("carl")
    task = await agent.invoke("link_headroom", {"link_id": "acme-lnk-00001"}, carl)
    assert state(task) == "TASK_STATE_COMPLETED", task.status
    assert "use 'check_link_capacity' instead" in task.status.message.parts[0].text
    assert MessageToDict(task)["metadata"]["deprecation"] == {
        "skill_id": "link_headroom",
        "replacement": "check_link_capacity",
    }


# -- output validation -----------------------------------------------------------------------


@pytest.mark.parametrize("broken", ["result", "record"])
async def test_an_output_off_its_schema_is_never_sent_and_the_task_fails(
    agent: Agent, broken: str
) -> None:
    task = await agent.invoke("broken_output", {"break": broken}, agent.caller("alice"))
    assert state(task) == "TASK_STATE_FAILED"
    assert error(task)["code"] == "output_invalid"
    assert error(task)["details"], "the failing member is named"
    assert task.artifacts == []
    _, invocation = await rows(agent, task)
    assert who_and_why(invocation) == ("alice", "acme", "allow", "output_invalid")


# -- admission: limits.max_concurrent per caller and skill -------------------------------------


async def running(agent: Agent, who: Principal, seconds: float) -> Task:
    task = await agent.invoke("slow_probe", {"seconds": seconds}, who, return_immediately=True)
    for _ in range(200):
        task = await agent.handler.on_get_task(GetTaskRequest(id=task.id), agent.context(who))
        if state(task) == "TASK_STATE_WORKING":
            return task
        await asyncio.sleep(0.02)
    raise AssertionError("slow_probe never started")


async def test_a_second_concurrent_invocation_over_the_limit_is_refused(agent: Agent) -> None:
    alice, carl = agent.caller("alice"), agent.caller("carl")
    first = await running(agent, alice, 20)
    second = await agent.invoke("slow_probe", {"seconds": 0}, alice)
    assert state(second) == "TASK_STATE_REJECTED"
    assert error(second) == {
        "code": "resource_limit_exceeded",
        "message": "at most 1 concurrent invocations of this skill per caller",
    }
    _, invocation = await rows(agent, second)
    assert who_and_why(invocation) == ("alice", "acme", "deny", "resource_limit_exceeded")
    other = await agent.invoke("slow_probe", {"seconds": 0}, carl)  # the limit is per caller
    assert state(other) == "TASK_STATE_COMPLETED", other.status
    cancelled = await agent.handler.on_cancel_task(
        CancelTaskRequest(id=first.id), agent.context(alice)
    )
    assert state(cancelled) == "TASK_STATE_CANCELED"
    for _ in range(200):  # the run unwinds: its slot is released, then its row is written
        if await agent.audit.query(task_id=first.id):
            break
        await asyncio.sleep(0.02)
    _, ended = await rows(agent, first)
    assert who_and_why(ended) == ("alice", "acme", "allow", "canceled")
    again = await agent.invoke("slow_probe", {"seconds": 0}, alice)
    assert state(again) == "TASK_STATE_COMPLETED", again.status
