"""The tasks page prints a result and its records in their schemas' member order."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent.console.tasks import task_view

OUTPUT = {"type": "object", "required": ["verdict", "link_id"], "properties": {"zeta": {}}}
RECORD = {"type": "object", "required": ["value", "at"]}


def schema_of(skill: str, kind: str) -> Mapping[str, Any] | None:
    return {"result": OUTPUT, "sample": RECORD}.get(kind) if skill == "s" else None


def task(skill: str) -> dict[str, Any]:
    return {
        "id": "t1",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "metadata": {"routing": {"skill_id": skill}},
        "artifacts": [
            {
                "artifactId": "result",
                "parts": [{"data": {"zeta": 1, "link_id": "l", "a": 0, "verdict": "v"}}],
            },
            {"artifactId": "r1", "name": "sample", "parts": [{"data": {"at": "t", "value": 3}}]},
        ],
    }


def test_the_result_and_its_records_follow_their_schemas() -> None:
    view = task_view(task("s"), schema_of)
    assert list(json.loads(view["result"]["data"])) == ["verdict", "link_id", "zeta", "a"]
    assert list(json.loads(view["records"][0]["data"])) == ["value", "at"]


def test_without_a_schema_members_are_printed_by_name() -> None:
    for view in (task_view(task("other"), schema_of), task_view(task("s"))):
        data = json.loads(view["artifacts"][0]["data"])
        assert list(data) == sorted(data)
