"""Thin helpers over the real a2a-sdk client, for both bindings."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc.aio
import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.client import ClientCallContext
from a2a.client.service_parameters import with_a2a_extensions
from a2a.helpers import new_data_part, new_text_part
from a2a.types import (
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from google.protobuf.json_format import MessageToDict

from agent.interfaces import EXTENSION_URI

BINDINGS = ("JSONRPC", "HTTP+JSON")
EVERY_BINDING = ("JSONRPC", "HTTP+JSON", "GRPC")
"""The bindings of an agent started with gRPC beside HTTP."""
PARKING = "spare capacity on acme-lnk-00002"
"""A request the router asks back about (which direction): its task parks, input-required."""
ANSWER = "1"
"""The reply to PARKING's question that lets the task run."""
TRAINED_WITHIN_S = 300.0
"""How long an agent may take to train its text classifier (a loaded machine is slow)."""


def data_message(data: Any, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[new_data_part(data, media_type="application/json")],
        task_id=task_id,
        context_id=context_id,
    )


def text_message(text: str, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[new_text_part(text, media_type="text/plain")],
        task_id=task_id,
        context_id=context_id,
    )


@dataclass
class Outcome:
    """What one SendMessage produced: the final task and, when streaming, every event."""

    task: Task
    events: list[StreamResponse] = field(default_factory=list)

    @property
    def state(self) -> str:
        from a2a.types import TaskState

        return TaskState.Name(self.task.status.state)

    @property
    def error(self) -> dict[str, Any]:
        parts = self.task.status.message.parts
        assert len(parts) == 1, "an error status holds exactly one Data Part"
        return MessageToDict(parts[0])["data"]

    def artifacts(self, name: str | None = None) -> list[dict[str, Any]]:
        found = [MessageToDict(a) for a in self.task.artifacts]
        return [a for a in found if name is None or a.get("name") == name]

    def result(self, skill: str) -> dict[str, Any]:
        (artifact,) = self.artifacts(skill)
        (part,) = artifact["parts"]
        return part["data"]


class _WithToken:
    def __init__(self, token: str) -> None:
        self.pair = ("authorization", f"Bearer {token}")

    def _with_token(self, details: Any) -> Any:
        return details._replace(metadata=[*(details.metadata or ()), self.pair])


class _UnaryToken(_WithToken, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)


class _StreamToken(_WithToken, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)


def grpc_channel(token: str | None) -> Any:
    """A channel factory for the SDK's gRPC transport: ``authorization: Bearer <token>`` on
    every call (grpc.aio files an interceptor under one kind only, hence one per kind)."""
    interceptors: list[Any] | None = [_UnaryToken(token), _StreamToken(token)] if token else None
    return lambda target: grpc.aio.insecure_channel(target, interceptors=interceptors)


@asynccontextmanager
async def make_client(
    base_url: str, token: str | None, binding: str, streaming: bool = False, polling: bool = False
) -> AsyncIterator[Any]:
    """An a2a-sdk client for one binding, with the bearer token on every call (an HTTP
    header, or ``authorization`` metadata on gRPC)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        config = ClientConfig(
            streaming=streaming,
            polling=polling,
            httpx_client=http,
            supported_protocol_bindings=[binding],
            grpc_channel_factory=grpc_channel(token) if binding == "GRPC" else None,
        )
        client = await ClientFactory(config).create_from_url(base_url)
        async with client:
            yield client


def call_context(extensions: Iterable[str] = (EXTENSION_URI,)) -> ClientCallContext:
    params: dict[str, str] = {}
    with_a2a_extensions(list(extensions))(params)
    return ClientCallContext(service_parameters=params)


async def send(
    base_url: str,
    token: str | None,
    message: Message,
    *,
    binding: str = "JSONRPC",
    streaming: bool = False,
    extensions: Iterable[str] = (EXTENSION_URI,),
) -> Outcome:
    events: list[StreamResponse] = []
    task: Task | None = None
    async with make_client(base_url, token, binding, streaming) as client:
        async for event in client.send_message(
            SendMessageRequest(message=message), context=call_context(extensions)
        ):
            events.append(event)
            if event.HasField("task"):
                task = event.task
        if streaming or task is None:
            from a2a.types import GetTaskRequest

            task_id = task.id if task is not None else _task_id(events)
            task = await client.get_task(
                GetTaskRequest(id=task_id), context=call_context(extensions)
            )
    return Outcome(task=task, events=events)


def _task_id(events: list[StreamResponse]) -> str:
    for event in events:
        kind = event.WhichOneof("payload")
        if kind == "task":
            return event.task.id
        if kind in ("status_update", "artifact_update"):
            return getattr(event, kind).task_id
    raise AssertionError("no task in the stream")


async def invoke(
    base_url: str,
    token: str | None,
    skill: str,
    arguments: dict[str, Any],
    interface: dict[str, str] | None = None,
    **kwargs: Any,
) -> Outcome:
    """A schema-interface skill request; ``interface`` = {skill_version, interface_digest}."""
    data: dict[str, Any] = {"skill": skill, "arguments": arguments}
    if interface:
        data.update(interface)
    return await send(base_url, token, data_message(data), **kwargs)


async def describe(base_url: str, token: str | None, skill_id: str, **kwargs: Any) -> Outcome:
    """Call describe_skill for ``skill_id``."""
    return await invoke(base_url, token, "describe_skill", {"skill_id": skill_id}, **kwargs)


async def binding_of(
    base_url: str, token: str | None, skill_id: str, **kwargs: Any
) -> dict[str, str]:
    """The {skill_version, interface_digest} pair describe_skill returns for a skill."""
    outcome = await describe(base_url, token, skill_id, **kwargs)
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task
    described = outcome.result("describe_skill")
    return {
        "skill_version": described["skill_version"],
        "interface_digest": described["interface_digest"],
    }


async def call(
    base_url: str, token: str | None, skill: str, arguments: dict[str, Any], **kwargs: Any
) -> Outcome:
    """Describe, then invoke with the described version and digest (the governed path)."""
    same = {k: kwargs[k] for k in ("binding", "extensions") if k in kwargs}
    interface = await binding_of(base_url, token, skill, **same)
    return await invoke(base_url, token, skill, arguments, interface, **kwargs)


def edge_reason(body: Any) -> str | None:
    """The ErrorInfo reason of an error answer of either binding (agent/edge/wire_errors.py):
    ``error.details[]`` in the google.rpc.Status shape, ``error.data[]`` on JSON-RPC."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None
    details = error.get("details", error.get("data"))
    infos = [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []
    reasons = [d.get("reason") for d in infos if d.get("@type", "").endswith("ErrorInfo")]
    return reasons[0] if reasons and isinstance(reasons[0], str) else None


async def follow_states(
    base_url: str, token: str, task_id: str, states: list[int] | None = None
) -> list[int]:
    """Subscribe to ``task_id`` over JSON-RPC: every state seen, appended to ``states`` as it
    comes (a caller may watch the list while the stream runs), until the stream ends."""
    seen = [] if states is None else states
    async with make_client(base_url, token, "JSONRPC", streaming=True) as client:
        async for event in client.subscribe(
            SubscribeToTaskRequest(id=task_id), context=call_context()
        ):
            kind = event.WhichOneof("payload")
            if kind == "task":
                seen.append(event.task.status.state)
            elif kind == "status_update":
                seen.append(event.status_update.status.state)
    return seen


def wait_trained(base_url: str) -> None:
    """Until the agent's classifier is trained: the first text request waits for it."""
    deadline = time.monotonic() + TRAINED_WITHIN_S
    while httpx.get(f"{base_url}/healthz", timeout=10).json().get("classifier") != "ready":
        assert time.monotonic() < deadline, "the classifier never became ready"
        time.sleep(0.5)


async def park(base_url: str, token: str, binding: str = "JSONRPC") -> str:
    """A task parked input-required (``PARKING``), by its id."""
    asked = await send(base_url, token, text_message(PARKING), binding=binding)
    assert asked.state == "TASK_STATE_INPUT_REQUIRED", asked.task.status
    return asked.task.id


def with_config(url: str, text: str = PARKING) -> SendMessageRequest:
    """A send whose configuration asks for push notifications to ``url``."""
    return SendMessageRequest(
        message=text_message(text),
        configuration=SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=url)
        ),
    )


async def send_with_config(base_url: str, token: str, url: str) -> str:
    """``with_config(url)`` sent over JSON-RPC: the new task's id."""
    async with make_client(base_url, token, "JSONRPC") as client:
        async for event in client.send_message(with_config(url), context=call_context()):
            return str(event.task.id)
    raise AssertionError("no answer")
