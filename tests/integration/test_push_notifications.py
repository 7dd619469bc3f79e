"""Push notifications against a real agent on 127.0.0.1 and a real receiver on loopback.

The agent trusts 127.0.0.1 (``NETAGENT_PUSH_ALLOW``), the way an operator lets it post to a
receiver on its own network. Each notification is checked as a receiver would check it, with
PyJWT alone: the JWS header's ``kid``/``jku``, the key from the agent's JWKS, ``iss``, ``aud``
(the URL posted to), ``task_id``, a short ``exp``, and the SHA-256 of the body as received.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from a2a.types import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import A2AError

from tests.a2a_helpers import (
    ANSWER,
    PARKING,
    call_context,
    make_client,
    park,
    send,
    send_with_config,
    text_message,
    wait_trained,
)
from tests.a2a_helpers import EVERY_BINDING as BINDINGS
from tests.conftest import RunningAgent, start_agent
from tests.push_receiver import (
    Received,
    Receiver,
    outbox_rows,
    wait_outbox_empty,
    wait_tried,
)

TERMINAL = "TASK_STATE_COMPLETED"


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    running = Receiver().start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def push_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    running = start_agent(
        tmp_path_factory.mktemp("push-home"),
        backend=backend,
        grpc=True,
        settings_overrides={"push_allow": "127.0.0.1"},
    )
    wait_trained(running.base_url)
    yield running
    running.stop()


def verified_claims(agent: RunningAgent, notification: Received, url: str) -> dict[str, Any]:
    """What a receiver checks, with PyJWT and the agent's published keys only."""
    scheme, _, token = notification.headers["Authorization"].partition(" ")
    assert scheme == "Bearer"
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "ES256"
    assert header["jku"] == agent.base_url + "/.well-known/jwks.json"
    keys = jwt.PyJWKSet.from_dict(httpx.get(header["jku"], timeout=10).json())
    key = next(k for k in keys.keys if k.key_id == header["kid"])
    claims: dict[str, Any] = jwt.decode(
        token,
        key,
        algorithms=["ES256"],
        audience=url,
        issuer=agent.base_url,
        options={"require": ["exp", "iat", "iss", "aud"]},
    )
    assert claims["body_sha256"] == hashlib.sha256(notification.body).hexdigest()
    assert claims["exp"] - claims["iat"] <= 300
    return claims


def config(task_id: str, url: str, **fields: Any) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(task_id=task_id, url=url, **fields)


async def create(agent: RunningAgent, token: str, binding: str, wanted: Any) -> Any:
    async with make_client(agent.base_url, token, binding) as client:
        return await client.create_task_push_notification_config(wanted, context=call_context())


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_config_hears_each_change_signed(
    push_agent: RunningAgent, receiver: Receiver, binding: str
) -> None:
    token = push_agent.token("alice")
    task_id = await park(push_agent.base_url, token, binding)
    secret = uuid.uuid4().hex
    made = await create(
        push_agent, token, binding, config(task_id, receiver.url, id="mine", token=secret)
    )
    assert (made.id, made.task_id, made.url) == ("mine", task_id, receiver.url)
    answer = text_message(ANSWER, task_id)
    answered = await send(push_agent.base_url, token, answer, binding=binding)
    assert answered.state == TERMINAL
    receiver.wait_for(lambda _: TERMINAL in receiver.states(task_id))
    assert receiver.states(task_id) == ["TASK_STATE_WORKING", TERMINAL]
    mine = [r for r in receiver.received if task_id in r.body.decode()]
    for notification in mine:
        assert notification.headers["X-A2A-Notification-Token"] == secret
        assert verified_claims(push_agent, notification, receiver.url)["task_id"] == task_id
    final = mine[-1].document["task"]
    assert final["id"] == task_id and final["artifacts"], final


@pytest.mark.parametrize("binding", BINDINGS)
async def test_configs_are_read_listed_and_deleted_by_their_owner_only(
    push_agent: RunningAgent, receiver: Receiver, binding: str
) -> None:
    alice, gary = push_agent.token("alice"), push_agent.token("gary")
    task_id = await park(push_agent.base_url, alice, binding)
    await create(push_agent, alice, binding, config(task_id, receiver.url, id="a"))
    await create(push_agent, alice, binding, config(task_id, receiver.url, id="b"))
    async with make_client(push_agent.base_url, alice, binding) as client:
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id), context=call_context()
        )
        assert sorted(c.id for c in listed.configs) == ["a", "b"]
        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id="a"), context=call_context()
        )
        assert got.url == receiver.url
    async with make_client(push_agent.base_url, gary, binding) as other:
        attempts = [
            other.create_task_push_notification_config(
                config(task_id, receiver.url, id="a"), context=call_context()
            ),
            other.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task_id), context=call_context()
            ),
            other.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task_id, id="a"),
                context=call_context(),
            ),
            other.delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="a"),
                context=call_context(),
            ),
        ]
        for attempt in attempts:
            with pytest.raises(A2AError, match="Task not found"):
                await attempt
    async with make_client(push_agent.base_url, alice, binding) as client:
        await client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="a"), context=call_context()
        )
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id), context=call_context()
        )
        assert [c.id for c in listed.configs] == ["b"]
        with pytest.raises(A2AError, match="not found"):
            await client.get_task_push_notification_config(
                GetTaskPushNotificationConfigRequest(task_id=task_id, id="a"),
                context=call_context(),
            )


async def test_a_config_in_the_send_hears_the_new_tasks_end(
    push_agent: RunningAgent, receiver: Receiver
) -> None:
    token = push_agent.token("alice")
    request = SendMessageRequest(
        message=text_message(PARKING),
        configuration=SendMessageConfiguration(
            task_push_notification_config=TaskPushNotificationConfig(url=receiver.url)
        ),
    )
    async with make_client(push_agent.base_url, token, "JSONRPC") as client:
        async for event in client.send_message(request, context=call_context()):
            task = event.task
    receiver.wait_for(lambda _: "TASK_STATE_INPUT_REQUIRED" in receiver.states(task.id))
    assert receiver.states(task.id) == ["TASK_STATE_INPUT_REQUIRED"]


async def test_a_receiver_that_fails_is_tried_again(push_agent: RunningAgent) -> None:
    failing = Receiver(answer=503).start()
    try:
        token = push_agent.token("alice")
        task_id = await send_with_config(push_agent.base_url, token, failing.url)
        failing.wait_for(lambda got: len(got) >= 1)
        failing.answer = 200
        failing.wait_for(lambda got: len(got) >= 2)
        assert failing.states(task_id) == ["TASK_STATE_INPUT_REQUIRED"] * 2
    finally:
        failing.stop()


async def test_a_redirect_is_not_followed(push_agent: RunningAgent) -> None:
    moving = Receiver(answer=302).start()
    try:
        task_id = await send_with_config(push_agent.base_url, push_agent.token("alice"), moving.url)
        moving.wait_for(lambda got: len(got) >= 1)
        token = push_agent.token("alice")
        await send(push_agent.base_url, token, text_message(ANSWER, task_id))  # a second change
        moving.wait_for(lambda got: len(got) >= 2)
        # each change was posted to /hook, never to /hook/moved (the reply's own changes may
        # be one or two, as the run goes: their count is not the point)
        assert {r.path for r in moving.received} == {"/hook"}, moving.received
    finally:
        moving.stop()


REFUSED_URLS = {
    "private, over https": "https://10.1.2.3/hook",
    "link-local metadata": "https://169.254.169.254/latest",
    "loopback not allowed": "https://[::1]:8443/hook",
    "plain http": "http://example.com/hook",
    "not http at all": "file:///etc/passwd",
    "credentials in it": "https://user:pw@127.0.0.1/hook",
    "NUL": "http://127.0.0.1/\x00hook",
    "an em space": "http://127.0.0.1/\u2003hook",
    "huge": "http://127.0.0.1/" + "a" * 5000,
    "no host": "https:///hook",
    "a bad port": "http://127.0.0.1:99999/hook",
}


@pytest.mark.parametrize("url", REFUSED_URLS.values(), ids=REFUSED_URLS.keys())
async def test_targets_the_agent_must_not_post_to_are_refused(
    push_agent: RunningAgent, url: str
) -> None:
    token = push_agent.token("alice")
    task_id = await park(push_agent.base_url, token, "JSONRPC")
    with pytest.raises(A2AError, match="url"):
        await create(push_agent, token, "JSONRPC", config(task_id, url))
    with pytest.raises(A2AError, match="url"):
        await send_with_config(push_agent.base_url, token, url)


async def test_loopback_needs_the_allowlist(agent: RunningAgent, receiver: Receiver) -> None:
    """The shared agent trusts no network: its own host is refused, even over https."""
    token = agent.token("alice")
    task_id = await park(agent.base_url, token, "JSONRPC")
    for url in (receiver.url, receiver.url.replace("http:", "https:")):
        with pytest.raises(A2AError, match="url is not a push target"):
            await create(agent, token, "JSONRPC", config(task_id, url))


async def test_another_tenant_cannot_trigger_a_config(
    push_agent: RunningAgent, receiver: Receiver
) -> None:
    alice, gary = push_agent.token("alice"), push_agent.token("gary")
    task_id = await send_with_config(push_agent.base_url, alice, receiver.url)
    receiver.wait_for(lambda _: len(receiver.states(task_id)) == 1)
    with pytest.raises(A2AError, match="Task not found"):
        await send(push_agent.base_url, gary, text_message(ANSWER, task_id))
    async with make_client(push_agent.base_url, gary, "JSONRPC") as client:
        with pytest.raises(A2AError, match="Task not found"):
            from a2a.types import CancelTaskRequest

            await client.cancel_task(CancelTaskRequest(id=task_id), context=call_context())
    assert receiver.states(task_id) == ["TASK_STATE_INPUT_REQUIRED"]


async def test_a_task_has_a_bounded_number_of_configs(
    push_agent: RunningAgent, receiver: Receiver
) -> None:
    token = push_agent.token("carl")
    task_id = await park(push_agent.base_url, token, "JSONRPC")
    for n in range(10):
        await create(push_agent, token, "JSONRPC", config(task_id, receiver.url, id=f"c{n}"))
    await create(push_agent, token, "JSONRPC", config(task_id, receiver.url, id="c3"))  # replaced
    with pytest.raises(A2AError, match="as many push configs"):
        await create(push_agent, token, "JSONRPC", config(task_id, receiver.url, id="c10"))


async def test_a_notification_outlives_a_restart(tmp_path: Any, backend: str) -> None:
    """The change is durable with its notification: the receiver is down until the agent has
    stopped, and the agent started again delivers it, once."""
    import asyncio

    from tests.conftest import free_port

    home, port = tmp_path / "home", free_port()
    allow = {"push_allow": "127.0.0.1"}
    first = await asyncio.to_thread(start_agent, home, backend=backend, settings_overrides=allow)
    database = first.settings.resolved_database_url
    try:
        wait_trained(first.base_url)
        url = f"http://127.0.0.1:{port}/hook"
        task_id = await send_with_config(first.base_url, first.token("alice"), url)
        await wait_tried(database, task_id)
    finally:
        first.stop()
    assert [t for t, _ in await outbox_rows(database)] == [task_id]
    receiver = Receiver(port=port).start()
    again = await asyncio.to_thread(
        start_agent, home, seeded=False, backend=backend, settings_overrides=allow
    )
    try:
        await asyncio.to_thread(receiver.wait_for, lambda got: len(got) >= 1)
        assert receiver.states(task_id) == ["TASK_STATE_INPUT_REQUIRED"]
        verified_claims(again, receiver.received[0], url)
        await wait_outbox_empty(database)
    finally:
        again.stop()
        receiver.stop()
    assert len(receiver.received) == 1


async def test_netagent_listen_verifies_and_prints(push_agent: RunningAgent) -> None:
    """The receiver a person runs: a forged notification is refused (401), the agent's own are
    verified against its JWKS and printed, and ``--count`` ends it."""
    import asyncio
    import os
    import subprocess
    import sys

    from tests.conftest import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}/hook"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    code = "import sys; from netops.cli import main; sys.argv[0] = 'netagent'; main()"
    args = [push_agent.base_url, "--port", str(port), "--count", "2"]
    listener = subprocess.Popen(
        [sys.executable, "-c", code, "listen", *args],
        env=env | {"COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        async with httpx.AsyncClient() as http:
            deadline = asyncio.get_running_loop().time() + 60
            while True:
                try:
                    forged = await http.post(
                        url, content=b"{}", headers={"Authorization": "Bearer x.y.z"}
                    )
                    break
                except httpx.ConnectError:
                    assert asyncio.get_running_loop().time() < deadline, "never listened"
                    await asyncio.sleep(0.1)
        assert forged.status_code == 401
        token = push_agent.token("alice")
        task_id = await park(push_agent.base_url, token, "JSONRPC")
        await create(push_agent, token, "JSONRPC", config(task_id, url))
        await send(push_agent.base_url, token, text_message(ANSWER, task_id))
        output, _ = await asyncio.to_thread(listener.communicate, timeout=60)
    finally:
        if listener.poll() is None:
            listener.kill()
            listener.communicate()
    assert listener.returncode == 0, output
    lines = output.splitlines()
    assert lines[0].startswith(f"listening on http://127.0.0.1:{port}/"), output
    assert lines[1].startswith("refused: the token does not verify"), output
    assert lines[2:] == [
        f"{task_id} TASK_STATE_WORKING (signature verified, kid {push_kid(push_agent)})",
        f"{task_id} {TERMINAL} (signature verified, kid {push_kid(push_agent)})",
    ], output


def push_kid(agent: RunningAgent) -> str:
    keys = httpx.get(agent.base_url + "/.well-known/jwks.json", timeout=10).json()["keys"]
    return str(keys[0]["kid"])


async def test_configs_made_at_once_stay_within_the_bound(
    push_agent: RunningAgent, receiver: Receiver
) -> None:
    import asyncio

    token = push_agent.token("paula")
    task_id = await park(push_agent.base_url, token, "HTTP+JSON")
    async with make_client(push_agent.base_url, token, "HTTP+JSON") as client:
        outcomes = await asyncio.gather(
            *(
                client.create_task_push_notification_config(
                    config(task_id, receiver.url, id=f"at-once-{n}"), context=call_context()
                )
                for n in range(25)
            ),
            return_exceptions=True,
        )
        refused = [o for o in outcomes if isinstance(o, A2AError)]
        assert len(refused) == 15 and all("as many push configs" in str(o) for o in refused)
        listed = await client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id), context=call_context()
        )
        assert len(listed.configs) == 10


HOSTILE_FIELDS = {
    "NUL in the id": {"id": "a\x00b"},
    "a long id": {"id": "i" * 65},
    "a newline in the token": {"token": "t\r\nX-Injected: 1"},
    "a huge token": {"token": "t" * 100_000},
    "a scheme of two words": {"authentication": {"scheme": "Bearer x", "credentials": "c"}},
    "a newline in the credentials": {"authentication": {"scheme": "Basic", "credentials": "a\nb"}},
    "a scheme with an em space": {"authentication": {"scheme": "Be\u2003arer"}},
}


@pytest.mark.parametrize("fields", HOSTILE_FIELDS.values(), ids=HOSTILE_FIELDS.keys())
async def test_hostile_config_fields_are_refused(
    push_agent: RunningAgent, receiver: Receiver, fields: dict[str, Any]
) -> None:
    token = push_agent.token("alice")
    task_id = await park(push_agent.base_url, token, "JSONRPC")
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "CreateTaskPushNotificationConfig",
        "params": {"taskId": task_id, "url": receiver.url, **fields},
    }
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    async with httpx.AsyncClient() as http:
        answer = await http.post(push_agent.base_url + "/a2a/jsonrpc", json=body, headers=headers)
    assert answer.status_code == 200
    error = answer.json()["error"]
    assert error["code"] == -32602, error  # InvalidParams, not an internal error
    assert "\x00" not in error["message"] and "Injected" not in error["message"]


async def test_a_send_refused_before_its_task_exists_leaves_no_config(
    tmp_path: Any, backend: str, receiver: Receiver
) -> None:
    """The config of a new task is stored before the task's first write; if the send is then
    refused (here: the caller may have one task waiting for input), it goes too."""
    import asyncio

    from sqlalchemy import func, select

    from agent.base.settings import Limits
    from agent.storage.engine import make_engine
    from agent.storage.schema import push_notification_configs

    overrides = {"push_allow": "127.0.0.1", "limits": Limits(max_parked_tasks=1)}
    bounded = await asyncio.to_thread(
        start_agent, tmp_path / "bounded", backend=backend, settings_overrides=overrides
    )
    try:
        token = bounded.token("alice")
        await send_with_config(bounded.base_url, token, receiver.url)  # the one waiting task
        with pytest.raises(A2AError, match=r"max_parked_tasks|answer or cancel"):
            await send_with_config(bounded.base_url, token, receiver.url)
        engine = make_engine(bounded.settings.resolved_database_url)
        try:
            async with engine.connect() as connection:
                count = select(func.count()).select_from(push_notification_configs)
                assert await connection.scalar(count) == 1
        finally:
            await engine.dispose()
    finally:
        bounded.stop()


async def test_a_configs_secrets_are_not_stored_in_the_clear(
    push_agent: RunningAgent, receiver: Receiver
) -> None:
    from sqlalchemy import select

    from agent.storage.engine import make_engine
    from agent.storage.schema import push_notification_configs

    token = push_agent.token("alice")
    task_id = await park(push_agent.base_url, token, "JSONRPC")
    secret, credentials = uuid.uuid4().hex, uuid.uuid4().hex
    wanted = config(task_id, receiver.url, id="secret", token=secret)
    wanted.authentication.scheme, wanted.authentication.credentials = "Basic", credentials
    await create(push_agent, token, "JSONRPC", wanted)
    engine = make_engine(push_agent.settings.resolved_database_url)
    try:
        async with engine.connect() as connection:
            table = push_notification_configs
            query = select(table.c.config_data).where(table.c.task_id == task_id)
            (stored,) = (await connection.execute(query)).scalars().all()
    finally:
        await engine.dispose()
    assert secret.encode() not in stored and credentials.encode() not in stored
    assert receiver.url.encode() not in stored
    async with make_client(push_agent.base_url, token, "JSONRPC") as client:
        got = await client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id="secret"),
            context=call_context(),
        )
    assert (got.token, got.authentication.credentials) == (secret, credentials)
    await send(push_agent.base_url, token, text_message(ANSWER, task_id))
    receiver.wait_for(lambda _: TERMINAL in receiver.states(task_id))
    sent = [r for r in receiver.received if task_id in r.body.decode()]
    assert {r.headers["Authorization"] for r in sent} == {f"Basic {credentials}"}
