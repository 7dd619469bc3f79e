"""The TCK conformance skill: internal, off by default, and only for the TCK's scenario messages.

``netagent serve --conformance`` (NETAGENT_CONFORMANCE) loads ``agent/builtin/conformance``; its
one skill answers messages whose messageId starts with a TCK scenario prefix. It must never
show on a card, never be chosen for ordinary text, and not exist at all when the setting is off.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import httpx
import pytest
from a2a.types import (
    GetTaskRequest,
    Message,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskNotFoundError,
    TaskState,
)
from google.protobuf.json_format import MessageToDict

from tests.a2a_helpers import BINDINGS, call_context, invoke, make_client, send
from tests.conftest import RunningAgent, start_agent

CONFORMANCE_ID = "tck_conformance"
ALICE_SCOPES = ["inventory.read", "assurance.read", "capacity.read"]


@pytest.fixture(scope="module")
def tck_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAgent]:
    """The demo registry with the conformance setting on."""
    running = start_agent(
        tmp_path_factory.mktemp("tck-agent"), settings_overrides={"conformance": True}
    )
    yield running
    running.stop()


def scenario(prefix: str, text: str = "TCK scenario", task_id: str = "") -> Message:
    """A message as the TCK sends it: the scenario is the messageId's prefix."""
    return Message(
        message_id=f"{prefix}-{uuid.uuid4().hex[:8]}",
        role=Role.ROLE_USER,
        parts=[{"text": text}],
        task_id=task_id,
    )


async def reply(base_url: str, token: str, message: Message, binding: str) -> StreamResponse:
    """The single non-streaming answer to one SendMessage: a task or a message."""
    async with make_client(base_url, token, binding) as client:
        events = [
            e
            async for e in client.send_message(
                SendMessageRequest(message=message), context=call_context()
            )
        ]
    assert len(events) == 1, events
    return events[0]


def card_json(base_url: str) -> str:
    return httpx.get(f"{base_url}/.well-known/agent-card.json").text


def test_the_public_card_is_the_same_with_the_setting_on(
    tck_agent: RunningAgent, agent: RunningAgent
) -> None:
    on = json.loads(card_json(tck_agent.base_url))
    off = json.loads(card_json(agent.base_url))
    assert CONFORMANCE_ID not in json.dumps(on)
    for key in ("skills", "capabilities", "version", "securitySchemes", "defaultInputModes"):
        assert on[key] == off[key], key


async def test_the_extended_card_does_not_list_it(tck_agent: RunningAgent) -> None:
    token = tck_agent.token("alice", tenant="acme", scopes=ALICE_SCOPES)
    response = httpx.post(
        f"{tck_agent.base_url}/a2a/jsonrpc",
        headers={"Authorization": f"Bearer {token}", "A2A-Version": "1.0"},
        json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
    )
    card = response.json()["result"]
    assert card["skills"], card
    assert CONFORMANCE_ID not in json.dumps(card)


async def test_ordinary_text_goes_to_the_real_skills(tck_agent: RunningAgent) -> None:
    token = tck_agent.token("alice", tenant="acme", scopes=ALICE_SCOPES)
    message = scenario("user-question", "does a 20G flow fit on acme-lnk-00002?")
    outcome = await send(tck_agent.base_url, token, message)
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    routing = MessageToDict(outcome.task.metadata)["routing"]
    assert routing["skill_id"] == "check_link_capacity", routing
    # A TCK message that names no scenario is the router's too: here it asks which skill.
    outcome = await send(tck_agent.base_url, token, scenario("tck-dm-test-001", "Hello"))
    assert outcome.state == "TASK_STATE_INPUT_REQUIRED"
    assert MessageToDict(outcome.task.metadata)["routing"]["stage"] == "clarification"


async def test_it_cannot_be_asked_for_by_name(tck_agent: RunningAgent) -> None:
    token = tck_agent.token("alice", tenant="acme", scopes=ALICE_SCOPES)
    outcome = await invoke(
        tck_agent.base_url, token, CONFORMANCE_ID, {"message_id": "tck-complete-task-1"}
    )
    assert outcome.state == "TASK_STATE_REJECTED"
    assert outcome.error["code"] == "skill_not_advertised"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_it_serves_the_scenarios(tck_agent: RunningAgent, binding: str) -> None:
    token = tck_agent.token("tck", tenant="acme", scopes=[])
    url = tck_agent.base_url

    done = (await reply(url, token, scenario("tck-complete-task"), binding)).task
    assert TaskState.Name(done.status.state) == "TASK_STATE_COMPLETED"
    assert done.status.message.parts[0].text == "Hello from TCK"

    answer = await reply(url, token, scenario("tck-message-response"), binding)
    assert answer.WhichOneof("payload") == "message"
    assert answer.message.parts[0].text == "Direct message response"

    (file_artifact,) = (
        await reply(url, token, scenario("tck-artifact-file"), binding)
    ).task.artifacts
    (part,) = file_artifact.parts
    assert (part.raw, part.filename, part.media_type) == (b"tck", "output.txt", "text/plain")
    (url_artifact,) = (
        await reply(url, token, scenario("tck-artifact-file-url"), binding)
    ).task.artifacts
    assert url_artifact.parts[0].url == "https://example.com/output.txt"
    (data_artifact,) = (
        await reply(url, token, scenario("tck-artifact-data"), binding)
    ).task.artifacts
    assert MessageToDict(data_artifact.parts[0])["data"] == {"key": "value", "count": 42}

    rejected = (await reply(url, token, scenario("tck-reject-task"), binding)).task
    assert TaskState.Name(rejected.status.state) == "TASK_STATE_REJECTED"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_input_required_then_a_follow_up_in_the_same_task(
    tck_agent: RunningAgent, binding: str
) -> None:
    token = tck_agent.token("tck", tenant="acme", scopes=[])
    url = tck_agent.base_url
    asked = (await reply(url, token, scenario("tck-input-required"), binding)).task
    assert TaskState.Name(asked.status.state) == "TASK_STATE_INPUT_REQUIRED"
    follow_up = scenario("tck-complete-task", "the answer", task_id=asked.id)
    done = (await reply(url, token, follow_up, binding)).task
    assert (done.id, done.context_id) == (asked.id, asked.context_id)
    assert TaskState.Name(done.status.state) == "TASK_STATE_COMPLETED"
    assert "the answer" in [p.text for m in done.history for p in m.parts]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_streamed_artifact_arrives_in_two_chunks(
    tck_agent: RunningAgent, binding: str
) -> None:
    token = tck_agent.token("tck", tenant="acme", scopes=[])
    outcome = await send(
        tck_agent.base_url,
        token,
        scenario("tck-stream-artifact-chunked"),
        binding=binding,
        streaming=True,
    )
    chunks = [e.artifact_update for e in outcome.events if e.HasField("artifact_update")]
    assert [(c.append, c.last_chunk) for c in chunks] == [(False, False), (True, True)]
    assert chunks[0].artifact.artifact_id == chunks[1].artifact.artifact_id
    states = [
        TaskState.Name(e.status_update.status.state)
        for e in outcome.events
        if e.HasField("status_update")
    ]
    assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    (stored,) = outcome.task.artifacts
    assert [p.text for p in stored.parts] == ["chunk-1 ", "chunk-2"]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_without_the_setting_a_scenario_message_is_ordinary_text(
    agent: RunningAgent, binding: str
) -> None:
    token = agent.token("alice", tenant="acme", scopes=ALICE_SCOPES)
    outcome = await send(
        agent.base_url, token, scenario("tck-complete-task", "Hello"), binding=binding
    )
    assert outcome.state == "TASK_STATE_INPUT_REQUIRED"
    assert MessageToDict(outcome.task.metadata)["routing"]["stage"] == "clarification"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_task_id_the_store_cannot_hold_is_not_found(
    agent: RunningAgent, binding: str
) -> None:
    """A2A 3.4.2: a message naming a task that does not exist gets TaskNotFoundError."""
    token = agent.token("alice", tenant="acme", scopes=ALICE_SCOPES)
    message = scenario("follow-up", "hello", task_id="t" * 42)
    async with make_client(agent.base_url, token, binding) as client:
        with pytest.raises(TaskNotFoundError) as raised:
            async for _ in client.send_message(
                SendMessageRequest(message=message), context=call_context()
            ):
                pass
        assert "t" * 42 not in str(raised.value)
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id="t" * 42), context=call_context())
