"""Which of our files one governed SendMessage passes through, in order (a measurement, not a test).

One explicit ``evaluate_resource_condition`` request (the draft's worked example, by Data Part)
goes through the real request handler, router, executor, skill and inventory tool in process
(no HTTP: the SDK's route adapters are not ours). Every call whose code lives in ``agent/``,
``db/``, ``skills/`` or ``netops/`` is recorded; the path is the sequence of files with repeats
collapsed. It prints the files visited, how often the path comes back to a file it had left,
and the path itself.

    .venv/bin/python -m bench.message_path
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from a2a.helpers import new_data_part
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import Message, Role, SendMessageConfiguration, SendMessageRequest, Task
from google.protobuf.json_format import MessageToDict

from agent.app import gated_tools
from agent.base.settings import Settings
from agent.ports import ToolEnvironment
from agent.registry.cards import CardFactory
from agent.registry.loader import load_registry
from agent.routing.router import Router
from agent.security.auth import TokenVerifier, issue_token, load_or_create_signing_key
from agent.security.credentials import (
    TOOL_ISSUER,
    LocalIssuer,
    LocalTokenExchanger,
    ToolTokenVerifier,
)
from agent.security.principal import PrincipalUser
from agent.server.executor import SkillExecutor
from agent.server.request_handler import GovernedRequestHandler
from agent.server.task_run import RunBindings
from agent.storage.audit import InMemoryAuditLog
from agent.storage.bindings import InMemoryBindingStore
from agent.storage.engine import make_engine
from agent.storage.schema import upgrade as upgrade_core
from agent.storage.settlement import StoreTaskWriter
from netops.deployment import IDENTITY, INVENTORY, SKILLS_DIR, network_deployment

ROOT = Path(__file__).resolve().parent.parent
OURS = tuple(str(ROOT / package) + "/" for package in ("agent", "db", "skills", "netops"))
WORKED_EXAMPLE = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}


def recorder(path: list[str]) -> Callable[[FrameType, str, Any], None]:
    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        file = frame.f_code.co_filename
        if file.startswith(OURS):
            relative = file[len(str(ROOT)) + 1 :]
            if not path or path[-1] != relative:
                path.append(relative)

    return profile


async def measure() -> list[str]:
    from db.migrate import upgrade
    from db.simulator import seed

    home = Path(tempfile.mkdtemp(prefix="message-path-"))
    settings = Settings(home=home)
    url = f"sqlite+aiosqlite:///{home / 'inventory.db'}"
    await upgrade_core(url)
    await upgrade(url)
    engine = make_engine(url)
    await seed(engine, scale="small")
    key = load_or_create_signing_key(home)
    deployment = network_deployment()
    verifier = TokenVerifier(settings, key)
    issuer = LocalIssuer(key, verifier, deployment.audiences)
    audit = InMemoryAuditLog()
    tool_verifier = ToolTokenVerifier(INVENTORY, TOOL_ISSUER, key=key.private_key.public_key())
    environments = {INVENTORY: ToolEnvironment(settings, engine, tool_verifier, audit)}
    tools = gated_tools(deployment, LocalTokenExchanger(issuer), environments)
    registry = load_registry(SKILLS_DIR)
    router = Router(registry)
    router.warm()
    tasks, bindings = InMemoryTaskStore(), InMemoryBindingStore()
    executor = SkillExecutor(registry, tools, router, RunBindings(bindings), audit=audit)
    cards = CardFactory(registry, "http://127.0.0.1:8000", identity=IDENTITY)
    handler = GovernedRequestHandler(
        cards=cards,
        agent_executor=executor,
        task_store=tasks,
        writer=StoreTaskWriter(tasks, audit, bindings),
        limits=settings.limits,
    )
    token = issue_token(
        key, settings, subject="alice", tenant="acme", scopes=["inventory.read", "assurance.read"]
    )
    principal = verifier.verify(token)
    capability = registry.get("evaluate_resource_condition")
    assert capability is not None and capability.interface is not None
    request = {
        "skill": capability.id,
        "skill_version": capability.interface.skill_version,
        "interface_digest": capability.interface.interface_digest,
        "arguments": WORKED_EXAMPLE,
    }

    def send() -> SendMessageRequest:
        message = Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_USER,
            parts=[new_data_part(request, media_type="application/json")],
        )
        return SendMessageRequest(message=message, configuration=SendMessageConfiguration())

    def context() -> ServerCallContext:
        return ServerCallContext(user=PrincipalUser(principal))

    await handler.on_message_send(send(), context())  # warm: caches, lazy imports
    path: list[str] = []
    sys.setprofile(recorder(path))
    try:
        task = await handler.on_message_send(send(), context())
    finally:
        sys.setprofile(None)
    await engine.dispose()
    print("task:", MessageToDict(task.status) if isinstance(task, Task) else task)
    return path


def main() -> None:
    path = asyncio.run(measure())
    seen: set[str] = set()
    returns = 0
    for file in path:
        if file in seen:
            returns += 1
        seen.add(file)
    print(f"files visited: {len(seen)}; comes back to a file it had left: {returns} times")
    print(" -> ".join(path))


if __name__ == "__main__":
    main()
