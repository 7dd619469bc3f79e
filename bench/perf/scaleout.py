"""The multi-process cell (issue 17 point 5): N agent processes on one PostgreSQL database.

`netagent serve` has no ``--workers`` option, so N is N replicas, as an operator scales out on
one machine: N `netagent serve` processes sharing one database and one NETAGENT_HOME (the
signing key), each on its own port, all pinned to the servers' core (CPU 0), the generator on
CPU 1. The 32 simulated clients are spread round robin over the ports (client i on replica
i mod N). The figure that matters is server CPU per request, summed over every agent process
(and its children): it should not grow with N by more than 10 %. PostgreSQL's own CPU per
request is printed beside it (its processes are not pinned), not judged.
"""

from __future__ import annotations

import asyncio
import math
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from bench.perf.client import Cell, run_load
from bench.perf.postgres import Postgres
from bench.perf.scenarios import governed_targets
from bench.perf.servers import ROOT, Server, agent_server, base_env, seed_command, tokens
from bench.perf.table import fmt
from bench.perf.targets import TARGET_CONCURRENCY, ratio

GROWTH_BOUND = 0.10
TEMPLATE = "perf_scaleout_seed"


@dataclass
class Scaled:
    """One N: what the clients saw and what the processes spent."""

    processes: int
    cell: Cell
    postgres_cpu: float
    """CPU seconds PostgreSQL's processes spent during the cell."""

    @property
    def postgres_ms(self) -> float:
        done = self.cell.ok + self.cell.errors
        return 1000 * self.postgres_cpu / done if done else float("nan")


def _seed_template(
    postgres: Postgres, home: Path, workdir: Path, sdk_tracing: bool, tree: Path | None
) -> None:
    """Migrate and seed once; every N then gets a copy, so none reads a fuller task table."""
    url = postgres.database(TEMPLATE)
    env = base_env(sdk_tracing) | {"NETAGENT_HOME": str(home)}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    cwd = tree or ROOT
    log = workdir / "scaleout-seed.log"
    with log.open("ab") as out:
        done = subprocess.run(seed_command(url, tree), env=env, stdout=out, stderr=out, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"seeding {TEMPLATE} failed:\n{log.read_text()[-3000:]}")


def measure_scaled(
    servers: list[Server],
    bearers: tuple[str, ...],
    postgres: Postgres,
    requests: int,
    seconds: float,
    warmup: int,
) -> Scaled:
    """Warm every replica up, then one cell at c=32 spread over all of them."""
    first = servers[0]
    target = governed_targets(first.port, first.base_url, bearers)["evaluate"]
    target = replace(target, ports=tuple(server.port for server in servers))

    def agents() -> float:
        return sum(server.cpu_seconds() for server in servers)

    async def go() -> Scaled:
        await run_load(target, 8 * len(servers), warmup * len(servers), seconds)
        before = postgres.cpu_seconds()
        cell = await run_load(target, TARGET_CONCURRENCY, requests, seconds, cpu=agents)
        return Scaled(len(servers), cell, postgres.cpu_seconds() - before)

    return asyncio.run(go())


def run_scaleout(
    counts: list[int],
    postgres: Postgres,
    workdir: Path,
    caller: str,
    sdk_tracing: bool,
    budget: tuple[int, float, int],
    tree: Path | None = None,
) -> list[Scaled]:
    """Each N in ``counts``: a fresh copy of the seeded database, N replicas, one cell."""
    requests, seconds, warmup = budget
    home = workdir / "home-scaleout"
    bearers = tokens(home, caller, TARGET_CONCURRENCY)
    _seed_template(postgres, home, workdir, sdk_tracing, tree)
    measured = []
    for n in counts:
        url = postgres.database(f"perf_scaleout_{n}", template=TEMPLATE)
        servers = [
            agent_server(
                workdir, home, url, sdk_tracing, seed=False, tree=tree, name=f"scaleout-{n}-{i}"
            )
            for i in range(n)
        ]
        try:
            for server in servers:  # one at a time: the first migrates the core's tables
                server.start()
            measured.append(measure_scaled(servers, bearers, postgres, requests, seconds, warmup))
        finally:
            for server in servers:
                server.stop()
    return measured


def report(measured: list[Scaled]) -> list[str]:
    """The cell's lines: one per N, its CPU per request against the smallest N's."""
    lines = [
        f"{'N':>3}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'err':>5}"
        f"{'agent cpu ms':>14}{'pg cpu ms':>11}  agent cpu per request vs the first N"
    ]
    base = measured[0] if measured else None
    for scaled in measured:
        cell = scaled.cell
        verdict = ""
        if base is not None and scaled is not base:
            verdict = growth_verdict(base, scaled)
        lines.append(
            f"{scaled.processes:>3}{fmt(cell.rps):>9}{fmt(cell.quantile(0.5), 2):>9}"
            f"{fmt(cell.quantile(0.99), 2):>9}{cell.errors:>5}{fmt(cell.cpu_ms, 2):>14}"
            f"{fmt(scaled.postgres_ms, 2):>11}  {verdict}"
        )
        if cell.errors:
            lines.append(f"     ! {cell.errors} answers did not count, first: {cell.first_error}")
    return lines


def growth_verdict(base: Scaled, scaled: Scaled) -> str:
    """Whether agent CPU per request grew by more than 10 % from ``base``'s N to this one."""
    if base.cell.errors or scaled.cell.errors:
        return "NO VERDICT: answers that did not count"
    growth = ratio(scaled.cell.cpu_ms, base.cell.cpu_ms) - 1
    if math.isnan(growth):
        return "-"
    within = growth <= GROWTH_BOUND
    return f"{growth:+.1%} vs N={base.processes}: " + (
        "met (within 10 %)" if within else "MISSED (grows by more than 10 %)"
    )
