"""The schema-governed client (agent/client/) against our agent and against a lying one.

Our agent (the session ``agent`` fixture) shows the honest paths over both bindings: the
eleven steps, streaming, cache reuse, local refusals that send nothing, remote refusals,
domain handlers and composition. The bare a2a-sdk agent in ``tests/lying_agent.py`` gets one
thing wrong at a time, and each lie must be caught locally with its own typed error.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent.client import (
    CompositionRefusedError,
    CorrelationStore,
    GovernedClient,
    InputInvalidError,
    InterfaceCache,
    InterfaceInvalidError,
    Invocation,
    OutputInvalidError,
    Record,
    RemoteTaskError,
    SkillNotAdvertisedError,
    chain,
    composition_differences,
)
from agent.interfaces import ErrorCode, digest_of
from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from agent.storage.schema import upgrade
from tests.a2a_helpers import BINDINGS
from tests.conftest import IDENTITIES, RunningAgent
from tests.lying_agent import (
    OUTPUT_SCHEMA_URI,
    RECORD_KIND,
    RECORD_SCHEMA_URI,
    UNDECLARED_KIND,
    WORKED_RECORD,
    WORKED_RESULT,
    WRONG_DIGEST,
    LyingAgent,
)

SKILL = "evaluate_resource_condition"
WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
WITHOUT_UNIT = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80},
}
OTHER_SCHEMA_URI = "urn:netops-agent:schema:check-link-capacity:output"
HOT_LINK = "acme-lnk-00002"
ENDPOINT_PATHS = {"JSONRPC": "/a2a/jsonrpc", "HTTP+JSON": "/a2a/rest"}


class Wire:
    """An httpx client that remembers every request, so a test can see what was sent."""

    def __init__(self, token: str | None = None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.requests: list[tuple[str, str, Any]] = []
        self.http = httpx.AsyncClient(
            headers=headers, timeout=30, event_hooks={"request": [self._remember]}
        )

    async def _remember(self, request: httpx.Request) -> None:
        body = (await request.aread()).decode() if request.method == "POST" else ""
        self.requests.append((request.method, request.url.path, json.loads(body or "null")))

    def skill_requests(self) -> list[dict[str, Any]]:
        """The skill requests (Data Parts with a ``skill`` member) in the order they went out."""
        found: list[dict[str, Any]] = []

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                data = node.get("data")
                if isinstance(data, dict) and "skill" in data:
                    found.append(data)
                    return
                for value in node.values():
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)

        for _, _, body in self.requests:
            walk(body)
        return found

    def skills_sent(self) -> list[str]:
        return [str(r["skill"]) for r in self.skill_requests()]


@pytest.fixture
async def wire_factory() -> AsyncIterator[Any]:
    made: list[Wire] = []

    def make(token: str | None = None) -> Wire:
        made.append(Wire(token))
        return made[-1]

    yield make
    for wire in made:
        await wire.http.aclose()


def scoped_token(agent: RunningAgent, subject: str, like: str = "alice") -> str:
    """A token for a subject of its own (so its audit rows are its own), with ``like``'s rights."""
    tenant, scopes = IDENTITIES[like]
    return agent.token(subject, tenant=tenant, scopes=scopes)


Rows = list[dict[str, Any]]


async def invoke_rows(agent: RunningAgent, subject: str, skill: str = SKILL) -> Rows:
    """The agent's audit rows for invocations of ``skill`` by ``subject``."""
    engine = make_engine(agent.settings.resolved_database_url)
    try:
        rows = await DatabaseAuditLog(engine).query(principal=subject)
    finally:
        await engine.dispose()
    return [r for r in rows if r["operation"] == "invoke" and r["skill_id"] == skill]


async def wait_for_rows(agent: RunningAgent, subject: str, count: int) -> Rows:
    """Audit rows are written as the task ends; give the agent a moment."""
    for _ in range(100):
        rows = await invoke_rows(agent, subject)
        if len(rows) >= count:
            return rows
        await asyncio.sleep(0.05)
    return await invoke_rows(agent, subject)


def assert_worked_example(invocation: Invocation) -> Record:
    assert invocation.output["result"] == "condition_not_met"
    assert invocation.output["observed_value"] == 42
    assert invocation.output["unit"] == "percent"
    (record,) = invocation.records
    assert record.kind == RECORD_KIND
    assert record.schema_uri == RECORD_SCHEMA_URI
    assert invocation.output["supporting_record_refs"] == [record.artifact_id]
    assert record.data["record_id"] == record.artifact_id
    assert record.data["observed_at"] == "2026-08-11T12:00:01Z"
    assert record.data["value"] == 42 and record.data["unit"] == "percent"
    assert record.data["resource_id"] == "network-resource-123"
    return record


# -- our agent: the honest paths over both bindings ----------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_describe_and_invoke_the_worked_example(agent, binding: str) -> None:
    async with GovernedClient(agent.base_url, token=agent.token("alice"), binding=binding) as c:
        interface = await c.describe(SKILL)
        assert interface.skill_id == SKILL and interface.skill_version == "1.0"
        assert interface.interface_digest == digest_of(interface.document)
        assert interface.interface_url == agent.base_url + ENDPOINT_PATHS[binding]
        assert interface.schema_uri("output") == OUTPUT_SCHEMA_URI
        assert interface.schema_uri("record", RECORD_KIND) == RECORD_SCHEMA_URI

        invocation = await c.invoke(SKILL, WORKED)

    assert_worked_example(invocation)
    assert invocation.interface is interface  # the cached, verified document was used
    assert invocation.endpoint == interface.interface_url
    assert invocation.task_id and invocation.context_id
    assert invocation.output_schema_uri == OUTPUT_SCHEMA_URI


@pytest.mark.parametrize("binding", BINDINGS)
async def test_streaming_yields_the_record_before_the_invocation(agent, binding: str) -> None:
    async with GovernedClient(agent.base_url, token=agent.token("alice"), binding=binding) as c:
        items = [item async for item in c.stream(SKILL, WORKED)]

    assert [type(i) for i in items] == [Record, Invocation]
    record, invocation = items
    assert isinstance(invocation, Invocation)
    assert invocation.records == [record]
    assert assert_worked_example(invocation) == record


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_cache_saves_describe_calls_but_never_card_fetches(agent, binding: str) -> None:
    async with GovernedClient(agent.base_url, token=agent.token("alice"), binding=binding) as c:
        first = await c.invoke(SKILL, WORKED)
        assert (c.stats.card_fetches, c.stats.describe_calls, c.stats.invocations) == (1, 1, 1)
        second = await c.invoke(SKILL, WORKED)
        assert (c.stats.card_fetches, c.stats.describe_calls, c.stats.invocations) == (2, 1, 2)
        assert len(c.cache) == 1

    assert first.interface is second.interface
    assert first.task_id != second.task_id


async def test_a_shared_cache_is_keyed_by_target_identity(agent) -> None:
    cache = InterfaceCache()
    token = agent.token("alice")
    async with (
        GovernedClient(agent.base_url, token=token, cache=cache) as rpc,
        GovernedClient(agent.base_url, token=token, cache=cache) as rpc_again,
        GovernedClient(agent.base_url, token=token, binding="HTTP+JSON", cache=cache) as rest,
    ):
        await rpc.invoke(SKILL, WORKED)
        await rpc_again.invoke(SKILL, WORKED)  # same card URL and interface URL: reused
        await rest.invoke(SKILL, WORKED)  # another interface URL: another target identity
        assert (rpc.stats.describe_calls, rpc_again.stats.describe_calls) == (1, 0)
        assert rest.stats.describe_calls == 1
    assert len(cache) == 2


# -- cache invalidation ---------------------------------------------------------------------


async def test_cache_get_is_bound_to_the_advertised_version_and_digest() -> None:
    with LyingAgent("honest") as liar:
        async with GovernedClient(liar.base_url) as client:
            interface = await client.describe(SKILL)
    cache = InterfaceCache()
    cache.put(interface)
    key = (interface.card_url, interface.interface_url, SKILL)
    version, digest = liar.advertised
    assert cache.get(*key, version, digest) is interface
    assert cache.get(*key, "1.1", digest) is None
    assert cache.get(*key, version, WRONG_DIGEST) is None
    card_url, interface_url = key[:2]
    assert cache.get(card_url, interface_url + "/", SKILL, version, digest) is None
    assert cache.get("http://elsewhere/card", interface_url, SKILL, version, digest) is None
    assert cache.get(*key[:2], "describe_skill", version, digest) is None


async def test_a_changed_card_means_a_fresh_describe_skill() -> None:
    with LyingAgent("honest") as liar:
        async with GovernedClient(liar.base_url) as client:
            await client.invoke(SKILL, WORKED)
            await client.invoke(SKILL, WORKED)
            assert client.stats.describe_calls == 1
            old_version, old_digest = liar.advertised

            liar.set_skill_version("1.1")
            new_version, new_digest = liar.advertised
            assert (new_version, new_digest) != (old_version, old_digest)
            invocation = await client.invoke(SKILL, WORKED)
            assert client.stats.describe_calls == 2
            assert client.stats.card_fetches == 3
            assert len(client.cache) == 1  # the old entry was replaced, not kept beside

            liar.set_skill_version("1.0")  # back again: the 1.0 entry is gone, describe again
            await client.invoke(SKILL, WORKED)
            assert client.stats.describe_calls == 3

    assert invocation.interface.skill_version == "1.1"
    assert invocation.interface.interface_digest == new_digest
    assert len(liar.describe_requests) == 3
    sent = liar.invocations
    assert [(r["skill_version"], r["interface_digest"]) for r in sent] == [
        (old_version, old_digest),
        (old_version, old_digest),
        (new_version, new_digest),
        (old_version, old_digest),
    ]


# -- local failures send nothing ------------------------------------------------------------


async def test_input_without_unit_is_refused_locally_and_never_sent(agent, wire_factory) -> None:
    subject = "governed-input-invalid"
    token = scoped_token(agent, subject)
    wire = wire_factory(token)
    async with GovernedClient(agent.base_url, token=token, http=wire.http) as client:
        await client.describe(SKILL)
        with pytest.raises(InputInvalidError) as caught:
            await client.invoke(SKILL, WITHOUT_UNIT)
        assert client.stats.invocations == 0

        error = caught.value
        assert error.code is ErrorCode.INPUT_INVALID
        assert str(error).startswith("input_invalid: ")
        assert [(d["instance_path"], d["keyword"]) for d in error.details] == [
            ("/condition/unit", "required")
        ]
        assert wire.skills_sent() == ["describe_skill"]
        assert await invoke_rows(agent, subject) == []

        # The audit check can see an invocation when there is one.
        await client.invoke(SKILL, WORKED)
    rows = await wait_for_rows(agent, subject, 1)
    assert [(r["skill_id"], r["decision"]) for r in rows] == [(SKILL, "allow")]
    assert wire.skills_sent() == ["describe_skill", SKILL]


async def test_an_unknown_skill_is_not_advertised_and_nothing_is_sent(agent, wire_factory) -> None:
    token = scoped_token(agent, "governed-unknown")
    wire = wire_factory(token)
    async with GovernedClient(agent.base_url, token=token, http=wire.http) as client:
        with pytest.raises(SkillNotAdvertisedError) as caught:
            await client.invoke("no_such_skill", {})
        assert caught.value.code is ErrorCode.SKILL_NOT_ADVERTISED
        assert "no_such_skill" in caught.value.message
        assert (client.stats.describe_calls, client.stats.invocations) == (0, 0)
    assert wire.skills_sent() == []
    assert await invoke_rows(agent, "governed-unknown", "describe_skill") == []


async def test_an_extended_skill_without_a_token_is_not_advertised(agent, wire_factory) -> None:
    wire = wire_factory()
    async with GovernedClient(agent.base_url, http=wire.http) as client:
        with pytest.raises(SkillNotAdvertisedError) as caught:
            await client.invoke(SKILL, WORKED)
        assert SKILL in caught.value.message
        with pytest.raises(SkillNotAdvertisedError):
            await client.describe(SKILL)
        assert (client.stats.describe_calls, client.stats.invocations) == (0, 0)
    assert wire.skills_sent() == []
    assert {method for method, _, _ in wire.requests} == {"GET"}  # the public card, nothing else


async def test_the_token_is_sent_on_a_callers_own_http_client(agent) -> None:
    """``token=`` must not be dropped when the caller brings its own httpx client."""
    async with (
        httpx.AsyncClient(timeout=30) as http,
        GovernedClient(agent.base_url, token=agent.token("alice"), http=http) as client,
    ):
        invocation = await client.invoke(SKILL, WORKED)
    assert_worked_example(invocation)


# -- remote refusals ------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("streaming", [False, True], ids=["blocking", "streaming"])
async def test_another_tenants_resource_is_a_remote_rejection(
    agent, binding: str, streaming: bool
) -> None:
    async with GovernedClient(agent.base_url, token=agent.token("gary"), binding=binding) as c:
        with pytest.raises(RemoteTaskError) as caught:
            if streaming:
                async for _ in c.stream(SKILL, WORKED):
                    pass
            else:
                await c.invoke(SKILL, WORKED)
        assert c.stats.invocations == 1  # sent: the refusal is the agent's, not ours

    error = caught.value
    assert not isinstance(error, InterfaceInvalidError)
    assert error.state == "TASK_STATE_REJECTED"
    assert error.code == "authorization_failed"
    assert error.error == {
        "code": "authorization_failed",
        "message": "resource not found or not accessible",
    }
    assert error.task_id


# -- the lying agent: each lie caught locally -----------------------------------------------


def _digests_listed(liar: LyingAgent, error: InterfaceInvalidError) -> None:
    advertised, returned, computed = error.details
    assert advertised == liar.advertised[1]
    assert computed == digest_of(liar.document)
    assert len({advertised, returned, computed}) == 2  # exactly one of them is the odd one out


INTERFACE_LIES = {
    "wrong_advertised_digest": "interface digests disagree",
    "altered_document": "interface digests disagree",
    "altered_embedded_schema": "the document fails verification",
}


@pytest.mark.parametrize("lie", sorted(INTERFACE_LIES))
@pytest.mark.parametrize("binding", BINDINGS)
async def test_interface_lies_are_interface_invalid_and_block_delegation(
    lie: str, binding: str
) -> None:
    with LyingAgent(lie) as liar:
        async with GovernedClient(liar.base_url, binding=binding) as client:
            with pytest.raises(InterfaceInvalidError) as caught:
                await client.invoke(SKILL, WORKED)
            assert len(client.cache) == 0
        assert len(liar.describe_requests) == 1
        assert liar.invocations == []  # delegation blocked: nothing reached the skill

        error = caught.value
        assert error.code is ErrorCode.INTERFACE_INVALID
        assert INTERFACE_LIES[lie] in error.message
        if lie == "wrong_advertised_digest":
            _digests_listed(liar, error)
            assert error.details[0] == WRONG_DIGEST
        elif lie == "altered_document":
            _digests_listed(liar, error)
            assert error.details[0] == error.details[1] != error.details[2]
        else:
            (problem,) = error.details
            schema = liar.document["input_schema"]
            assert problem.startswith("/input_schema/digest: mismatch")
            assert schema["digest"] in problem
            assert digest_of(schema["resolution"]["schema"]) in problem


OUTPUT_LIES = {
    "output_outside_schema": ("result does not match output_schema", "/result", "enum"),
    "record_without_observed_at": ("resource-observation record", "/observed_at", "required"),
    "record_undeclared_kind": (
        f"artifact {UNDECLARED_KIND!r} is no declared record kind",
        None,
        None,
    ),
}


@pytest.mark.parametrize("lie", sorted(OUTPUT_LIES))
@pytest.mark.parametrize("streaming", [False, True], ids=["blocking", "streaming"])
async def test_output_lies_are_output_invalid_and_nothing_invalid_is_handed_over(
    lie: str, streaming: bool
) -> None:
    handed: list[Any] = []
    with LyingAgent(lie) as liar:
        async with GovernedClient(liar.base_url) as client:
            client.on_result(OUTPUT_SCHEMA_URI, lambda output, _: handed.append(output))
            client.on_record(RECORD_SCHEMA_URI, lambda record, _: handed.append(record))
            with pytest.raises(OutputInvalidError) as caught:
                if streaming:
                    async for item in client.stream(SKILL, WORKED):
                        handed.append(item)
                else:
                    await client.invoke(SKILL, WORKED)
        assert len(liar.invocations) == 1  # it was sent; what came back is unusable

    error = caught.value
    assert error.code is ErrorCode.OUTPUT_INVALID
    message, pointer, keyword = OUTPUT_LIES[lie]
    assert message in error.message
    if pointer is None:
        assert error.details == []
    else:
        assert [(d["instance_path"], d["keyword"]) for d in error.details] == [(pointer, keyword)]
    if lie == "output_outside_schema" and streaming:
        # A complete, valid record may be streamed (and handed over) before the result fails.
        assert all(isinstance(h, Record) and h.data == WORKED_RECORD for h in handed)
    else:
        assert handed == []


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_honest_lying_agent_satisfies_the_client(binding: str) -> None:
    with LyingAgent("honest") as liar:
        async with GovernedClient(liar.base_url, binding=binding) as client:
            invocation = await client.invoke(SKILL, WORKED)
    assert invocation.output == WORKED_RESULT
    assert [(r.kind, r.artifact_id, r.data) for r in invocation.records] == [
        (RECORD_KIND, "observation-7", WORKED_RECORD)
    ]
    (sent,) = liar.invocations
    assert sent == {
        "skill": SKILL,
        "skill_version": "1.0",
        "interface_digest": liar.advertised[1],
        "arguments": WORKED,
    }


async def test_describe_checks_each_received_schema_once(monkeypatch) -> None:
    """verify_document checks every embedded schema against the 2020-12 metaschema; the
    validators compiled from them afterwards do not check them again (it was most of the
    client's own work in ``netagent describe``)."""
    from agent.interfaces import document, trusted_schema, validation

    checked: list[int] = []
    client_thread = threading.get_ident()  # the lying agent serves from a thread of its own

    def counted(schema: Any) -> None:
        if threading.get_ident() == client_thread and schema is not trusted_schema():
            checked.append(id(schema))
        real(schema)

    real = validation.check_schema
    monkeypatch.setattr(validation, "check_schema", counted)
    monkeypatch.setattr(document, "check_schema", counted)
    with LyingAgent("honest") as liar:
        async with GovernedClient(liar.base_url) as client:
            checked.clear()  # the lying agent's own documents, built as it starts
            interface = await client.describe(SKILL)
    schemas = 2 + len(interface.document["supporting_record_schemas"])
    assert len(checked) == schemas
    assert len(set(checked)) == schemas


# -- domain handlers ------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True], ids=["blocking", "streaming"])
async def test_domain_handlers_get_validated_data_by_schema_uri(agent, streaming: bool) -> None:
    events: list[tuple[str, Any, Any]] = []
    unrelated: list[Any] = []

    async def on_record(record: Record, invocation: Invocation | None) -> None:
        events.append(("record", record, invocation))

    async with GovernedClient(agent.base_url, token=agent.token("alice")) as client:
        interface = await client.describe(SKILL)
        output_uri = interface.schema_uri("output")
        record_uri = interface.schema_uri("record", RECORD_KIND)
        assert (output_uri, record_uri) == (OUTPUT_SCHEMA_URI, RECORD_SCHEMA_URI)
        client.on_result(output_uri, lambda output, inv: events.append(("result", output, inv)))
        client.on_record(record_uri, on_record)
        client.on_result(OTHER_SCHEMA_URI, lambda *args: unrelated.append(args))
        client.on_record(OTHER_SCHEMA_URI, lambda *args: unrelated.append(args))
        client.on_result(record_uri, lambda *args: unrelated.append(args))  # wrong role
        client.on_record(output_uri, lambda *args: unrelated.append(args))  # wrong role
        if streaming:
            invocation = None
            async for item in client.stream(SKILL, WORKED):
                events.append(("yield", item, None))
                if isinstance(item, Invocation):
                    invocation = item
        else:
            invocation = await client.invoke(SKILL, WORKED)

    assert isinstance(invocation, Invocation)
    (record,) = invocation.records
    assert unrelated == []
    if streaming:
        assert events == [
            ("record", record, None),
            ("yield", record, None),
            ("result", invocation.output, invocation),
            ("yield", invocation, None),
        ]
    else:
        assert events == [
            ("result", invocation.output, invocation),
            ("record", record, invocation),
        ]


# -- composition ----------------------------------------------------------------------------


async def test_composition_differences_name_the_differing_fields(agent) -> None:
    async with GovernedClient(agent.base_url, token=agent.token("alice")) as client:
        upstream = await client.describe(SKILL)
        downstream = await client.describe("check_link_capacity")
        differences = composition_differences(upstream, downstream)
        assert composition_differences(upstream, upstream) != []  # output is not its input

    produced, accepted = upstream.document["output_schema"], downstream.document["input_schema"]
    named = {d.split(":", 1)[0] for d in differences}
    assert {"schema_uri", "digest"} <= named
    for field in ("schema_uri", "version", "dialect", "digest"):
        assert (field in named) == (produced[field] != accepted[field])
    (uri_line,) = [d for d in differences if d.startswith("schema_uri:")]
    assert produced["schema_uri"] in uri_line and accepted["schema_uri"] in uri_line
    assert not any(d.startswith(("upstream", "downstream")) for d in differences)


async def test_composition_checks_every_embedded_schema_against_its_digest(agent) -> None:
    async with GovernedClient(agent.base_url, token=agent.token("alice")) as client:
        upstream = await client.describe(SKILL)
    document = json.loads(json.dumps(upstream.document))
    document["input_schema"] = json.loads(json.dumps(document["output_schema"]))
    identical = replace(upstream, document=document)
    assert composition_differences(upstream, identical) == []  # an exact match composes

    tampered = json.loads(json.dumps(document))
    tampered["input_schema"]["resolution"]["schema"]["required"].remove("unit")
    differences = composition_differences(upstream, replace(upstream, document=tampered))
    assert len(differences) == 1
    assert differences[0].startswith("downstream input: /digest: mismatch")


async def test_chain_refuses_a_mismatch_and_sends_nothing_downstream(
    agent, wire_factory, tmp_path: Path
) -> None:
    token = agent.token("alice")
    up_wire, down_wire = wire_factory(token), wire_factory(token)
    url = f"sqlite+aiosqlite:///{tmp_path / 'correlation.db'}"
    await upgrade(url)
    engine = make_engine(url)
    try:
        store = CorrelationStore(engine)
        async with (
            GovernedClient(agent.base_url, token=token, http=up_wire.http) as upstream,
            GovernedClient(agent.base_url, token=token, http=down_wire.http) as downstream,
        ):
            with pytest.raises(CompositionRefusedError) as caught:
                await chain(upstream, SKILL, WORKED, downstream, "check_link_capacity", store)
            assert (upstream.stats.invocations, downstream.stats.invocations) == (0, 0)
            expected = composition_differences(
                await upstream.describe(SKILL), await downstream.describe("check_link_capacity")
            )
        assert caught.value.differences == expected != []
        assert "no direct composition" in str(caught.value)
        assert up_wire.skills_sent() == ["describe_skill"]
        assert down_wire.skills_sent() == ["describe_skill"]
        assert await store.query() == []
    finally:
        await engine.dispose()


async def test_chain_describes_both_skills_at_once_and_fails_as_if_in_turn(
    agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two describes overlap (one answer is read while the other is on its way); when
    either fails, the error is the one a chain describing them in turn would raise."""
    in_flight = most = 0
    describe = GovernedClient.describe_on_card

    async def counted(self: GovernedClient, skill_id: str) -> Any:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        try:
            return await describe(self, skill_id)
        finally:
            in_flight -= 1

    monkeypatch.setattr(GovernedClient, "describe_on_card", counted)
    token = agent.token("paula")
    async with GovernedClient(agent.base_url, token=token) as client:
        for up, down, named in (
            ("no_such_upstream", "no_such_downstream", "no_such_upstream"),
            ("no_such_upstream", "plan_link_upgrade", "no_such_upstream"),
            ("check_link_capacity", "no_such_downstream", "no_such_downstream"),
        ):
            most = 0
            with pytest.raises(SkillNotAdvertisedError, match=named):
                await chain(client, up, {"link_id": HOT_LINK}, client, down)
            assert most == 2
            assert client.stats.invocations == 0


async def test_correlation_store_records_and_queries_links(agent, tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'correlation.db'}"
    await upgrade(url)
    engine = make_engine(url)
    try:
        store = CorrelationStore(engine)
        async with (
            GovernedClient(agent.base_url, token=agent.token("alice")) as rpc,
            GovernedClient(agent.base_url, token=agent.token("alice"), binding="HTTP+JSON") as rest,
        ):
            first = await rpc.invoke(SKILL, WORKED)
            second = await rest.invoke("check_link_capacity", {"link_id": HOT_LINK})
            third = await rpc.invoke(SKILL, WORKED)
        await store.record("wf-1", first, "urn:agent:a", second, "urn:agent:b")
        await store.record("wf-2", second, "urn:agent:b", third, "urn:agent:a")

        (link,) = await store.query(workflow_id="wf-1")
        assert link["upstream_agent"] == "urn:agent:a"
        assert link["upstream_endpoint"] == agent.base_url + "/a2a/jsonrpc"
        assert link["upstream_task_id"] == first.task_id
        assert link["upstream_skill"] == SKILL
        assert link["downstream_agent"] == "urn:agent:b"
        assert link["downstream_endpoint"] == agent.base_url + "/a2a/rest"
        assert link["downstream_task_id"] == second.task_id
        assert link["downstream_skill"] == "check_link_capacity"
        assert link["ts"] is not None

        touching = await store.query(task_id=second.task_id)  # upstream in one, downstream in one
        assert [r["workflow_id"] for r in touching] == ["wf-2", "wf-1"]  # newest first
        assert [r["workflow_id"] for r in await store.query(task_id=third.task_id)] == ["wf-2"]
        assert await store.query(workflow_id="wf-3") == []
        assert len(await store.query(limit=1)) == 1
    finally:
        await engine.dispose()


async def test_chain_check_link_capacity_into_plan_link_upgrade(agent, tmp_path: Path) -> None:
    """Needs plan_link_upgrade's input to be check_link_capacity's output, by reference."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'correlation.db'}"
    await upgrade(url)
    engine = make_engine(url)
    token = agent.token("paula")
    try:
        store = CorrelationStore(engine)
        async with (
            GovernedClient(agent.base_url, token=token) as upstream,
            GovernedClient(agent.base_url, token=token, binding="HTTP+JSON") as downstream,
        ):
            result = await chain(
                upstream,
                "check_link_capacity",
                {"link_id": HOT_LINK},
                downstream,
                "plan_link_upgrade",
                store,
                workflow_id="capacity-review-1",
            )
        # One reading of each card for the check and the upstream send, and one more of the
        # downstream card after the upstream answer, which that send uses.
        assert (upstream.stats.card_fetches, downstream.stats.card_fetches) == (1, 2)
        assert (upstream.stats.invocations, downstream.stats.invocations) == (1, 1)
        assert result.workflow_id == "capacity-review-1"
        assert result.upstream.output["link_id"] == HOT_LINK
        assert result.downstream.task_id != result.upstream.task_id
        assert result.downstream.interface.skill_id == "plan_link_upgrade"
        assert (
            result.upstream.interface.document["output_schema"]
            == result.downstream.interface.document["input_schema"]
        )
        (link,) = await store.query(workflow_id="capacity-review-1")
        assert (link["upstream_task_id"], link["downstream_task_id"]) == (
            result.upstream.task_id,
            result.downstream.task_id,
        )
        assert (link["upstream_agent"], link["downstream_agent"]) == (
            agent.base_url,
            agent.base_url,
        )
        assert link["upstream_endpoint"] == agent.base_url + "/a2a/jsonrpc"
        assert link["downstream_endpoint"] == agent.base_url + "/a2a/rest"
        assert (link["upstream_skill"], link["downstream_skill"]) == (
            "check_link_capacity",
            "plan_link_upgrade",
        )
    finally:
        await engine.dispose()
