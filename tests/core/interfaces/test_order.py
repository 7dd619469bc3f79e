"""JSON in its schema's order (agent/interfaces/order.py), whatever order it arrived in."""

from __future__ import annotations

import json
import random
from typing import Any

from agent.interfaces import trusted_schema
from agent.interfaces.order import (
    document_order,
    in_schema_order,
    member_order,
    schema_document_order,
)

OUTPUT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["link_id", "status", "verdict", "directions"],
    "properties": {
        "link_id": {"type": "string"},
        "status": {"type": "string"},
        "note": {"type": "string"},
        "verdict": {"type": "string"},
        "directions": {"type": "array", "items": {"$ref": "#/$defs/direction"}},
    },
    "$defs": {
        "direction": {
            "type": "object",
            "required": ["direction", "samples"],
            "properties": {"direction": {"type": "string"}, "samples": {"type": "integer"}},
        }
    },
}
RESULT = {
    "link_id": "l-1",
    "status": "up",
    "note": "n",
    "verdict": "fits",
    "directions": [{"direction": "a_to_b", "samples": 3, "zz": 1, "aa": 2}],
    "extra": {"b": 1, "a": 2},
}


def shuffled(value: Any, rng: random.Random) -> Any:
    """``value`` with every object's members in a random order (as a protobuf Struct gives)."""
    if isinstance(value, dict):
        names = list(value)
        rng.shuffle(names)
        return {name: shuffled(value[name], rng) for name in names}
    if isinstance(value, list):
        return [shuffled(item, rng) for item in value]
    return value


def test_members_follow_required_then_other_properties_then_the_rest_by_name() -> None:
    for seed in range(20):
        ordered = in_schema_order(
            shuffled(RESULT, random.Random(seed)), shuffled(OUTPUT, random.Random(seed + 99))
        )
        assert list(ordered) == ["link_id", "status", "verdict", "directions", "note", "extra"]
        assert list(ordered["directions"][0]) == ["direction", "samples", "aa", "zz"]
        assert list(ordered["extra"]) == ["a", "b"]  # no schema: by name
        assert ordered == RESULT  # the same members and values


def test_branches_and_additional_properties_are_followed() -> None:
    schema = {
        "allOf": [{"required": ["kind"], "properties": {"kind": {}}}],
        "then": {"required": ["site"], "properties": {"site": {}}},
        "additionalProperties": {"required": ["y", "x"]},
    }
    ordered = in_schema_order({"z": {"x": 1, "y": 2}, "site": "s", "kind": "k"}, schema)
    assert list(ordered) == ["kind", "site", "z"]
    assert list(ordered["z"]) == ["y", "x"]


def test_hostile_instances_and_schemas_are_ordered_or_left_whole() -> None:
    deep: Any = {"b": 1, "a": 1}
    for _ in range(5000):
        deep = {"n": deep}
    assert in_schema_order(deep, {}) is not None  # deeper than the bound: left as it is
    looping = {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}
    assert in_schema_order({"b": 1, "a": 2}, looping) == {"a": 2, "b": 1}
    odd = {"required": [1, None, "b"], "properties": ["not", "a", "map"], "items": 5}
    assert list(in_schema_order({"a": 1, "b": 2, "\u0000": 3, "\u3000": 4}, odd)) == [
        "b",
        "\u0000",
        "a",
        "\u3000",
    ]
    assert in_schema_order([1, "x", None], True) == [1, "x", None]
    assert member_order({}, ["b", "a", "b"]) == ["a", "b"]


def test_a_schema_document_reads_from_its_identity_down() -> None:
    document = schema_document_order(shuffled(OUTPUT, random.Random(3)))
    assert list(document)[:2] == ["$schema", "type"]
    assert list(document["properties"]) == ["link_id", "status", "verdict", "directions", "note"]
    assert json.dumps(document, sort_keys=True) == json.dumps(OUTPUT, sort_keys=True)


def test_an_interface_document_follows_the_trusted_schema() -> None:
    reference = {
        "digest": "sha256:" + "0" * 64,
        "resolution": {"schema": OUTPUT, "type": "inline"},
        "version": "1.0",
        "dialect": "https://json-schema.org/draft/2020-12/schema",
        "schema_uri": "urn:x",
    }
    document = {
        "constraints": {},
        "supporting_record_schemas": {"b-kind": reference, "a-kind": reference},
        "output_schema": reference,
        "input_schema": reference,
        "skill_version": "1.0",
        "skill_id": "s",
        "interface_version": "1.0",
        "interaction": {},
        "authority": {},
    }
    ordered = document_order(shuffled(document, random.Random(5)), trusted_schema())
    assert list(ordered) == list(trusted_schema()["properties"])
    assert list(ordered["output_schema"]) == [
        "schema_uri",
        "version",
        "dialect",
        "digest",
        "resolution",
    ]
    assert list(ordered["supporting_record_schemas"]) == ["a-kind", "b-kind"]
    assert list(ordered["input_schema"]["resolution"]["schema"])[:2] == ["$schema", "type"]


def test_a_huge_object_or_a_deep_schema_is_ordered_whole() -> None:
    names = [f"m{i:06d}" for i in range(200_000)]
    schema = {"required": names[::-1], "properties": {n: {} for n in names}}
    ordered = in_schema_order(dict.fromkeys(names, 0), schema)
    assert list(ordered) == names[::-1]
    assert in_schema_order({"a": 1}, {"required": "a"}) == {"a": 1}  # not an array: no order
    deep: dict[str, Any] = {"required": ["b"]}
    for _ in range(5000):
        deep = {"allOf": [deep]}
    assert list(in_schema_order({"a": 1, "b": 2}, deep)) == ["a", "b"]  # past the bound: by name
