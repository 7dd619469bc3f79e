"""Bounded load test: one replica, then two, on one PostgreSQL. Prints figures; asserts nothing.

Concurrent clients send a fixed number of governed requests (the worked example by Data Part,
with its skill_version and interface_digest) over JSON-RPC, spread round-robin over the
replicas. Afterwards the database is checked: every task a client saw accepted is stored
exactly once, and there is exactly one invocation audit row per invocation.

    .venv/bin/python -m bench.load [--requests 2000] [--concurrency 32] [--replicas 1 2]
                                   [--database-url postgresql+asyncpg://...]

Without --database-url it starts a private PostgreSQL on loopback (Debian's server binaries,
as the test suite does) and removes it afterwards. Each replica is a real `netagent serve`.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text

from agent.storage.audit import AGENT_TOOL
from agent.storage.engine import make_engine
from tests.pg_cluster import PostgresCluster
from tests.replicas import Replica, prepare_shared_database, token_for

WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}


@dataclass
class Run:
    """What the clients saw."""

    latencies: list[float] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    states: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": uuid.uuid4().hex, "method": method, "params": params}


def request(skill: str, arguments: dict[str, Any], interface: dict[str, str]) -> dict[str, Any]:
    data = {"skill": skill, "arguments": arguments, **interface}
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"mediaType": "application/json", "data": data}],
    }
    return rpc("SendMessage", {"message": message})


async def interface_of(client: httpx.AsyncClient, url: str, skill: str) -> dict[str, str]:
    """describe_skill once, for the version and digest every request then carries."""
    answer = await client.post(
        url, json=request("describe_skill", {"skill_id": skill}, {}), timeout=30
    )
    task = answer.json()["result"]["task"]
    described = task["artifacts"][0]["parts"][0]["data"]
    return {
        "skill_version": described["skill_version"],
        "interface_digest": described["interface_digest"],
    }


async def load(urls: list[str], token: str, total: int, concurrency: int) -> tuple[Run, float]:
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    run = Run()
    async with httpx.AsyncClient(headers=headers, limits=limits, timeout=60) as client:
        interface = await interface_of(client, urls[0], "evaluate_resource_condition")
        for url in urls:  # warm every replica (connections, caches) before the clock starts
            for _ in range(20):
                warm = request("evaluate_resource_condition", WORKED, interface)
                await client.post(url, json=warm)
        counter = iter(range(total))

        async def client_loop() -> None:
            for n in counter:
                url = urls[n % len(urls)]
                started = time.perf_counter()
                try:
                    answer = await client.post(
                        url, json=request("evaluate_resource_condition", WORKED, interface)
                    )
                except httpx.HTTPError as exc:
                    run.errors[type(exc).__name__] += 1
                    continue
                run.latencies.append(time.perf_counter() - started)
                if answer.status_code != 200 or "error" in answer.json():
                    run.errors[f"HTTP {answer.status_code}: {answer.text[:80]}"] += 1
                    continue
                task = answer.json()["result"]["task"]
                run.accepted.append(task["id"])
                run.states[task["status"]["state"]] += 1

        started = time.perf_counter()
        await asyncio.gather(*(client_loop() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return run, elapsed


async def stored_counts(url: str, task_ids: list[str]) -> tuple[int, int, int]:
    """(distinct accepted ids found in the task store, their rows, their invocation audit rows)."""
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            rows = 0
            found = 0
            audit = 0
            for start in range(0, len(task_ids), 500):
                chunk = task_ids[start : start + 500]
                counted = (
                    await connection.execute(
                        text("SELECT id, count(*) FROM tasks WHERE id = ANY(:ids) GROUP BY id"),
                        {"ids": chunk},
                    )
                ).all()
                found += len(counted)
                rows += sum(n for _, n in counted)
                audit += await connection.scalar(
                    text(
                        "SELECT count(*) FROM principal_audit "
                        "WHERE tool = :tool AND operation = 'invoke' AND task_id = ANY(:ids)"
                    ),
                    {"ids": chunk, "tool": AGENT_TOOL},
                )
    finally:
        await engine.dispose()
    return found, rows, audit


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def bench(database_url: str, replicas: int, total: int, concurrency: int, home: Path) -> None:
    prepare_shared_database(database_url)
    token = token_for(home, "paula")
    servers = [Replica(home, database_url, f"r{n}") for n in range(replicas)]
    try:
        for server in servers:
            server.start()
        run, elapsed = asyncio.run(
            load([f"{s.base_url}/a2a/jsonrpc" for s in servers], token, total, concurrency)
        )
    finally:
        for server in servers:
            server.stop()
    found, rows, audit = asyncio.run(stored_counts(database_url, run.accepted))
    ms = [1000 * x for x in run.latencies]
    print(
        f"replicas={replicas} requests={total} concurrency={concurrency}: "
        f"{len(run.accepted) / elapsed:7.1f} req/s, p50 {statistics.median(ms):6.1f} ms, "
        f"p99 {percentile(ms, 0.99):6.1f} ms, errors {sum(run.errors.values())}"
        + (f" {dict(run.errors)}" if run.errors else "")
    )
    print(
        f"  states {dict(run.states)}; accepted {len(run.accepted)}, distinct "
        f"{len(set(run.accepted))}, stored {found} ({rows} rows), invocation audit rows {audit}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--database-url", help="an existing PostgreSQL (one database per run)")
    args = parser.parse_args()
    cluster = None if args.database_url else PostgresCluster()
    try:
        for count in args.replicas:
            with tempfile.TemporaryDirectory(prefix="netagent-load-") as tmp:
                if cluster is not None:
                    url = cluster.database(f"load_{count}_{uuid.uuid4().hex[:8]}")
                else:
                    url = args.database_url
                bench(url, count, args.requests, args.concurrency, Path(tmp))
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
