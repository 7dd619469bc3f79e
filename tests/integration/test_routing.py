"""Routing without a skill id, end to end through the a2a-sdk client."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from a2a.helpers import new_raw_part
from a2a.types import (
    ContentTypeNotSupportedError,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
)
from google.protobuf.json_format import MessageToDict

from tests.a2a_helpers import (
    BINDINGS,
    Outcome,
    call_context,
    data_message,
    make_client,
    send,
    text_message,
)
from tests.conftest import start_agent


def routing(outcome: Outcome) -> dict:
    return MessageToDict(outcome.task.metadata)["routing"]


def question(outcome: Outcome) -> tuple[str, dict]:
    parts = [MessageToDict(p) for p in outcome.task.status.message.parts]
    texts = [p["text"] for p in parts if "text" in p]
    datas = [p["data"] for p in parts if "data" in p]
    return texts[0], datas[0]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_clear_text_routes_by_classifier_and_runs(agent, binding: str) -> None:
    outcome = await send(
        agent.base_url,
        agent.token("alice"),
        text_message("how much bandwidth is free on acme-lnk-00002 in each direction?"),
        binding=binding,
    )
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    assert routing(outcome)["skill_id"] == "check_link_capacity"
    assert routing(outcome)["stage"] == "model"
    assert routing(outcome)["confidence"] >= 0.6
    assert outcome.result("check_link_capacity")["link_id"] == "acme-lnk-00002"


async def test_single_candidate_needs_no_classifier(agent) -> None:
    # A caller with no scopes may use only the scope-free describe_skill.
    token = agent.token("nobody", tenant="acme", scopes=[])
    outcome = await send(agent.base_url, token, text_message("describe lookup_inventory"))
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    assert routing(outcome) == {"stage": "single_candidate", "skill_id": "describe_skill"}
    assert outcome.result("describe_skill")["skill_id"] == "lookup_inventory"


async def test_anonymous_text_is_refused_at_the_edge(agent) -> None:
    import httpx

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": "m",
                "role": "ROLE_USER",
                "parts": [{"text": "describe lookup_inventory"}],
            }
        },
    }
    response = httpx.post(
        f"{agent.base_url}/a2a/jsonrpc", json=body, headers={"A2A-Version": "1.0"}, timeout=10
    )
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


async def test_ambiguous_text_asks_and_the_reply_continues_the_same_task(agent) -> None:
    token = agent.token("alice")
    first = await send(agent.base_url, token, text_message("spare capacity on acme-lnk-00002"))
    assert first.state == "TASK_STATE_INPUT_REQUIRED"
    offered = routing(first)["candidates"]
    assert routing(first)["stage"] == "clarification"
    assert "check_link_capacity" in offered and "plan_link_upgrade" not in offered  # no preview
    text, data = question(first)
    assert [c["skill_id"] for c in data["candidates"]] == offered
    assert all(c in text for c in offered) and "Reply with" in text
    reply = await send(
        agent.base_url, token, text_message("check_link_capacity", task_id=first.task.id)
    )
    assert reply.task.id == first.task.id
    assert reply.state == "TASK_STATE_COMPLETED", reply.task.status
    assert reply.result("check_link_capacity")["link_id"] == "acme-lnk-00002"
    assert routing(reply)["stage"] == "task_binding"


async def test_a_metric_no_skill_observes_is_asked_about_and_the_question_says_why(agent) -> None:
    text = "what is the BGP session state between nyc1-edge-01 and its peer?"
    first = await send(agent.base_url, agent.token("alice"), text_message(text))
    assert first.state == "TASK_STATE_INPUT_REQUIRED", first.task.status
    assert routing(first)["stage"] == "clarification"
    assert routing(first)["nothing_fits"] == "unobserved"
    text, data = question(first)
    assert data["note"].startswith("No skill here observes that")
    assert data["matched"] is False and data["nothing_fits"] == "unobserved"
    assert text.startswith(data["note"]) and "Reply with" in text
    assert [c["skill_id"] for c in data["candidates"]] == routing(first)["candidates"]


async def test_missing_arguments_are_named_and_a_data_part_reply_completes(agent) -> None:
    token = agent.token("alice")
    first = await send(
        agent.base_url, token, text_message("is the cpu utilisation over 90 percent?")
    )
    assert first.state == "TASK_STATE_INPUT_REQUIRED", first.task.status
    text, data = question(first)
    assert data["skill"] == "evaluate_resource_condition"
    assert [m["pointer"] for m in data["missing"]] == ["/resource_id"]
    assert data["skill_version"] == "1.0" and data["interface_digest"].startswith("sha256:")
    assert "/resource_id" in text
    reply = await send(
        agent.base_url,
        token,
        data_message({"resource_id": "network-resource-123"}, task_id=first.task.id),
    )
    assert reply.state == "TASK_STATE_COMPLETED", reply.task.status
    result = reply.result("evaluate_resource_condition")
    assert result["result"] == "condition_not_met" or result["result"] == "condition_met"
    assert reply.artifacts("resource-observation")[0]["parts"][0]["data"]["metric"] == "cpu"


async def test_a_plain_text_reply_is_merged_and_validated_again(agent) -> None:
    token = agent.token("alice")
    first = await send(agent.base_url, token, text_message("is memory above 95% ?"))
    assert first.state == "TASK_STATE_INPUT_REQUIRED"
    reply = await send(
        agent.base_url, token, text_message("on nyc1-core-01", task_id=first.task.id)
    )
    assert reply.state == "TASK_STATE_COMPLETED", reply.task.status
    record = reply.artifacts("resource-observation")[0]["parts"][0]["data"]
    assert record["resource_id"] == "network-resource-1001" and record["metric"] == "memory"


async def test_restart_between_clarification_and_reply_still_continues(tmp_path) -> None:
    home = tmp_path / "home"
    before = await asyncio.to_thread(start_agent, home)
    try:
        token = before.token("alice")
        first = await send(before.base_url, token, text_message("spare capacity on acme-lnk-00002"))
        assert first.state == "TASK_STATE_INPUT_REQUIRED"
    finally:
        before.stop()
    after = await asyncio.to_thread(start_agent, home, seeded=False)
    try:
        reply = await send(
            after.base_url, after.token("alice"), text_message("1", task_id=first.task.id)
        )
        assert reply.task.id == first.task.id
        assert reply.state == "TASK_STATE_COMPLETED", reply.task.status
    finally:
        after.stop()


async def test_metadata_hint_is_honoured_for_an_entitled_caller(agent) -> None:
    message = text_message("acme-lnk-00002")
    message.metadata.update({"skill_id": "check_link_capacity"})
    outcome = await send(agent.base_url, agent.token("alice"), message)
    assert outcome.state == "TASK_STATE_COMPLETED"
    assert routing(outcome) == {"stage": "metadata_hint", "skill_id": "check_link_capacity"}


async def test_deprecated_skill_result_carries_a_deprecation_notice(agent) -> None:
    outcome = await send(
        agent.base_url,
        agent.token("alice"),
        text_message("what's the headroom percent of acme-lnk-00001"),
    )
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    assert routing(outcome)["skill_id"] == "link_headroom"
    metadata = MessageToDict(outcome.task.metadata)
    assert metadata["deprecation"] == {
        "skill_id": "link_headroom",
        "replacement": "check_link_capacity",
    }
    (part,) = outcome.task.status.message.parts
    assert "check_link_capacity" in part.text


async def test_removed_skill_is_never_a_fall_through(agent) -> None:
    outcome = await send(
        agent.base_url,
        agent.token("alice"),
        data_message({"skill": "port_report", "arguments": {"device": "x"}}),
    )
    assert outcome.state == "TASK_STATE_REJECTED"
    assert outcome.error["code"] == "skill_not_advertised"
    assert "lookup_inventory" in outcome.error["message"]
    assert outcome.artifacts() == []


async def send_with_modes(agent, message: Message, accepted: list[str]):
    async with make_client(agent.base_url, agent.token("alice"), "JSONRPC") as client:
        request = SendMessageRequest(
            message=message, configuration=SendMessageConfiguration(accepted_output_modes=accepted)
        )
        async for event in client.send_message(request, context=call_context()):
            return event.task


async def test_text_only_callers_get_a_readable_text_part(agent) -> None:
    task = await send_with_modes(agent, text_message("list all sites"), ["text/plain"])
    (artifact,) = [a for a in task.artifacts if a.name == "lookup_inventory"]
    kinds = [p.WhichOneof("content") for p in artifact.parts]
    assert kinds == ["data", "text"]
    assert "count:" in artifact.parts[1].text


async def test_unproducible_output_mode_fails_before_running(agent) -> None:
    with pytest.raises(ContentTypeNotSupportedError):
        await send_with_modes(agent, text_message("list all sites"), ["image/png"])


async def test_no_skill_accepts_the_media_type(agent) -> None:
    message = Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[new_raw_part(b"\x89PNG", media_type="image/png")],
    )
    with pytest.raises(ContentTypeNotSupportedError):
        await send(agent.base_url, agent.token("alice"), message)
