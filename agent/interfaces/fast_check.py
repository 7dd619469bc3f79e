"""A yes/no answer to "is this instance valid?" for the common keywords, compiled once.

jsonschema walks a schema through generic machinery (evolve, descend, the type checker, a
generator per keyword) for every value, valid or not; validating 24 records and the answer
is a third of ``check_link_capacity``'s CPU (bench.perf --profile). Almost every instance the
agent validates is valid, and for those a yes is all it needs. ``compile_check`` turns a
schema into Python source for the keywords the shipped schemas use, one function per schema
that ``$ref``, a combinator or an array's items need and straight-line tests for the rest, and
compiles it once; anything it does not know (or any ``false``) makes it return None, and then
jsonschema alone decides. After a "no", the caller asks jsonschema for the draft's error
details; only a yes-or-no question (``SchemaValidator.is_valid``: is this probe rejected?)
takes the answer as it is. Either way it must be jsonschema's answer, with the same type
rules, the same ``date-time`` check and JSON's equality for ``uniqueItems``;
tests/core/interfaces/test_fast_check.py holds the two equal over generated instances of every
shipped schema (the agent's own, the trusted Skill Interface Schema among them). The source
holds no value of the schema but property names (as ``repr`` literals) and numbers'
comparisons by name: every other value is a constant bound by name.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Mapping
from typing import Any

from agent.base.errors import NetagentError

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
        return _Compiler(schema, date_time).build()
    except (_UnsupportedError, RecursionError, SyntaxError, MemoryError, ValueError):
        return None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_TYPES: dict[str, str] = {
    "string": "isinstance({v}, str)",
    "object": "isinstance({v}, dict)",
    "array": "isinstance({v}, list)",
    "boolean": "isinstance({v}, bool)",
    "null": "{v} is None",
    "number": "(isinstance({v}, (int, float)) and not isinstance({v}, bool))",
    "integer": (
        "((isinstance({v}, int) and not isinstance({v}, bool))"
        " or (isinstance({v}, float) and {v}.is_integer()))"
    ),
}
_BOUNDS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
_SIZES = {
    "minLength": ("str", "<"),
    "maxLength": ("str", ">"),
    "minItems": ("list", "<"),
    "maxItems": ("list", ">"),
}
FAIL = "return False"


class _Compiler:
    def __init__(self, root: Any, date_time: Callable[[str], bool]) -> None:
        self._root = root
        self._names: dict[str, Any] = {
            "_dt": date_time,
            "_Number": numbers.Number,
            "_unique": _unique,
        }
        self._functions: list[str] = []
        self._refs: dict[str, str] = {}
        self._serial = 0

    def build(self) -> Check:
        entry = self._function(self._root, 0)
        namespace = dict(self._names)
        exec(compile("\n\n".join(self._functions), "<fast_check>", "exec"), namespace)
        check: Check = namespace[entry]
        return check

    def _fresh(self, prefix: str) -> str:
        self._serial += 1
        return f"{prefix}{self._serial}"

    def _constant(self, value: Any) -> str:
        name = self._fresh("_k")
        self._names[name] = value
        return name

    def _function(self, schema: Any, depth: int) -> str:
        name = self._fresh("_f")
        body = self._statements(schema, "v", 1, depth)
        self._functions.append("\n".join([f"def {name}(v):", *body, "    return True"]))
        return name

    def _statements(self, schema: Any, v: str, level: int, depth: int) -> list[str]:
        """Lines (at ``level``) that return False when ``v`` fails ``schema``."""
        if depth > 40:
            raise _UnsupportedError("too deep")
        if schema is True:
            return []
        if not isinstance(schema, dict):
            raise _UnsupportedError("false or not a schema")
        pad = "    " * level
        lines: list[str] = []
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS or keyword in ("then", "else"):
                continue  # "then" and "else" come with "if"; alone they do nothing
            if keyword == "type":
                lines.append(f"{pad}if not {self._type(value, v)}: {FAIL}")
            elif keyword == "properties":
                lines += self._properties(value, v, level, depth)
            elif keyword == "additionalProperties":
                lines += self._additional(value, schema, v, level, depth)
            elif keyword == "required":
                if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
                    raise _UnsupportedError("required")
                names = self._constant(frozenset(value))
                lines.append(f"{pad}if isinstance({v}, dict) and not {v}.keys() >= {names}: {FAIL}")
            elif keyword in ("enum", "const"):
                allowed = self._constant(_strings(value if keyword == "enum" else [value]))
                lines.append(f"{pad}if not (isinstance({v}, str) and {v} in {allowed}): {FAIL}")
            elif keyword in _BOUNDS:
                lines += self._bound(keyword, value, v, pad)
            elif keyword in _SIZES:
                if type(value) is not int or value < 0:
                    raise _UnsupportedError(keyword)
                kind, fails = _SIZES[keyword]
                lines.append(
                    f"{pad}if isinstance({v}, {kind}) and len({v}) {fails} {value}: {FAIL}"
                )
            elif keyword == "pattern":
                found = self._constant(_pattern(value))
                lines.append(f"{pad}if isinstance({v}, str) and {found}({v}) is None: {FAIL}")
            elif keyword == "format":
                if value == "date-time":
                    lines.append(f"{pad}if isinstance({v}, str) and not _dt({v}): {FAIL}")
                # every other format is an annotation here (validation.FORMAT_CHECKER)
            elif keyword == "items":
                if value is not True:
                    each = self._function(value, depth + 1)
                    lines.append(
                        f"{pad}if isinstance({v}, list) and not all(map({each}, {v})): {FAIL}"
                    )
            elif keyword == "propertyNames":
                if value is not True:
                    each = self._function(value, depth + 1)
                    lines.append(
                        f"{pad}if isinstance({v}, dict) and not all(map({each}, {v})): {FAIL}"
                    )
            elif keyword == "uniqueItems":
                if value is True:
                    lines.append(f"{pad}if isinstance({v}, list) and not _unique({v}): {FAIL}")
                elif value is not False:
                    raise _UnsupportedError(keyword)
            elif keyword in ("allOf", "anyOf", "oneOf"):
                lines += self._combined(keyword, value, v, level, depth)
            elif keyword == "not":
                lines.append(f"{pad}if {self._function(value, depth + 1)}({v}): {FAIL}")
            elif keyword == "if":
                lines += self._conditional(schema, v, level, depth)
            elif keyword == "$ref":
                lines.append(f"{pad}if not {self._ref(value, depth)}({v}): {FAIL}")
            else:
                raise _UnsupportedError(keyword)
        return lines

    def _nested(self, schema: Any, v: str, level: int, depth: int) -> list[str]:
        # Inline: a level is at most two indents deeper than its parent (properties), and the
        # depth cap of 40 keeps every line under Python's 100 indents.
        return self._statements(schema, v, level, depth + 1)

    def _type(self, declared: Any, v: str) -> str:
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, list) or not names or not all(n in _TYPES for n in names):
            raise _UnsupportedError("type")
        return "(" + " or ".join(_TYPES[n].format(v=v) for n in names) + ")"

    def _properties(self, properties: Any, v: str, level: int, depth: int) -> list[str]:
        if not isinstance(properties, dict) or not all(isinstance(n, str) for n in properties):
            raise _UnsupportedError("properties")
        pad = "    " * level
        lines = []
        for name, sub in properties.items():
            member = self._fresh("v")
            inner = self._nested(sub, member, level + 2, depth)
            if inner:
                lines += [f"{pad}    if {name!r} in {v}:", f"{pad}        {member} = {v}[{name!r}]"]
                lines += inner
        return [f"{pad}if isinstance({v}, dict):", *lines] if lines else []

    def _additional(
        self, additional: Any, schema: Mapping[str, Any], v: str, level: int, depth: int
    ) -> list[str]:
        if "patternProperties" in schema:
            raise _UnsupportedError("patternProperties")
        pad = "    " * level
        known = self._constant(frozenset(schema.get("properties", {})))
        if additional is False:
            return [f"{pad}if isinstance({v}, dict) and not {v}.keys() <= {known}: {FAIL}"]
        if additional is True:
            return []
        each = self._function(additional, depth + 1)
        items = f"({each}(x) for k, x in {v}.items() if k not in {known})"
        return [f"{pad}if isinstance({v}, dict) and not all{items}: {FAIL}"]

    def _bound(self, keyword: str, limit: Any, v: str, pad: str) -> list[str]:
        if not _is_number(limit) or (isinstance(limit, float) and not math.isfinite(limit)):
            raise _UnsupportedError(keyword)
        bound = self._constant(limit)
        # Another kind of number (Decimal, Fraction): jsonschema compares it; so must we.
        return [
            f"{pad}if {_TYPES['number'].format(v=v)}:",
            f"{pad}    if not {v} {_BOUNDS[keyword]} {bound}: {FAIL}",
            f"{pad}elif not isinstance({v}, bool) and isinstance({v}, _Number): {FAIL}",
        ]

    def _combined(self, keyword: str, subschemas: Any, v: str, level: int, depth: int) -> list[str]:
        if not isinstance(subschemas, list) or not subschemas:
            raise _UnsupportedError(keyword)
        pad = "    " * level
        if keyword == "allOf":
            return [line for sub in subschemas for line in self._nested(sub, v, level, depth)]
        calls = [f"{self._function(sub, depth + 1)}({v})" for sub in subschemas]
        if keyword == "anyOf":
            return [f"{pad}if not ({' or '.join(calls)}): {FAIL}"]
        return [f"{pad}if ({' + '.join(calls)}) != 1: {FAIL}"]

    def _conditional(self, schema: Mapping[str, Any], v: str, level: int, depth: int) -> list[str]:
        pad = "    " * level
        condition = self._function(schema["if"], depth + 1)
        then = self._nested(schema.get("then", True), v, level + 1, depth) or [f"{pad}    pass"]
        otherwise = self._nested(schema.get("else", True), v, level + 1, depth)
        return [
            f"{pad}if {condition}({v}):",
            *then,
            f"{pad}else:",
            *(otherwise or [f"{pad}    pass"]),
        ]

    def _ref(self, ref: Any, depth: int) -> str:
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
        name = self._fresh("_f")
        self._refs[ref] = name  # a recursive reference finds itself: named before it is built
        body = self._statements(target, "v", 1, depth + 1)
        self._functions.append("\n".join([f"def {name}(v):", *body, "    return True"]))
        return name


def _unique(items: list[Any]) -> bool:
    """No two items equal as JSON Schema compares them (jsonschema's ``equal``): 1 and 1.0
    alike, True and 1 apart, objects by members. A value JSON has no type for answers False,
    and jsonschema decides."""
    try:
        keys = {_json_key(item) for item in items}
    except TypeError:
        return False
    return len(keys) == len(items)


def _json_key(value: Any) -> Any:
    """A hashable form of a JSON value, equal exactly when the values are equal as JSON."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)  # Python's 1 == 1.0, with equal hashes
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("l", tuple(map(_json_key, value)))
    if isinstance(value, dict):
        return ("o", frozenset((name, _json_key(item)) for name, item in value.items()))
    raise TypeError(type(value).__name__)


def _strings(values: Any) -> frozenset[str]:
    # Strings only: jsonschema's equality tells True from 1 and 1 from 1.0 its own way.
    if not isinstance(values, list) or not all(isinstance(x, str) for x in values):
        raise _UnsupportedError("enum")
    return frozenset(values)


def _pattern(pattern: Any) -> Callable[[str], Any]:
    if not isinstance(pattern, str):
        raise _UnsupportedError("pattern")
    try:
        return re.compile(pattern).search
    except re.error as error:
        raise _UnsupportedError("pattern") from error
