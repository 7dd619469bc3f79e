"""The pieces of an agent around its request handler, for unit tests without a server.

An ``Agent`` is what ``create_app`` assembles around a request (the real registry, router,
executor, request handler and inventory tool behind its gate, over a seeded SQLite
inventory), with the SDK's InMemoryTaskStore and the in-memory binding and audit stores in
place of the database ones. Tests reach it only through the SDK's ``RequestHandler``
interface, with a fresh ``ServerCallContext`` per request as the SDK's routes build one, so
they hold for any handler of that interface.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from a2a.helpers import new_data_part, new_text_part
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    ListTasksRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskState,
)
from google.protobuf.json_format import MessageToDict
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.app import gated_tools
from agent.base.settings import Settings
from agent.interfaces import EXTENSION_URI
from agent.ports import ToolEnvironment
from agent.registry.loader import Registry
from agent.security.auth import SigningKey, TokenVerifier, issue_token
from agent.security.credentials import (
    TOOL_ISSUER,
    LocalIssuer,
    LocalTokenExchanger,
    ToolTokenVerifier,
)
from agent.security.principal import ANONYMOUS, Principal, PrincipalUser
from agent.server.request_handler import GovernedRequestHandler
from agent.server.skill_context import ToolFactory
from agent.storage.audit import InMemoryAuditLog
from agent.storage.bindings import InMemoryBindingStore
from netops.deployment import network_deployment
from tests.conftest import IDENTITIES

INVENTORY = "inventory"
JSON = "application/json"


@dataclass(frozen=True)
class Keys:
    """The agent's signing key and the settings its tokens are issued under."""

    settings: Settings
    key: SigningKey


def inventory_tool(keys: Keys, engine: AsyncEngine, audit: InMemoryAuditLog) -> ToolFactory:
    """The app's own tool wiring (agent.app.gated_tools) with the network deployment's port:
    a token exchanged per grant, checked by the real inventory gate."""
    deployment = network_deployment()
    issuer = LocalIssuer(keys.key, TokenVerifier(keys.settings, keys.key), deployment.audiences)
    verifier = ToolTokenVerifier(INVENTORY, TOOL_ISSUER, key=keys.key.private_key.public_key())
    environments = {INVENTORY: ToolEnvironment(keys.settings, engine, verifier, audit)}
    return gated_tools(deployment, LocalTokenExchanger(issuer), environments)


@dataclass
class Agent:
    """One agent's request handler and the in-memory stores behind it."""

    handler: GovernedRequestHandler
    tasks: InMemoryTaskStore
    bindings: InMemoryBindingStore
    audit: InMemoryAuditLog
    keys: Keys
    registry: Registry
    _interfaces: dict[str, dict[str, str]] = field(default_factory=dict)

    def caller(
        self, subject: str, *, tenant: str | None = None, scopes: Iterable[str] | None = None
    ) -> Principal:
        """A verified caller with a real bearer token (the tool exchange verifies it)."""
        default_tenant, default_scopes = IDENTITIES.get(subject, ("acme", []))
        tenant = tenant or default_tenant
        granted = list(default_scopes if scopes is None else scopes)
        token = issue_token(
            self.keys.key, self.keys.settings, subject=subject, tenant=tenant, scopes=granted
        )
        return Principal(subject, tenant, frozenset(granted), token)

    @staticmethod
    def context(
        who: Principal = ANONYMOUS, extensions: Iterable[str] = (EXTENSION_URI,)
    ) -> ServerCallContext:
        """What the SDK's routes build for one request: the caller and its extensions."""
        return ServerCallContext(user=PrincipalUser(who), requested_extensions=set(extensions))

    async def send(
        self,
        message: Message,
        who: Principal = ANONYMOUS,
        *,
        accepted_output_modes: Iterable[str] = (),
        return_immediately: bool = False,
    ) -> Task:
        """message/send as ``who``; the task it answers with."""
        request = SendMessageRequest(
            message=message,
            configuration=SendMessageConfiguration(
                accepted_output_modes=list(accepted_output_modes),
                return_immediately=return_immediately,
            ),
        )
        result = await self.handler.on_message_send(request, self.context(who))
        assert isinstance(result, Task), result
        return result

    async def describe(self, skill_id: str, who: Principal = ANONYMOUS) -> dict[str, str]:
        """The {skill_version, interface_digest} describe_skill reports (asked once per skill)."""
        if skill_id not in self._interfaces:
            task = await self.send(
                data_message({"skill": "describe_skill", "arguments": {"skill_id": skill_id}}), who
            )
            assert state(task) == "TASK_STATE_COMPLETED", task.status
            described = result(task, "describe_skill")
            self._interfaces[skill_id] = {
                "skill_version": described["skill_version"],
                "interface_digest": described["interface_digest"],
            }
        return self._interfaces[skill_id]

    async def invoke(
        self, skill: str, arguments: dict[str, Any], who: Principal = ANONYMOUS, **kwargs: Any
    ) -> Task:
        """The governed call: describe first, then name the described interface."""
        interface = await self.describe(skill, who)
        request = {"skill": skill, "arguments": arguments} | interface
        return await self.send(data_message(request), who, **kwargs)

    async def tasks_of(self, who: Principal) -> list[Task]:
        """tasks/list as ``who``."""
        page = await self.handler.on_list_tasks(ListTasksRequest(), self.context(who))
        return list(page.tasks)


def data_message(data: Any, task_id: str = "", context_id: str = "") -> Message:
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[new_data_part(data, media_type=JSON)],
        task_id=task_id,
        context_id=context_id,
    )


def text_message(text: str, task_id: str = "", **metadata: Any) -> Message:
    message = Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[new_text_part(text, media_type="text/plain")],
        task_id=task_id,
    )
    message.metadata.update(metadata)
    return message


def state(task: Task) -> str:
    return TaskState.Name(task.status.state)


def error(task: Task) -> dict[str, Any]:
    """The error object: the one Data Part of a refused or failed task's status message."""
    (part,) = task.status.message.parts
    return MessageToDict(part)["data"]


def question(task: Task) -> dict[str, Any]:
    """The Data Part of an input-required task's question."""
    (data,) = [p for p in task.status.message.parts if p.WhichOneof("content") == "data"]
    return MessageToDict(data)["data"]


def artifacts(task: Task) -> list[str]:
    """The artifacts' names, in the order they were added."""
    return [a.name for a in task.artifacts]


def result(task: Task, skill: str) -> dict[str, Any]:
    (artifact,) = [a for a in task.artifacts if a.name == skill]
    (part,) = artifact.parts
    return MessageToDict(part)["data"]
