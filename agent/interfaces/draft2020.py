"""jsonschema's 2020-12 validator with this agent's three rules (see validation.py): only
``date-time`` asserted, no reference ever fetched, a ``false`` subschema located exactly.

Imported only when it is needed: an instance the fast check (fast_check.py) does not vouch
for, a schema checked against the metaschema, or a caller asking for the full
validator. Importing jsonschema, with attrs, referencing and the metaschemas it loads, was a
fifth of the instructions of ``netagent describe`` and ``check``, which almost never need it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from jsonschema import Draft202012Validator, FormatChecker, validators
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from agent.base.errors import NetagentError
from agent.interfaces.pointer import json_pointer
from agent.interfaces.spec import DIALECT
from agent.interfaces.validation import (
    ReferenceRefusedError,
    SchemaCheckError,
    _is_date_time,
)

__all__ = ["FORMAT_CHECKER", "REGISTRY", "check", "false_schema_key", "validator_for"]

_REFERENCE_KEYWORDS: Final = ("$ref", "$dynamicRef")

FORMAT_CHECKER: Final = FormatChecker(formats=())
FORMAT_CHECKER.checks("date-time")(_is_date_time)


def _refuse(uri: str) -> Resource[Any]:
    raise ReferenceRefusedError(f"refusing to retrieve {uri!r}: only local references resolve")


# referencing's attrs shim (_attrs.pyi, the pre-PEP 681 ``__dataclass_transform__``) hides
# Registry's fields from mypy, which then sees an ``__init__`` without ``retrieve``.
REGISTRY: Final[Registry[Any]] = Registry(retrieve=_refuse)  # type: ignore[call-arg]


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


def false_schema_key(error: ValidationError) -> str | int | None:
    """The member's key when ``error`` is a value where the subschema is ``false``."""
    return error.schema_key if isinstance(error, _FalseSchemaError) else None


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


def validator_for(schema: Any) -> Validator:
    """jsonschema's validator of ``schema`` under the three rules (no check of the schema)."""
    return _Validator(schema, registry=REGISTRY, format_checker=FORMAT_CHECKER)


def check(schema: Any) -> None:
    """Raise ``SchemaCheckError`` unless ``schema`` passes the 2020-12 metaschema and every
    reference in it is local and resolves (validation.check_schema says why)."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        reason = exc.message if len(exc.message) <= 200 else exc.message[:199] + "…"
        raise SchemaCheckError(
            json_pointer(exc.absolute_path), f"not a valid JSON Schema 2020-12 schema: {reason}"
        ) from None
    if isinstance(schema, dict):
        resolver = REGISTRY.resolver_with_root(DRAFT202012.create_resource(schema))
        _check_references(schema, [], resolver)


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
