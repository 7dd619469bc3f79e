"""The reference for bench.perf: a bare a2a-sdk 1.3 agent with one skill that echoes.

A minimal, faithful SDK application, as the SDK's own samples build one: DefaultRequestHandler
over a task store, one AgentExecutor, and the SDK's route factories (create_agent_card_routes,
create_jsonrpc_routes) on a Starlette app under uvicorn with its defaults (one worker, the same
event loop and HTTP parser as `netagent serve`). No auth, no routing, no validation: every
governed figure is divided by this one's.

Two stores, because a governed task is durable and an in-memory echo's is not (the table's two
reference columns): ``--store memory`` is the SDK's InMemoryTaskStore; ``--store sqlite`` is the
SDK's own DatabaseTaskStore on aiosqlite, over a SQLite file in a temporary directory that lives
as long as the process (create_table=True, the SDK's defaults otherwise): what a user gets who
asks the SDK for a durable store.

The echo executor does what the SDK expects of an executor: it enqueues the Task for a new
message, moves it to WORKING, adds one artifact (the message's parts, echoed) and completes.

    .venv/bin/python -m bench.echo_agent [--port 8765] [--store memory|sqlite]
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import DatabaseTaskStore, InMemoryTaskStore, TaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from sqlalchemy.ext.asyncio import create_async_engine
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


STORES = ("memory", "sqlite")


def create_app(base_url: str, store: str = "memory", folder: Path | None = None) -> Starlette:
    """The reference app: SDK handler, the chosen SDK store, SDK card and JSON-RPC routes.

    ``folder`` holds the SQLite file of ``store="sqlite"``; the caller owns (and removes) it.
    """
    card = agent_card(base_url)
    task_store: TaskStore
    if store == "memory":
        task_store = InMemoryTaskStore()
        lifespan = None
    elif store == "sqlite":
        if folder is None:
            raise ValueError("store 'sqlite' needs a folder for its database file")
        engine = create_async_engine(f"sqlite+aiosqlite:///{folder / 'echo-tasks.db'}")
        database_store = DatabaseTaskStore(engine, create_table=True)
        task_store = database_store

        @asynccontextmanager
        async def lifespan(_app: Starlette) -> AsyncIterator[None]:
            """Create the table before the first request, so no measured request pays for it."""
            await database_store.initialize()
            yield
            await engine.dispose()

    else:
        raise ValueError(f"unknown store {store!r}; one of {', '.join(STORES)}")
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=task_store, agent_card=card
    )
    routes = create_agent_card_routes(card, cache_control="public, max-age=300")
    routes += create_jsonrpc_routes(handler, rpc_url=JSONRPC_PATH)
    return Starlette(routes=routes, lifespan=lifespan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--log-level", default="warning")
    parser.add_argument(
        "--store",
        choices=STORES,
        default="memory",
        help="sqlite: the SDK's DatabaseTaskStore on aiosqlite, in a temporary directory",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="echo-agent-") as folder:
        app = create_app(f"http://{args.host}:{args.port}", args.store, Path(folder))
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)


if __name__ == "__main__":
    main()
