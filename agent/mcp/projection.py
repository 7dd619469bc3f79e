"""The fifth projection of the registry: its skills as MCP tools, for one caller at a time.

Tools are the skills the caller's extended card lists (``CardFactory.extended_card``: the same
``visible(manifest, caller)``, the same lifecycle: a deprecated skill's description names its
replacement, a preview one is listed to opted-in callers only, a removed one never), each with
``inputSchema`` and ``outputSchema`` from its Skill Interface Document and the interface it
binds to (skill version, interface digest) in ``_meta``.

A call is not run here. It becomes what an A2A client would send for it, a message whose one
Data Part is ``{skill, skill_version, interface_digest, arguments}``, and goes to the request
handler the A2A bindings use (``GovernedRequestHandler.on_message_send``): the same limits,
routing of an explicit request, entitlement, interface check, input validation, resource-level
authorization, constraints, per-caller admission, downscoped tool tokens, record and output
validation, one durable settlement with the audit rows, which name the projection ``mcp``.
The settled task is then read back into an MCP tool result: the validated output as
``structuredContent``, a short text rendering, each supporting record as an embedded resource
named by its kind and artifact id; an error object (``{code, message?, details?}``, the
draft's codes) as a tool error (``isError``) carrying the same object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import mcp_types as types
from a2a.helpers import new_data_part
from a2a.server.context import ServerCallContext
from a2a.types import (
    InternalError,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError
from google.protobuf import json_format
from google.protobuf.json_format import MessageToDict

from agent.base.ids import random_hex
from agent.interfaces import ErrorCode
from agent.registry.cards import CardFactory
from agent.registry.loader import Capability, Registry
from agent.registry.manifest import State
from agent.routing.skill_request import plain_json
from agent.security.principal import Principal, PrincipalUser
from agent.server.executor import PROJECTION_STATE_KEY, summary_text
from agent.server.request_handler import GovernedRequestHandler
from agent.server.skill_context import RESULT_ARTIFACT_ID
from agent.storage.audit import MCP

JSON: Final = "application/json"
META_PREFIX: Final = "netagent/"
"""The prefix of this agent's keys in MCP ``_meta`` objects."""
SKILL_VERSION: Final = META_PREFIX + "skill_version"
INTERFACE_DIGEST: Final = META_PREFIX + "interface_digest"
STATE: Final = META_PREFIX + "state"
REPLACEMENT: Final = META_PREFIX + "replacement"
TASK_ID: Final = META_PREFIX + "task_id"
RECORD_KIND: Final = META_PREFIX + "record_kind"
ARTIFACT_ID: Final = META_PREFIX + "artifact_id"
DEPRECATION: Final = META_PREFIX + "deprecation"
RECORD_URI: Final = "netagent://records/{kind}/{artifact_id}"
"""The URI of a supporting record embedded in a tool result."""
_CACHE_LIMIT: Final = 4096
UNPARSED: Final = "the arguments do not parse as a message's data (a number or nesting past JSON's)"
"""A call whose arguments no A2A Data Part can hold (a 400-digit integer, say)."""


def _tool(capability: Capability, name: str, description: str) -> types.Tool:
    interface = capability.interface
    assert interface is not None
    document = interface.document
    manifest = capability.manifest
    meta: dict[str, Any] = {
        SKILL_VERSION: interface.skill_version,
        INTERFACE_DIGEST: interface.interface_digest,
        STATE: manifest.state.value,
    }
    if manifest.state is State.DEPRECATED and manifest.replacement:
        meta[REPLACEMENT] = manifest.replacement
    return types.Tool(
        name=capability.id,
        title=name,
        description=description,
        input_schema=document["input_schema"]["resolution"]["schema"],
        output_schema=document["output_schema"]["resolution"]["schema"],
        _meta=meta,
    )


class McpProjection:
    """The tools a caller may see and the governed call behind each; transport-free."""

    def __init__(
        self, registry: Registry, cards: CardFactory, handler: GovernedRequestHandler
    ) -> None:
        self._registry = registry
        self._cards = cards
        self._handler = handler
        self._tools: dict[tuple[str | None, frozenset[str], bool], list[types.Tool]] = {}

    def tools(self, principal: Principal) -> list[types.Tool]:
        """Exactly the skills the caller's extended card lists, in its order, as tools."""
        key = (principal.tenant, principal.scopes, principal.authenticated)
        tools = self._tools.get(key)
        if tools is None:
            tools = []
            for skill in self._cards.extended_card(principal).skills:
                capability = self._registry.get(skill.id)
                if capability is not None and capability.interface is not None:
                    tools.append(_tool(capability, skill.name, skill.description))
            if len(self._tools) < _CACHE_LIMIT:
                self._tools[key] = tools
        return tools

    async def call(
        self,
        principal: Principal,
        name: str,
        arguments: Mapping[str, Any] | None,
        meta: Mapping[str, Any] | None = None,
    ) -> types.CallToolResult:
        """Run the tool ``name`` as the A2A request for the same skill, and read its task.

        The interface the call binds to is the one the caller pinned in the call's ``_meta``
        (``netagent/skill_version``, ``netagent/interface_digest``, as listed), else the one
        the registry runs now (what ``tools/list`` gave): a host that cached an old listing
        and pins it gets ``interface_mismatch``, as an A2A client would.
        """
        request: dict[str, Any] = {"skill": name, "arguments": dict(arguments or {})}
        capability = self._registry.get(name)
        pinned = meta or {}
        interface = capability.interface if capability is not None else None
        version = pinned.get(SKILL_VERSION, interface.skill_version if interface else None)
        digest = pinned.get(INTERFACE_DIGEST, interface.interface_digest if interface else None)
        if version is not None:
            request["skill_version"] = version
        if digest is not None:
            request["interface_digest"] = digest
        try:
            part = new_data_part(request, media_type=JSON)
        except (ValueError, TypeError, OverflowError, json_format.Error):
            # a number no JSON double holds (a 400-digit integer), or nesting past protobuf's
            # limit: what the A2A bindings answer for the same request, with no input in it
            return _error_result({"code": str(ErrorCode.INPUT_INVALID), "message": UNPARSED}, None)
        params = SendMessageRequest(
            message=Message(message_id=random_hex(), role=Role.ROLE_USER, parts=[part]),
            configuration=SendMessageConfiguration(accepted_output_modes=[JSON]),
        )
        context = ServerCallContext(
            user=PrincipalUser(principal), state={PROJECTION_STATE_KEY: MCP}
        )
        try:
            answer = await self._handler.on_message_send(params, context)
        except InternalError as exc:  # a defect: the message holds only a correlation id
            return _error_result(
                {"code": str(ErrorCode.EXECUTION_FAILED), "message": str(exc.message)}, None
            )
        except A2AError as exc:  # refused before any task (limits, shape): fixed text
            return _error_result(
                {"code": str(ErrorCode.INPUT_INVALID), "message": str(exc.message)}, None
            )
        if not isinstance(answer, Task):
            return _error_result(
                {"code": str(ErrorCode.EXECUTION_FAILED), "message": "no task"}, None
            )
        return self._result(answer, capability)

    def _result(self, task: Task, capability: Capability | None) -> types.CallToolResult:
        state = task.status.state
        if state != TaskState.TASK_STATE_COMPLETED:
            return _error_result(_status_error(task), task.id)
        output: Any = None
        records: list[types.EmbeddedResource] = []
        for artifact in task.artifacts:
            data = _data(artifact.parts)
            if artifact.artifact_id == RESULT_ARTIFACT_ID:
                output = data
                continue
            records.append(
                types.EmbeddedResource(
                    resource=types.TextResourceContents(
                        uri=RECORD_URI.format(kind=artifact.name, artifact_id=artifact.artifact_id),
                        mime_type=JSON,
                        text=json.dumps(data, separators=(",", ":"), sort_keys=True),
                    ),
                    _meta={RECORD_KIND: artifact.name, ARTIFACT_ID: artifact.artifact_id},
                )
            )
        handler = capability.handler if capability is not None else None
        summarize = (handler.summarize if handler is not None else None) or summary_text
        text = summarize(output) if isinstance(output, dict) else json.dumps(output)
        meta: dict[str, Any] = {TASK_ID: task.id}
        interface = capability.interface if capability is not None else None
        if interface is not None:
            meta[SKILL_VERSION] = interface.skill_version
            meta[INTERFACE_DIGEST] = interface.interface_digest
        if capability is not None and capability.manifest.state is State.DEPRECATED:
            notice = _texts(task.status.message.parts).get("text", "")
            meta[DEPRECATION] = {
                "skill_id": capability.id,
                "replacement": capability.manifest.replacement,
            }
            if notice:
                text = f"{notice}\n{text}"
        content: list[types.ContentBlock] = [types.TextContent(text=text), *records]
        return types.CallToolResult(content=content, structured_content=output, _meta=meta)


def _data(parts: Any) -> Any:
    """The JSON value of the first Data Part, integral numbers as integers."""
    for part in parts:
        if part.WhichOneof("content") == "data":
            return plain_json(MessageToDict(part)["data"])
    return None


def _texts(parts: Any) -> dict[str, str]:
    texts = [part.text for part in parts if part.WhichOneof("content") == "text"]
    return {"text": "\n".join(texts)} if texts else {}


def _status_error(task: Task) -> dict[str, Any]:
    """The error object of a task that did not complete (its status message's Data Part)."""
    parts: list[Part] = list(task.status.message.parts)
    error = _data(parts)
    if isinstance(error, dict) and "code" in error:
        return error
    if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
        question = _texts(parts).get("text", "more input is needed")
        return {"code": str(ErrorCode.INPUT_INVALID), "message": question}
    return {"code": str(ErrorCode.EXECUTION_FAILED), "message": "the invocation did not complete"}


def _error_result(error: dict[str, Any], task_id: str | None) -> types.CallToolResult:
    """A tool error: the draft's error object as structured content, and as text."""
    text = str(error["code"])
    if error.get("message"):
        text += f": {error['message']}"
    for detail in error.get("details") or ():
        if isinstance(detail, dict):
            text += f"\n{detail.get('instance_path', '')}: {detail.get('keyword', '')}"
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=error,
        is_error=True,
        _meta={TASK_ID: task_id} if task_id else None,
    )
