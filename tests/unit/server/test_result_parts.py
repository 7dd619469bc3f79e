"""Fixed results: describe_skill's answer is checked and converted once per skill version, sent
byte for byte as before, and still only to callers who may see the skill."""

from __future__ import annotations

import json
from typing import Any

import pytest
from a2a.helpers import new_data_part
from a2a.types import Artifact, Part
from google.protobuf.json_format import MessageToDict

from agent.builtin.describe_skill.handler import described
from agent.interfaces import DESCRIBE_SKILL_ID, SkillError, SkillInterface
from agent.registry.fixed_result import FixedResult
from agent.registry.loader import Capability, Registry
from agent.registry.policy import visible
from agent.server.result_parts import FixedParts
from tests.conftest import IDENTITIES
from tests.unit.server.harness import Agent, data_message, error, state


def old_answer(interface: SkillInterface) -> Part:
    """describe_skill's Data Part as the executor built it on every call before."""
    output = {
        "skill_id": interface.skill_id,
        "skill_version": interface.skill_version,
        "interface_digest": interface.interface_digest,
        "skill_interface": interface.document,
    }
    return new_data_part(output, media_type="application/json")


def wire(part: Part) -> tuple[bytes, str]:
    """The Part's content in both wire forms: its deterministic protobuf bytes and its JSON.

    Keys sorted: upb iterates a Struct's map in an order seeded per process and changed by
    copies, so the JSON member order was never the same from one call to the next anyway.
    """
    as_json = json.dumps(MessageToDict(part), sort_keys=True, separators=(",", ":"))
    return part.SerializeToString(deterministic=True), as_json


def interfaces(registry: Registry) -> list[SkillInterface]:
    return [c.interface for c in registry if c.interface is not None]


def describe_skill(registry: Registry) -> Capability:
    capability = registry.get(DESCRIBE_SKILL_ID)
    assert capability is not None
    return capability


def test_the_held_part_of_every_skill_is_the_one_built_per_call_before(registry: Registry) -> None:
    parts = FixedParts()
    capability = describe_skill(registry)
    for interface in interfaces(registry):
        held = parts.part(capability, described(interface))
        assert wire(held) == wire(old_answer(interface)), interface.skill_id
        assert parts.part(capability, described(interface)) is held
    assert len(parts) == len(interfaces(registry))


def test_a_fixed_result_is_built_and_checked_once_per_key(registry: Registry) -> None:
    capability = describe_skill(registry)
    interface = next(iter(interfaces(registry)))
    builds: list[str] = []

    def build() -> dict[str, Any]:
        builds.append(interface.skill_id)
        return described(interface).build()

    parts = FixedParts()
    first = parts.part(capability, FixedResult(described(interface).key, build))
    for _ in range(3):
        assert parts.part(capability, FixedResult(described(interface).key, build)) is first
    assert builds == [interface.skill_id]
    artifact = Artifact(artifact_id="result", parts=[first])  # what the SDK's updater does
    artifact.parts[0].data.struct_value.fields["skill_id"].string_value = "altered"
    assert wire(first) == wire(old_answer(interface)), "an artifact holds a copy"


def test_a_fixed_result_off_the_output_schema_is_refused_every_time(registry: Registry) -> None:
    capability = describe_skill(registry)
    builds: list[int] = []

    def build() -> dict[str, Any]:
        builds.append(1)
        return {"skill_id": "x"}

    parts = FixedParts()
    for _ in range(2):
        with pytest.raises(SkillError) as caught:
            parts.part(capability, FixedResult("bad", build))
        assert caught.value.code == "output_invalid"
    assert builds == [1, 1] and len(parts) == 0


def test_the_held_parts_are_bounded(registry: Registry) -> None:
    capability = describe_skill(registry)
    first, *rest = interfaces(registry)
    parts = FixedParts(size=2)
    held = parts.part(capability, described(first))
    for interface in rest[:2]:
        parts.part(capability, described(interface))
    assert len(parts) == 2
    assert parts.part(capability, described(first)) is not held  # it went first, built anew


async def test_describe_skill_sends_the_old_answer_for_every_skill_each_time(
    agent: Agent, registry: Registry
) -> None:
    described_ids = set()
    for subject in IDENTITIES:
        who = agent.caller(subject)
        for interface in interfaces(registry):
            capability = registry.get(interface.skill_id)
            assert capability is not None
            if not visible(capability.manifest, who):
                continue
            for _ in range(2):
                task = await agent.send(
                    data_message(
                        {"skill": DESCRIBE_SKILL_ID, "arguments": {"skill_id": interface.skill_id}}
                    ),
                    who,
                )
                assert state(task) == "TASK_STATE_COMPLETED", task.status
                (artifact,) = task.artifacts
                (part,) = artifact.parts
                assert wire(part) == wire(old_answer(interface)), interface.skill_id
            described_ids.add(interface.skill_id)
    hidden = {i.skill_id for i in interfaces(registry)} - described_ids
    assert len(described_ids) > len(hidden), (described_ids, hidden)


@pytest.mark.parametrize(
    ("seer", "subject", "skill"),
    [("alice", "vic", "evaluate_resource_condition"), ("paula", "gary", "plan_link_upgrade")],
    ids=["extended-unlisted", "other-tenant"],
)
async def test_a_described_skill_stays_not_advertised_to_a_caller_who_may_not_see_it(
    agent: Agent, seer: str, subject: str, skill: str
) -> None:
    request = {"skill": DESCRIBE_SKILL_ID, "arguments": {"skill_id": skill}}
    seen = await agent.send(data_message(request), agent.caller(seer))
    assert state(seen) == "TASK_STATE_COMPLETED", seen.status
    refused = await agent.send(data_message(request), agent.caller(subject))
    assert state(refused) == "TASK_STATE_REJECTED"
    assert error(refused)["code"] == "skill_not_advertised"
    assert not refused.artifacts


async def test_a_text_only_caller_gets_the_held_part_and_the_summary_of_a_fixed_result(
    agent: Agent, registry: Registry
) -> None:
    capability = registry.get("lookup_inventory")
    assert capability is not None and capability.interface is not None
    request = {"skill": DESCRIBE_SKILL_ID, "arguments": {"skill_id": "lookup_inventory"}}
    for modes in ([], ["text/plain"]):
        task = await agent.send(data_message(request), accepted_output_modes=modes)
        assert state(task) == "TASK_STATE_COMPLETED", task.status
        (artifact,) = task.artifacts
        assert wire(artifact.parts[0]) == wire(old_answer(capability.interface))
    assert [p.WhichOneof("content") for p in artifact.parts] == ["data", "text"]
    assert "skill_id: lookup_inventory" in artifact.parts[1].text
