"""The external-token-service setting, end to end: agent B exchanges at agent A over HTTP.

A is the issuer (its /oauth/token and JWKS); B verifies callers against A's JWKS, exchanges the
caller's token at A with its own agent credential, and its inventory trusts A's tool tokens.
No stand-in: both are real agents on loopback.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agent.security.auth import TokenVerifier, load_or_create_signing_key
from agent.security.credentials import LocalIssuer
from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from tests.a2a_helpers import call, edge_reason
from tests.conftest import RunningAgent, start_agent

WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}


def credential_from(issuer_home: Path, subject: str) -> str:
    """What `netagent token --agent-credential` prints on the issuer's machine."""
    from agent.base.settings import Settings

    key = load_or_create_signing_key(issuer_home)
    return LocalIssuer(
        key, TokenVerifier(Settings(home=issuer_home), key), audiences=()
    ).agent_credential(subject)


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAgent]:
    running = start_agent(tmp_path_factory.mktemp("issuer"))
    yield running
    running.stop()


def start_relying(
    home: Path,
    issuer: RunningAgent,
    credential: str,
    *,
    jwks: str | None = None,
    exchange: str | None = None,
) -> RunningAgent:
    """Agent B, trusting A's keys and exchanging at A unless told other addresses."""
    jwks = jwks or f"{issuer.base_url}/.well-known/jwks.json"
    return start_agent(
        home,
        settings_overrides={
            "jwks_url": jwks,
            "token_exchange_url": exchange or f"{issuer.base_url}/oauth/token",
            "agent_credential": credential,
            "tool_jwks_url": jwks,
        },
    )


async def test_b_exchanges_at_a_and_its_inventory_trusts_a(issuer, tmp_path) -> None:
    credential = credential_from(issuer.settings.home, "agent:relying")
    relying = await asyncio.to_thread(start_relying, tmp_path / "b", issuer, credential)
    try:
        token = issuer.token("alice")  # the caller's token comes from A, the issuer
        outcome = await call(relying.base_url, token, "evaluate_resource_condition", WORKED)
        assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
        assert outcome.result("evaluate_resource_condition")["result"] == "condition_not_met"
        engine = make_engine(relying.settings.resolved_database_url)
        try:
            rows = await DatabaseAuditLog(engine).query(task_id=outcome.task.id)
        finally:
            await engine.dispose()
        tool_rows = [r for r in rows if r["tool"] == "inventory"]
        assert tool_rows and all(r["actor_chain"] == ["agent:relying"] for r in tool_rows)
        assert all(r["principal"] == "alice" and r["decision"] == "allow" for r in tool_rows)
        assert token not in json.dumps(rows, default=str)
    finally:
        relying.stop()


async def test_a_credential_the_issuer_did_not_sign_gets_no_tool_access(issuer, tmp_path) -> None:
    foreign = credential_from(tmp_path / "elsewhere", "agent:impostor")
    relying = await asyncio.to_thread(start_relying, tmp_path / "b", issuer, foreign)
    try:
        outcome = await call(
            relying.base_url, issuer.token("alice"), "evaluate_resource_condition", WORKED
        )
        assert outcome.state == "TASK_STATE_REJECTED"
        assert outcome.error["code"] == "authorization_failed"
    finally:
        relying.stop()


def closed_port() -> int:
    """A loopback port with nothing listening (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_jwks_is_503_not_a_bad_token(issuer, tmp_path) -> None:
    credential = credential_from(issuer.settings.home, "agent:relying")
    nowhere = f"http://127.0.0.1:{closed_port()}/.well-known/jwks.json"
    relying = await asyncio.to_thread(
        start_relying, tmp_path / "b", issuer, credential, jwks=nowhere
    )
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
        headers = {"Authorization": f"Bearer {issuer.token('alice')}", "A2A-Version": "1.0"}
        async with httpx.AsyncClient(base_url=relying.base_url, timeout=30) as client:
            answer = await client.post("/a2a/jsonrpc", json=body, headers=headers)
            rest = await client.get("/a2a/rest/tasks", headers=headers)
        for response in (answer, rest):
            assert response.status_code == 503, response.text
            assert response.headers["retry-after"] == "5"
            assert edge_reason(response.json()) == "UNAVAILABLE"
            assert "www-authenticate" not in response.headers  # nothing is wrong with the token
    finally:
        relying.stop()


async def test_an_unreachable_token_service_is_not_an_authorization_failure(
    issuer, tmp_path
) -> None:
    credential = credential_from(issuer.settings.home, "agent:relying")
    nowhere = f"http://127.0.0.1:{closed_port()}/oauth/token"
    relying = await asyncio.to_thread(
        start_relying, tmp_path / "b", issuer, credential, exchange=nowhere
    )
    try:
        outcome = await call(
            relying.base_url, issuer.token("alice"), "evaluate_resource_condition", WORKED
        )
        assert outcome.error["code"] == "execution_failed", outcome.error
        assert outcome.error["message"] == "the token service is unavailable; try again later"
    finally:
        relying.stop()
