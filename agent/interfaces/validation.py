"""JSON Schema 2020-12 validators that never fetch anything, and draft-shaped error details.

Three rules hold for every schema the agent and the client validate against:

* ``date-time`` is asserted per RFC 3339 (DECISIONS #15); no other format is, so agent and
  client agree whatever optional format packages happen to be installed.
* A ``$ref``/``$dynamicRef`` must be a local ``#...`` fragment that resolves inside the schema
  (DECISIONS #16). ``check_schema`` refuses anything else up front, and the validator's registry
  refuses every retrieval, so a reference that slipped through raises instead of being fetched.
* Error details name locations and JSON types, never instance values (draft §9.1).
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jsonschema import Draft202012Validator, FormatChecker, validators
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012
from rfc3339_validator import validate_rfc3339

from agent import schema_memo
from agent.errors import NetagentError, SchemaInterfaceError
from agent.interfaces.fast_check import Check, compile_check
from agent.interfaces.pointer import bounded_pointer, json_pointer
from agent.interfaces.spec import DIALECT

__all__ = [
    "FORMAT_CHECKER",
    "MAX_DETAILS",
    "MISSING",
    "ReferenceRefusedError",
    "SchemaCheckError",
    "check_schema",
    "compile_validator",
    "error_details",
    "json_type_name",
]

MAX_DETAILS: Final = 20
"""Cap on ``details`` entries: enough to fix a request, bounded for hostile input."""

MISSING: Final = "missing"
"""``actual`` for a required member that is absent."""

_MAX_EXPECTED_CHARS: Final = 120
_REFERENCE_KEYWORDS: Final = ("$ref", "$dynamicRef")
_BOUND_KEYWORDS: Final = frozenset(
    {
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains",
        "minProperties", "maxProperties",
    }
)  # fmt: skip

_Locations = dict[int, list[str | int]]

FORMAT_CHECKER: Final = FormatChecker(formats=())


@FORMAT_CHECKER.checks("date-time")
def _is_date_time(instance: object) -> bool:
    """RFC 3339 ``date-time``; lowercase ``t``/``z`` allowed (§5.6), a trailing newline not."""
    if not isinstance(instance, str):
        return True  # format applies to strings only
    return "\n" not in instance and bool(validate_rfc3339(instance.upper()))


class SchemaCheckError(SchemaInterfaceError, ValueError):
    """An embedded schema is unusable; ``pointer`` locates the problem inside that schema."""

    def __init__(self, pointer: str, reason: str) -> None:
        self.pointer = pointer
        self.reason = reason
        super().__init__(f"{pointer}: {reason}" if pointer else reason)


class ReferenceRefusedError(SchemaInterfaceError, LookupError):
    """Raised instead of retrieving a schema: interface 1.0 never fetches anything."""


def _refuse(uri: str) -> Resource[Any]:
    raise ReferenceRefusedError(f"refusing to retrieve {uri!r}: only local references resolve")


# referencing's attrs shim (_attrs.pyi, the pre-PEP 681 ``__dataclass_transform__``) hides
# Registry's fields from mypy, which then sees an ``__init__`` without ``retrieve``.
_REGISTRY: Final[Registry[Any]] = Registry(retrieve=_refuse)  # type: ignore[call-arg]


# jsonschema's descend() drops the member name or index (path and schema_path) when the
# subschema is `false`, so `"properties": {"legacy": false}` would blame the parent object.
# The three keywords that name a member are re-implemented below to keep it; the error
# carries the parent schema so error_details can locate the `false` exactly.


class _FalseSchemaError(ValidationError, NetagentError):
    """A value where the subschema is ``false``."""

    def __init__(
        self, value: Any, parent: Mapping[str, Any], key: str | int, schema_key: str | int
    ) -> None:
        super().__init__(
            "false schema", instance=value, schema=parent, path=[key], schema_path=[schema_key]
        )
        self.schema_key = schema_key


def _descend(
    validator: Any,
    value: Any,
    subschema: Any,
    key: str | int,
    schema_key: str | int,
    parent: Mapping[str, Any],
) -> Iterator[ValidationError]:
    if subschema is False:
        yield _FalseSchemaError(value, parent, key, schema_key)
    else:
        yield from validator.descend(value, subschema, path=key, schema_path=schema_key)


def _properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for name, subschema in properties.items():
            if name in instance:
                yield from _descend(validator, instance[name], subschema, name, name, schema)


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "object"):
        for pattern, subschema in patterns.items():
            for name, value in instance.items():
                if re.search(pattern, name):
                    yield from _descend(validator, value, subschema, name, pattern, schema)


def _prefix_items(validator: Any, prefix: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "array"):
        for (index, item), subschema in zip(enumerate(instance), prefix, strict=False):
            yield from _descend(validator, item, subschema, index, index, schema)


# types-jsonschema leaves extend() unannotated; it returns a validator class like create().
_Validator: Final[type[Validator]] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={
        "properties": _properties,
        "patternProperties": _pattern_properties,
        "prefixItems": _prefix_items,
    },
)


def check_schema(schema: Any) -> None:
    """Raise ``SchemaCheckError`` unless ``schema`` is a usable self-contained 2020-12 schema.

    Beyond the metaschema: every ``$ref``/``$dynamicRef`` must be a ``#...`` fragment that
    resolves inside ``schema``, and any ``$schema`` must be the 2020-12 dialect its reference
    declares. The walk is deliberately conservative: it visits every member, so a ``$ref``
    string inside ``const``/``default``/``examples`` data must be local too. A pass is
    remembered by content (``agent/schema_memo.py``): the registry's schemas are checked once,
    not at every start.
    """
    memo = schema_memo.key(schema, "2020-12 + local references", __file__)
    if schema_memo.passed(memo):
        return
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        reason = exc.message if len(exc.message) <= 200 else exc.message[:199] + "…"
        raise SchemaCheckError(
            json_pointer(exc.absolute_path), f"not a valid JSON Schema 2020-12 schema: {reason}"
        ) from None
    if isinstance(schema, dict):
        resolver = _REGISTRY.resolver_with_root(DRAFT202012.create_resource(schema))
        _check_references(schema, [], resolver)
    schema_memo.record(memo)


def _check_references(node: Any, path: list[str | int], resolver: Any) -> None:
    if isinstance(node, list):
        for index, item in enumerate(node):
            _check_references(item, [*path, index], resolver)
        return
    if not isinstance(node, dict):
        return
    if path and isinstance(node.get("$id"), str):
        resolver = resolver.in_subresource(DRAFT202012.create_resource(node))
    dialect = node.get("$schema")
    if isinstance(dialect, str) and dialect != DIALECT:
        raise SchemaCheckError(
            json_pointer([*path, "$schema"]), f"dialect {dialect!r} is not {DIALECT}"
        )
    for keyword in _REFERENCE_KEYWORDS:
        ref = node.get(keyword)
        if not isinstance(ref, str):
            continue
        where = json_pointer([*path, keyword])
        if not ref.startswith("#"):
            raise SchemaCheckError(
                where, f"{ref!r} is not a local '#' reference (remote schemas are never fetched)"
            )
        try:
            resolver.lookup(ref)
        except Unresolvable:
            raise SchemaCheckError(where, f"{ref!r} does not resolve inside the schema") from None
    for key, value in node.items():
        _check_references(value, [*path, key], resolver)


def compile_validator(schema: Any, *, checked: bool = False) -> Validator:
    """A 2020-12 validator asserting ``date-time`` that can never fetch; checks ``schema``
    first unless the caller just did (``checked``: ``verify_document`` checks every schema of
    the document it passes; checking again was half the registry's load time)."""
    if not checked:
        check_schema(schema)
    validator: Validator = _Validator(schema, registry=_REGISTRY, format_checker=FORMAT_CHECKER)
    compiled = _Compiled(compile_check(schema, _is_date_time), _locations(schema))
    key = id(validator)
    _FAST[key] = (weakref.ref(validator, lambda _gone: _FAST.pop(key, None)), compiled)
    return validator


@dataclass(frozen=True)
class _Compiled:
    """What a validator's schema gives once: a fast yes for valid instances (fast_check.py)
    and where each schema object sits (for error details)."""

    check: Check | None
    locations: _Locations


# By identity (validators compare by value and are unhashable), for as long as each lives.
_FAST: dict[int, tuple[weakref.ref[Validator], _Compiled]] = {}


def _compiled(validator: Validator) -> _Compiled:
    found = _FAST.get(id(validator))
    if found is None or found[0]() is not validator:
        # A validator made elsewhere: no fast check, and locations each time.
        return _Compiled(None, _locations(validator.schema))
    return found[1]


def json_type_name(value: Any) -> str:
    """The JSON Schema type of a value; integral numbers are ``integer`` (80 and 80.0 alike)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "unknown"


def error_details(
    validator: Validator, instance: Any, *, limit: int = MAX_DETAILS
) -> list[dict[str, str]]:
    """Draft §9.1 details for every failure, sorted by location, at most ``limit``; [] if valid.

    ``instance_path`` is relative to ``instance`` and, for a missing required member, names
    that member (DECISIONS #9). ``schema_path`` points at the failing keyword in the schema
    (through ``$ref``, to where the keyword really is). ``expected`` comes from the schema and
    ``actual`` is a JSON type name, so no instance value is ever echoed.
    """
    compiled = _compiled(validator)
    if compiled.check is not None:
        try:
            if compiled.check(instance):
                return []
        except RecursionError:
            pass  # an instance too deep for the fast check: jsonschema decides
    locations = compiled.locations
    found: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
    for error in validator.iter_errors(instance):
        for detail in _details_of(error, locations):
            found.setdefault(tuple(sorted(detail.items())), detail)
    ordered = sorted(
        found.values(),
        key=lambda d: (d["instance_path"], d["schema_path"], d["keyword"], d.get("expected", "")),
    )
    return ordered[:limit]


def _locations(schema: Any) -> _Locations:
    """Where each schema object sits, by identity: errors carry the object, not its pointer."""
    found: dict[int, list[str | int]] = {}

    def visit(node: Any, path: list[str | int]) -> None:
        if isinstance(node, dict):
            if id(node) in found:
                return
            found[id(node)] = path
            for key, value in node.items():
                visit(value, [*path, key])
        elif isinstance(node, list):
            for index, value in enumerate(node):
                visit(value, [*path, index])

    visit(schema, [])
    return found


def _schema_pointer(error: ValidationError, locations: _Locations, *tail: Any) -> str:
    where = locations.get(id(error.schema)) if isinstance(error.schema, dict) else None
    if where is None:  # a boolean root schema: the evaluation path is the location
        return json_pointer(error.absolute_schema_path)
    return json_pointer([*where, *tail])


def _details_of(error: ValidationError, locations: _Locations) -> Iterator[dict[str, str]]:
    at: list[str | int] = list(error.absolute_path)
    keyword, value, instance = error.validator, error.validator_value, error.instance
    if isinstance(error, _FalseSchemaError):
        pointer = _schema_pointer(error, locations, keyword, error.schema_key)
        yield _detail(at, pointer, "false", "absent", json_type_name(instance))
        return
    if not isinstance(keyword, str):  # the whole schema is `false`
        yield _detail(
            at, _schema_pointer(error, locations), "false", None, json_type_name(instance)
        )
        return
    pointer = _schema_pointer(error, locations, keyword)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    # The keyword implementations below only fail objects (arrays for items), so the
    # isinstance checks narrow without changing which branch runs.
    if keyword in ("required", "dependentRequired") and isinstance(instance, Mapping):
        for name in _missing(keyword, value, instance):
            yield _detail([*at, name], pointer, keyword, _member_type(schema, name), MISSING)
    elif keyword == "additionalProperties" and value is False and isinstance(instance, Mapping):
        for name in _additional(schema, instance):
            yield _detail([*at, name], pointer, keyword, "absent", json_type_name(instance[name]))
    elif keyword == "items" and value is False and isinstance(instance, list):
        for index in range(len(schema.get("prefixItems", ())), len(instance)):
            yield _detail([*at, index], pointer, keyword, "absent", json_type_name(instance[index]))
    else:
        yield _detail(at, pointer, keyword, _expected(keyword, value), json_type_name(instance))


def _detail(
    at: list[str | int], schema_path: str, keyword: str, expected: str | None, actual: str
) -> dict[str, str]:
    detail = {"instance_path": bounded_pointer(at), "schema_path": schema_path, "keyword": keyword}
    if expected is not None:
        detail["expected"] = expected
    detail["actual"] = actual
    return detail


def _missing(keyword: str, value: Any, instance: Mapping[str, Any]) -> list[str]:
    if keyword == "required":
        return [name for name in value if name not in instance]
    return [
        name
        for present, needed in value.items()
        if present in instance
        for name in needed
        if name not in instance
    ]


def _additional(schema: Mapping[str, Any], instance: Mapping[str, Any]) -> list[str]:
    declared = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [
        name
        for name in instance
        if name not in declared and not any(re.search(p, name) for p in patterns)
    ]


def _member_type(schema: Mapping[str, Any], name: str) -> str:
    """The declared type of a missing member when the schema states it plainly."""
    member = schema.get("properties", {}).get(name)
    declared = member.get("type") if isinstance(member, dict) else None
    return _type_text(declared) if declared is not None else "present"


def _type_text(declared: Any) -> str:
    return declared if isinstance(declared, str) else "|".join(map(str, declared))


def _expected(keyword: str, value: Any) -> str | None:
    """A short statement of what the schema wanted, built only from the schema."""
    if keyword == "type":
        return _type_text(value)
    if keyword == "enum":
        return _short(_compact(value))
    if keyword == "const":
        scalar = value is None or isinstance(value, str | int | float | bool)
        return _short(_compact(value)) if scalar else json_type_name(value)
    if keyword in ("pattern", "format"):
        return _short(str(value))
    if keyword in _BOUND_KEYWORDS:
        return _short(f"{keyword} {_compact(value)}")
    if keyword == "uniqueItems":
        return "unique items"
    return None


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _short(text: str) -> str:
    return text if len(text) <= _MAX_EXPECTED_CHARS else text[: _MAX_EXPECTED_CHARS - 1] + "…"
