"""The reference for bench.perf: a bare a2a-sdk 1.3 agent with one skill that echoes.

A minimal, faithful SDK application, as the SDK's own samples build one: DefaultRequestHandler
over an InMemoryTaskStore, one AgentExecutor, and the SDK's route factories
(create_agent_card_routes, create_jsonrpc_routes) on a Starlette app under uvicorn with its
defaults (one worker, the same event loop and HTTP parser as `netagent serve`). No auth, no
routing, no validation, no database: every governed figure is divided by this one's.

The echo executor does what the SDK expects of an executor: it enqueues the Task for a new
message, moves it to WORKING, adds one artifact (the message's parts, echoed) and completes.

    .venv/bin/python -m bench.echo_agent [--port 8765]
"""

from __future__ import annotations

import argparse

import uvicorn
from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette

JSONRPC_PATH = "/a2a/jsonrpc"


class EchoExecutor(AgentExecutor):
    """Echo the message's parts back as one artifact and complete the task."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """WORKING, one artifact, COMPLETED: the least a useful skill run does."""
        if context.current_task is None and context.message is not None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await updater.start_work()
        parts = list(context.message.parts) if context.message is not None else []
        await updater.add_artifact(parts, artifact_id="result", name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancel: the echo finishes too fast to need it, but the contract asks for it."""
        updater = TaskUpdater(event_queue, str(context.task_id), str(context.context_id))
        await updater.cancel()


def agent_card(base_url: str) -> AgentCard:
    """A one-skill card, comparable in kind (not in size) to the governed agent's."""
    return AgentCard(
        name="echo",
        description="Echoes the message back; the bare-SDK reference for bench.perf.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=base_url + JSONRPC_PATH, protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["application/json", "text/plain"],
        default_output_modes=["application/json", "text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Returns the message's parts as an artifact.",
                tags=["echo"],
                examples=["hello"],
            )
        ],
    )


def create_app(base_url: str) -> Starlette:
    """The reference app: SDK handler, in-memory store, SDK card and JSON-RPC routes."""
    card = agent_card(base_url)
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = create_agent_card_routes(card, cache_control="public, max-age=300")
    routes += create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH)
    return Starlette(routes=routes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args()
    app = create_app(f"http://{args.host}:{args.port}")
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)


if __name__ == "__main__":
    main()
