"""Validators: date-time asserted, nothing fetched, details that never echo values."""

from __future__ import annotations

import json
import socket

import pytest
from appendix_b import INPUT_SCHEMA, RECORD, RECORD_SCHEMA, assert_never_connected
from jsonschema import Draft202012Validator
from referencing.exceptions import Unresolvable

from agent.interfaces import (
    MAX_DETAILS,
    ReferenceRefusedError,
    SchemaCheckError,
    check_schema,
    compile_validator,
    error_details,
    json_type_name,
)
from agent.interfaces.draft2020 import REGISTRY


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("2026-08-11T12:00:01Z", True),
        ("2026-08-11T12:00:01.250+02:00", True),
        ("2026-08-11t12:00:01z", True),  # RFC 3339 §5.6 allows lowercase t and z
        ("yesterday", False),
        ("2026-08-11", False),
        ("2026-02-30T12:00:01Z", False),
        ("2026-08-11T12:00:01Z\n", False),
    ],
)
def test_date_time_is_asserted(value: str, valid: bool) -> None:
    validator = compile_validator(RECORD_SCHEMA)
    assert validator.is_valid({**RECORD, "observed_at": value}) is valid


def test_only_date_time_is_asserted() -> None:
    """Agent and client must agree whatever format packages are installed (project choice 15)."""
    validator = compile_validator({"type": "string", "format": "email"})
    assert validator.is_valid("not an email address")


@pytest.mark.parametrize(
    ("schema", "pointer"),
    [
        ({"$ref": "https://example.com/other.json"}, "/$ref"),
        ({"properties": {"a": {"$ref": "other.json#/x"}}}, "/properties/a/$ref"),
        ({"items": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}, "/items/$ref"),
        ({"$defs": {"a": {"$dynamicRef": "urn:x#meta"}}}, "/$defs/a/$dynamicRef"),
        ({"$ref": "#/$defs/missing"}, "/$ref"),
        ({"$schema": "http://json-schema.org/draft-07/schema#"}, "/$schema"),
        ({"type": "strng"}, "/type"),
        ({"pattern": "("}, "/pattern"),
        ([], ""),
    ],
)
def test_check_schema_refuses(schema: object, pointer: str) -> None:
    with pytest.raises(SchemaCheckError) as caught:
        check_schema(schema)
    assert caught.value.pointer == pointer


@pytest.mark.parametrize(
    "schema",
    [
        True,
        False,
        {"$defs": {"n": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/n"}}},
        {"$defs": {"n": {"$anchor": "num", "type": "integer"}}, "items": {"$ref": "#num"}},
        {"$id": "https://example.com/s", "$defs": {"n": {}}, "$ref": "#/$defs/n"},
        {"properties": {"$ref": {"type": "string"}, "$schema": {"type": "string"}}},
        {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": "#"},
    ],
)
def test_check_schema_accepts_self_contained_schemas(schema: object) -> None:
    check_schema(schema)
    compile_validator(schema)


def test_remote_ref_is_refused_and_never_fetched(spy_port: tuple[int, socket.socket]) -> None:
    port, server = spy_port
    schema = {"properties": {"x": {"$ref": f"http://127.0.0.1:{port}/x.json"}}}
    with pytest.raises(SchemaCheckError, match="not a local"):
        compile_validator(schema)
    # Even without the up-front check, the registry refuses to retrieve anything.
    unchecked = Draft202012Validator(schema, registry=REGISTRY)
    with pytest.raises(Unresolvable) as caught:
        unchecked.is_valid({"x": 1})
    causes: list[BaseException] = []
    cause: BaseException | None = caught.value
    while cause is not None:
        causes.append(cause)
        cause = cause.__cause__ or cause.__context__
    assert any(isinstance(c, ReferenceRefusedError) for c in causes)
    assert_never_connected(server)


def test_worked_example_missing_unit_points_at_the_member() -> None:
    arguments = {
        "resource_id": "r-1",
        "condition": {"metric": "m", "operator": "gt", "threshold": 1},
    }
    details = error_details(compile_validator(INPUT_SCHEMA), arguments)
    assert details == [
        {
            "instance_path": "/condition/unit",
            "schema_path": "/properties/condition/required",
            "keyword": "required",
            "expected": "string",
            "actual": "missing",
        }
    ]


def test_worked_example_threshold_string_gives_the_draft_detail() -> None:
    arguments = {
        "resource_id": "r-1",
        "condition": {"metric": "m", "operator": "gte", "threshold": "80", "unit": "percent"},
    }
    details = error_details(compile_validator(INPUT_SCHEMA), arguments)
    assert details == [
        {
            "instance_path": "/condition/threshold",
            "schema_path": "/properties/condition/properties/threshold/type",
            "keyword": "type",
            "expected": "number",
            "actual": "string",
        }
    ]
    assert "80" not in json.dumps(details)


def test_no_detail_ever_echoes_an_instance_value() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"enum": ["x", "y"]},
            "c": {"const": "fixed"},
            "d": {"pattern": "^[0-9]+$"},
            "e": {"maxLength": 3},
            "f": {"type": "string", "format": "date-time"},
            "g": {"not": {"type": "string"}},
        },
        "additionalProperties": False,
    }
    secret = "hunter2-secret"
    instance = {k: secret for k in "abcdefg"} | {"h": secret}
    details = error_details(compile_validator(schema), instance)
    assert [d["instance_path"] for d in details] == [f"/{k}" for k in "abcdefgh"]
    assert secret not in json.dumps(details)
    expected = {d["instance_path"]: d.get("expected") for d in details}
    assert expected == {
        "/a": "integer",
        "/b": '["x","y"]',
        "/c": '"fixed"',
        "/d": "^[0-9]+$",
        "/e": "maxLength 3",
        "/f": "date-time",
        "/g": None,
        "/h": "absent",
    }


def test_schema_path_follows_refs_to_where_the_keyword_is() -> None:
    schema = {
        "$defs": {"condition": {"type": "object", "properties": {"t": {"type": "number"}}}},
        "properties": {"condition": {"$ref": "#/$defs/condition"}},
    }
    (detail,) = error_details(compile_validator(schema), {"condition": {"t": "80"}})
    assert detail["instance_path"] == "/condition/t"
    assert detail["schema_path"] == "/$defs/condition/properties/t/type"


def test_pointers_escape_per_rfc6901() -> None:
    schema = {"required": ["a/b~c"], "properties": {"x~y": {"type": "string"}}}
    details = error_details(compile_validator(schema), {"x~y": 1})
    assert [(d["instance_path"], d["schema_path"]) for d in details] == [
        ("/a~1b~0c", "/required"),
        ("/x~0y", "/properties/x~0y/type"),
    ]


def test_false_subschemas_name_the_member() -> None:
    schema = {
        "properties": {"legacy": False},
        "patternProperties": {"^x-": False},
        "prefixItems": [{"type": "string"}, False],
    }
    details = error_details(compile_validator(schema), {"legacy": 1, "x-a": True, "ok": 0})
    assert [(d["instance_path"], d["schema_path"], d["keyword"]) for d in details] == [
        ("/legacy", "/properties/legacy", "false"),
        ("/x-a", "/patternProperties/^x-", "false"),
    ]
    (item,) = error_details(compile_validator(schema), ["a", "b"])
    assert (item["instance_path"], item["schema_path"]) == ("/1", "/prefixItems/1")


def test_details_are_ordered_deduplicated_and_capped() -> None:
    names = [f"m{i:02d}" for i in reversed(range(30))]  # schema order is not sorted order
    schema = {"required": names, "properties": {"n": {"type": "number"}}}
    first = error_details(compile_validator(schema), {"n": "x", "extra": 1})
    second = error_details(compile_validator(schema), {"extra": 1, "n": "x"})
    assert first == second
    assert len(first) == MAX_DETAILS
    assert [d["instance_path"] for d in first] == sorted(f"/{n}" for n in names)[:MAX_DETAILS]
    assert len(error_details(compile_validator(schema), {}, limit=50)) == 30


def test_valid_instance_has_no_details() -> None:
    assert error_details(compile_validator(RECORD_SCHEMA), RECORD) == []


@pytest.mark.parametrize(
    ("value", "name"),
    [
        (None, "null"),
        (True, "boolean"),
        (80, "integer"),
        (80.0, "integer"),
        (80.5, "number"),
        ("80", "string"),
        ([80], "array"),
        ({"a": 80}, "object"),
    ],
)
def test_json_type_name(value: object, name: str) -> None:
    assert json_type_name(value) == name
