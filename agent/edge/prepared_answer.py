"""A blocking send's answer printed from what the run already holds as JSON.

The SDK's JSON-RPC and HTTP+JSON adapters print a settled task with ``MessageToDict``
(``proto_json`` for us), walking every record's Struct again: for a call with many records that is
its largest single stage (bench.perf --profile). But each record is a plain JSON value when the
skill emits it. ``wire_value`` prints that value as its Struct would print (every number a double,
integral ones as integers: ``proto_json.message_to_wire_dict``), and the run keeps it by artifact id
(``TaskRun.wire_artifacts``). The request handler then prepares the answer (``prepare``) and the
adapters' printer (agent/_sdk.py) takes it for the ``SendMessageResponse`` of that very task instead
of walking it (``take``).

Dict key order inside a record is the skill's own, where a Struct's map has none of its own;
JSON objects are unordered, so the answer is the same JSON document
(tests/core/edge/test_prepared_answer.py holds the two equal).
"""

from __future__ import annotations

import contextvars
from collections.abc import Mapping
from typing import Any

from a2a.types import SendMessageResponse, Task

from agent.edge.json_numbers import MAX_SAFE_INTEGER
from agent.edge.proto_json import message_to_wire_dict

_PREPARED: contextvars.ContextVar[tuple[Task, dict[str, Any]] | None] = contextvars.ContextVar(
    "prepared_answer", default=None
)
_TAKEN: contextvars.ContextVar[bool] = contextvars.ContextVar("answer_taken", default=False)
"""Set by a printer that takes the prepared answer whenever there is one (``take_task``)."""


def taking() -> contextvars.Token[bool]:
    """Say that this request's printer takes the prepared answer (``take_task``): the handler
    may then answer with a task whose printed artifacts lack their parts (``TaskRun``)."""
    return _TAKEN.set(True)


def done_taking(token: contextvars.Token[bool]) -> None:
    """Undo ``taking``."""
    _TAKEN.reset(token)


def taken() -> bool:
    """Whether this request's printer takes the prepared answer (``taking``)."""
    return _TAKEN.get()


def wire_value(value: Any) -> Any:
    """A plain JSON value (``proto_json.plain_json``) as its ``google.protobuf.Value`` prints
    on the wire: numbers through a double, integral ones within 2**53 as integers."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int or kind is float:
        number = float(value)
        if number.is_integer() and -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
            return int(number)
        return number
    if kind is dict:
        return {key: wire_value(item) for key, item in value.items()}
    return [wire_value(item) for item in value]


def artifact_wire(
    artifact_id: str,
    name: str,
    data: Any,
    media_type: str,
    extensions: list[str] | None,
) -> dict[str, Any]:
    """An artifact of one Data Part, as ``message_to_wire_dict(artifact)`` prints it."""
    part: dict[str, Any] = {"data": wire_value(data)}
    if media_type:
        part["mediaType"] = media_type
    printed: dict[str, Any] = {"artifactId": artifact_id}
    if name:
        printed["name"] = name
    printed["parts"] = [part]
    if extensions:
        printed["extensions"] = list(extensions)
    return printed


def task_wire(task: Task, artifacts: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    """``message_to_wire_dict(task)``, each artifact in ``artifacts`` taken as printed; the
    other members printed one by one, in field order, set ones only, as the printer does."""
    printed: dict[str, Any] = {}
    if task.id:
        printed["id"] = task.id
    if task.context_id:
        printed["contextId"] = task.context_id
    if task.HasField("status"):
        printed["status"] = message_to_wire_dict(task.status, shared=True)
    if task.artifacts:
        printed["artifacts"] = [
            artifacts.get(artifact.artifact_id) or message_to_wire_dict(artifact, shared=True)
            for artifact in task.artifacts
        ]
    if task.history:
        printed["history"] = [message_to_wire_dict(m, shared=True) for m in task.history]
    if task.HasField("metadata"):
        printed["metadata"] = message_to_wire_dict(task.metadata, shared=True)
    return printed


def prepare(task: Task, artifacts: Mapping[str, dict[str, Any]]) -> None:
    """The answer for ``task``, for the printer of this request's ``SendMessageResponse``."""
    _PREPARED.set((task, {"task": task_wire(task, artifacts)}) if artifacts else None)


def take_task(task: Task) -> dict[str, Any] | None:
    """The prepared answer, if ``task`` is the very task it was prepared for (consumed).

    For the JSON-RPC straight path (agent/edge/jsonrpc_send.py), which holds the handler's
    own answer: no ``SendMessageResponse`` around a copy of the task, and no comparison of
    every record's Struct (bench.perf --profile shows both in a call with many records).
    """
    prepared = _PREPARED.get()
    if prepared is None or prepared[0] is not task:
        return None
    _PREPARED.set(None)
    return prepared[1]


def take(message: Any) -> dict[str, Any] | None:
    """The prepared answer, if ``message`` is the response of the task it was prepared for
    (consumed: one answer per preparation)."""
    prepared = _PREPARED.get()
    if prepared is None or type(message) is not SendMessageResponse:
        return None
    _PREPARED.set(None)
    task, answer = prepared
    if message.WhichOneof("payload") != "task" or message.task != task:
        return None
    return answer
