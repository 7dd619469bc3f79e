"""The protocol's REQUIRED fields, checked as the SDK checks them, at a fraction of the cost.

The SDK's ``validate_proto_required_fields`` reads every field's options on every call and
walks every nested message, a Data Part's whole ``Struct`` included (bench.perf --profile:
about 0.3 ms of a governed call). Which fields are REQUIRED, and which nested messages can
hold one at all, depends only on the descriptors: that is worked out once per message type
here, and the walk skips every subtree that cannot hold a REQUIRED field. The errors are the
SDK's (same ``InvalidParamsError``, message, field paths and texts;
tests/core/edge/test_required_fields.py compares the two on every case it generates).
"""

from __future__ import annotations

import functools
from typing import Any

from a2a.types import InvalidParamsError
from google.api.field_behavior_pb2 import REQUIRED, field_behavior
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message as ProtobufMessage


@functools.cache
def _plan(descriptor: Descriptor) -> tuple[tuple[FieldDescriptor, bool, bool, bool], ...]:
    """Per field that matters: (field, required, recurse into it, is a map)."""
    steps = []
    for field in descriptor.fields:
        required = REQUIRED in field.GetOptions().Extensions[field_behavior]
        message = field.message_type if field.type == FieldDescriptor.TYPE_MESSAGE else None
        is_map = bool(message is not None and message.GetOptions().map_entry)
        target = message.fields_by_name["value"].message_type if is_map and message else message
        recurse = target is not None and _can_hold_required(target)
        if required or recurse:
            steps.append((field, required, recurse, is_map))
    return tuple(steps)


@functools.cache
def _can_hold_required(descriptor: Descriptor, _seen: frozenset[str] = frozenset()) -> bool:
    """Whether a message of this type can contain a REQUIRED field anywhere below it."""
    if descriptor.full_name in _seen:
        return False
    seen = _seen | {descriptor.full_name}
    for field in descriptor.fields:
        if REQUIRED in field.GetOptions().Extensions[field_behavior]:
            return True
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type is not None:
            target: Descriptor | None = field.message_type
            if target is not None and target.GetOptions().map_entry:
                target = target.fields_by_name["value"].message_type
            if target is not None and _can_hold_required(target, seen):
                return True
    return False


def _repeated(field: FieldDescriptor) -> bool:
    """protobuf >= 6.31 has ``is_repeated``; 7 removed ``label`` (the SDK reads it alike)."""
    repeated = getattr(field, "is_repeated", None)
    if repeated is not None:
        return bool(repeated)
    return bool(getattr(field, "label", None) == FieldDescriptor.LABEL_REPEATED)


def _violation(message: ProtobufMessage, field: FieldDescriptor) -> dict[str, str] | None:
    value = getattr(message, field.name)
    if _repeated(field):
        if not value:
            return {"field": field.name, "message": "Field must contain at least one element."}
    elif field.has_presence:
        if not message.HasField(field.name):
            return {"field": field.name, "message": "Field is required."}
    elif value == field.default_value:
        return {"field": field.name, "message": "Field is required."}
    return None


def _nested(errors: list[dict[str, str]], prefix: str, found: list[dict[str, str]]) -> None:
    for error in found:
        inner = error["field"]
        errors.append(
            {"field": f"{prefix}.{inner}" if inner else prefix, "message": error["message"]}
        )


def missing_fields(message: ProtobufMessage) -> list[dict[str, str]]:
    """Every REQUIRED field that is absent or empty, with the SDK's paths and texts."""
    errors: list[dict[str, str]] = []
    for field, required, recurse, is_map in _plan(message.DESCRIPTOR):
        if required:
            violation = _violation(message, field)
            if violation is not None:
                errors.append(violation)
        if not recurse:
            continue
        value: Any = getattr(message, field.name)
        if not _repeated(field):
            if message.HasField(field.name):
                _nested(errors, field.name, missing_fields(value))
        elif is_map:
            for key, item in value.items():
                if isinstance(item, ProtobufMessage):
                    _nested(errors, f"{field.name}[{key}]", missing_fields(item))
        else:
            for index, item in enumerate(value):
                _nested(errors, f"{field.name}[{index}]", missing_fields(item))
    return errors


def check_required_fields(message: ProtobufMessage) -> None:
    """Raise the SDK's InvalidParamsError when a REQUIRED field is missing."""
    errors = missing_fields(message)
    if errors:
        raise InvalidParamsError(message="Validation failed", data={"errors": errors})
