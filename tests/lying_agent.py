"""A bare a2a-sdk agent that serves the worked example and can be told to lie about it.

It shares none of netops-agent's server code: one ``AgentExecutor``, the SDK's
``DefaultRequestHandler`` and ``InMemoryTaskStore``, the SDK's card, JSON-RPC and REST routes,
uvicorn on 127.0.0.1 in a thread, no authentication. Only the document itself is built with
``agent.interfaces.build_interface`` from the worked-example schemas, so an honest answer is
exactly what a conforming agent would send.

Lies (``LyingAgent(lie=...)``), each aimed at one check of the governed client:

* ``honest``                   everything right.
* ``wrong_advertised_digest``  the card's ``params.skills`` carries another interface digest.
* ``altered_embedded_schema``  describe_skill returns a document whose embedded input schema was
  changed without updating its Schema Reference digest; the interface digest (card and
  describe result) is recomputed over the altered document, so only step 6 can catch it.
* ``altered_document``         describe_skill returns a changed document with the original
  interface digest (card and result): the computed digest no longer matches.
* ``output_outside_schema``    the result says ``"result": "maybe"``.
* ``record_without_observed_at``  the resource-observation record lacks ``observed_at``.
* ``record_undeclared_kind``   the record comes as an artifact kind the document never declared.

``set_skill_version`` switches the advertised document at runtime (a new skill version, hence a
new interface digest), which is how a test sees a client's cache being invalidated.
"""

from __future__ import annotations

import copy
import json
import socket
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Final

import httpx
import uvicorn
from a2a.helpers import new_data_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Task,
    TaskState,
    TaskStatus,
)
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette

from agent.interfaces import (
    DESCRIBE_SKILL_ID,
    EXTENSION_URI,
    INTERFACE_VERSION,
    SkillInterface,
    build_interface,
    digest_of,
)
from agent.routing.skill_request import plain_json

SKILLS_DIR: Final = Path(__file__).resolve().parents[1] / "skills"
SKILL_ID: Final = "evaluate_resource_condition"
RECORD_KIND: Final = "resource-observation"
UNDECLARED_KIND: Final = "resource-snapshot"
JSON: Final = "application/json"
JSONRPC_PATH: Final = "/a2a/jsonrpc"
REST_PATH: Final = "/a2a/rest"
SCHEMA_URI: Final = "urn:netops-agent:schema:evaluate-resource-condition"
OUTPUT_SCHEMA_URI: Final = f"{SCHEMA_URI}:output"
RECORD_SCHEMA_URI: Final = f"{SCHEMA_URI}:{RECORD_KIND}"

LIES: Final = (
    "honest",
    "wrong_advertised_digest",
    "altered_embedded_schema",
    "altered_document",
    "output_outside_schema",
    "record_without_observed_at",
    "record_undeclared_kind",
)
WRONG_DIGEST: Final = digest_of({"not": "the advertised document"})

WORKED_RESULT: Final = {
    "result": "condition_not_met",
    "observed_value": 42,
    "unit": "percent",
    "supporting_record_refs": ["observation-7"],
}
WORKED_RECORD: Final = {
    "record_id": "observation-7",
    "resource_id": "network-resource-123",
    "metric": "utilization",
    "value": 42,
    "unit": "percent",
    "observed_at": "2026-08-11T12:00:01Z",
}


def _schema(name: str) -> Any:
    return json.loads((SKILLS_DIR / SKILL_ID / name).read_text(encoding="utf-8"))


def worked_interface(skill_version: str = "1.0") -> SkillInterface:
    """The worked example's interface, built from the repository's schema files."""
    return build_interface(
        SKILL_ID,
        skill_version,
        (f"{SCHEMA_URI}:input", "1.0", _schema("input.schema.json")),
        (OUTPUT_SCHEMA_URI, "1.0", _schema("output.schema.json")),
        {RECORD_KIND: (RECORD_SCHEMA_URI, "1.0", _schema(f"{RECORD_KIND}.schema.json"))},
        {"response_modes": ["sync", "stream"], "cancelable": False},
        {"default_mode": "observe_only", "approval_may_be_required": False},
        {"timeout_seconds": 10},
    )


def describe_interface() -> SkillInterface:
    """describe_skill's own document (this agent binds it in ``params.skills`` too)."""
    skill_id_only = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["skill_id"],
        "additionalProperties": False,
        "properties": {"skill_id": {"type": "string"}},
    }
    return build_interface(
        DESCRIBE_SKILL_ID,
        "1.0",
        ("urn:lying-agent:schema:describe-skill:input", "1.0", skill_id_only),
        ("urn:lying-agent:schema:describe-skill:output", "1.0", {"type": "object"}),
        {},
        {"response_modes": ["sync"], "cancelable": False},
        {"default_mode": "observe_only", "approval_may_be_required": False},
        {},
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Served:
    """What the agent advertises and answers for one skill version (and one lie)."""

    def __init__(self, lie: str, skill_version: str) -> None:
        interface = worked_interface(skill_version)
        self.skill_version = skill_version
        self.document = interface.document
        self.returned_digest = interface.interface_digest
        self.advertised_digest = interface.interface_digest
        if lie == "wrong_advertised_digest":
            self.advertised_digest = WRONG_DIGEST
        elif lie == "altered_embedded_schema":
            schema = self.document["input_schema"]["resolution"]["schema"]
            schema["properties"]["condition"]["required"].remove("unit")  # digest left as it was
            self.returned_digest = self.advertised_digest = digest_of(self.document)
        elif lie == "altered_document":
            self.document["authority"]["default_mode"] = "act_autonomously"


class LyingAgent:
    """The worked example on a bare a2a-sdk server; ``lie`` picks what it gets wrong."""

    def __init__(self, lie: str = "honest", *, skill_version: str = "1.0") -> None:
        if lie not in LIES:
            raise ValueError(f"unknown lie {lie!r}; one of {', '.join(LIES)}")
        self.lie = lie
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.requests: list[dict[str, Any]] = []  # every skill request's Data Part, in order
        self._describe = describe_interface()
        self._served = _Served(lie, skill_version)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # -- what the tests look at --------------------------------------------------------------

    @property
    def invocations(self) -> list[dict[str, Any]]:
        """The domain-skill requests received (describe_skill calls excluded)."""
        return [r for r in self.requests if r.get("skill") != DESCRIBE_SKILL_ID]

    @property
    def describe_requests(self) -> list[dict[str, Any]]:
        """The describe_skill requests received."""
        return [r for r in self.requests if r.get("skill") == DESCRIBE_SKILL_ID]

    @property
    def advertised(self) -> tuple[str, str]:
        """The (skill_version, interface_digest) the card currently binds the skill to."""
        return self._served.skill_version, self._served.advertised_digest

    @property
    def document(self) -> dict[str, Any]:
        """A copy of the document describe_skill currently returns."""
        return copy.deepcopy(self._served.document)

    def set_skill_version(self, skill_version: str) -> None:
        """Serve (and advertise) another version of the skill from now on."""
        self._served = _Served(self.lie, skill_version)

    # -- the card ----------------------------------------------------------------------------

    def card(self) -> AgentCard:
        """The card as served right now (it follows ``set_skill_version``)."""
        bindings = [
            {
                "skill_id": DESCRIBE_SKILL_ID,
                "skill_version": self._describe.skill_version,
                "interface_digest": self._describe.interface_digest,
            },
            {
                "skill_id": SKILL_ID,
                "skill_version": self._served.skill_version,
                "interface_digest": self._served.advertised_digest,
            },
        ]
        return AgentCard(
            name="Lying agent",
            description=f"The worked example, served by a bare a2a-sdk agent ({self.lie}).",
            version="0.0.1",
            supported_interfaces=[
                AgentInterface(
                    url=self.base_url + JSONRPC_PATH,
                    protocol_binding="JSONRPC",
                    protocol_version="1.0",
                ),
                AgentInterface(
                    url=self.base_url + REST_PATH,
                    protocol_binding="HTTP+JSON",
                    protocol_version="1.0",
                ),
            ],
            capabilities=AgentCapabilities(
                streaming=True,
                push_notifications=False,
                extended_agent_card=False,
                extensions=[
                    AgentExtension(
                        uri=EXTENSION_URI,
                        description="Schema-governed skill interfaces.",
                        required=False,
                        params={"interface_version": INTERFACE_VERSION, "skills": bindings},
                    )
                ],
            ),
            default_input_modes=[JSON],
            default_output_modes=[JSON],
            skills=[
                AgentSkill(
                    id=DESCRIBE_SKILL_ID,
                    name="Describe a skill",
                    description="Returns a skill's Skill Interface Document.",
                    tags=["schema-interface"],
                    input_modes=[JSON],
                    output_modes=[JSON],
                ),
                AgentSkill(
                    id=SKILL_ID,
                    name="Evaluate a resource condition",
                    description="The draft's worked example.",
                    tags=["assurance"],
                    input_modes=[JSON],
                    output_modes=[JSON],
                ),
            ],
        )

    # -- answering ---------------------------------------------------------------------------

    async def answer(self, data: dict[str, Any], updater: TaskUpdater) -> None:
        """Take one skill request to a terminal state."""
        skill = data.get("skill")
        served = self._served
        if skill == DESCRIBE_SKILL_ID:
            if data.get("arguments") != {"skill_id": SKILL_ID}:
                await _refuse(updater, "skill_not_advertised", "no such skill here")
                return
            described = {
                "skill_id": SKILL_ID,
                "skill_version": served.skill_version,
                "interface_digest": served.returned_digest,
                "skill_interface": copy.deepcopy(served.document),
            }
            await updater.add_artifact(
                [new_data_part(described, media_type=JSON)],
                artifact_id=DESCRIBE_SKILL_ID,
                name=DESCRIBE_SKILL_ID,
            )
            await updater.complete()
            return
        if skill != SKILL_ID:
            await _refuse(updater, "skill_not_advertised", f"no skill {skill!r} here")
            return
        if (data.get("skill_version"), data.get("interface_digest")) != (
            served.skill_version,
            served.returned_digest,
        ):
            await _refuse(updater, "interface_mismatch", "not the active interface")
            return
        await updater.start_work()
        record = dict(WORKED_RECORD)
        kind = RECORD_KIND
        result = dict(WORKED_RESULT)
        if self.lie == "record_without_observed_at":
            del record["observed_at"]
        elif self.lie == "record_undeclared_kind":
            kind = UNDECLARED_KIND
        elif self.lie == "output_outside_schema":
            result["result"] = "maybe"
        await updater.add_artifact(
            [new_data_part(record, media_type=JSON)], artifact_id=record["record_id"], name=kind
        )
        await updater.add_artifact(
            [new_data_part(result, media_type=JSON)], artifact_id="result", name=SKILL_ID
        )
        await updater.complete()

    # -- life cycle --------------------------------------------------------------------------

    def start(self) -> LyingAgent:
        """Serve on 127.0.0.1 in a daemon thread; return once the card is served."""
        handler = DefaultRequestHandler(
            agent_executor=_Executor(self), task_store=InMemoryTaskStore(), agent_card=self.card()
        )

        async def current_card(_: AgentCard) -> AgentCard:
            return self.card()

        app = Starlette(
            routes=[
                *create_agent_card_routes(self.card(), card_modifier=current_card),
                *create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH),
            ]
        )
        app.mount(REST_PATH, Starlette(routes=create_rest_routes(handler)))
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self._server.started:
                try:
                    card = httpx.get(self.base_url + "/.well-known/agent-card.json", timeout=2)
                    if card.status_code == 200:
                        return self
                except httpx.HTTPError:
                    pass
            if not self._thread.is_alive():
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("the lying agent did not start")

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> LyingAgent:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class _Executor(AgentExecutor):
    """Reads the request's single Data Part and lets the LyingAgent answer it."""

    def __init__(self, owner: LyingAgent) -> None:
        self._owner = owner

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = str(context.task_id), str(context.context_id)
        if context.current_task is None:
            history = [context.message] if context.message is not None else []
            await event_queue.enqueue_event(
                Task(
                    id=task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                    history=history,
                )
            )
        updater = TaskUpdater(event_queue, task_id, context_id)
        parts = [MessageToDict(p) for p in context.message.parts] if context.message else []
        data = [p["data"] for p in parts if isinstance(p.get("data"), dict)]
        if len(data) != 1:
            await _refuse(updater, "input_invalid", "one JSON Data Part expected")
            return
        self._owner.requests.append(plain_json(data[0]))
        await self._owner.answer(data[0], updater)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError("nothing here is cancelable")


async def _refuse(updater: TaskUpdater, code: str, message: str) -> None:
    error = new_data_part({"code": code, "message": message}, media_type=JSON)
    await updater.reject(updater.new_agent_message([error]))
