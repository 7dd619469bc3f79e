"""JSON Schemas made readable: a tree for the skills view and a form for "try it".

Both are derived from the schema itself, so a skill added to the registry gets its page and its
form without any console change. The form covers what a person can type into fields (objects,
strings, enums, numbers, booleans); any other member (arrays, ``oneOf``, free objects) becomes a
JSON text area, still validated by the same schema on the server.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from agent.interfaces.pointer import json_pointer
from agent.interfaces.validation import SchemaValidator

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
    """One form control; ``pointer`` says where its value goes in the arguments.

    ``default`` is the schema's ``default`` as the control would hold it (the agent applies
    no defaults: a skill's handler does when the member is left out, so the form shows it
    and leaves the control empty).
    """

    pointer: str
    label: str
    kind: str  # string | number | integer | boolean | enum | json | group
    required: bool
    description: str = ""
    options: list[str] = field(default_factory=list)
    children: list[Field] = field(default_factory=list)
    default: str | None = None

    @property
    def control_id(self) -> str:
        """An HTML id derived from the pointer (stable, unique within the form)."""
        return "arg" + "".join(c if c.isalnum() else "_" for c in self.pointer)


def _field(schema: Any, path: list[str | int], label: str, required: bool) -> Field:
    made = _bare_field(schema, path, label, required)
    if isinstance(schema, dict) and "default" in schema:
        value = schema["default"]
        made.default = (
            value if isinstance(value, str) and made.kind != "json" else json.dumps(value)
        )
    return made


def _bare_field(schema: Any, path: list[str | int], label: str, required: bool) -> Field:
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


# ------------------------------------------------------------------ alternatives explained

BRANCHING = ("oneOf", "anyOf")


def _index(part: str) -> int:
    """A pointer segment as an array index; past any array (as no index) when it is not ASCII
    digits (``str.isdigit`` takes "²", which ``int`` refuses) or too long for ``int``."""
    plain = part.isascii() and part.isdigit() and len(part) <= 18
    return int(part) if plain else sys.maxsize


def _at(document: Any, pointer: str) -> Any:
    """The value at a JSON Pointer, or None when there is none."""
    node = document
    for raw in pointer.split("/")[1:] if pointer else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and _index(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _named(schema: Any) -> list[str]:
    """Members a subschema names through ``required`` (in ``anyOf``/``oneOf``/``allOf`` too)."""
    if not isinstance(schema, dict):
        return []
    names = [n for n in schema.get("required", []) if isinstance(n, str)]
    for keyword in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(keyword, []):
            names += [n for n in _named(branch) if n not in names]
    return names


def summary(branch: Any) -> str:
    """What an alternative asks for, in words: "start_id and end_id, without link_id"."""
    if not isinstance(branch, dict):
        return "anything" if branch is True else "nothing"
    parts = []
    if branch.get("required"):
        parts.append(" and ".join(branch["required"]))
    if "not" in branch and _named(branch["not"]):
        parts.append("without " + " or ".join(_named(branch["not"])))
    if "type" in branch:
        parts.append(f"a {branch['type']}")
    if "const" in branch or "enum" in branch:
        values = [branch["const"]] if "const" in branch else branch["enum"]
        parts.append("one of " + ", ".join(json.dumps(v) for v in values))
    if not parts and branch.get("description"):
        parts.append(str(branch["description"]))
    return ", ".join(parts) or json.dumps(branch, sort_keys=True)[:120]


def _problems(validator: SchemaValidator, branch: Any, instance: Any) -> list[str]:
    """Why ``instance`` fails one alternative, in words naming members, never their values."""
    found: list[str] = []
    for error in validator.evolve(schema=branch).iter_errors(instance):
        where = json_pointer(list(error.absolute_path)) or "(arguments)"
        needed = error.validator_value
        if error.validator == "required" and isinstance(error.instance, dict):
            missing = (
                [n for n in needed if n not in error.instance] if isinstance(needed, list) else []
            )
            found.append("missing " + ", ".join(missing))
        elif error.validator == "not" and isinstance(error.instance, dict):
            present = [n for n in _named(error.validator_value) if n in error.instance]
            found.append("must not have " + ", ".join(present) if present else f"{where} fails not")
        else:
            found.append(f"{where} fails {error.validator}")
    return list(dict.fromkeys(found))  # one error per missing member says the same thing


def explain(
    validator: SchemaValidator, schema: Any, arguments: Any, detail: dict[str, Any]
) -> None:
    """Add to a ``oneOf``/``anyOf`` failure which alternative failed and why, in place.

    ``alternatives`` lists each alternative with what it asks for and its problems; for a
    ``oneOf`` that more than one alternative satisfies, ``matched`` names them (it allows
    exactly one). Other details are left as they are.
    """
    if detail.get("keyword") not in BRANCHING:
        return
    branches = _at(schema, str(detail.get("schema_path", "")))
    instance = _at(arguments, str(detail.get("instance_path", "")))
    if not isinstance(branches, list):
        return
    alternatives = [
        {
            "alternative": index + 1,
            "asks": summary(branch),
            "problems": _problems(validator, branch, instance),
        }
        for index, branch in enumerate(branches)
    ]
    detail["alternatives"] = alternatives
    matched = [a["alternative"] for a in alternatives if not a["problems"]]
    if len(matched) > 1:
        detail["matched"] = matched
