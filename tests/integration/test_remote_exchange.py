"""The external-token-service setting, end to end: agent B exchanges at agent A over HTTP.

A is the issuer (its /oauth/token and JWKS); B verifies callers against A's JWKS, exchanges the
caller's token at A with its own agent credential, and its inventory trusts A's tool tokens.
No stand-in: both are real agents on loopback.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.audit import AuditLog
from agent.auth import TokenVerifier, load_or_create_signing_key
from agent.credentials import LocalIssuer
from db.engine import make_engine
from tests.a2a_helpers import call
from tests.conftest import RunningAgent, start_agent

WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}


def credential_from(issuer_home: Path, subject: str) -> str:
    """What `netagent token --agent-credential` prints on the issuer's machine."""
    from agent.settings import Settings

    key = load_or_create_signing_key(issuer_home)
    return LocalIssuer(key, TokenVerifier(Settings(home=issuer_home), key)).agent_credential(
        subject
    )


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAgent]:
    running = start_agent(tmp_path_factory.mktemp("issuer"))
    yield running
    running.stop()


def start_relying(home: Path, issuer: RunningAgent, credential: str) -> RunningAgent:
    jwks = f"{issuer.base_url}/.well-known/jwks.json"
    return start_agent(
        home,
        settings_overrides={
            "jwks_url": jwks,
            "token_exchange_url": f"{issuer.base_url}/oauth/token",
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
            rows = await AuditLog(engine).query(task_id=outcome.task.id)
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
