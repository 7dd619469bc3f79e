"""``netagent serve --workers N``: refused where it cannot work, and on PostgreSQL N replicas.

On PostgreSQL the real command runs with two workers: both take a lease, they answer on one
port, and a task left WORKING by a replica that has no lease is ended by them within a
heartbeat, which GetTask and CancelTask then report; stopping the command gives both leases
back. On SQLite (and with the cluster stores off) the command refuses before it listens.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.server.cluster import VersionedDatabaseTaskStore
from a2a.server.cluster.version import TaskVersion
from a2a.server.context import ServerCallContext
from a2a.types import Task, TaskState, TaskStatus
from sqlalchemy import insert, select

from agent.security.principal import Principal, PrincipalUser
from agent.storage.engine import make_engine
from agent.storage.recovery import INTERRUPTED
from agent.storage.schema import replica_lease, task_runner
from tests.conftest import free_port, postgres_database
from tests.replicas import prepare_shared_database, token_for
from tests.serving import serving

ROOT = Path(__file__).resolve().parents[2]
NETAGENT = str(Path(sys.executable).parent / "netagent")
START_TIMEOUT_S = 300.0


def environment(home: Path, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("NETAGENT_")  # nothing of the caller's own agent leaks in
    }
    return {
        **env,
        "NETAGENT_HOME": str(home),
        "NETAGENT_GRPC_PORT": "off",  # the machine-wide default port is not a test's
        "NETAGENT_SEED": "0",
        "NETAGENT_LIVE_TELEMETRY": "0",
        "NETAGENT_LOG_LEVEL": "warning",
        "PYTHONPATH": str(ROOT),
        **extra,
    }


def refused(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NETAGENT, "serve", *args],
        env=environment(home, **extra),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_several_workers_on_sqlite_are_refused(tmp_path: Path) -> None:
    result = refused(tmp_path, "--workers", "2", "--port", str(free_port()))
    assert result.returncode == 2, result
    assert "error: --workers needs PostgreSQL" in result.stderr
    assert "one process serves a SQLite file" in result.stderr
    assert not (tmp_path / "netagent.db").exists()  # refused before anything was made


@pytest.mark.parametrize("count", ["0", "-1", "two"])
def test_a_worker_count_that_is_not_a_positive_number_is_refused(
    tmp_path: Path, count: str
) -> None:
    result = refused(tmp_path, "--workers", count, "--port", str(free_port()))
    assert result.returncode == 2 and "--workers" in result.stderr, result


def test_several_workers_without_the_cluster_stores_are_refused(tmp_path: Path) -> None:
    url = "postgresql+asyncpg://nobody@127.0.0.1:1/none"  # never connected to: refused first
    result = refused(  # a free port: the busy-port check comes first (8000 may be in use)
        tmp_path,
        "--workers",
        "3",
        "--port",
        str(free_port()),
        NETAGENT_DATABASE_URL=url,
        NETAGENT_CLUSTER="0",
    )
    assert result.returncode == 2, result
    assert "error: --workers needs the replica-safe stores: NETAGENT_CLUSTER is off" in (
        result.stderr
    )


@pytest.fixture
def shared_database() -> Iterator[str]:
    url = postgres_database("workers")
    if url is None:
        pytest.skip("no PostgreSQL cluster in this session (CI always has one)")
    prepare_shared_database(url)
    yield url


def rows(url: str, query: Any) -> list[Any]:
    async def read() -> list[Any]:
        engine = make_engine(url)
        try:
            async with engine.connect() as connection:
                return list((await connection.execute(query)).all())
        finally:
            await engine.dispose()

    return asyncio.run(read())


def leave_running(url: str, task_id: str, replica: str) -> None:
    """What a replica that died mid-task leaves: a WORKING task and its runner row."""

    async def write() -> None:
        engine = make_engine(url)
        try:
            store = VersionedDatabaseTaskStore(engine, create_table=True)
            alice = ServerCallContext(user=PrincipalUser(Principal("alice", "acme", frozenset())))
            submitted = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
            first = Task(id=task_id, context_id="c-1", status=submitted)
            version = await store.save(first, prev_version=TaskVersion.MISSING, context=alice)
            working = Task(
                id=task_id,
                context_id="c-1",
                status=TaskStatus(state=TaskState.TASK_STATE_WORKING),
            )
            await store.save(working, prev_version=version, context=alice)
            async with engine.begin() as connection:
                await connection.execute(
                    insert(task_runner).values(
                        task_id=task_id,
                        replica=replica,
                        owner="acme:alice",
                        principal="alice",
                        tenant="acme",
                        skill_id="check_link_capacity",
                        since=datetime.now(UTC),
                    )
                )
        finally:
            await engine.dispose()

    asyncio.run(write())


def rpc(base_url: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = httpx.post(
        f"{base_url}/a2a/jsonrpc",
        headers={"Authorization": f"Bearer {token}", "A2A-Version": "1.0"},
        json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
        timeout=10,
    )
    response.raise_for_status()
    answer: dict[str, Any] = response.json()
    return answer


def wait_for(condition: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    pytest.fail(f"{what} within {timeout} s")


def test_two_workers_are_two_replicas_that_end_a_dead_replicas_task(
    tmp_path: Path, shared_database: str
) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = environment(tmp_path, NETAGENT_DATABASE_URL=shared_database)
    command = [NETAGENT, "serve", "--workers", "2", "--port", str(port)]
    leases = select(replica_lease.c.replica)
    with serving(
        command,
        cwd=tmp_path,
        env=env,
        log_path=tmp_path / "serve.log",
        ready_url=f"{base_url}/.well-known/agent-card.json",
        timeout_s=START_TIMEOUT_S,
    ) as process:
        card = httpx.get(f"{base_url}/.well-known/agent-card.json", timeout=10)
        assert card.status_code == 200 and card.json()["name"]
        replicas = wait_for(
            lambda: (found := rows(shared_database, leases)) and len(found) == 2 and found,
            START_TIMEOUT_S,
            "two leases did not appear",
        )
        assert len({r for (r,) in replicas}) == 2

        leave_running(shared_database, "t-orphan", replica="died-before-this-test")
        token = token_for(tmp_path, "alice")

        def ended() -> dict[str, Any] | None:
            task = rpc(base_url, token, "GetTask", {"id": "t-orphan"})["result"]
            return task if task["status"]["state"] == "TASK_STATE_FAILED" else None

        task = wait_for(ended, 15, "no worker ended the orphaned task")
        (part,) = task["status"]["message"]["parts"]
        assert part["data"] == {"code": "execution_failed", "message": INTERRUPTED}
        assert rows(shared_database, select(task_runner.c.task_id)) == []
        cancel = rpc(base_url, token, "CancelTask", {"id": "t-orphan"})
        assert cancel.get("error", {}).get("code") == -32002, cancel  # answered: it has ended
        assert process.poll() is None
    assert process.returncode is not None
    assert rows(shared_database, leases) == []  # each worker gave its lease back
