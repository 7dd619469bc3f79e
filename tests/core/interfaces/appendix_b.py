"""The draft's Appendix B example (schemas as reconstructed in the digest, §16), shared by tests."""

from __future__ import annotations

import copy
import socket
from typing import Any

import pytest

SKILL_ID = "evaluate_resource_condition"
BASE = "https://example.com/schemas/network/"

INPUT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["resource_id", "condition"],
    "properties": {
        "resource_id": {"type": "string"},
        "condition": {
            "type": "object",
            "required": ["metric", "operator", "threshold", "unit"],
            "properties": {
                "metric": {"type": "string"},
                "operator": {"type": "string", "enum": ["gt", "gte", "lt", "lte"]},
                "threshold": {"type": "number"},
                "unit": {"type": "string"},
            },
        },
    },
}
OUTPUT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["result", "observed_value", "unit", "supporting_record_refs"],
    "properties": {
        "result": {"type": "string", "enum": ["condition_met", "condition_not_met"]},
        "observed_value": {"type": "number"},
        "unit": {"type": "string"},
        "supporting_record_refs": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    },
}
RECORD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["record_id", "resource_id", "metric", "value", "unit", "observed_at"],
    "properties": {
        "record_id": {"type": "string"},
        "resource_id": {"type": "string"},
        "metric": {"type": "string"},
        "value": {"type": "number"},
        "unit": {"type": "string"},
        "observed_at": {"type": "string", "format": "date-time"},
    },
}

ARGUMENTS = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
RESULT = {
    "result": "condition_not_met",
    "observed_value": 42,
    "unit": "percent",
    "supporting_record_refs": ["observation-7"],
}
RECORD = {
    "record_id": "observation-7",
    "resource_id": "network-resource-123",
    "metric": "utilization",
    "value": 42,
    "unit": "percent",
    "observed_at": "2026-08-11T12:00:01Z",
}


def worked_example(**overrides: Any) -> dict[str, Any]:
    """Keyword arguments for build_interface; each call gets fresh copies."""
    kwargs: dict[str, Any] = {
        "skill_id": SKILL_ID,
        "skill_version": "1.0",
        "input_schema": (BASE + "evaluate-resource-condition-input", "1.0", INPUT_SCHEMA),
        "output_schema": (BASE + "evaluate-resource-condition-output", "1.0", OUTPUT_SCHEMA),
        "record_schemas": {
            "resource-observation": (BASE + "resource-observation", "1.0", RECORD_SCHEMA)
        },
        "interaction": {"response_modes": ["sync", "stream", "poll"], "cancelable": False},
        "authority": {"default_mode": "observe_only", "approval_may_be_required": False},
        "constraints": {},
    }
    kwargs.update(overrides)
    return copy.deepcopy(kwargs)


def assert_never_connected(server: socket.socket) -> None:
    """A connection attempt would sit in the backlog and accept() would return it."""
    server.settimeout(0.3)
    with pytest.raises(TimeoutError):
        server.accept()
