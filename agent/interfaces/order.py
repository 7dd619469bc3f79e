"""JSON in a stable, meaningful member order, for people to read.

A result crosses the wire in a protobuf ``Struct``, a map: its members arrive in a different
order in every process, and so do the members of every schema inside a Skill Interface
Document. What does survive is an array's order, and a schema's ``required`` is an array. So an
instance is printed in its schema's order: the members its schema's ``required`` lists, in that
order (in this project's schemas ``required`` follows ``properties``), then the schema's other
``properties``, then anything else, each of those two groups by name. A JSON Schema document
itself reads from its identity down: ``$schema``, ``$id``, ``title``, ``description``, ``type``
first, then its other keywords by name, its ``properties`` in the order above.

Nothing here validates: an instance that does not match its schema is still ordered as far as
the schema says, and returned whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SCHEMA_KEYWORDS_FIRST = ("$schema", "$id", "title", "description", "type")
"""The keywords a schema document is read by, printed before its others."""

_SUBSCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_INSTANCE_VALUES = frozenset({"const", "default", "enum", "examples"})
_BRANCHES = ("allOf", "anyOf", "oneOf", "then", "else")
_MAX_DEPTH = 64
"""How deep ordering follows (deeper values keep their order): the wire allows deep values."""


def member_order(schema: Mapping[str, Any], names: Iterable[str]) -> list[str]:
    """``names`` in ``schema``'s order: its required members, its other properties, the rest."""
    required, declared = _declared(schema)
    present = set(names)
    first = list(dict.fromkeys(name for name in required if name in present))
    placed = set(first)
    known = sorted(name for name in present if name in declared and name not in placed)
    rest = sorted(name for name in present if name not in declared and name not in placed)
    return first + known + rest


def in_schema_order(
    instance: Any, schema: Any, root: Mapping[str, Any] | None = None, depth: int = 0
) -> Any:
    """``instance`` with every object's members in the order its (sub)schema gives."""
    if not isinstance(schema, Mapping):
        schema = {}
    root = schema if root is None else root
    schema = _resolved(schema, root)
    if depth >= _MAX_DEPTH:
        return instance
    if isinstance(instance, dict):
        return {
            name: in_schema_order(instance[name], _member_schema(schema, name), root, depth + 1)
            for name in member_order(schema, instance)
        }
    if isinstance(instance, list):
        return [
            in_schema_order(item, _item_schema(schema, index), root, depth + 1)
            for index, item in enumerate(instance)
        ]
    return instance


def schema_document_order(schema: Any, depth: int = 0) -> Any:
    """A JSON Schema (or any value inside one) in reading order, recursively."""
    if not isinstance(schema, dict) or depth >= _MAX_DEPTH:
        return _sorted_json(schema, depth) if isinstance(schema, list) else schema
    first = [keyword for keyword in SCHEMA_KEYWORDS_FIRST if keyword in schema]
    ordered: dict[str, Any] = {}
    for keyword in first + sorted(k for k in schema if k not in first):
        value = schema[keyword]
        if keyword == "properties" and isinstance(value, dict):
            names = member_order(schema, value)
            ordered[keyword] = {n: schema_document_order(value[n], depth + 1) for n in names}
        elif keyword in _SUBSCHEMA_MAPS and isinstance(value, dict):
            names = sorted(value)
            ordered[keyword] = {n: schema_document_order(value[n], depth + 1) for n in names}
        elif keyword in _SUBSCHEMA_LISTS and isinstance(value, list):
            ordered[keyword] = [schema_document_order(item, depth + 1) for item in value]
        elif keyword in _INSTANCE_VALUES:
            ordered[keyword] = _sorted_json(value, depth + 1)
        else:
            ordered[keyword] = schema_document_order(value, depth + 1)
    return ordered


def _sorted_json(value: Any, depth: int) -> Any:
    """A value no schema describes: its objects' members by name."""
    if depth >= _MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {name: _sorted_json(value[name], depth + 1) for name in sorted(value)}
    if isinstance(value, list):
        return [_sorted_json(item, depth + 1) for item in value]
    return value


def _declared(schema: Mapping[str, Any], depth: int = 0) -> tuple[list[str], set[str]]:
    """The required names (in order) and the declared property names of ``schema`` and of its
    branches (``allOf``, ``anyOf``, ``oneOf``, ``then``, ``else``)."""
    listed = schema.get("required")
    required = [n for n in listed if isinstance(n, str)] if isinstance(listed, list) else []
    properties = schema.get("properties")
    declared = set(properties) if isinstance(properties, Mapping) else set()
    for branch in _branches(schema) if depth < _MAX_DEPTH else []:
        more_required, more_declared = _declared(branch, depth + 1)
        required += more_required  # repeats are dropped where the order is made
        declared |= more_declared
    return required, declared


def _branches(schema: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for keyword in _BRANCHES:
        value = schema.get(keyword)
        if isinstance(value, Mapping):
            found.append(value)
        elif isinstance(value, list):
            found += [item for item in value if isinstance(item, Mapping)]
    return found


def _member_schema(schema: Mapping[str, Any], name: str) -> Any:
    """The subschema a member's value is described by, if any."""
    for candidate in [schema, *_branches(schema)]:
        properties = candidate.get("properties")
        if isinstance(properties, Mapping) and isinstance(properties.get(name), Mapping):
            return properties[name]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, Mapping) else {}


def _item_schema(schema: Mapping[str, Any], index: int) -> Any:
    prefix = schema.get("prefixItems")
    if isinstance(prefix, list) and index < len(prefix):
        return prefix[index]
    items = schema.get("items")
    return items if isinstance(items, Mapping) else {}


def _resolved(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """A local ``$ref`` (``#/$defs/name``) followed, a few hops at most."""
    for _ in range(8):
        reference = schema.get("$ref")
        if not isinstance(reference, str) or not reference.startswith("#/"):
            return schema
        target: Any = root
        for token in reference[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            target = target.get(token) if isinstance(target, Mapping) else None
        if not isinstance(target, Mapping):
            return schema
        schema = target
    return schema


def document_order(document: Any, trusted: Mapping[str, Any]) -> Any:
    """A Skill Interface Document in the trusted schema's order, each embedded schema (its
    ``resolution.schema``) in a schema document's reading order."""
    ordered = in_schema_order(document, trusted)
    if not isinstance(ordered, dict):
        return ordered
    records = ordered.get("supporting_record_schemas")
    references = [ordered.get("input_schema"), ordered.get("output_schema")]
    references += list(records.values()) if isinstance(records, dict) else []
    for reference in references:
        resolution = reference.get("resolution") if isinstance(reference, dict) else None
        if isinstance(resolution, dict) and "schema" in resolution:
            resolution["schema"] = schema_document_order(resolution["schema"])
    return ordered
