"""Our REQUIRED-field check answers as the SDK's: every request type, each field gone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from a2a.types import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    InvalidParamsError,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.json_format import ParseDict
from google.protobuf.message import Message as ProtobufMessage

from agent.edge.required_fields import check_required_fields


def full_requests() -> list[ProtobufMessage]:
    push = TaskPushNotificationConfig(
        task_id="t",
        id="p",
        url="https://example.test/hook",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="x"),
    )
    message = Message(
        message_id="m-1",
        role=Role.ROLE_USER,
        task_id="t",
        context_id="c",
        parts=[Part(text="hello"), Part(text="again")],
    )
    ParseDict({"kind": {"nested": [1, "two", {"three": None}]}}, message.metadata)
    send = SendMessageRequest(
        message=message,
        configuration=SendMessageConfiguration(
            accepted_output_modes=["application/json"], task_push_notification_config=push
        ),
    )
    send.message.parts.append(Part())
    ParseDict({"deep": {"deeper": {"deepest": [1, 2, 3]}}}, send.message.parts[2].data)
    return [
        send,
        GetTaskRequest(id="t", history_length=2),
        CancelTaskRequest(id="t"),
        SubscribeToTaskRequest(id="t"),
        push,
        GetTaskPushNotificationConfigRequest(task_id="t", id="p"),
        DeleteTaskPushNotificationConfigRequest(task_id="t", id="p"),
        ListTaskPushNotificationConfigsRequest(task_id="t"),
    ]


def without_each_field(message: ProtobufMessage) -> Iterator[ProtobufMessage]:
    """The message with one set field cleared, for every set field at every depth."""
    for field, _ in message.ListFields():
        copy = type(message)()
        copy.CopyFrom(message)
        copy.ClearField(field.name)
        yield copy
        if field.type == field.TYPE_MESSAGE and not field.is_repeated:
            for inner in without_each_field(getattr(message, field.name)):
                copy = type(message)()
                copy.CopyFrom(message)
                getattr(copy, field.name).CopyFrom(inner)
                yield copy
        elif field.type == field.TYPE_MESSAGE and not field.message_type.GetOptions().map_entry:
            for index, item in enumerate(getattr(message, field.name)):
                for inner in without_each_field(item):
                    copy = type(message)()
                    copy.CopyFrom(message)
                    getattr(copy, field.name)[index].CopyFrom(inner)
                    yield copy


def cases() -> list[ProtobufMessage]:
    found: list[ProtobufMessage] = []
    for request in full_requests():
        found.append(request)
        found.append(type(request)())  # everything missing at once
        found.extend(without_each_field(request))
    return found


def answer(check: object, message: ProtobufMessage) -> object:
    try:
        check(message)  # type: ignore[operator]
    except InvalidParamsError as error:
        return (type(error), error.message, error.data)
    return None


@pytest.mark.parametrize("message", cases(), ids=lambda m: type(m).__name__)
def test_our_check_answers_as_the_sdks(message: ProtobufMessage) -> None:
    assert answer(check_required_fields, message) == answer(validate_proto_required_fields, message)


def test_the_cases_include_refusals_at_depth() -> None:
    """The comparison above would pass on two checks that never refuse: they do refuse."""
    refused = [m for m in cases() if answer(validate_proto_required_fields, m) is not None]
    paths = {
        e["field"]
        for m in refused
        for e in answer(validate_proto_required_fields, m)[2]["errors"]  # type: ignore[index]
    }
    assert {"message", "message.message_id", "message.role", "message.parts"} <= paths
    assert "configuration.task_push_notification_config.url" in paths
