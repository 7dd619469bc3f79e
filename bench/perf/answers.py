"""What counts as an answered request in bench.perf: its task COMPLETED, with its result.

A JSON-RPC 200 with ``TASK_STATE_COMPLETED`` somewhere in the body is not enough: a task that
completed without its result artifact (or a stream that stopped after the artifact) would be
counted as throughput. Each check parses the whole answer (one JSON document, or every SSE
``data:`` event of a stream), takes the task's final state and all of its artifacts, and
returns why the answer does not count, or None when it does. Parsing costs the generator
10-50 µs a request (the 10 kB check_link_capacity answer is the largest), which it can afford.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

COMPLETED = "TASK_STATE_COMPLETED"

Check = Callable[[bytes], str | None]
"""An answer's body in, None if it counts, else the reason it does not (one short line)."""
Result = Callable[[list[dict[str, Any]]], str | None]
"""The task's artifacts in, None if the expected result is among them, else what is missing."""


def settled(body: bytes) -> tuple[str, list[dict[str, Any]]]:
    """(final task state, every artifact) of a SendMessage answer or an SSE stream.

    Raises ValueError with the reason when the body is no task at all (a JSON-RPC error, a
    direct message, unparsable bytes).
    """
    stripped = body.lstrip()
    if stripped.startswith(b"data:"):
        events = [
            json.loads(line[5:]) for line in stripped.split(b"\n") if line.startswith(b"data:")
        ]
    else:
        events = [json.loads(body)]
    if not events:
        raise ValueError("empty answer")
    state = ""
    artifacts: list[dict[str, Any]] = []
    for event in events:
        if "error" in event:
            raise ValueError(f"JSON-RPC error {json.dumps(event['error'])[:200]}")
        result = event.get("result") or {}
        if "task" in result:
            task = result["task"]
            state = task.get("status", {}).get("state", "")
            artifacts += task.get("artifacts", [])
        elif "statusUpdate" in result:
            state = result["statusUpdate"].get("status", {}).get("state", "")
        elif "artifactUpdate" in result:
            artifacts.append(result["artifactUpdate"].get("artifact", {}))
        else:
            raise ValueError(f"not a task event: {sorted(result)}")
    return state, artifacts


def data_parts(artifacts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``data`` of every Data Part of every artifact, in order."""
    return [
        part["data"]
        for artifact in artifacts
        for part in artifact.get("parts", [])
        if isinstance(part.get("data"), dict)
    ]


def completed_with(result: Result) -> Check:
    """A task answer that counts: final state COMPLETED and ``result`` finds what it expects."""

    def check(body: bytes) -> str | None:
        try:
            state, artifacts = settled(body)
        except (ValueError, AttributeError, TypeError) as exc:
            return f"no task: {exc}"
        if state != COMPLETED:
            return f"task ended {state or 'without a state'}"
        return result(artifacts)

    return check


def echoed(request_data: dict[str, Any]) -> Result:
    """The echo's artifact: the request's Data Part, returned as it was sent."""

    def result(artifacts: list[dict[str, Any]]) -> str | None:
        if request_data in data_parts(artifacts):
            return None
        return "completed without the echoed Data Part"

    return result


def _record_ids(artifacts: list[dict[str, Any]]) -> list[str]:
    return [d["record_id"] for d in data_parts(artifacts) if isinstance(d.get("record_id"), str)]


def evaluated(artifacts: list[dict[str, Any]]) -> str | None:
    """evaluate_resource_condition's result Data Part (its outcome in ``result``, the observed
    value) and the supporting records it refers to, streamed as their own artifacts."""
    for data in data_parts(artifacts):
        if data.get("result") in ("condition_met", "condition_not_met"):
            if not isinstance(data.get("observed_value"), int | float):
                return "result without observed_value"
            refs = data.get("supporting_record_refs") or []
            missing = set(refs) - set(_record_ids(artifacts))
            if not refs or missing:
                return f"result without its supporting records (missing {sorted(missing)})"
            return None
    return "completed without an evaluate_resource_condition result"


def described(skill_id: str) -> Result:
    """describe_skill's document for ``skill_id``: its interface, version and digest."""

    def result(artifacts: list[dict[str, Any]]) -> str | None:
        for data in data_parts(artifacts):
            if (
                data.get("skill_id") == skill_id
                and isinstance(data.get("skill_interface"), dict)
                and str(data.get("interface_digest", "")).startswith("sha256:")
                and data.get("skill_version")
            ):
                return None
        return f"completed without the description of {skill_id}"

    return result


def capacity_checked(records: int | None) -> Result:
    """check_link_capacity's verdict (it fits) and its supporting records, each one present as
    its own artifact: exactly ``records`` of them, or (None) as many as the verdict refers to."""

    def result(artifacts: list[dict[str, Any]]) -> str | None:
        for data in data_parts(artifacts):
            if isinstance(data.get("verdict"), str) and "fits" in data:
                if data["fits"] is not True:
                    return f"verdict does not fit: {data['verdict'][:100]}"
                refs = data.get("supporting_record_refs") or []
                present = set(_record_ids(artifacts)) & set(refs)
                expected = len(refs) if records is None else records
                if not refs or len(refs) != expected or len(present) != expected:
                    return (
                        f"{len(refs)} record refs and {len(present)} of them present, "
                        f"expected {expected or 'some'}"
                    )
                return None
        return "completed without a check_link_capacity verdict"

    return result


def mcp_evaluated(body: bytes) -> str | None:
    """An MCP tools/call answer (JSON): no tool error, evaluate_resource_condition's result as
    structuredContent, and every record it refers to embedded as a resource."""
    try:
        answer = json.loads(body)
    except ValueError:
        return "not JSON"
    if "error" in answer:
        return f"JSON-RPC error {json.dumps(answer['error'])[:200]}"
    result = answer.get("result") or {}
    if result.get("isError"):
        return f"tool error {json.dumps(result.get('structuredContent'))[:200]}"
    output = result.get("structuredContent") or {}
    if output.get("result") not in ("condition_met", "condition_not_met"):
        return "no evaluation in structuredContent"
    embedded = {
        (block.get("_meta") or {}).get("netagent/artifact_id")
        for block in result.get("content", [])
        if block.get("type") == "resource"
    }
    missing = set(output.get("supporting_record_refs") or []) - embedded
    return f"records not embedded: {sorted(missing)}" if missing else None


def card(body: bytes) -> str | None:
    """An agent card: JSON with at least one skill."""
    try:
        skills = json.loads(body).get("skills")
    except (ValueError, AttributeError) as exc:
        return f"not a card: {exc}"
    return None if skills else "card without skills"
