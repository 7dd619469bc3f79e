"""The multi-process cell: N agent processes on one PostgreSQL database.

`netagent serve` has no ``--workers`` option, so N is N replicas, as an operator scales out on
one machine: N `netagent serve` processes sharing one database and one NETAGENT_HOME (the
signing key), each on its own port, all pinned to the servers' core (CPU 0), the generator on
CPU 1. The 32 simulated clients are spread round robin over the ports (client i on replica
i mod N). The figure that matters is server CPU per request, summed over every agent process
(and its children): it should not grow with N by more than 10 %. PostgreSQL's own CPU per
request is printed beside it (its processes are not pinned), not judged.

The control: the bare SDK's echo (bench/echo_agent.py, InMemoryTaskStore) run the same way, N
processes on the servers' core with the same 32 clients spread over them, right before ours at
each N. It shares nothing between its processes, so whatever its CPU per request grows by is
what N processes cost the runtime itself (each process less loaded: fewer ready events per
turn of its event loop, two interpreters taking turns on a core), not any coordination.
Measured on 2026-12-02, the echo grew by 17-19 %. Both growths are printed; the verdict is on
what ours grows beyond the echo's, ``(1 + ours) / (1 + echo) - 1``: what the governed path and
its replica machinery (leases, the cancel relay, a shared database) add per process.
"""

from __future__ import annotations

import asyncio
import math
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from bench.perf.client import Cell, Target, run_load
from bench.perf.postgres import Postgres
from bench.perf.scenarios import governed_targets, reference_targets
from bench.perf.servers import (
    ROOT,
    Server,
    agent_server,
    base_env,
    echo_server,
    seed_command,
    tokens,
)
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
    """CPU seconds PostgreSQL's processes spent during the cell (NaN for the echo)."""
    echo: Cell | None = None
    """The control at the same N: the bare SDK's echo in as many processes, just before."""

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
    before = postgres.cpu_seconds()
    cell = spread_cell(servers, target, requests, seconds, warmup)
    return Scaled(len(servers), cell, postgres.cpu_seconds() - before)


def spread_cell(
    servers: list[Server], target: Target, requests: int, seconds: float, warmup: int
) -> Cell:
    """``target`` at c=32, client i on server i mod N, after a warm-up of each server; the CPU
    is every process's."""
    target = replace(target, ports=tuple(server.port for server in servers))

    def processes() -> float:
        return sum(server.cpu_seconds() for server in servers)

    async def go() -> Cell:
        await run_load(target, 8 * len(servers), warmup * len(servers), seconds)
        return await run_load(target, TARGET_CONCURRENCY, requests, seconds, cpu=processes)

    return asyncio.run(go())


def measure_echo(
    workdir: Path,
    n: int,
    bearers: tuple[str, ...],
    sdk_tracing: bool,
    budget: tuple[int, float, int],
) -> Cell:
    """The control: N bare-SDK echo processes (in-memory store), the same clients spread."""
    requests, seconds, warmup = budget
    servers = []
    for i in range(n):
        server = echo_server(workdir, sdk_tracing, "memory")
        server.name, server.log_path = f"echo-{n}-{i}", workdir / f"scaleout-echo-{n}-{i}.log"
        servers.append(server)
    try:
        for server in servers:
            server.start()
        send = reference_targets(servers[0].port, bearers)["send"]
        return spread_cell(servers, send, requests, seconds, warmup)
    finally:
        for server in servers:
            server.stop()


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
        echo = measure_echo(workdir, n, bearers, sdk_tracing, budget)
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
            scaled = measure_scaled(servers, bearers, postgres, requests, seconds, warmup)
            measured.append(replace(scaled, echo=echo))
        finally:
            for server in servers:
                server.stop()
    return measured


def report(measured: list[Scaled]) -> list[str]:
    """The cell's lines: per N, ours and the echo's, and each N's growth against the first."""
    lines = [
        f"{'N':>3}  {'server':<6}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'err':>5}"
        f"{'cpu ms':>9}{'pg cpu ms':>11}  CPU per request vs the first N"
    ]
    base = measured[0] if measured else None
    for scaled in measured:
        later = base is not None and scaled is not base
        rows = [("ours", scaled.cell, scaled.postgres_ms)]
        if scaled.echo is not None:
            rows.append(("echo", scaled.echo, float("nan")))
        for who, cell, pg_ms in rows:
            growth = ""
            if later and base is not None:
                first = base.cell if who == "ours" else base.echo
                growth = "-" if first is None else f"{_growth(first, cell):+.1%}"
            lines.append(
                f"{scaled.processes:>3}  {who:<6}{fmt(cell.rps):>9}{fmt(cell.quantile(0.5), 2):>9}"
                f"{fmt(cell.quantile(0.99), 2):>9}{cell.errors:>5}{fmt(cell.cpu_ms, 2):>9}"
                f"{fmt(pg_ms, 2):>11}  {growth}"
            )
            if cell.errors:
                lines.append(
                    f"     ! {cell.errors} answers did not count, first: {cell.first_error}"
                )
        if later and base is not None:
            lines.append(f"     N={scaled.processes}: {growth_verdict(base, scaled)}")
    return lines


def _growth(first: Cell, then: Cell) -> float:
    return ratio(then.cpu_ms, first.cpu_ms) - 1


def growth_verdict(base: Scaled, scaled: Scaled) -> str:
    """Whether ours grew by more than 10 % beyond the echo's growth from ``base``'s N to this N.

    Without the control (no echo cell), the raw growth is judged.
    """
    cells = [base.cell, scaled.cell] + [c for c in (base.echo, scaled.echo) if c is not None]
    if any(cell.errors for cell in cells):
        return "NO VERDICT: answers that did not count"
    ours = _growth(base.cell, scaled.cell)
    if base.echo is None or scaled.echo is None:
        beyond, what = ours, "grows"
    else:
        beyond = (1 + ours) / (1 + _growth(base.echo, scaled.echo)) - 1
        what = "grows beyond the bare SDK's own growth"
    if math.isnan(beyond):
        return "-"
    verdict = "met (within 10 %)" if beyond <= GROWTH_BOUND else "MISSED (more than 10 %)"
    return f"ours {what} by {beyond:+.1%} vs N={base.processes}: {verdict}"
