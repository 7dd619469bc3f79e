"""``ParseDict`` for the requests the agent receives, at a fraction of its cost.

protobuf's ``json_format.ParseDict`` is pure Python that resolves every member's field,
type and converter again for every value; parsing a SendMessage request is an eighth of a
governed call's CPU (bench.perf --profile --profile-gil). ``parse_dict`` makes those decisions
once per message type and then only walks the JSON. It takes the fast way only where the
outcome is certain to be ``ParseDict``'s: plain members of the expected JSON types. Anything
else (a null, a number given as a string, an unknown enum name, a member named twice, two
members of one oneof, a map, bytes, a timestamp, a target that is not empty, very deep
nesting) is handed to ``ParseDict`` itself, so its result and its errors are the reference's,
word for word. tests/core/edge/test_proto_parse.py holds the two equal over generated and
mutated requests of every A2A message type.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from agent.base.errors import NetagentError
from agent.edge.proto_json import plain_json

_MAX_DEPTH = 48
"""Deeper than this goes to ParseDict (its own limit is 100 messages, Struct levels included)."""

_Setter = Callable[[Message, Any, int], None]


class _FallbackError(NetagentError):
    """Not certain to be ParseDict's outcome: let ParseDict decide (never leaves the module)."""


def parse_dict(
    js: Any,
    message: Message,
    ignore_unknown_fields: bool = False,
    descriptor_pool: Any = None,
    max_recursion_depth: int = 100,
) -> Message:
    """``json_format.ParseDict(js, message, ...)``, computed faster where that is certain."""
    if (
        ignore_unknown_fields
        and descriptor_pool is None
        and max_recursion_depth == 100
        and type(js) is dict
        and not message.ListFields()
    ):
        scratch = type(message)()
        try:
            _plan(cast(Descriptor, message.DESCRIPTOR))(scratch, js, 0)
        except (_FallbackError, RecursionError):
            pass
        else:
            message.CopyFrom(scratch)
            return message
    return json_format.ParseDict(
        js,
        message,
        ignore_unknown_fields=ignore_unknown_fields,
        descriptor_pool=descriptor_pool,
        max_recursion_depth=max_recursion_depth,
    )


_PLANS: dict[str, Callable[[Message, dict[str, Any], int], None]] = {}


def _plan(descriptor: Descriptor) -> Callable[[Message, dict[str, Any], int], None]:
    found = _PLANS.get(descriptor.full_name)
    if found is not None:
        return found
    setters: dict[str, tuple[FieldDescriptor, _Setter]] = {}

    def fill(target: Message, js: dict[str, Any], depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _FallbackError("deep")
        seen_fields: set[str] = set()
        seen_oneofs: set[str] = set()
        for key, value in js.items():
            entry = setters.get(key)
            if entry is None:
                if key in unknown_ok:
                    continue  # ParseDict ignores it too (ignore_unknown_fields)
                raise _FallbackError(key)
            field, setter = entry
            if field.name in seen_fields:
                raise _FallbackError("named twice")
            seen_fields.add(field.name)
            oneof = field.containing_oneof
            if oneof is not None:
                if oneof.name in seen_oneofs:
                    raise _FallbackError("two members of a oneof")
                seen_oneofs.add(oneof.name)
            if value is None:
                raise _FallbackError("null")
            setter(target, value, depth)

    _PLANS[descriptor.full_name] = fill  # recursive types find themselves
    for field in descriptor.fields:
        setter = _setter(field)
        setters[field.json_name] = (field, setter)
        setters[field.name] = (field, setter)

    class _UnknownKeys:
        """Keys ParseDict skips under ignore_unknown_fields: anything not a field that is
        neither an extension (``[...]``) nor ``@type``."""

        def __contains__(self, key: object) -> bool:
            return isinstance(key, str) and not key.startswith("[") and key != "@type"

    unknown_ok = _UnknownKeys()
    return fill


def _setter(field: FieldDescriptor) -> _Setter:
    message_type = field.message_type
    if message_type is not None and message_type.GetOptions().map_entry:
        return _refuse
    if field.is_repeated:
        item = _item(field)
        if item is None:
            return _refuse
        name = field.name

        def repeated(target: Message, value: Any, depth: int) -> None:
            if type(value) is not list:
                raise _FallbackError("not a list")
            container = getattr(target, name)
            for element in value:
                if element is None:
                    raise _FallbackError("null item")
                item(container, element, depth)

        return repeated
    return _single(field)


def _refuse(_target: Message, _value: Any, _depth: int) -> None:
    raise _FallbackError("left to ParseDict")


def _single(field: FieldDescriptor) -> _Setter:
    name = field.name
    message_type = field.message_type
    if message_type is not None:
        full = message_type.full_name
        if full == "google.protobuf.Struct":

            def struct(target: Message, value: Any, depth: int) -> None:
                if type(value) is not dict or not plain_json(value, depth):
                    raise _FallbackError("struct")
                sub = getattr(target, name)
                sub.SetInParent()
                sub.update(value)

            return struct
        if full == "google.protobuf.Value":

            def value_field(target: Message, value: Any, depth: int) -> None:
                if not plain_json(value, depth):
                    raise _FallbackError("value")
                _set_value(getattr(target, name), value)

            return value_field
        if message_type.file.name.startswith("google/protobuf/"):
            return _refuse  # Timestamp, Duration, wrappers, Any, ListValue...: ParseDict's
        nested = _plan_later(message_type)

        def message_field(target: Message, value: Any, depth: int) -> None:
            if type(value) is not dict:
                raise _FallbackError("not an object")
            sub = getattr(target, name)
            sub.SetInParent()
            nested()(sub, value, depth + 1)

        return message_field
    convert = _scalar(field)
    if convert is None:
        return _refuse

    def scalar(target: Message, value: Any, _depth: int) -> None:
        setattr(target, name, convert(value))

    return scalar


def _item(field: FieldDescriptor) -> Callable[[Any, Any, int], None] | None:
    message_type = field.message_type
    if message_type is not None:
        if message_type.file.name.startswith("google/protobuf/"):
            return None
        nested = _plan_later(message_type)

        def add(container: Any, value: Any, depth: int) -> None:
            if type(value) is not dict:
                raise _FallbackError("not an object")
            nested()(container.add(), value, depth + 1)

        return add
    convert = _scalar(field)
    if convert is None:
        return None

    def append(container: Any, value: Any, _depth: int) -> None:
        container.append(convert(value))

    return append


def _plan_later(
    descriptor: Descriptor,
) -> Callable[[], Callable[[Message, dict[str, Any], int], None]]:
    resolved: list[Callable[[Message, dict[str, Any], int], None]] = []

    def get() -> Callable[[Message, dict[str, Any], int], None]:
        if not resolved:
            resolved.append(_plan(descriptor))
        return resolved[0]

    return get


_INT_RANGES = {
    FieldDescriptor.CPPTYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.CPPTYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.CPPTYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.CPPTYPE_UINT64: (0, 2**64 - 1),
}


def _scalar(field: FieldDescriptor) -> Callable[[Any], Any] | None:
    cpp = field.cpp_type
    if cpp == FieldDescriptor.CPPTYPE_STRING:
        if field.type == FieldDescriptor.TYPE_BYTES:
            return None

        def string(value: Any) -> Any:
            if type(value) is not str:
                raise _FallbackError("not a string")
            return value

        return string
    if cpp == FieldDescriptor.CPPTYPE_BOOL:

        def boolean(value: Any) -> Any:
            if type(value) is not bool:
                raise _FallbackError("not a boolean")
            return value

        return boolean
    if cpp in _INT_RANGES:
        low, high = _INT_RANGES[cpp]

        def integer(value: Any) -> Any:
            if type(value) is not int or not low <= value <= high:
                raise _FallbackError("not an integer in range")
            return value

        return integer
    if cpp == FieldDescriptor.CPPTYPE_DOUBLE:

        def double(value: Any) -> Any:
            if type(value) is float and math.isfinite(value):
                return value
            if type(value) is int and -(2**53) <= value <= 2**53:
                return float(value)
            raise _FallbackError("not a number")

        return double
    if cpp == FieldDescriptor.CPPTYPE_ENUM:
        enum_type = field.enum_type
        assert enum_type is not None
        if enum_type.full_name == "google.protobuf.NullValue":
            return None
        numbers = {value.name: value.number for value in enum_type.values}

        def enum(value: Any) -> Any:
            if type(value) is not str or value not in numbers:
                raise _FallbackError("not an enum name")
            return numbers[value]

        return enum
    return None  # 32-bit floats: ParseDict's rounding and range rules


def _set_value(target: Any, value: Any) -> None:
    kind = type(value)
    if kind is dict:
        target.struct_value.SetInParent()
        target.struct_value.update(value)
    elif kind is list:
        target.list_value.SetInParent()
        target.list_value.extend(value)
    elif value is None:
        target.null_value = 0
    elif kind is bool:
        target.bool_value = value
    elif kind is str:
        target.string_value = value
    else:
        target.number_value = value
