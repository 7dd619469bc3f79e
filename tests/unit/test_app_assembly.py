"""create_app's lifespan (agent/app/assembly.py): the builders' lives are entered in order on
one exit stack, so the app stops in the reverse order of its start, a start that fails stops
what had started, and a stop that fails does not keep the others from stopping."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastapi import FastAPI

from agent.app import BUILDERS
from agent.app.assembly import Life, lifespan, lives_in_order, running


def recorded(
    name: str, log: list[str], *, fail_start: bool = False, fail_stop: bool = False
) -> Life:
    async def start() -> None:
        log.append(f"start {name}")
        if fail_start:
            raise RuntimeError(f"{name} cannot start")

    def stop() -> None:  # a sync stop, as the observer's flush is
        log.append(f"stop {name}")
        if fail_stop:
            raise RuntimeError(f"{name} cannot stop")

    return running(start, stop)


async def run(lives: list[Life]) -> None:
    async with lifespan(lives)(FastAPI()):
        pass


def test_teardown_is_set_up_reversed() -> None:
    log: list[str] = []
    inner = lives_in_order(recorded("lease", log), None, recorded("writer", log))
    asyncio.run(run([recorded("database", log), inner, recorded("mcp", log)]))
    assert log == [
        "start database",
        "start lease",
        "start writer",
        "start mcp",
        "stop mcp",
        "stop writer",
        "stop lease",
        "stop database",
    ]


def test_a_start_that_fails_stops_what_had_started() -> None:
    log: list[str] = []
    lives = [recorded("a", log), recorded("b", log, fail_start=True), recorded("c", log)]
    with pytest.raises(RuntimeError, match="b cannot start"):
        asyncio.run(run(lives))
    assert log == ["start a", "start b", "stop a"]  # b did not start: nothing of it to stop
    assert "start c" not in log


def test_a_stop_that_fails_leaves_the_others_stopping() -> None:
    log: list[str] = []
    lives = [recorded("a", log), recorded("b", log, fail_stop=True), recorded("c", log)]
    with pytest.raises(RuntimeError, match="b cannot stop"):
        asyncio.run(run(lives))
    assert log[-3:] == ["stop c", "stop b", "stop a"]


def test_the_lives_list_is_read_when_the_app_starts() -> None:
    """create_app makes the app (and its lifespan) before the builders add their lives."""
    log: list[str] = []
    lives: list[Life] = []
    span = lifespan(lives)
    lives.append(recorded("late", log))

    async def go() -> None:
        async with span(FastAPI()):
            pass

    asyncio.run(go())
    assert log == ["start late", "stop late"]


def test_the_builders_start_in_the_documented_order() -> None:
    """Teardown (the reverse) is MCP, gRPC, the services, the tasks' parts (relay, sweeper,
    handler, writer, lease), the token exchange, push notifications, the database, the spans.
    Push notifications' triggers are made before a previous run's interrupted tasks are ended,
    so those endings are notified too."""
    names: list[Any] = [f"{b.__module__.rsplit('.', 1)[-1]}.{b.__name__}" for b in BUILDERS]
    assert names[:10] == [
        "tasks.observability",
        "storage.database",
        "tasks.notifications",
        "storage.interrupted",
        "security.credentials",
        "tasks.handling",
        "tasks.services",
        "transports.bindings",
        "tasks.routing",
        "transports.mcp",
    ]
