"""No outbound request of the agent hands a token to the environment's proxy.

A real proxy listener on 127.0.0.1 is set as ``HTTP_PROXY``, ``HTTPS_PROXY`` and
``ALL_PROXY`` (and their lower-case spellings); it records every byte it receives and answers
502. The console's calls to the agent's own endpoint (the tasks page, the try-it relay), the
exchange at an external token service on loopback, and the client's calls to a loopback or
plain-http agent must not reach it; https to another host may only be tunnelled through it
(``CONNECT``), never with a token in the clear. The test's own requests do not read the
environment (``trust_env=False``), so whatever the proxy records came from the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent.client import GovernedClient
from agent.security.outbound import outbound_client
from tests.a2a_helpers import BINDINGS, call
from tests.conftest import RunningAgent, start_agent
from tests.integration.test_remote_exchange import WORKED, credential_from, issuer

__all__ = ["issuer"]  # the module fixture, shared with test_remote_exchange

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
BAD_GATEWAY = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class RecordingProxy:
    """A TCP listener on loopback that keeps what each connection sends and answers 502."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(2)
                data = b""
                try:
                    while b"\r\n\r\n" not in data:
                        chunk = connection.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                except OSError:
                    pass
                self.received.append(data)
                with contextlib.suppress(OSError):
                    connection.sendall(BAD_GATEWAY)

    def close(self) -> None:
        self._socket.close()


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingProxy]:
    """The recording proxy, named by every proxy variable for the test's duration."""
    listener = RecordingProxy()
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, listener.url)
        monkeypatch.setenv(name.lower(), listener.url)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    yield listener
    listener.close()


def own_client(agent: RunningAgent, token: str) -> httpx.Client:
    """The test's own client: it reads nothing from the environment."""
    return httpx.Client(
        base_url=agent.base_url,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
        trust_env=False,
    )


def test_the_console_calls_its_own_endpoint_without_the_proxy(
    agent: RunningAgent, proxy: RecordingProxy
) -> None:
    token = agent.token("alice")
    with own_client(agent, token) as client:
        tasks = client.get("/console/tasks", headers={"Accept": "text/html"})
        body = {"skill": "lookup_inventory", "arguments": {"kind": "sites"}}
        relayed = client.post("/console/api/invoke", json=body)
    assert tasks.status_code == 200, tasks.text[:500]
    assert relayed.status_code == 200
    events = [json.loads(line[5:]) for line in relayed.text.splitlines() if line[:5] == "data:"]
    assert events and "error" not in events[-1], relayed.text[:500]
    assert "TASK_STATE_COMPLETED" in json.dumps(events[-1]), events[-1]
    assert proxy.received == []


async def test_the_exchange_at_a_loopback_token_service_bypasses_the_proxy(
    issuer: RunningAgent, tmp_path: Path, proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Agent B exchanges each caller's token at A (``NETAGENT_TOKEN_EXCHANGE_URL`` on
    loopback, plain http): the form holds the caller's token and B's credential, so no proxy
    may see it. B shares A's signing key, so it verifies callers without fetching A's JWKS.
    ``NO_PROXY`` names 127.0.0.1 for the harness's health probe; the exchange goes to
    ``localhost``, which it does not name."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    home = tmp_path / "b"
    home.mkdir()
    shutil.copy(issuer.settings.home / "signing-key.pem", home / "signing-key.pem")
    overrides = {
        "token_exchange_url": issuer.base_url.replace("127.0.0.1", "localhost") + "/oauth/token",
        "agent_credential": credential_from(issuer.settings.home, "agent:relying"),
    }
    relying = await asyncio.to_thread(start_agent, home, settings_overrides=overrides)
    try:
        outcome = await call(
            relying.base_url, issuer.token("alice"), "evaluate_resource_condition", WORKED
        )
        assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    finally:
        await asyncio.to_thread(relying.stop)
    assert proxy.received == []


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_client_sends_no_token_through_the_proxy(
    agent: RunningAgent, proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch, binding: str
) -> None:
    """The governed client (the CLI's) to a loopback agent, on each binding: direct (gRPC's
    channel is plaintext, so its own proxy variables must not apply either)."""
    monkeypatch.setenv("grpc_proxy", proxy.url)
    async with GovernedClient(agent.base_url, token=agent.token("alice"), binding=binding) as c:
        invocation = await c.invoke("evaluate_resource_condition", WORKED)
    assert invocation.output["result"] == "condition_not_met"
    assert proxy.received == []


async def test_https_elsewhere_is_only_tunnelled(proxy: RecordingProxy) -> None:
    """Plain http to another host: direct. https to another host: a tunnel, whose request
    carries the host and port, not the token."""
    token = "secret-token-value"
    async with outbound_client(timeout=1, headers={"Authorization": f"Bearer {token}"}) as http:
        for url in ("http://192.0.2.1:9/", "https://agent.example:8443/"):
            with pytest.raises(httpx.HTTPError):
                await http.get(url)
    (tunnel,) = proxy.received
    assert tunnel.startswith(b"CONNECT agent.example:8443 "), tunnel
    assert token.encode() not in tunnel and b"authorization" not in tunnel.lower()


async def test_a_plaintext_grpc_channel_to_another_host_bypasses_the_proxy(
    proxy: RecordingProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client's gRPC channel is plaintext: through a proxy's tunnel its ``authorization``
    metadata would be readable, so the channel the client makes ignores grpc_proxy,
    https_proxy and http_proxy."""
    from agent.client.bindings import GRPC
    from agent.client.calls import sdk_config

    monkeypatch.setenv("grpc_proxy", proxy.url)
    async with httpx.AsyncClient(trust_env=False) as http:
        factory = sdk_config(GRPC, http, streaming=False).grpc_channel_factory
    assert factory is not None
    channel = factory("192.0.2.1:50051")
    try:
        with pytest.raises(TimeoutError):  # nothing answers at 192.0.2.1 (TEST-NET-1)
            await asyncio.wait_for(channel.channel_ready(), timeout=1.5)
    finally:
        await channel.close()
    assert proxy.received == []
