"""describe_skill: the pre-built document, its digest, and the three-way digest agreement."""

from __future__ import annotations

import httpx
import pytest
from a2a.types import GetExtendedAgentCardRequest
from google.protobuf.json_format import MessageToDict

from agent.interfaces import EXTENSION_URI, digest_of, trusted_schema, verify_document
from agent.registry.loader import load_registry
from netops.deployment import SKILLS_DIR
from tests.a2a_helpers import BINDINGS, call_context, describe, make_client
from tests.registry_view import card_ids, demo_only

SKILLS = [c.id for c in load_registry(SKILLS_DIR) if c.interface is not None]


async def advertised(agent, token: str) -> dict[str, dict]:
    async with make_client(agent.base_url, token, "JSONRPC") as client:
        card = await client.get_extended_agent_card(
            GetExtendedAgentCardRequest(), context=call_context()
        )
    (extension,) = [e for e in card.capabilities.extensions if e.uri == EXTENSION_URI]
    params = MessageToDict(extension)["params"]
    assert params["interface_version"] == "1.0"
    return {b["skill_id"]: b for b in params["skills"]}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("skill", SKILLS)
async def test_describe_returns_the_advertised_document(agent, skill: str, binding: str) -> None:
    token = agent.token("paula")
    outcome = await describe(agent.base_url, token, skill, binding=binding)
    assert outcome.state == "TASK_STATE_COMPLETED"
    (artifact,) = outcome.task.artifacts
    assert artifact.name == "describe_skill" and len(artifact.parts) == 1
    data = outcome.result("describe_skill")
    assert set(data) == {"skill_id", "skill_version", "interface_digest", "skill_interface"}
    document = data["skill_interface"]
    binding_on_card = (await advertised(agent, token))[skill]
    # Three-way agreement: card == describe == digest computed from the returned document.
    assert binding_on_card["interface_digest"] == data["interface_digest"] == digest_of(document)
    assert binding_on_card["skill_version"] == data["skill_version"] == document["skill_version"]
    assert (
        verify_document(
            document,
            expected_digest=data["interface_digest"],
            skill_id=skill,
            skill_version=data["skill_version"],
        )
        == []
    )


async def test_describe_arguments_are_closed(agent) -> None:
    outcome = await describe(agent.base_url, agent.token("alice"), "lookup_inventory")
    assert outcome.state == "TASK_STATE_COMPLETED"
    from tests.a2a_helpers import invoke

    bad = await invoke(
        agent.base_url,
        agent.token("alice"),
        "describe_skill",
        {"skill_id": "lookup_inventory", "skill_version": "1.0"},
    )
    assert bad.state == "TASK_STATE_REJECTED" and bad.error["code"] == "input_invalid"


def test_public_card_binds_only_public_skills(agent) -> None:
    card = httpx.get(f"{agent.base_url}/.well-known/agent-card.json", timeout=10).json()
    (extension,) = [e for e in card["capabilities"]["extensions"] if e["uri"] == EXTENSION_URI]
    assert extension.get("required", False) is False
    bound = {b["skill_id"] for b in extension["params"]["skills"]}
    assert bound == {s["id"] for s in card["skills"]} == set(card_ids(None))
    assert set(demo_only(bound)) == {"describe_skill", "lookup_inventory"}


def test_trusted_schema_requires_the_nine_members() -> None:
    assert set(trusted_schema()["required"]) == {
        "interface_version",
        "skill_id",
        "skill_version",
        "input_schema",
        "output_schema",
        "supporting_record_schemas",
        "interaction",
        "authority",
        "constraints",
    }
