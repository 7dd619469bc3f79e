"""Token-exchange benchmark: what downscoped tool credentials cost per invocation.

Times the in-process exchange (LocalTokenExchanger.exchange), the tool's verification
(ToolTokenVerifier.verify), and one gated inventory read (InventoryGate.call('sites'): verify,
scope check, tenant-scoped query, audit insert) against the bare read (Inventory.sites()) on
the small seeded database. Prints figures; asserts nothing. Bounded in count and in time.

    .venv/bin/python -m bench.token_exchange [--exchanges 2000] [--reads 300] [--budget 20]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agent.base.settings import Settings
from agent.security.auth import TokenVerifier, issue_token, load_or_create_signing_key
from agent.security.credentials import (
    TOOL_ISSUER,
    LocalIssuer,
    LocalTokenExchanger,
    ToolGrant,
    ToolTokenVerifier,
)
from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from agent.storage.schema import upgrade as upgrade_core
from db.gate import InventoryGate
from db.inventory import Inventory
from db.migrate import upgrade
from db.simulator import seed

UNTIL = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
SCOPES = ["inventory.read", "assurance.read", "capacity.read"]
CONTEXT = {
    "skill_id": "lookup_inventory",
    "skill_version": "1.0",
    "interface_digest": "sha-256:" + "0" * 64,
    "task_id": "0" * 32,
}


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def row(name: str, samples: list[float], unit: str, scale: float) -> str:
    values = [s * scale for s in samples]
    return (
        f"{name:<34}{len(values):>7}{percentile(values, 0.5):>11.1f}"
        f"{percentile(values, 0.99):>11.1f}{statistics.fmean(values):>11.1f}  {unit}"
    )


async def timed(
    work: Callable[[], Awaitable[Any]], count: int, warmup: int, budget_s: float
) -> list[float]:
    """Seconds per call, ``count`` calls after ``warmup``, stopping early at ``budget_s``."""
    for _ in range(warmup):
        await work()
    samples: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(samples) < count and time.perf_counter() < deadline:
        started = time.perf_counter()
        await work()
        samples.append(time.perf_counter() - started)
    return samples


async def run(exchanges: int, reads: int, budget_s: float) -> None:
    with tempfile.TemporaryDirectory(prefix="netagent-bench-") as tmp:
        home = Path(tmp)
        settings = Settings(home=home)
        key = load_or_create_signing_key(home)
        issuer = LocalIssuer(key, TokenVerifier(settings, key), audiences={"inventory"})
        exchanger = LocalTokenExchanger(issuer)
        caller = issue_token(key, settings, subject="alice", tenant="acme", scopes=SCOPES)
        principal = TokenVerifier(settings, key).verify(caller)
        grant = ToolGrant(principal, "inventory", frozenset({"inventory.read"}), CONTEXT)
        verifier = ToolTokenVerifier("inventory", TOOL_ISSUER, key=key.private_key.public_key())

        exchange_s = await timed(
            lambda: exchanger.exchange(grant), exchanges, exchanges // 10, budget_s
        )
        token = (await exchanger.exchange(grant)).access_token

        async def verify() -> None:
            verifier.verify(token)

        verify_s = await timed(verify, exchanges, exchanges // 10, budget_s)

        url = f"sqlite+aiosqlite:///{home / 'netagent.db'}"
        started = time.perf_counter()
        await upgrade_core(url)
        await upgrade(url)
        engine = make_engine(url)
        report = await seed(engine, scale="small", until=UNTIL)
        seeded_s = time.perf_counter() - started
        try:
            gate = InventoryGate(engine, verifier, DatabaseAuditLog(engine))
            bare = Inventory(engine, "acme")
            sites = len(await bare.sites())
            gated_s = await timed(lambda: gate.call(token, "sites"), reads, reads // 10, budget_s)
            bare_s = await timed(bare.sites, reads, reads // 10, budget_s)

            async def invocation() -> None:
                issued = await exchanger.exchange(grant)
                await gate.call(issued.access_token, "sites")

            whole_s = await timed(invocation, reads, reads // 10, budget_s)
        finally:
            await engine.dispose()

    print(f"small seeded database: {report.counts.get('link', 0)} links, {sites} acme sites")
    print(f"(seeding took {seeded_s:.1f} s; audit rows are written to it by every gated read)")
    print(f"\n{'measure':<34}{'n':>7}{'p50':>11}{'p99':>11}{'mean':>11}")
    print(row("LocalTokenExchanger.exchange", exchange_s, "µs", 1e6))
    print(row("ToolTokenVerifier.verify", verify_s, "µs", 1e6))
    print(row("Inventory.sites() (bare)", bare_s, "ms", 1e3))
    print(row("InventoryGate.call('sites')", gated_s, "ms", 1e3))
    print(row("exchange + gated sites", whole_s, "ms", 1e3))
    overhead = percentile(gated_s, 0.5) - percentile(bare_s, 0.5)
    print(
        f"\ngate overhead at p50: {overhead * 1e3:.2f} ms per call "
        f"(verify + scope check + audit insert); one exchange per invocation and tool adds "
        f"{percentile(exchange_s, 0.5) * 1e6:.0f} µs"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--exchanges", type=int, default=2000, help="timed exchanges/verifies")
    parser.add_argument("--reads", type=int, default=300, help="timed inventory reads")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per measure, at most")
    args = parser.parse_args()
    asyncio.run(run(args.exchanges, args.reads, args.budget))


if __name__ == "__main__":
    main()
