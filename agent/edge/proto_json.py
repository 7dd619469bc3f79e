"""``MessageToDict`` for the answers the agent sends, at a fraction of its cost.

protobuf's ``json_format.MessageToDict`` is pure Python that looks up each field's
descriptor, type and well-known-type handler again for every value it prints; a task with
24 record artifacts spends more time there than in the skill (bench.perf --profile). This
module makes the same decisions once per message type (a plan: each field's JSON name and
how its value prints) and then only walks ``ListFields()``. The output is exactly
``MessageToDict(message)`` with its default options (camelCase names, enum names, int64 as
strings, unset fields omitted); tests/core/edge/test_proto_json.py holds the two equal over
generated A2A messages. Anything outside the plan (``Any``, extensions) goes to
``MessageToDict`` itself.
"""

from __future__ import annotations

import base64
import contextvars
import math
from collections.abc import Callable
from typing import Any, cast

from a2a.helpers import new_data_part
from a2a.types import Part
from google.protobuf import json_format, struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from agent.edge.json_numbers import MAX_SAFE_INTEGER, integral_numbers

Convert = Callable[[Any], Any]
_Plan = dict[str, tuple[str, Convert, bool, bool]]  # field name -> (json name, convert,
# repeated, map)

_INT64 = {
    FieldDescriptor.CPPTYPE_INT64,
    FieldDescriptor.CPPTYPE_UINT64,
}
_INTEGRAL = contextvars.ContextVar("integral_numbers", default=False)
_SHARED = contextvars.ContextVar("shared_structs", default=False)
_MESSAGES: dict[str, Convert] = {}

SHARED_MIN_BYTES = 1024
SHARED_MAX_BYTES = 64 * 1024
SHARED_ENTRIES = 64
"""Large Structs printed for output only are kept, by their serialized bytes, in at most this
many entries of at most SHARED_MAX_BYTES each (4 MiB at worst, whatever callers send)."""
_PRINTED: dict[tuple[bool, bytes], Any] = {}


def message_to_dict(message: Message, *, shared: bool = False) -> Any:
    """``json_format.MessageToDict(message)``, computed faster.

    ``shared``: the caller only serializes the result and never changes it, so a large
    Struct seen before (the fixed describe_skill document, in every answer and stored row)
    comes from a cache, its parts shared between results, instead of being walked again.
    """
    if not shared:
        return _convert(message)
    token = _SHARED.set(True)
    try:
        return _convert(message)
    finally:
        _SHARED.reset(token)


def message_to_wire_dict(message: Message, *, shared: bool = False) -> Any:
    """``message_to_dict`` with integral numbers as integers, in the same walk
    (agent/edge/json_numbers.py says why)."""
    token = _INTEGRAL.set(True)
    try:
        return message_to_dict(message, shared=shared)
    finally:
        _INTEGRAL.reset(token)


def data_part(data: Any, media_type: str | None = None) -> Part:
    """``a2a.helpers.new_data_part`` without ``ParseDict``: the same Part, built through
    ``Struct.update`` (protobuf's own JSON-value setter, a third of ParseDict's cost on a
    record). A value only ParseDict can judge (not plain JSON: a tuple, a NaN, a huge or
    non-str-keyed value, very deep) goes to ``new_data_part`` itself."""
    value = struct_pb2.Value()
    try:
        if type(data) is dict and plain_json(data, 1):
            value.struct_value.SetInParent()  # an empty object is still an object
            value.struct_value.update(data)
            return Part(data=value, media_type=media_type or "")
    except (ValueError, TypeError, OverflowError):  # pragma: no cover - plain_json rules them out
        pass
    return new_data_part(data, media_type=media_type)


PLAIN_DEPTH = 90
"""How many of ParseDict's messages deep a value may reach before ParseDict alone decides:
each JSON level of a Struct is two (Struct, Value), and ParseDict's own limit is 100."""


def plain_json(value: Any, depth: int) -> bool:
    """Whether ``value`` is JSON that Struct.update and ParseDict turn into the same Value,
    ``depth`` being how many of ParseDict's messages deep it sits."""
    if depth > PLAIN_DEPTH:
        return False
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-(2**63) <= value < 2**63)
    if kind is float:
        return bool(math.isfinite(value))
    if kind is dict:
        return all(type(k) is str and plain_json(v, depth + 2) for k, v in value.items())
    if kind is list:
        return all(plain_json(v, depth + 2) for v in value)
    return False


def _convert(message: Message) -> Any:
    try:
        return _message_converter(cast(Descriptor, message.DESCRIPTOR))(message)
    except (ValueError, json_format.SerializeToJsonError):
        # What it cannot print (a NaN in a Struct, a closed enum's stray number): protobuf's
        # own printer raises its own error, word for word.
        printed = json_format.MessageToDict(message)
        return integral_numbers(printed) if _INTEGRAL.get() else printed


def _identity(value: Any) -> Any:
    return value


def _string(value: Any) -> Any:
    return str(value)


def _bytes(value: Any) -> Any:
    return base64.b64encode(value).decode("utf-8")


def _int64(value: Any) -> Any:
    return str(value)


def _double(value: Any) -> Any:
    if math.isinf(value):
        return "-Infinity" if value < 0.0 else "Infinity"
    if math.isnan(value):
        return "NaN"
    return value


def _value(value: Any) -> Any:
    """A ``google.protobuf.Value``, as json_format prints it."""
    which = value.WhichOneof("kind")
    if which == "string_value":
        return value.string_value
    if which == "number_value":
        number = value.number_value
        if math.isinf(number) or math.isnan(number):
            raise ValueError("a Struct cannot hold this number")
        if (
            _INTEGRAL.get()
            and number.is_integer()
            and -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER
        ):
            return int(number)
        return number
    if which == "struct_value":
        return _struct(value.struct_value)
    if which == "bool_value":
        return value.bool_value
    if which == "list_value":
        return [_value(item) for item in value.list_value.values]
    return None  # null_value, or unset


def _struct(struct: Any) -> Any:
    if _SHARED.get() and SHARED_MIN_BYTES <= struct.ByteSize() <= SHARED_MAX_BYTES:
        key = (_INTEGRAL.get(), struct.SerializeToString(deterministic=True))
        printed = _PRINTED.get(key)
        if printed is None:
            token = _SHARED.set(False)  # its inner Structs: walked, not looked up
            try:
                printed = _walk_struct(struct)
            finally:
                _SHARED.reset(token)
            if len(_PRINTED) >= SHARED_ENTRIES:
                _PRINTED.clear()  # threads share it: whole-dict operations only
            _PRINTED[key] = printed
        return printed
    return _walk_struct(struct)


def _walk_struct(struct: Any) -> Any:
    fields = struct.fields
    return {key: _value(fields[key]) for key in fields}


def _list_value(values: Any) -> Any:
    return [_value(item) for item in values.values]


def _to_json_string(message: Any) -> Any:
    return message.ToJsonString()


_WELL_KNOWN: dict[str, Convert] = {
    "google.protobuf.Struct": _struct,
    "google.protobuf.Value": _value,
    "google.protobuf.ListValue": _list_value,
    "google.protobuf.Timestamp": _to_json_string,
    "google.protobuf.Duration": _to_json_string,
    "google.protobuf.FieldMask": _to_json_string,
}


def _message_converter(descriptor: Descriptor) -> Convert:
    found = _MESSAGES.get(descriptor.full_name)
    if found is not None:
        return found
    name = descriptor.full_name
    if name in _WELL_KNOWN:
        converter = _WELL_KNOWN[name]
    elif descriptor.file.name == "google/protobuf/wrappers.proto":
        inner = _field_converter(descriptor.fields_by_name["value"])
        converter = _wrapper(inner)
    elif name == "google.protobuf.Any" or descriptor.is_extendable:
        converter = json_format.MessageToDict
    else:
        _MESSAGES[name] = _deferred(descriptor)  # recursive types find themselves
        converter = _regular(descriptor)
    _MESSAGES[name] = converter
    return converter


def _deferred(descriptor: Descriptor) -> Convert:
    def convert(message: Any) -> Any:
        return _MESSAGES[descriptor.full_name](message)

    return convert


def _wrapper(inner: Convert) -> Convert:
    def convert(message: Any) -> Any:
        return inner(message.value)

    return convert


def _printed_by_protobuf(field: FieldDescriptor) -> bool:
    """Fields whose printing is protobuf's own business: 32-bit floats (its shortest form),
    enums with value options (renamed values) and closed enums (stray numbers refused).
    A2A has none; a message type with one is printed by ``MessageToDict`` whole."""
    if field.cpp_type == FieldDescriptor.CPPTYPE_FLOAT:
        return True
    enum_type = field.enum_type
    if enum_type is None or enum_type.full_name == "google.protobuf.NullValue":
        return False
    options = any(value.GetOptions().ListFields() for value in enum_type.values)
    return options or enum_type.is_closed


def _regular(descriptor: Descriptor) -> Convert:
    if any(_printed_by_protobuf(field) for field in descriptor.fields):
        return json_format.MessageToDict
    plan: _Plan = {}
    for field in descriptor.fields:
        is_map = field.message_type is not None and field.message_type.GetOptions().map_entry
        convert = _map(field) if is_map else _field_converter(field)
        plan[field.name] = (field.json_name, convert, field.is_repeated and not is_map, is_map)

    def convert_message(message: Any) -> Any:
        out: dict[str, Any] = {}
        for field, value in message.ListFields():
            entry = plan.get(field.name)
            if entry is None or field.is_extension:
                return json_format.MessageToDict(message)
            json_name, convert, repeated, _ = entry
            if repeated:
                out[json_name] = [convert(item) for item in value]
            else:
                out[json_name] = convert(value)
        return out

    return convert_message


def _map(field: FieldDescriptor) -> Convert:
    assert field.message_type is not None
    value_field = field.message_type.fields_by_name["value"]
    convert_value = _field_converter(value_field)

    def convert(mapping: Any) -> Any:
        result = {}
        for key in mapping:
            shown = ("true" if key else "false") if isinstance(key, bool) else str(key)
            result[shown] = convert_value(mapping[key])
        return result

    return convert


def _field_converter(field: FieldDescriptor) -> Convert:
    cpp = field.cpp_type
    if cpp == FieldDescriptor.CPPTYPE_MESSAGE:
        assert field.message_type is not None
        return _nested(field.message_type)
    if cpp == FieldDescriptor.CPPTYPE_ENUM:
        return _enum(field)
    if cpp == FieldDescriptor.CPPTYPE_STRING:
        return _bytes if field.type == FieldDescriptor.TYPE_BYTES else _string
    if cpp == FieldDescriptor.CPPTYPE_BOOL:
        return bool
    if cpp in _INT64:
        return _int64
    if cpp == FieldDescriptor.CPPTYPE_DOUBLE:
        return _double
    return _identity


def _nested(descriptor: Descriptor) -> Convert:
    """The converter of a message-typed field, looked up on first use (types may recurse)."""
    resolved: list[Convert] = []

    def convert(value: Any) -> Any:
        if not resolved:
            resolved.append(_message_converter(descriptor))
        return resolved[0](value)

    return convert


def _enum(field: FieldDescriptor) -> Convert:
    enum_type = field.enum_type
    assert enum_type is not None
    if enum_type.full_name == "google.protobuf.NullValue":
        return lambda _value: None
    names = {number: value.name for number, value in enum_type.values_by_number.items()}

    def convert(value: Any) -> Any:
        return names.get(value, value)

    return convert
