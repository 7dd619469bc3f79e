"""agent/interfaces/fast_check.py says "valid" exactly when jsonschema finds no error.

Differential, over every shipped schema (skills, fixture skills, the agent's own) and a set
written to use every keyword the fast check knows: instances drawn from each schema's own
shape (members present and missing, numbers at and past each bound, strings at each length,
date-times well and badly formed, extra members, wrong types) and arbitrary JSON. The check
must agree with ``iter_errors`` on every one; and the shipped schemas must all compile, or
the fast path would silently not apply.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.interfaces.fast_check import compile_check
from agent.interfaces.validation import _is_date_time, compile_validator, error_details

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(
    [
        *ROOT.glob("skills/*/*.schema.json"),
        *ROOT.glob("tests/fixture_skills/*/*.schema.json"),
        *ROOT.glob("agent/_schemas/*.json"),  # the trusted Skill Interface Schema among them
    ]
)
WRITTEN: list[Any] = [
    {
        "type": "object",
        "required": ["a"],
        "additionalProperties": {"type": ["integer", "null"]},
        "properties": {
            "a": {"anyOf": [{"type": "string", "pattern": "^x[0-9]+$"}, {"const": "y"}]},
            "b": {"oneOf": [{"type": "number", "exclusiveMinimum": 0}, {"maximum": 5}]},
            "c": {"not": {"enum": ["no", "never"]}},
            "d": {"$ref": "#/$defs/window"},
            "e": {"type": "array", "items": {"$ref": "#/$defs/window"}, "maxItems": 2},
        },
        "if": {"properties": {"a": {"const": "y"}}, "required": ["a"]},
        "then": {"required": ["b"]},
        "else": {"properties": {"b": {"exclusiveMaximum": 3.5}}},
        "$defs": {
            "window": {
                "type": "object",
                "additionalProperties": False,
                "required": ["from"],
                "properties": {
                    "from": {"type": "string", "format": "date-time"},
                    "n": {"type": "integer", "minimum": -2, "maximum": 2},
                    "label": {"type": "string", "minLength": 1, "maxLength": 3},
                },
            }
        },
    },
    {"allOf": [{"type": "array", "minItems": 1}, {"items": {"type": "boolean"}}]},
    {"type": ["string", "number"], "minLength": 2, "minimum": 10},
    {
        "$ref": "#/$defs/tree",
        "$defs": {"tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
    },
    {
        "type": "object",
        "propertyNames": {"minLength": 1, "pattern": "^[a-z]"},
        "properties": {
            "tags": {"type": "array", "uniqueItems": True},
            "modes": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": True},
            "any": {"uniqueItems": False},
        },
    },
    # Property names are written into the generated source: every kind of quote, escape,
    # line break, NUL, lone surrogate and code that must stay a name.
    {
        "type": "object",
        "required": ["'", '"', "\\"],
        "properties": {
            name: {"type": "integer", "maximum": 3}
            for name in ("'", '"', "\\", "\n", "\x00", "\ud800", "'''", "{v}", "__import__('os')")
        },
        "additionalProperties": False,
    },
]

json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, 1.0, 2.0, -0.5, 3.5, 10.0])
    | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
DATE_TIMES = st.sampled_from(
    [
        "2026-12-01T10:00:00Z",
        "2026-12-01t10:00:00.5z",
        "2026-12-01T10:00:00+01:00",
        "2026-12-01 10:00:00Z",
        "2026-13-01T10:00:00Z",
        "2026-12-01T10:00:00Z\n",
        "yesterday",
    ]
)


ALIKE: list[Any] = ["a", "a", "b", 1, 1.0, 0, True, False, None, [1], [True], {"a": 1}, {"a": 1.0}]
"""Items for uniqueItems: equal as JSON (1 and 1.0, [1] and [1]) or only to Python (True, 1)."""


def _resolve(root: Any, ref: str) -> Any:
    target = root
    for token in ref[2:].split("/"):
        target = target[token]
    return target


def shaped(schema: Any, root: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Instances near ``schema``'s shape: mostly almost valid, sometimes anything."""
    if depth > 4 or not isinstance(schema, dict):
        return json_values
    options: list[st.SearchStrategy[Any]] = [json_values]
    if "$ref" in schema:
        options.append(shaped(_resolve(root, schema["$ref"]), root, depth + 1))
    for keyword in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(keyword, []):
            options.append(shaped(sub, root, depth + 1))
    if "enum" in schema:
        options.append(st.sampled_from(schema["enum"]))
    if "const" in schema:
        options.append(st.just(schema["const"]))
    declared = schema.get("type", [])
    types = [declared] if isinstance(declared, str) else list(declared)
    if "properties" in schema or "required" in schema:
        types.append("object")
    for kind in types:
        if kind == "object":
            properties = schema.get("properties", {})
            members = {name: shaped(sub, root, depth + 1) for name, sub in properties.items()}
            options.append(
                st.fixed_dictionaries(
                    {},
                    optional={
                        **members,
                        **{name: json_values for name in schema.get("required", [])},
                    },
                ).flatmap(
                    lambda base: (
                        st.dictionaries(
                            st.sampled_from(["zz", "extra"]), json_values, max_size=1
                        ).map(lambda extra, base=base: {**base, **extra})
                        | st.just(base)
                    )
                )
            )
            required = schema.get("required", [])
            options.append(
                st.fixed_dictionaries({n: members.get(n, json_values) for n in required})
            )
        elif kind in ("integer", "number"):
            edges = [
                schema[k]
                for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
                if k in schema
            ]
            near = [e + d for e in edges for d in (-1, -0.5, 0, 0.5, 1)] or [0, 1, -1]
            options.append(st.sampled_from(near) | st.sampled_from(near).map(float))
            options.append(st.integers(-3, 3))
        elif kind == "string":
            if schema.get("format") == "date-time":
                options.append(DATE_TIMES)
            if "pattern" in schema:
                options.append(st.from_regex(schema["pattern"], fullmatch=True))
            sizes = [schema.get("minLength", 0), schema.get("maxLength", 3)]
            options.append(
                st.sampled_from(sizes).flatmap(
                    lambda n: st.text("ab", min_size=max(n - 1, 0), max_size=n + 1)
                )
            )
        elif kind == "array":
            items = shaped(schema.get("items", True), root, depth + 1)
            options.append(st.lists(items, max_size=schema.get("maxItems", 2) + 1))
            if schema.get("uniqueItems"):  # repeats, and values JSON and Python compare apart
                options.append(st.lists(st.sampled_from(ALIKE), max_size=4))
        elif kind == "boolean":
            options.append(st.booleans())
        elif kind == "null":
            options.append(st.none())
    return st.one_of(options)


def _cases() -> list[tuple[str, Any]]:
    shipped = [
        (path.relative_to(ROOT).as_posix(), json.loads(path.read_text())) for path in SHIPPED
    ]
    return shipped + [(f"written[{i}]", schema) for i, schema in enumerate(WRITTEN)]


CASES = _cases()


def test_every_shipped_schema_compiles_to_a_fast_check() -> None:
    uncompiled = [name for name, schema in CASES if compile_check(schema, _is_date_time) is None]
    assert uncompiled == []


@pytest.mark.parametrize(("name", "schema"), CASES, ids=[name for name, _ in CASES])
def test_the_fast_check_agrees_with_jsonschema(name: str, schema: Any) -> None:
    validator = compile_validator(schema)
    check = compile_check(schema, _is_date_time)
    assert check is not None

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(shaped(schema, schema))
    def agree(instance: Any) -> None:
        valid = next(iter(validator.iter_errors(instance)), None) is None
        assert check(instance) is valid, instance
        assert (error_details(validator, instance) == []) is valid

    agree()


def _nested(depth: int, keyword: str) -> Any:
    schema: Any = {"type": "integer", "minimum": 0}
    for _ in range(depth):
        if keyword == "properties":
            schema = {"type": "object", "required": ["a"], "properties": {"a": schema}}
        elif keyword == "items":
            schema = {"type": "array", "items": schema}
        else:
            schema = {keyword: [schema, {"type": "string"}]}
    return schema


def _instance(depth: int, keyword: str, leaf: Any) -> Any:
    for _ in range(depth):
        leaf = {"a": leaf} if keyword == "properties" else [leaf] if keyword == "items" else leaf
    return leaf


@pytest.mark.parametrize("keyword", ["properties", "items", "anyOf", "allOf"])
@pytest.mark.parametrize("depth", [1, 12, 39])
def test_deep_schemas_compile_and_agree(keyword: str, depth: int) -> None:
    """Nested to just under the depth cap, a schema still compiles (and agrees)."""
    schema = _nested(depth, keyword)
    check = compile_check(schema, _is_date_time)
    assert check is not None
    validator = compile_validator(schema)
    for leaf in (0, 7, -1, "x", None, 1.5):
        instance = _instance(depth, keyword, leaf)
        assert check(instance) is (next(iter(validator.iter_errors(instance)), None) is None)


def test_unique_items_are_told_apart_as_json_does() -> None:
    check = compile_check({"uniqueItems": True}, _is_date_time)
    assert check is not None
    validator = compile_validator({"uniqueItems": True})
    for items, unique in (
        (["a", "b", None, 1, 2.5, True, False], True),  # True and 1 differ in JSON
        ([0, False, "0", "", None, [], {}], True),
        (["a", "a"], False),
        ([1, 1.0], False),  # one number to JSON
        ([0, -0.0], False),
        ([[1], [1.0]], False),
        ([[1], [True]], True),
        ([[1, 2], [2, 1]], True),  # arrays in order
        ([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1.0}], False),  # objects by members
        ([{"a": 1}, {"a": True}], True),
        ([{"a": 1}, {"b": 1}], True),
    ):
        assert check(items) is unique, items
        assert (next(iter(validator.full.iter_errors(items)), None) is None) is unique, items
        assert (error_details(validator, items) == []) is unique, items
    assert check([object(), object()]) is False  # not JSON: jsonschema decides


def test_a_schema_too_deep_is_left_to_jsonschema() -> None:
    assert compile_check(_nested(45, "properties"), _is_date_time) is None


def test_what_it_does_not_know_is_left_to_jsonschema() -> None:
    for schema in (
        False,
        {"uniqueItems": "yes"},
        {"propertyNames": False},
        {"patternProperties": {"^a": {}}, "additionalProperties": False},
        {"enum": [1, True]},
        {"multipleOf": 3},
        {"$ref": "https://example.com/x"},
        {"properties": {"a": False}},
        {"maxLength": 10**5000},  # too long to write as a literal: jsonschema alone
    ):
        assert compile_check(schema, _is_date_time) is None
