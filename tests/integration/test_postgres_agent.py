"""The same agent on PostgreSQL: the governed path, routing across a restart, the audit trail.

Runs against the session's private cluster (tests/pg_cluster.py); the whole integration suite
on PostgreSQL, and several replicas, are issue 7's.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest

from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from tests.a2a_helpers import BINDINGS, call, send, text_message
from tests.conftest import RunningAgent, postgres_database, start_agent

WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}


def fresh_database() -> str:
    url = postgres_database(f"agent_{uuid.uuid4().hex[:12]}")
    if url is None:
        pytest.skip("no PostgreSQL server installed (CI installs one)")
    return url


@pytest.fixture(scope="module")
def backend() -> str:
    """Once, not once per backend round: every agent here is on PostgreSQL whatever the round.

    Overriding the round's parametrized fixture takes the module out of both rounds (its ids
    carry no backend), so it is a work unit of its own and needs none of the rounds' agents.
    """
    return "postgresql"


@pytest.fixture(scope="module")
def pg_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAgent]:
    running = start_agent(tmp_path_factory.mktemp("pg-agent"), database_url=fresh_database())
    yield running
    running.stop()


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("streaming", [False, True])
async def test_worked_example_on_postgresql(pg_agent, binding: str, streaming: bool) -> None:
    outcome = await call(
        pg_agent.base_url,
        pg_agent.token("alice"),
        "evaluate_resource_condition",
        WORKED,
        binding=binding,
        streaming=streaming,
    )
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    assert outcome.result("evaluate_resource_condition")["result"] == "condition_not_met"
    (record,) = outcome.artifacts("resource-observation")
    assert record["parts"][0]["data"]["observed_at"] == "2026-08-11T12:00:01Z"
    engine = make_engine(pg_agent.settings.resolved_database_url)
    try:
        rows = await DatabaseAuditLog(engine).query(task_id=outcome.task.id)
    finally:
        await engine.dispose()
    assert {(r["tool"], r["operation"]) for r in rows} >= {
        ("agent", "invoke"),
        ("inventory", "latest_metric"),
    }


async def test_clarification_survives_a_restart_on_postgresql(tmp_path) -> None:
    url = fresh_database()
    home = tmp_path / "home"
    before = await asyncio.to_thread(start_agent, home, database_url=url)
    try:
        first = await send(
            before.base_url, before.token("alice"), text_message("spare capacity on acme-lnk-00002")
        )
        assert first.state == "TASK_STATE_INPUT_REQUIRED"
    finally:
        before.stop()
    after = await asyncio.to_thread(start_agent, home, database_url=url, seeded=False)
    try:
        reply = await send(
            after.base_url,
            after.token("alice"),
            text_message("check_link_capacity", task_id=first.task.id),
        )
        assert reply.task.id == first.task.id
        assert reply.state == "TASK_STATE_COMPLETED", reply.task.status
    finally:
        after.stop()
