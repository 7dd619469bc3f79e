"""Enforcement end to end: the executor re-checks entitlement, tenants stay apart in every
skill, a misbehaving handler is stopped at the tool, every invocation and tool call leaves the
expected audit rows, and the token endpoint and the audit CLI behave."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.server.events import EventQueue
from a2a.types import SendMessageRequest, TaskState, TaskStatusUpdateEvent
from google.protobuf.json_format import MessageToDict

from agent.app import AgentRuntime
from agent.interfaces import ErrorCode, SkillError
from agent.registry.loader import load_registry
from agent.routing.decision import Action, Decision, Stage
from agent.routing.router import Router
from agent.security.auth import TokenVerifier
from agent.security.credentials import (
    ACCESS_TOKEN_TYPE,
    TOKEN_EXCHANGE_GRANT,
    TOOL_ISSUER,
    LocalIssuer,
    ToolTokenVerifier,
)
from agent.security.principal import ANONYMOUS, Principal, PrincipalUser
from agent.server.executor import ROUTE_STATE_KEY, SkillExecutor
from agent.storage.audit import AuditLog, DatabaseAuditLog
from agent.storage.bindings import DatabaseBindingStore
from agent.storage.engine import make_engine
from agent.storage.schema import upgrade as upgrade_core
from db.inventory import Inventory
from db.migrate import upgrade
from netops.deployment import IDENTITY, SKILLS_DIR
from tests.a2a_helpers import BINDINGS, Outcome, binding_of, data_message, invoke
from tests.conftest import FIXED_NOW, IDENTITIES, RunningAgent
from tests.fixture_skills.faulty_handler import handler as faulty

AGENT_SUBJECT = IDENTITY.agent_subject
"""The network agent's own subject: the actor of the tool tokens its exchange issues."""

ROOT = Path(__file__).resolve().parents[2]
NETAGENT = Path(sys.executable).with_name("netagent")
JWT_TEXT = re.compile(r"eyJ[\w-]+\.[\w-]+\.[\w-]*")
NOT_ACCESSIBLE = "resource not found or not accessible"
NOT_FOUND = "not found in the caller's tenant"
OAUTH_ERRORS = frozenset(
    {
        "invalid_request",
        "invalid_client",
        "invalid_grant",
        "invalid_scope",
        "invalid_target",
        "unsupported_grant_type",
    }
)
WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
CALLER_OF = {"acme": "paula", "globex": "gary"}
OTHER = {"acme": "globex", "globex": "acme"}
ABSENT = {
    "device": "nosuch-core-99",
    "device_resource_id": "network-resource-999999",
    "interface_resource_id": "network-resource-999999:Ethernet9",
    "link": "nosuch-lnk-99999",
    "a_device": "nosuch-core-98",
    "b_device": "nosuch-core-99",
}


def principal_of_name(name: str, token: str | None = None) -> Principal:
    tenant, scopes = IDENTITIES[name]
    return Principal(name, tenant, frozenset(scopes), token)


def runtime_of(agent: RunningAgent) -> AgentRuntime:
    return agent.server.config.app.state.runtime


def agent_credential(agent: RunningAgent) -> str:
    """A service credential of this agent, minted with its own key as its exchanger does."""
    runtime = runtime_of(agent)
    verifier = TokenVerifier(agent.settings, runtime.signing_key)
    return LocalIssuer(runtime.tool_key, verifier, audiences=()).agent_credential(AGENT_SUBJECT)


def assert_no_token_text(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        rendered = json.dumps(row, default=str)
        assert not JWT_TEXT.search(rendered), f"token text in audit row {row['id']}"


@pytest.fixture(scope="module")
async def audit(enforce_agent: RunningAgent) -> AsyncIterator[AuditLog]:
    engine = make_engine(enforce_agent.settings.resolved_database_url)
    yield DatabaseAuditLog(engine)
    await engine.dispose()


async def rows_of(audit: AuditLog, task_id: str) -> list[dict[str, Any]]:
    """The task's audit rows, oldest first, once its invocation row has been written."""
    deadline = time.monotonic() + 5
    while True:
        rows = await audit.query(task_id=task_id, limit=1000)
        if any(r["tool"] == "agent" for r in rows) or time.monotonic() > deadline:
            return sorted(rows, key=lambda r: r["id"])
        await asyncio.sleep(0.02)


def why(outcome: Outcome) -> Any:
    """The error object of a failed outcome (for assertion messages), else its status."""
    try:
        return outcome.error
    except (AssertionError, KeyError):
        return outcome.task.status


_INTERFACES: dict[str, dict[str, str]] = {}


async def governed(
    agent: RunningAgent, token: str | None, skill: str, arguments: dict[str, Any], **kwargs: Any
) -> Outcome:
    """Invoke with the interface describe_skill reports (described once per skill)."""
    if skill not in _INTERFACES:
        _INTERFACES[skill] = await binding_of(agent.base_url, agent.token("paula"), skill)
    return await invoke(agent.base_url, token, skill, arguments, _INTERFACES[skill], **kwargs)


@pytest.fixture(scope="module")
async def resources(enforce_agent: RunningAgent) -> AsyncIterator[dict[str, dict[str, str]]]:
    """Per tenant: a connected link, its end devices, a device resource id and a port's."""
    engine = make_engine(enforce_agent.settings.resolved_database_url)
    found = {}
    for tenant, link_id in (("acme", "acme-lnk-00001"), ("globex", faulty.FOREIGN_LINK)):
        inventory = Inventory(engine, tenant)
        link = await inventory.link(link_id)
        assert link is not None and link["status"] == "connected"
        device = await inventory.device(link["a_device"])
        assert device is not None
        (port, *_) = await inventory.interfaces(link["a_device"])
        found[tenant] = {
            "device": link["a_device"],
            "device_resource_id": device["resource_id"],
            "interface_resource_id": port["resource_id"],
            "link": link_id,
            "a_device": link["a_device"],
            "b_device": link["b_device"],
        }
    await engine.dispose()
    yield found


# -- (a) the executor asks the policy again, whatever the router decided --------------------------


class RecordingQueue(EventQueue):
    """Collects what the executor emits."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    async def enqueue_event(self, event: Any) -> None:
        self.events.append(event)


class StubInventory:
    async def sites(self) -> list[dict[str, Any]]:
        return []


@pytest.fixture(scope="module")
async def direct(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[str, Any]]:
    """A SkillExecutor on its own (default skills, a migrated scratch database)."""
    home = tmp_path_factory.mktemp("executor")
    url = f"sqlite+aiosqlite:///{home / 'netagent.db'}"
    await upgrade_core(url)
    await upgrade(url)
    engine = make_engine(url)
    registry = load_registry(SKILLS_DIR)
    built: list[tuple[str, Any]] = []

    def tools(name: str, grant: Any) -> Any:
        built.append((name, grant))
        return StubInventory()

    executor = SkillExecutor(
        registry,
        tools,
        Router(registry),
        DatabaseBindingStore(engine),
        audit=DatabaseAuditLog(engine),
        clock=lambda: FIXED_NOW,
    )
    yield {
        "executor": executor,
        "registry": registry,
        "built": built,
        "audit": DatabaseAuditLog(engine),
    }
    await engine.dispose()


REFUSED_USES = [
    pytest.param("vic", "evaluate_resource_condition", WORKED, id="vic-lacks-assurance.read"),
    pytest.param("alice", "plan_link_upgrade", {}, id="alice-lacks-capacity.plan-and-preview"),
    pytest.param("gary", "plan_link_upgrade", {}, id="gary-is-not-an-acme-tenant"),
    pytest.param(None, "lookup_inventory", {"kind": "sites"}, id="anonymous"),
    pytest.param("vic", "check_link_capacity", {"link_id": "acme-lnk-00001"}, id="vic-capacity"),
]


@pytest.mark.parametrize(("name", "skill", "arguments"), REFUSED_USES)
def test_enforce_refuses_a_principal_the_policy_does_not_entitle(
    direct: dict[str, Any], name: str | None, skill: str, arguments: dict[str, Any]
) -> None:
    capability = direct["registry"].get(skill)
    who = ANONYMOUS if name is None else principal_of_name(name)
    with pytest.raises(SkillError) as caught:
        SkillExecutor.enforce(capability, who)
    assert caught.value.code is ErrorCode.AUTHORIZATION_FAILED


@pytest.mark.parametrize(
    ("name", "skill"),
    [
        ("alice", "lookup_inventory"),
        ("paula", "plan_link_upgrade"),
        ("gary", "evaluate_resource_condition"),
        ("vic", "lookup_inventory"),
    ],
)
def test_enforce_lets_an_entitled_principal_through(
    direct: dict[str, Any], name: str, skill: str
) -> None:
    SkillExecutor.enforce(direct["registry"].get(skill), principal_of_name(name))


def test_enforce_refuses_a_removed_skill_to_everyone(direct: dict[str, Any]) -> None:
    with pytest.raises(SkillError):
        SkillExecutor.enforce(direct["registry"].get("port_report"), principal_of_name("paula"))


async def run_decision(
    direct: dict[str, Any], who: Principal, skill: str, arguments: dict[str, Any]
) -> tuple[RequestContext, list[Any]]:
    """Drive execute() with a hand-made routing decision, as if the router had chosen it."""
    capability = direct["registry"].get(skill)
    decision = Decision(Action.RUN, Stage.EXPLICIT, capability, arguments)
    message = data_message({"skill": skill, "arguments": arguments})
    call_context = ServerCallContext(user=PrincipalUser(who), state={ROUTE_STATE_KEY: decision})
    context = RequestContext(call_context=call_context, request=SendMessageRequest(message=message))
    queue = RecordingQueue()
    await direct["executor"].execute(context, queue)
    return context, queue.events


def statuses(events: list[Any]) -> list[str]:
    return [TaskState.Name(e.status.state) for e in events if isinstance(e, TaskStatusUpdateEvent)]


@pytest.mark.parametrize(("name", "skill", "arguments"), REFUSED_USES)
async def test_execute_rejects_a_decision_the_principal_may_not_run(
    direct: dict[str, Any], name: str | None, skill: str, arguments: dict[str, Any]
) -> None:
    who = ANONYMOUS if name is None else principal_of_name(name)
    built_before = len(direct["built"])
    context, events = await run_decision(direct, who, skill, arguments)
    assert statuses(events) == ["TASK_STATE_REJECTED"]
    final = events[-1]
    (part,) = final.status.message.parts
    error = MessageToDict(part)["data"]
    assert error["code"] == "authorization_failed"
    assert error["message"].startswith(f"skill '{skill}' needs scopes")
    assert len(direct["built"]) == built_before, "no tool may be built for a refused caller"
    (row,) = await direct["audit"].query(task_id=str(context.task_id))
    assert (row["tool"], row["operation"]) == ("agent", "invoke")
    assert (row["decision"], row["reason"]) == ("deny", "authorization_failed")
    assert row["skill_id"] == skill
    assert row["principal"] == (name or "anonymous")


async def test_execute_runs_the_same_decision_for_an_entitled_principal(
    direct: dict[str, Any],
) -> None:
    """The control: the harness itself does not reject everything."""
    context, events = await run_decision(
        direct, principal_of_name("alice"), "lookup_inventory", {"kind": "sites"}
    )
    assert statuses(events)[-1] == "TASK_STATE_COMPLETED"
    assert direct["built"] and direct["built"][-1][0] == "inventory"
    grant = direct["built"][-1][1]
    assert grant.scopes == frozenset({"inventory.read"})
    (row,) = await direct["audit"].query(task_id=str(context.task_id))
    assert (row["decision"], row["reason"]) == ("allow", "completed")


# -- (b) tenants stay apart in every skill that names a resource ----------------------------------


def _cases(r: dict[str, str]) -> dict[str, tuple[str, dict[str, Any]]]:
    condition = {"metric": "cpu", "operator": "gte", "threshold": 101, "unit": "percent"}
    return {
        "lookup-interfaces-by-name": (
            "lookup_inventory",
            {"kind": "interfaces", "device": r["device"]},
        ),
        "lookup-interfaces-by-id": (
            "lookup_inventory",
            {"kind": "interfaces", "device": r["device_resource_id"]},
        ),
        "lookup-links-by-device": ("lookup_inventory", {"kind": "links", "device": r["device"]}),
        "evaluate-by-resource-id": (
            "evaluate_resource_condition",
            {"resource_id": r["device_resource_id"], "condition": condition},
        ),
        "evaluate-by-device-name": (
            "evaluate_resource_condition",
            {"resource_id": r["device"], "condition": condition},
        ),
        "evaluate-by-port": (
            "evaluate_resource_condition",
            {"resource_id": r["interface_resource_id"], "condition": condition},
        ),
        "capacity-by-link": ("check_link_capacity", {"link_id": r["link"]}),
        "capacity-by-device-pair": (
            "check_link_capacity",
            {"a_device": r["a_device"], "b_device": r["b_device"]},
        ),
        "headroom": ("link_headroom", {"link_id": r["link"]}),
    }


CASES = list(_cases(ABSENT))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("tenant", ["acme", "globex"])
async def test_another_tenants_resource_is_refused_like_an_absent_one(
    enforce_agent: RunningAgent,
    audit: AuditLog,
    resources: dict[str, dict[str, str]],
    tenant: str,
    case: str,
) -> None:
    caller = CALLER_OF[tenant]
    token = enforce_agent.token(caller)
    skill, foreign_args = _cases(resources[OTHER[tenant]])[case]
    _, absent_args = _cases(ABSENT)[case]
    foreign = await governed(enforce_agent, token, skill, foreign_args)
    absent = await governed(enforce_agent, token, skill, absent_args)
    assert foreign.state == absent.state == "TASK_STATE_REJECTED"
    assert (
        foreign.error == absent.error == {"code": "authorization_failed", "message": NOT_ACCESSIBLE}
    )
    assert not foreign.artifacts()
    rows = await rows_of(audit, foreign.task.id)
    invoke_row = rows[-1]
    assert (invoke_row["tool"], invoke_row["decision"], invoke_row["reason"]) == (
        "agent",
        "deny",
        "authorization_failed",
    )
    assert (invoke_row["principal"], invoke_row["tenant"]) == (caller, tenant)
    tool_rows = rows[:-1]
    assert tool_rows, "the refusal came from the gated inventory"
    for row in tool_rows:
        assert (row["principal"], row["tenant"]) == (caller, tenant)
        assert (row["decision"], row["reason"]) == ("deny", NOT_FOUND)
        assert row["actor_chain"] == [AGENT_SUBJECT]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("tenant", ["acme", "globex"])
async def test_the_callers_own_resource_is_served(
    enforce_agent: RunningAgent, resources: dict[str, dict[str, str]], tenant: str, case: str
) -> None:
    """The control for the matrix above: same skills, same caller, own resources."""
    skill, arguments = _cases(resources[tenant])[case]
    outcome = await governed(
        enforce_agent, enforce_agent.token(CALLER_OF[tenant]), skill, arguments
    )
    if case == "evaluate-by-port":  # authorized; ports simply have no cpu telemetry
        assert outcome.state == "TASK_STATE_FAILED", why(outcome)
        assert outcome.error["code"] == "execution_failed"
        assert outcome.error["message"].startswith("no cpu observation")
        return
    assert outcome.state == "TASK_STATE_COMPLETED", why(outcome)


async def test_plan_link_upgrade_refuses_another_tenants_link_like_an_absent_one(
    enforce_agent: RunningAgent, audit: AuditLog, resources: dict[str, dict[str, str]]
) -> None:
    """plan_link_upgrade takes a check_link_capacity result; only its link_id is swapped."""
    token = enforce_agent.token("paula")
    check = await governed(
        enforce_agent, token, "check_link_capacity", {"link_id": resources["acme"]["link"]}
    )
    assert check.state == "TASK_STATE_COMPLETED", why(check)
    checked = check.result("check_link_capacity")
    own = await governed(enforce_agent, token, "plan_link_upgrade", checked)
    assert own.state == "TASK_STATE_COMPLETED", why(own)
    assert own.result("plan_link_upgrade")["link_id"] == resources["acme"]["link"]
    foreign_args = checked | {"link_id": resources["globex"]["link"]}
    foreign = await governed(enforce_agent, token, "plan_link_upgrade", foreign_args)
    absent_args = checked | {"link_id": ABSENT["link"]}
    absent = await governed(enforce_agent, token, "plan_link_upgrade", absent_args)
    assert foreign.state == absent.state == "TASK_STATE_REJECTED"
    assert (
        foreign.error == absent.error == {"code": "authorization_failed", "message": NOT_ACCESSIBLE}
    )
    assert not foreign.artifacts()
    rows = await rows_of(audit, foreign.task.id)
    tools = [r for r in rows if r["tool"] == "inventory"]
    assert tools and all((r["decision"], r["tenant"]) == ("deny", "acme") for r in tools)
    assert all(r["resource_ids"] == [resources["globex"]["link"]] for r in tools)
    own_rows = await rows_of(audit, own.task.id)
    assert {r["tenant"] for r in own_rows} == {"acme"}
    assert resources["globex"]["link"] not in json.dumps(own_rows, default=str)


async def test_plan_link_upgrade_is_refused_to_the_other_tenant(
    enforce_agent: RunningAgent, audit: AuditLog
) -> None:
    token = enforce_agent.token("gary")
    interface = await binding_of(
        enforce_agent.base_url, enforce_agent.token("paula"), "plan_link_upgrade"
    )
    outcome = await invoke(enforce_agent.base_url, token, "plan_link_upgrade", {}, interface)
    assert outcome.state == "TASK_STATE_REJECTED"
    # Not advertised to a globex caller at all, so the router refuses before the executor.
    assert outcome.error["code"] == "skill_not_advertised"
    rows = await rows_of(audit, outcome.task.id)
    assert [r["tool"] for r in rows] == ["agent"]
    assert (rows[0]["principal"], rows[0]["tenant"], rows[0]["decision"]) == (
        "gary",
        "globex",
        "deny",
    )


# -- the faulty handler is stopped at the tool ----------------------------------------------------


@pytest.mark.parametrize(
    ("caller", "target"), [("alice", faulty.FOREIGN_LINK), ("gary", "acme-lnk-00001")]
)
async def test_a_handler_asking_for_another_tenants_link_gets_nothing(
    enforce_agent: RunningAgent, audit: AuditLog, caller: str, target: str
) -> None:
    tenant = IDENTITIES[caller][0]
    outcome = await governed(
        enforce_agent,
        enforce_agent.token(caller),
        "faulty_handler",
        {"attack": "other_tenant", "link_id": target},
    )
    assert outcome.state == "TASK_STATE_COMPLETED", why(outcome)
    result = outcome.result("faulty_handler")
    assert result["link"] is None
    assert result["visible_link_ids"]
    assert all(link.startswith(f"{tenant}-") for link in result["visible_link_ids"])
    rows = await rows_of(audit, outcome.task.id)
    tools = [r for r in rows if r["tool"] == "inventory"]
    assert [(r["operation"], r["decision"]) for r in tools] == [
        ("link", "deny"),
        ("links", "allow"),
    ]
    denied = tools[0]
    assert denied["reason"] == NOT_FOUND and denied["resource_ids"] == [target]
    assert (denied["principal"], denied["tenant"]) == (caller, tenant)
    assert denied["skill_id"] == "faulty_handler"
    assert denied["actor_chain"] == [AGENT_SUBJECT]
    assert len({r["token_id"] for r in tools}) == 1


async def test_a_handler_presenting_the_agents_own_credential_is_refused(
    enforce_agent: RunningAgent, audit: AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    credential = agent_credential(enforce_agent)
    # The credential is genuine: the exchange accepts it as the agent's actor token.
    runtime = runtime_of(enforce_agent)
    issuer = LocalIssuer(
        runtime.tool_key,
        TokenVerifier(enforce_agent.settings, runtime.signing_key),
        audiences={"inventory"},
    )
    assert issuer.exchange_tokens(
        subject_token=enforce_agent.token("alice"),
        actor_token=credential,
        audience="inventory",
        scopes=["inventory.read"],
    ).access_token
    monkeypatch.setitem(faulty.STOLEN, "credential", credential)
    outcome = await governed(
        enforce_agent,
        enforce_agent.token("alice"),
        "faulty_handler",
        {"attack": "service_credential"},
    )
    assert outcome.state == "TASK_STATE_REJECTED"
    assert outcome.error == {
        "code": "authorization_failed",
        "message": "tool access refused for this caller",
    }
    assert not outcome.artifacts("faulty_handler")
    jti = jwt.decode(credential, options={"verify_signature": False})["jti"]
    refused = [
        r
        for r in await audit.query(principal=f"unverified:{AGENT_SUBJECT}", limit=1000)
        if r["token_id"] == jti
    ]
    (row,) = refused
    assert (row["tool"], row["operation"], row["decision"]) == ("inventory", "links", "deny")
    assert row["reason"] == "token refused: tool token is for another audience"
    assert row["tenant"] is None
    assert_no_token_text([row])
    rows = await rows_of(audit, outcome.task.id)
    assert [r["tool"] for r in rows] == ["agent"], "the credential never reached the inventory"
    assert (rows[0]["principal"], rows[0]["reason"]) == ("alice", "authorization_failed")


async def test_a_handler_asking_for_an_undeclared_tool_fails(
    enforce_agent: RunningAgent, audit: AuditLog
) -> None:
    outcome = await governed(
        enforce_agent, enforce_agent.token("alice"), "faulty_handler", {"attack": "undeclared_tool"}
    )
    assert outcome.state == "TASK_STATE_FAILED"
    assert outcome.error == {
        "code": "execution_failed",
        "message": "skill declares no tool 'telemetry'",
    }
    rows = await rows_of(audit, outcome.task.id)
    assert [(r["tool"], r["reason"]) for r in rows] == [("agent", "execution_failed")]
    assert (rows[0]["principal"], rows[0]["tenant"]) == ("alice", "acme")


@pytest.mark.parametrize(
    ("token_scopes", "anonymous"),
    [(["assurance.read"], False), ([], False), (None, True)],
    ids=["no-declared-scope", "no-scopes", "anonymous"],
)
async def test_a_caller_without_the_tools_scope_gets_no_tool_token(
    enforce_agent: RunningAgent, audit: AuditLog, token_scopes: list[str] | None, anonymous: bool
) -> None:
    """faulty_handler needs no scope to run, but its tool needs inventory.read."""
    token = None if anonymous else enforce_agent.token("alice", scopes=token_scopes)
    outcome = await governed(enforce_agent, token, "faulty_handler", {"attack": "other_tenant"})
    assert outcome.state == "TASK_STATE_REJECTED"
    assert outcome.error == {
        "code": "authorization_failed",
        "message": "tool access refused for this caller",
    }
    rows = await rows_of(audit, outcome.task.id)
    assert [r["tool"] for r in rows] == ["agent"]
    assert rows[0]["principal"] == ("anonymous" if anonymous else "alice")


# -- (c) N invocations, exactly the expected audit rows -------------------------------------------


async def test_each_invocation_leaves_exactly_its_audit_rows(
    enforce_agent: RunningAgent, audit: AuditLog
) -> None:
    plan = [("alice", "lookup_inventory", {"kind": "sites"})] * 3
    plan += [("gary", "lookup_inventory", {"kind": "sites"})] * 2
    plan += [("alice", "evaluate_resource_condition", WORKED)] * 3
    expected_tools = {
        "lookup_inventory": Counter({"sites": 1}),
        "evaluate_resource_condition": Counter({"resource_exists": 1, "latest_metric": 1}),
    }
    token_ids: list[str] = []
    for index, (caller, skill, arguments) in enumerate(plan):
        token = enforce_agent.token(caller)
        binding = BINDINGS[index % 2]
        outcome = await governed(enforce_agent, token, skill, arguments, binding=binding)
        assert outcome.state == "TASK_STATE_COMPLETED", why(outcome)
        tenant = IDENTITIES[caller][0]
        interface = _INTERFACES[skill]
        rows = await rows_of(audit, outcome.task.id)
        invocations = [r for r in rows if r["tool"] == "agent"]
        tools = [r for r in rows if r["tool"] != "agent"]
        (row,) = invocations
        assert (row["operation"], row["decision"], row["reason"]) == (
            "invoke",
            "allow",
            "completed",
        )
        assert (row["principal"], row["tenant"]) == (caller, tenant)
        assert (row["skill_id"], row["skill_version"], row["interface_digest"]) == (
            skill,
            interface["skill_version"],
            interface["interface_digest"],
        )
        assert row["actor_chain"] == [] and row["token_id"] is None
        assert Counter(r["operation"] for r in tools) == expected_tools[skill]
        for tool_row in tools:
            assert tool_row["tool"] == "inventory"
            assert (tool_row["principal"], tool_row["tenant"]) == (caller, tenant)
            assert (tool_row["decision"], tool_row["reason"]) == ("allow", "ok")
            assert tool_row["actor_chain"] == [AGENT_SUBJECT]
            assert tool_row["skill_id"] == skill
            assert tool_row["skill_version"] == interface["skill_version"]
            assert tool_row["interface_digest"] == interface["interface_digest"]
            assert tool_row["task_id"] == outcome.task.id
            if skill == "evaluate_resource_condition":
                assert tool_row["resource_ids"] == [WORKED["resource_id"]]
        task_token_ids = {r["token_id"] for r in tools}
        assert len(task_token_ids) == 1 and None not in task_token_ids
        token_ids.extend(task_token_ids)
        assert_no_token_text(rows)
        assert token not in json.dumps(rows, default=str)
    assert len(set(token_ids)) == len(plan), "one fresh tool token per invocation"


# -- (d) POST /oauth/token over HTTP --------------------------------------------------------------


def _form(agent: RunningAgent, **changes: str | None) -> dict[str, str]:
    form: dict[str, str | None] = {
        "grant_type": TOKEN_EXCHANGE_GRANT,
        "subject_token": agent.token("alice"),
        "subject_token_type": ACCESS_TOKEN_TYPE,
        "actor_token": agent_credential(agent),
        "actor_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "audience": "inventory",
        "scope": "assurance.read capacity.plan",
        "ctx_task_id": "task-42",
        "ctx_skill_id": "evaluate_resource_condition",
    }
    form.update(changes)
    return {k: v for k, v in form.items() if v is not None}


async def post_token(agent: RunningAgent, **kwargs: Any) -> httpx.Response:
    async with httpx.AsyncClient(base_url=agent.base_url, timeout=10) as client:
        return await client.post("/oauth/token", **kwargs)


async def test_the_token_endpoint_exchanges(enforce_agent: RunningAgent) -> None:
    response = await post_token(enforce_agent, data=_form(enforce_agent))
    assert response.status_code == 200, response.text
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["pragma"] == "no-cache"
    body = response.json()
    assert set(body) == {"access_token", "issued_token_type", "token_type", "expires_in", "scope"}
    assert body["issued_token_type"] == ACCESS_TOKEN_TYPE
    assert body["token_type"] == "Bearer"
    assert 0 < body["expires_in"] <= 300
    assert body["scope"] == "assurance.read"
    runtime = runtime_of(enforce_agent)
    verifier = ToolTokenVerifier(
        "inventory", TOOL_ISSUER, key=runtime.tool_key.private_key.public_key()
    )
    claims = verifier.verify(body["access_token"])
    assert (claims.subject, claims.tenant) == ("alice", "acme")
    assert claims.scopes == frozenset({"assurance.read"})
    assert claims.actor_chain == (AGENT_SUBJECT,)
    assert dict(claims.context) == {"task_id": "task-42", "skill_id": "evaluate_resource_condition"}


def _error_cases(agent: RunningAgent) -> dict[str, tuple[dict[str, Any], int, str]]:
    form = _form(agent)
    return {
        "password-grant": (
            {"data": _form(agent, grant_type="password")},
            400,
            "unsupported_grant_type",
        ),
        "no-grant-type": ({"data": _form(agent, grant_type=None)}, 400, "unsupported_grant_type"),
        "no-subject-token": ({"data": _form(agent, subject_token=None)}, 400, "invalid_request"),
        "no-actor-token": ({"data": _form(agent, actor_token=None)}, 400, "invalid_request"),
        "no-audience": ({"data": _form(agent, audience=None)}, 400, "invalid_request"),
        "empty-subject-token": ({"data": _form(agent, subject_token="")}, 400, "invalid_request"),
        "odd-token-type": (
            {"data": _form(agent, subject_token_type="urn:x:saml")},
            400,
            "invalid_request",
        ),
        "json-body": ({"json": form}, 400, "invalid_request"),
        "not-utf8": (
            {
                "content": b"grant_type=\xff\xfe",
                "headers": {"content-type": "application/x-www-form-urlencoded"},
            },
            400,
            "invalid_request",
        ),
        "callers-token-as-actor": (
            {"data": _form(agent, actor_token=agent.token("paula"))},
            401,
            "invalid_client",
        ),
        "garbage-actor": ({"data": _form(agent, actor_token="garbage")}, 401, "invalid_client"),
        "no-common-scope": ({"data": _form(agent, scope="capacity.plan")}, 400, "invalid_scope"),
        "no-scope": ({"data": _form(agent, scope=None)}, 400, "invalid_scope"),
        "unknown-audience": ({"data": _form(agent, audience="telemetry")}, 400, "invalid_target"),
        "expired-subject": (
            {"data": _form(agent, subject_token=agent.token("alice", ttl=-600))},
            400,
            "invalid_grant",
        ),
        "garbage-subject": ({"data": _form(agent, subject_token="x.y.z")}, 400, "invalid_grant"),
    }


ERROR_CASES = [
    "password-grant",
    "no-grant-type",
    "no-subject-token",
    "no-actor-token",
    "no-audience",
    "empty-subject-token",
    "odd-token-type",
    "json-body",
    "not-utf8",
    "callers-token-as-actor",
    "garbage-actor",
    "no-common-scope",
    "no-scope",
    "unknown-audience",
    "expired-subject",
    "garbage-subject",
]


@pytest.mark.parametrize("case", ERROR_CASES)
async def test_the_token_endpoint_refuses_with_the_oauth_error(
    enforce_agent: RunningAgent, case: str
) -> None:
    request, status, error = _error_cases(enforce_agent)[case]
    response = await post_token(enforce_agent, **request)
    assert response.status_code == status, response.text
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["error"] == error
    assert isinstance(body["error_description"], str)
    assert "access_token" not in body
    assert "eyJ" not in response.text


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"&&&=&",
        b"grant_type",
        b"%",
        b"grant_type=" + TOKEN_EXCHANGE_GRANT.encode() + b"&subject_token=%00&actor_token=%ff"
        b"&audience=inventory",
        b"a=" + b"x" * (70 * 1024),
    ],
    ids=["empty", "ampersands", "bare-key", "lone-percent", "nul-and-bad-escape", "too-large"],
)
async def test_the_token_endpoint_never_answers_500(
    enforce_agent: RunningAgent, content: bytes
) -> None:
    response = await post_token(
        enforce_agent,
        content=content,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert 400 <= response.status_code < 500, response.text
    assert response.headers["cache-control"] == "no-store"
    assert response.json()["error"] in OAUTH_ERRORS


# -- (e) the audit CLI reads what the agent wrote ------------------------------------------------


def netagent(agent: RunningAgent, *args: str) -> subprocess.CompletedProcess[str]:
    environment = os.environ | {
        "NETAGENT_HOME": str(agent.settings.home),
        "NETAGENT_SKILLS_DIR": str(agent.settings.home / "skills"),
        "COLUMNS": "220",
        "PYTHONPATH": str(ROOT),  # the faulty handler's module lives under tests/
        "NETAGENT_DATABASE_URL": agent.settings.resolved_database_url,
    }
    return subprocess.run(
        [str(NETAGENT), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
        check=False,
    )


async def test_netagent_audit_prints_a_tasks_rows(
    enforce_agent: RunningAgent, audit: AuditLog
) -> None:
    outcome = await governed(
        enforce_agent, enforce_agent.token("alice"), "evaluate_resource_condition", WORKED
    )
    assert outcome.state == "TASK_STATE_COMPLETED"
    expected = await rows_of(audit, outcome.task.id)
    run = await asyncio.to_thread(
        netagent, enforce_agent, "audit", "--json", "--task", outcome.task.id
    )
    assert run.returncode == 0, run.stderr
    printed = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    assert [p["id"] for p in printed] == [r["id"] for r in reversed(expected)]
    assert [(p["tool"], p["operation"]) for p in printed] == [
        ("agent", "invoke"),
        ("inventory", "latest_metric"),
        ("inventory", "resource_exists"),
    ]
    for line in printed:
        assert (line["principal"], line["tenant"], line["task_id"]) == (
            "alice",
            "acme",
            outcome.task.id,
        )
    assert not JWT_TEXT.search(run.stdout)


@pytest.mark.parametrize("subject", ["[/x]", "[red]loud[/red]", ":smile:", "[/]", "[link=x]y"])
async def test_netagent_audit_prints_a_callers_name_as_text(
    enforce_agent: RunningAgent, subject: str
) -> None:
    """A caller's name is data: Rich's markup in it stopped `netagent audit` with a traceback
    (so a token holder could hide the audit trail from the operator's table)."""
    token = enforce_agent.token(subject, tenant="acme", scopes=["assurance.read"])
    outcome = await governed(enforce_agent, token, "evaluate_resource_condition", WORKED)
    assert outcome.state == "TASK_STATE_COMPLETED"
    run = await asyncio.to_thread(netagent, enforce_agent, "audit", "--task", outcome.task.id)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert subject in run.stdout  # "who" folds at 18 characters: "<subject>@ac", "me"
    usage = await asyncio.to_thread(netagent, enforce_agent, "usage")
    assert usage.returncode == 0, usage.stdout + usage.stderr


async def test_netagent_usage_shows_a_deprecated_skill_still_called(
    enforce_agent: RunningAgent, audit: AuditLog
) -> None:
    for caller in ("alice", "carl"):
        outcome = await governed(
            enforce_agent,
            enforce_agent.token(caller),
            "link_headroom",
            {"link_id": "acme-lnk-00001"},
        )
        assert outcome.state == "TASK_STATE_COMPLETED", why(outcome)
        await rows_of(audit, outcome.task.id)
    refused = await governed(  # another tenant's link: refused, and counted apart
        enforce_agent, enforce_agent.token("alice"), "link_headroom", {"link_id": "nosuch-lnk-1"}
    )
    assert refused.state == "TASK_STATE_REJECTED", why(refused)
    await rows_of(audit, refused.task.id)
    run = await asyncio.to_thread(netagent, enforce_agent, "usage")
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stdout.splitlines() if "link_headroom" in line]
    assert lines, run.stdout
    cells = [re.split(r"\s{2,}", line.strip()) for line in lines]  # columns: 2+ spaces apart
    assert all(row[1] == "deprecated" for row in cells), cells
    calls, denied = sum(int(row[3]) for row in cells), sum(int(row[4]) for row in cells)
    invocations = [
        r
        for r in await audit.query(limit=100_000)
        if r["tool"] == "agent" and r["skill_id"] == "link_headroom"
    ]
    assert calls == sum(r["decision"] == "allow" for r in invocations) >= 2
    assert denied == sum(r["decision"] == "deny" for r in invocations) >= 1
    assert max(int(row[5]) for row in cells) >= 2, "alice and carl are two callers"
    never = [line for line in run.stdout.splitlines() if "port_report" in line]
    assert never and "never" in never[0]
