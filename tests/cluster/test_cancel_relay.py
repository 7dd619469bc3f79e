"""The cancel relay keeps listening when its PostgreSQL connection dies (a restart, a cut).

Its LISTEN connection is killed from another session with pg_terminate_backend, as a
PostgreSQL restart would; a cancel sent afterwards must still reach this replica.
"""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy import text

from agent.security.principal import Principal
from agent.server.cancel_relay import CancelRelay
from agent.storage.engine import make_engine
from tests.conftest import postgres_database

ALICE = Principal("alice", "acme", frozenset({"inventory.read"}))


async def test_the_relay_listens_again_after_its_connection_is_killed() -> None:
    url = postgres_database(f"relay_{uuid.uuid4().hex[:12]}")
    if url is None:
        pytest.skip("no PostgreSQL server installed (CI installs one)")
    engine = make_engine(url)
    received: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    async def on_cancel(task_id: str, principal: Principal) -> None:
        received.put_nowait((task_id, principal.subject))

    relay = CancelRelay(engine)
    await relay.start(on_cancel)
    try:
        await relay.request("before", ALICE)
        assert await asyncio.wait_for(received.get(), 10) == ("before", "alice")

        async with engine.begin() as connection:
            killed = (
                (
                    await connection.execute(
                        text(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = current_database() AND query LIKE 'LISTEN%'"
                        )
                    )
                )
                .scalars()
                .all()
            )
        assert killed == [True]

        got = None
        for _ in range(40):  # the reconnect starts at 0.5 s and backs off; 20 s at most
            await relay.request("after", ALICE)
            try:
                got = await asyncio.wait_for(received.get(), 0.5)
                break
            except TimeoutError:
                continue
        assert got == ("after", "alice")
        assert relay.listening
    finally:
        await relay.stop()
        await engine.dispose()
    assert not relay.listening
