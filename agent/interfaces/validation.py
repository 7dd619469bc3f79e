"""JSON Schema 2020-12 validators that never fetch anything, and draft-shaped error details.

Three rules hold for every schema the agent and the client validate against:

* ``date-time`` is asserted per RFC 3339 (project choice 15); no other format is, so agent and
  client agree whatever optional format packages happen to be installed.
* A ``$ref``/``$dynamicRef`` must be a local ``#...`` fragment that resolves inside the schema
  (project choice 16). ``check_schema`` refuses anything else up front, and the validator's
  registry refuses every retrieval, so a reference that slipped through raises instead of being
  fetched.
* Error details name locations and JSON types, never instance values (draft §9.1).

A ``SchemaValidator`` answers from the fast check (fast_check.py) for the instances that pass
it; jsonschema, set up under these rules in draft2020.py, is imported only for the others and
for a schema's first check (a pass is remembered by content).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rfc3339_validator import validate_rfc3339

from agent.base.errors import SchemaInterfaceError
from agent.interfaces.fast_check import Check, compile_check
from agent.interfaces.pointer import bounded_pointer, json_pointer

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "MAX_DETAILS",
    "MISSING",
    "ReferenceRefusedError",
    "SchemaCheckError",
    "SchemaValidator",
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
_BOUND_KEYWORDS: Final = frozenset(
    {
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains",
        "minProperties", "maxProperties",
    }
)  # fmt: skip
_CHECKER: Final = str(Path(__file__).with_name("draft2020.py"))
"""The module that checks a schema (draft2020.py): its bytes are part of a pass's memo key."""

_Locations = dict[int, list[str | int]]


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


def check_schema(schema: Any) -> None:
    """Raise ``SchemaCheckError`` unless ``schema`` is a usable self-contained 2020-12 schema.

    Beyond the metaschema: every ``$ref``/``$dynamicRef`` must be a ``#...`` fragment that
    resolves inside ``schema``, and any ``$schema`` must be the 2020-12 dialect its reference
    declares. The walk is deliberately conservative: it visits every member, so a ``$ref``
    string inside ``const``/``default``/``examples`` data must be local too.
    """
    from agent.interfaces import draft2020

    draft2020.check(schema)


def compile_validator(schema: Any, *, checked: bool = False) -> SchemaValidator:
    """A 2020-12 validator asserting ``date-time`` that can never fetch; checks ``schema``
    first unless the caller just did (``checked``: ``verify_document`` checks every schema of
    the document it passes; checking again was half the registry's load time)."""
    if not checked:
        check_schema(schema)
    return SchemaValidator(schema)


class SchemaValidator:
    """A checked schema, ready to validate: the fast check (fast_check.py) says "valid" for
    the instances that are, which is nearly all of them, and jsonschema's validator, with the
    rules above (draft2020.py), is built the first time an instance needs more than that.

    Offers the part of jsonschema's ``Validator`` the code uses; ``full`` is the validator
    itself.
    """

    __slots__ = ("_full", "_locations", "fast", "schema")

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.fast: Check | None = compile_check(schema, _is_date_time)
        self._full: Validator | None = None
        self._locations: _Locations | None = None

    @property
    def full(self) -> Validator:
        """jsonschema's validator of this schema, built (and jsonschema imported) once."""
        if self._full is None:
            from agent.interfaces import draft2020

            self._full = draft2020.validator_for(self.schema)
        return self._full

    @property
    def locations(self) -> _Locations:
        """Where each schema object sits (for error details), found once."""
        if self._locations is None:
            self._locations = _locations(self.schema)
        return self._locations

    def fast_answer(self, instance: Any) -> bool | None:
        """The fast check's answer, which is jsonschema's; None where it has none (a schema it
        does not know, an instance too deep for it): jsonschema decides."""
        if self.fast is None:
            return None
        try:
            return self.fast(instance)
        except RecursionError:
            return None

    def is_valid(self, instance: Any) -> bool:
        answer = self.fast_answer(instance)
        return self.full.is_valid(instance) if answer is None else answer

    def iter_errors(self, instance: Any) -> Iterator[ValidationError]:
        return self.full.iter_errors(instance)

    def evolve(self, **changes: Any) -> Validator:
        return self.full.evolve(**changes)


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
    validator: SchemaValidator | Validator, instance: Any, *, limit: int = MAX_DETAILS
) -> list[dict[str, str]]:
    """Draft §9.1 details for every failure, sorted by location, at most ``limit``; [] if valid.

    ``instance_path`` is relative to ``instance`` and, for a missing required member, names
    that member (project choice 9). ``schema_path`` points at the failing keyword in the schema
    (through ``$ref``, to where the keyword really is). ``expected`` comes from the schema and
    ``actual`` is a JSON type name, so no instance value is ever echoed.
    """
    if isinstance(validator, SchemaValidator):
        if validator.fast_answer(instance):  # "no" or none: jsonschema's details
            return []
        full, locations = validator.full, validator.locations
    else:  # a validator made elsewhere: no fast check, and locations each time
        full, locations = validator, _locations(validator.schema)
    found: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
    for error in full.iter_errors(instance):
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
    from agent.interfaces.draft2020 import false_schema_key

    at: list[str | int] = list(error.absolute_path)
    keyword, value, instance = error.validator, error.validator_value, error.instance
    member = false_schema_key(error)
    if member is not None:
        pointer = _schema_pointer(error, locations, keyword, member)
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
    elif keyword == "not" and isinstance(instance, Mapping) and (names := _forbidden(value)):
        # ``not: {required: [...]}``, the idiom for "leave these out": name each one given
        for name in (n for n in names if n in instance):
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


def _forbidden(value: Any) -> list[str]:
    """The members a ``not`` keyword's schema only lists (``{"required": [...]}``), else []."""
    if not isinstance(value, Mapping) or set(value) != {"required"}:
        return []
    names = value["required"]
    return list(names) if isinstance(names, list) and all(isinstance(n, str) for n in names) else []


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
