"""Push notifications from two replicas on one PostgreSQL: each notification is sent once, by
whichever replica gets to it, and one left by a replica that died is sent by the other.

Two real ``netagent serve`` processes trusting 127.0.0.1 (``NETAGENT_PUSH_ALLOW``), a receiver
on loopback, the task changed on one replica and the next on the other.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from tests.a2a_helpers import send, send_with_config, text_message
from tests.conftest import free_port, postgres_available
from tests.push_receiver import Receiver, wait_outbox_empty, wait_tried
from tests.replicas import Pair, running_pair

pytestmark = pytest.mark.skipif(not postgres_available(), reason="needs the session's PostgreSQL")
ALLOW = {"NETAGENT_PUSH_ALLOW": "127.0.0.1"}


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    home = tmp_path_factory.mktemp("push-replicas")
    with running_pair(home, "push_replicas", env=ALLOW, trained=True) as pair:
        yield pair


async def test_each_change_is_sent_once_whichever_replica_made_it(replicas: Pair) -> None:
    receiver = Receiver().start()
    try:
        task_id = await send_with_config(replicas.a.base_url, replicas.token, receiver.url)
        receiver.wait_for(lambda _: len(receiver.states(task_id)) == 1)
        answer = text_message("1", task_id)
        done = await send(replicas.b.base_url, replicas.token, answer)  # the other replica
        assert done.state == "TASK_STATE_COMPLETED"
        receiver.wait_for(lambda _: "TASK_STATE_COMPLETED" in receiver.states(task_id))
        await wait_outbox_empty(replicas.database_url)  # every row delivered and gone
        assert receiver.states(task_id) == [
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED",
        ]
    finally:
        receiver.stop()


async def test_a_dead_replicas_notification_is_sent_by_the_other(replicas: Pair) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/hook"
    task_id = await send_with_config(replicas.a.base_url, replicas.token, url)
    await wait_tried(replicas.database_url, task_id)
    replicas.a.kill()
    receiver = Receiver(port=port).start()
    try:
        await asyncio.to_thread(receiver.wait_for, lambda got: len(got) >= 1, 60)
        assert receiver.states(task_id) == ["TASK_STATE_INPUT_REQUIRED"]
    finally:
        receiver.stop()
        replicas.a.start()
