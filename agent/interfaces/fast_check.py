"""A yes/no answer to "is this instance valid?" for the common keywords, compiled once.

jsonschema walks a schema through generic machinery (evolve, descend, the type checker, a
generator per keyword) for every value, valid or not; validating 24 records and the answer
was a third of ``check_link_capacity``'s CPU (bench.perf --profile). Almost every instance the
agent validates is valid, and for those a yes is all it needs. ``compile_check`` turns a
schema into nested closures for the keywords the shipped schemas use; anything it does not
know (or any ``false``) makes it return None, and then jsonschema alone decides. A "no" is
never trusted either: the caller asks jsonschema for the draft's error details. So this only
ever answers "valid" where jsonschema, with the same type rules and the same ``date-time``
check, would find no error; tests/unit/interfaces/test_fast_check.py holds the two equal
over generated instances of every shipped schema.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Mapping
from typing import Any

from agent.errors import NetagentError

Check = Callable[[Any], bool]

_ANNOTATIONS = frozenset(
    {
        "$schema", "$id", "$comment", "$anchor", "$defs", "definitions", "title",
        "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
        "contentMediaType", "contentEncoding", "contentSchema",
    }
)  # fmt: skip


class _UnsupportedError(NetagentError):
    """A keyword or value this module leaves to jsonschema."""


def compile_check(schema: Any, date_time: Callable[[str], bool]) -> Check | None:
    """A check equivalent to "jsonschema finds no error" for ``schema``, or None."""
    try:
        return _Compiler(schema, date_time).compile(schema, 0)
    except (_UnsupportedError, RecursionError):
        return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}


class _Compiler:
    def __init__(self, root: Any, date_time: Callable[[str], bool]) -> None:
        self._root = root
        self._date_time = date_time
        self._refs: dict[str, Check] = {}

    def compile(self, schema: Any, depth: int) -> Check:
        if depth > 40:
            raise _UnsupportedError("too deep")
        if schema is True:
            return lambda _v: True
        if not isinstance(schema, dict):
            raise _UnsupportedError("false or not a schema")
        checks: list[Check] = []
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS:
                continue
            if keyword == "type":
                checks.append(self._type(value))
            elif keyword == "properties":
                checks.append(self._properties(value, schema, depth))
            elif keyword == "additionalProperties":
                checks.append(self._additional(value, schema, depth))
            elif keyword == "required":
                checks.append(_required(value))
            elif keyword == "enum":
                checks.append(_enum(value))
            elif keyword == "const":
                checks.append(_enum([value]))
            elif keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
                checks.append(_bound(keyword, value))
            elif keyword in ("minLength", "maxLength", "minItems", "maxItems"):
                checks.append(_size(keyword, value))
            elif keyword == "pattern":
                checks.append(_pattern(value))
            elif keyword == "format":
                if value == "date-time":
                    checks.append(_date_time(self._date_time))
                # every other format is an annotation here (validation.FORMAT_CHECKER)
            elif keyword == "items":
                checks.append(self._items(value, depth))
            elif keyword in ("allOf", "anyOf", "oneOf"):
                checks.append(self._combined(keyword, value, depth))
            elif keyword == "not":
                checks.append(_negated(self.compile(value, depth + 1)))
            elif keyword == "if":
                checks.append(self._conditional(schema, depth))
            elif keyword in ("then", "else"):
                continue  # with "if"; alone they do nothing
            elif keyword == "$ref":
                checks.append(self._ref(value, depth))
            else:
                raise _UnsupportedError(keyword)
        if not checks:
            return lambda _v: True
        if len(checks) == 1:
            return checks[0]
        frozen = tuple(checks)
        return lambda v: all(check(v) for check in frozen)

    def _type(self, declared: Any) -> Check:
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, list) or not all(n in _TYPES for n in names):
            raise _UnsupportedError("type")
        tests = tuple(_TYPES[n] for n in names)
        if len(tests) == 1:
            return tests[0]
        return lambda v: any(test(v) for test in tests)

    def _properties(self, properties: Any, schema: Mapping[str, Any], depth: int) -> Check:
        if not isinstance(properties, dict):
            raise _UnsupportedError("properties")
        members = tuple((name, self.compile(sub, depth + 1)) for name, sub in properties.items())

        def check(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            return all(name not in v or member(v[name]) for name, member in members)

        return check

    def _additional(self, additional: Any, schema: Mapping[str, Any], depth: int) -> Check:
        if "patternProperties" in schema:
            raise _UnsupportedError("patternProperties")
        known = frozenset(schema.get("properties", {}))
        if additional is False:
            return lambda v: not isinstance(v, dict) or all(key in known for key in v)
        inner = self.compile(additional, depth + 1)
        return lambda v: (
            not isinstance(v, dict)
            or all(inner(item) for key, item in v.items() if key not in known)
        )

    def _items(self, items: Any, depth: int) -> Check:
        inner = self.compile(items, depth + 1)
        return lambda v: not isinstance(v, list) or all(inner(item) for item in v)

    def _combined(self, keyword: str, subschemas: Any, depth: int) -> Check:
        if not isinstance(subschemas, list) or not subschemas:
            raise _UnsupportedError(keyword)
        parts = tuple(self.compile(sub, depth + 1) for sub in subschemas)
        if keyword == "allOf":
            return lambda v: all(part(v) for part in parts)
        if keyword == "anyOf":
            return lambda v: any(part(v) for part in parts)
        return lambda v: sum(1 for part in parts if part(v)) == 1

    def _conditional(self, schema: Mapping[str, Any], depth: int) -> Check:
        condition = self.compile(schema["if"], depth + 1)
        then = self.compile(schema.get("then", True), depth + 1)
        otherwise = self.compile(schema.get("else", True), depth + 1)
        return lambda v: then(v) if condition(v) else otherwise(v)

    def _ref(self, ref: Any, depth: int) -> Check:
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise _UnsupportedError("$ref")
        found = self._refs.get(ref)
        if found is not None:
            return found
        target: Any = self._root
        for token in ref[2:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, dict) or token not in target:
                raise _UnsupportedError("$ref")
            target = target[token]
        slot: list[Check] = []
        self._refs[ref] = lambda v: slot[0](v)  # a recursive reference finds itself
        slot.append(self.compile(target, depth + 1))
        return self._refs[ref]


def _date_time(date_time: Callable[[str], bool]) -> Check:
    return lambda v: not isinstance(v, str) or date_time(v)


def _negated(inner: Check) -> Check:
    return lambda v: not inner(v)


def _required(names: Any) -> Check:
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _UnsupportedError("required")
    frozen = tuple(names)
    return lambda v: not isinstance(v, dict) or all(name in v for name in frozen)


def _enum(values: Any) -> Check:
    # Strings only: jsonschema's equality tells True from 1 and 1 from 1.0 its own way.
    if not isinstance(values, list) or not all(isinstance(x, str) for x in values):
        raise _UnsupportedError("enum")
    allowed = frozenset(values)
    return lambda v: isinstance(v, str) and v in allowed


def _bound(keyword: str, limit: Any) -> Check:
    if not _is_number(limit) or (isinstance(limit, float) and not math.isfinite(limit)):
        raise _UnsupportedError(keyword)
    compare: Callable[[Any], bool] = {
        "minimum": lambda v: v >= limit,
        "maximum": lambda v: v <= limit,
        "exclusiveMinimum": lambda v: v > limit,
        "exclusiveMaximum": lambda v: v < limit,
    }[keyword]

    def check(v: Any) -> bool:
        if _is_number(v):
            return compare(v)
        # Another kind of number (Decimal, Fraction): jsonschema compares it; so must we.
        return isinstance(v, bool) or not isinstance(v, numbers.Number)

    return check


def _size(keyword: str, limit: Any) -> Check:
    if type(limit) is not int or limit < 0:
        raise _UnsupportedError(keyword)
    kind: type[str] | type[list[Any]] = str if keyword.endswith("Length") else list
    if keyword.startswith("min"):
        return lambda v: not isinstance(v, kind) or len(v) >= limit
    return lambda v: not isinstance(v, kind) or len(v) <= limit


def _pattern(pattern: Any) -> Check:
    if not isinstance(pattern, str):
        raise _UnsupportedError("pattern")
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise _UnsupportedError("pattern") from error
    return lambda v: not isinstance(v, str) or compiled.search(v) is not None
