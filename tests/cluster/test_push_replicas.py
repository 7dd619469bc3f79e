"""Push notifications from two replicas on one PostgreSQL: each notification is sent once, by
whichever replica gets to it, and one left by a replica that died is sent by the other.

Two real ``netagent serve`` processes trusting 127.0.0.1 (``NETAGENT_PUSH_ALLOW``), a receiver
on loopback, the task changed on one replica and the next on the other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from a2a.types import SendMessageConfiguration, SendMessageRequest, TaskPushNotificationConfig
from sqlalchemy import select

from agent.storage.engine import make_engine
from agent.storage.tables import push_outbox
from tests.a2a_helpers import call_context, make_client, send, text_message
from tests.cluster.test_parked_replicas import wait_trained
from tests.conftest import free_port, postgres_available, postgres_database
from tests.push_receiver import Receiver
from tests.replicas import Replica, prepare_shared_database, token_for

pytestmark = pytest.mark.skipif(not postgres_available(), reason="needs the session's PostgreSQL")
PARKING = "check acme-lnk-00002"  # the router asks which direction
ALLOW = {"NETAGENT_PUSH_ALLOW": "127.0.0.1"}


class Replicas:
    def __init__(self, home: Path, url: str) -> None:
        self.database_url = url
        self.token = token_for(home, "alice")
        self.a = Replica(home, url, "a", env=ALLOW)
        self.b = Replica(home, url, "b", env=ALLOW)


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replicas]:
    url = postgres_database("push_replicas")
    assert url is not None
    prepare_shared_database(url)
    pair = Replicas(tmp_path_factory.mktemp("push-replicas"), url)
    try:
        for replica in (pair.a.start(), pair.b.start()):
            wait_trained(replica.base_url)
        yield pair
    finally:
        pair.a.stop()
        pair.b.stop()


async def park_with_config(replica: Replica, token: str, url: str) -> str:
    request = SendMessageRequest(
        message=text_message(PARKING),
        configuration=SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=url)
        ),
    )
    async with make_client(replica.base_url, token, "JSONRPC") as client:
        async for event in client.send_message(request, context=call_context()):
            return str(event.task.id)
    raise AssertionError("no answer")


async def outbox(database_url: str) -> list[tuple[str, int]]:
    engine = make_engine(database_url)
    try:
        async with engine.connect() as connection:
            query = select(push_outbox.c.task_id, push_outbox.c.attempts)
            return [(r.task_id, r.attempts) for r in await connection.execute(query)]
    finally:
        await engine.dispose()


async def test_each_change_is_sent_once_whichever_replica_made_it(replicas: Replicas) -> None:
    receiver = Receiver().start()
    try:
        task_id = await park_with_config(replicas.a, replicas.token, receiver.url)
        receiver.wait_for(lambda _: len(receiver.states(task_id)) == 1)
        answer = text_message("1", task_id)
        done = await send(replicas.b.base_url, replicas.token, answer)  # the other replica
        assert done.state == "TASK_STATE_COMPLETED"
        receiver.wait_for(lambda _: "TASK_STATE_COMPLETED" in receiver.states(task_id))
        while await outbox(replicas.database_url):  # every row delivered and gone
            await asyncio.sleep(0.1)
        assert receiver.states(task_id) == [
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
        ]
    finally:
        receiver.stop()


async def test_a_dead_replicas_notification_is_sent_by_the_other(replicas: Replicas) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/hook"
    task_id = await park_with_config(replicas.a, replicas.token, url)
    deadline = asyncio.get_running_loop().time() + 30
    while not any(t == task_id and n >= 1 for t, n in await outbox(replicas.database_url)):
        assert asyncio.get_running_loop().time() < deadline, "never tried"
        await asyncio.sleep(0.1)
    replicas.a.kill()
    receiver = Receiver(port=port).start()
    try:
        await asyncio.to_thread(receiver.wait_for, lambda got: len(got) >= 1, 60)
        assert receiver.states(task_id) == ["TASK_STATE_INPUT_REQUIRED"]
    finally:
        receiver.stop()
        replicas.a.start()
