"""JSON Schemas made readable: a tree for the skills view and a form for "try it".

Both are derived from the schema itself, so a skill added to the registry gets its page and its
form without any console change. The form covers what a person can type into fields (objects,
strings, enums, numbers, booleans); any other member (arrays, ``oneOf``, free objects) becomes a
JSON text area, still validated by the same schema on the server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agent.interfaces.pointer import json_pointer

CONSTRAINT_KEYWORDS = (
    "const", "format", "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
    "minProperties", "maxProperties", "additionalProperties", "$ref", "default",
)  # fmt: skip
BRANCH_KEYWORDS = ("oneOf", "anyOf", "allOf")


@dataclass
class TreeNode:
    """One member of a schema, as the skills view lists it."""

    name: str
    type: str
    required: bool = False
    description: str = ""
    enum: list[str] = field(default_factory=list)
    constraints: list[tuple[str, str]] = field(default_factory=list)
    children: list[TreeNode] = field(default_factory=list)


def _type_of(schema: Any) -> str:
    if schema is True:
        return "any"
    if schema is False:
        return "nothing"
    if not isinstance(schema, dict):
        return "?"
    declared = schema.get("type")
    if isinstance(declared, list):
        return " | ".join(str(t) for t in declared)
    if declared:
        return str(declared)
    for keyword in BRANCH_KEYWORDS:
        if keyword in schema:
            return keyword
    if "enum" in schema:
        return "enum"
    return "$ref" if "$ref" in schema else "any"


def tree(schema: Any, name: str = "(root)", required: bool = False) -> TreeNode:
    """The schema as nested members with their types, requirements and constraints."""
    node = TreeNode(name, _type_of(schema), required)
    if not isinstance(schema, dict):
        return node
    node.description = str(schema.get("description", schema.get("title", "")))
    node.enum = [json.dumps(v) for v in schema.get("enum", [])]
    for keyword in CONSTRAINT_KEYWORDS:
        if keyword in schema and not isinstance(schema[keyword], dict | list):
            node.constraints.append((keyword, json.dumps(schema[keyword])))
    needed = set(schema.get("required", []))
    if needed - set(schema.get("properties", {})):  # e.g. a oneOf branch: names members only
        node.constraints.append(("requires", ", ".join(sorted(needed))))
    if "not" in schema:
        node.constraints.append(("not", json.dumps(schema["not"], sort_keys=True)))
    for member, sub in schema.get("properties", {}).items():
        node.children.append(tree(sub, member, member in needed))
    if isinstance(schema.get("additionalProperties"), dict):
        node.children.append(tree(schema["additionalProperties"], "(any other member)", False))
    if isinstance(schema.get("items"), dict | bool):
        node.children.append(tree(schema["items"], "[item]", False))
    for keyword in BRANCH_KEYWORDS:
        for index, branch in enumerate(schema.get(keyword, [])):
            node.children.append(tree(branch, f"{keyword}[{index}]", False))
    for definitions in ("$defs", "definitions"):
        for member, sub in schema.get(definitions, {}).items():
            node.children.append(tree(sub, f"{definitions}/{member}", False))
    return node


@dataclass
class Field:
    """One form control; ``pointer`` says where its value goes in the arguments."""

    pointer: str
    label: str
    kind: str  # string | number | integer | boolean | enum | json | group
    required: bool
    description: str = ""
    options: list[str] = field(default_factory=list)
    children: list[Field] = field(default_factory=list)

    @property
    def control_id(self) -> str:
        """An HTML id derived from the pointer (stable, unique within the form)."""
        return "arg" + "".join(c if c.isalnum() else "_" for c in self.pointer)


def _field(schema: Any, path: list[str | int], label: str, required: bool) -> Field:
    pointer = json_pointer(path)
    description = str(schema.get("description", "")) if isinstance(schema, dict) else ""
    kind = _type_of(schema)
    enum = schema.get("enum") if isinstance(schema, dict) else None
    if isinstance(enum, list) and all(isinstance(v, str) for v in enum):
        return Field(pointer, label, "enum", required, description, [str(v) for v in enum])
    if kind == "object" and isinstance(schema, dict) and schema.get("properties"):
        # Required members first, in the order ``required`` lists them (the document's own
        # member order is lost: it is kept in canonical, sorted form), then the others.
        required_order = [m for m in schema.get("required", []) if m in schema["properties"]]
        members = required_order + [m for m in schema["properties"] if m not in required_order]
        children = [
            _field(schema["properties"][m], [*path, m], m, m in required_order) for m in members
        ]
        return Field(pointer, label, "group", required, description, children=children)
    if kind in ("string", "number", "integer", "boolean"):
        return Field(pointer, label, kind, required, description)
    return Field(pointer, label, "json", required, description)


def form(schema: Any) -> Field:
    """The input schema as form controls, rooted at the arguments object."""
    return _field(schema, [], "arguments", True)
