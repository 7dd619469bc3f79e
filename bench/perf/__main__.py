"""Command line of bench.perf; the module docstring of bench/perf/__init__.py says what it does."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import platform
import signal
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench.perf as package
from bench.perf.client import Cell, Target, run_load
from bench.perf.servers import (
    Server,
    agent_server,
    echo_server,
    pin_generator,
    pinning,
    tokens,
)

CONCURRENCY = (1, 32)
TARGETS = {  # what issue 9 asks, as (key, reference, measure, bound) at each concurrency
    "card": ("card", "rps", 1.0),
    "describe": ("send", "rps", 1.0),
    "evaluate": ("send", "rps", 0.8),
    "text": ("send", "rps", 0.7),
}
P99_TARGETS = {"evaluate": 1.5}


def machine() -> str:
    """Cores, CPU model and load: the context every figure needs."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    pinned = "server on CPU 0, generator on CPU 1" if pinning() else "not pinned"
    return (
        f"{os.cpu_count()} cores ({model}); Python {platform.python_version()}; {pinned}; "
        f"load average {load()}"
    )


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


@dataclass
class Budget:
    """How much each measured cell may send and for how long, and the warm-up before it."""

    requests: int
    seconds: float
    warmup: int


def measure(target: Target, budget: Budget) -> dict[int, Cell]:
    """Warm up, then one cell per concurrency."""

    async def go() -> dict[int, Cell]:
        await run_load(target, 8, budget.warmup, budget.seconds)
        cells = {}
        for concurrency in CONCURRENCY:
            count = budget.requests if concurrency > 1 else max(50, budget.requests // 4)
            cells[concurrency] = await run_load(target, concurrency, count, budget.seconds)
        return cells

    return asyncio.run(go())


def fmt(value: float, digits: int = 1) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


HEADER = (
    f"{'backend':<11}{'what':<26}{'c':>3}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'err':>5}"
    f"{'cpu ms':>8}{'x req/s':>9}{'x p50':>7}{'x p99':>7}{'x cpu':>7}  load"
)


def line(backend: str, name: str, cell: Cell, ref: Cell | None) -> str:
    ratio = (
        ""
        if ref is None
        else (
            f"{fmt(cell.rps / ref.rps, 2):>9}{fmt(cell.quantile(0.5) / ref.quantile(0.5), 2):>7}"
            f"{fmt(cell.quantile(0.99) / ref.quantile(0.99), 2):>7}"
            f"{fmt(ref.cpu_ms / cell.cpu_ms, 2):>7}"
        )
    )
    return (
        f"{backend:<11}{name:<26}{cell.concurrency:>3}{fmt(cell.rps):>9}"
        f"{fmt(cell.quantile(0.5), 2):>9}{fmt(cell.quantile(0.99), 2):>9}{cell.errors:>5}"
        f"{fmt(cell.cpu_ms, 2):>8}{ratio or ' ' * 30:<30}  {load()}"
    )


def report_errors(name: str, cells: dict[int, Cell]) -> None:
    for cell in cells.values():
        if cell.errors:
            print(
                f"   ! {name} c={cell.concurrency}: {cell.errors} errors, first: {cell.first_error}"
            )


Pairs = dict[int, tuple[Cell, Cell]]
"""Per concurrency: (ours, the reference cell measured just before it)."""


def measure_pair(
    ours: Target, reference: Target, budget: Budget, our_cpu: Any, ref_cpu: Any
) -> Pairs:
    """Warm both up, then per concurrency the reference cell and, right after it, ours.

    Interleaved so that each ratio compares two cells taken a few seconds apart: on a shared
    machine the load drifts, and a reference taken minutes earlier would carry that drift
    into the ratio.
    """

    async def go() -> Pairs:
        await run_load(reference, 8, budget.warmup, budget.seconds)
        await run_load(ours, 8, budget.warmup, budget.seconds)
        pairs = {}
        for concurrency in CONCURRENCY:
            count = budget.requests if concurrency > 1 else max(50, budget.requests // 4)
            ref = await run_load(reference, concurrency, count, budget.seconds, cpu=ref_cpu)
            cell = await run_load(ours, concurrency, count, budget.seconds, cpu=our_cpu)
            pairs[concurrency] = (cell, ref)
        return pairs

    return asyncio.run(go())


def run_governed(
    server: Server,
    echo: Server,
    backend: str,
    bearers: tuple[str, ...],
    budget: Budget,
    only: list[str] | None,
) -> dict[str, Pairs]:
    from bench.perf.scenarios import governed_targets, reference_targets

    references = reference_targets(echo.port, bearers)
    measured = {}
    for key, target in governed_targets(server.port, server.base_url, bearers).items():
        against = "card" if key == "card" else "send"
        if only and key not in only:
            continue
        measured[key] = measure_pair(
            target, references[against], budget, server.cpu_seconds, echo.cpu_seconds
        )
        for concurrency in CONCURRENCY:
            cell, ref = measured[key][concurrency]
            print(line("  ref", references[against].name, ref, None))
            print(line(backend, target.name, cell, ref), flush=True)
        report_errors(target.name, {c: pair[0] for c, pair in measured[key].items()})
        report_errors(references[against].name, {c: pair[1] for c, pair in measured[key].items()})
    return measured


def verdicts(backend: str, measured: dict[str, Pairs]) -> list[str]:
    """Each issue-9 target at each concurrency: met or missed, with the ratio."""
    found = []
    for key, (_, _, bound) in TARGETS.items():
        if key not in measured:
            continue
        for concurrency in CONCURRENCY:
            cell, ref = measured[key][concurrency]
            ratio = cell.rps / ref.rps
            capacity = ref.cpu_ms / cell.cpu_ms
            verdict = "met" if ratio >= bound else "MISSED"
            found.append(
                f"{backend:<11}{key:<10} c={concurrency:<3} throughput {ratio:5.2f}x "
                f"(target >= {bound}x): {verdict}; by server CPU per request {capacity:5.2f}x: "
                + ("met" if capacity >= bound else "MISSED")
            )
    for key, bound in P99_TARGETS.items():
        if key not in measured:
            continue
        for concurrency in CONCURRENCY:
            cell, ref = measured[key][concurrency]
            ratio = cell.quantile(0.99) / ref.quantile(0.99)
            verdict = "met" if ratio <= bound else "MISSED"
            found.append(
                f"{backend:<11}{key:<10} c={concurrency:<3} p99        {ratio:5.2f}x "
                f"(target <= {bound}x): {verdict}"
            )
    return found


def run_table(args: argparse.Namespace, workdir: Path) -> None:
    budget = Budget(args.requests, args.seconds, args.warmup)
    tracing = "on (the default)" if args.sdk_tracing == "on" else "off"
    print(f"machine: {machine()}")
    print(
        f"a2a-sdk tracing wrappers: {tracing}, the same for both servers; "
        f"cells: up to {budget.requests} requests (c=1: a quarter) or {budget.seconds:.0f} s, "
        f"after {budget.warmup} warm-up requests"
    )
    echo = echo_server(workdir, args.sdk_tracing == "on").start()
    summary: list[str] = []
    try:
        for backend in args.backends:
            cluster = None
            home = workdir / f"home-{backend}"
            bearers = tokens(home, args.caller, max(CONCURRENCY))
            if backend == "sqlite":
                url = f"sqlite+aiosqlite:///{home / 'netagent.db'}"
            else:
                from tests.pg_cluster import PostgresCluster

                cluster = PostgresCluster()
                url = cluster.database(f"perf_{uuid.uuid4().hex[:8]}")
            server = agent_server(
                workdir, home, url, args.sdk_tracing == "on", tree=args.agent_tree
            )
            try:
                server.start()
                print(f"\n{HEADER}")
                measured = run_governed(server, echo, backend, bearers, budget, args.only)
                summary += verdicts(backend, measured)
            finally:
                server.stop()
                if cluster is not None:
                    cluster.stop()
    finally:
        echo.stop()
    print("\ntargets (one uvicorn worker each; each ratio against the reference cell just before)")
    for entry in summary:
        print(f"  {entry}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=package.__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=package.__doc__,
    )
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--requests", type=int, default=2000, help="per cell at c=32")
    parser.add_argument("--seconds", type=float, default=20.0, help="per cell, at most")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--caller", choices=["paula", "alice"], default="paula")
    parser.add_argument(
        "--only", nargs="+", metavar="KEY", help="measure only these (card describe evaluate ...)"
    )
    parser.add_argument(
        "--sdk-tracing",
        choices=["on", "off"],
        default="on",
        help="off sets OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false for both servers",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--startup", action="store_true", help="start-up, component by component")
    mode.add_argument("--memory", type=int, metavar="N", help="RSS over N invocations")
    mode.add_argument("--scale", choices=["large"], help="p50 on the large seed vs demo data")
    mode.add_argument("--profile", type=Path, metavar="DIR", help="py-spy the server under load")
    parser.add_argument("--large-db", type=Path, help="a SQLite file seeded --scale large")
    parser.add_argument(
        "--agent-tree", type=Path, help="run the agent from this source tree (before/after)"
    )
    parser.add_argument(
        "--profile-target",
        default="evaluate",
        choices=["describe", "evaluate", "text", "capacity", "stream"],
    )
    parser.add_argument("--profile-concurrency", type=int, default=32)
    args = parser.parse_args()
    # A terminated run still stops its servers and removes its PostgreSQL (finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.startup:
        from bench.perf.startup import run_startup

        run_startup()
        return
    pin_generator()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="netagent-perf-") as tmp:
        workdir = Path(tmp)
        if args.memory:
            from bench.perf.extra import run_memory

            run_memory(args, workdir)
        elif args.scale:
            from bench.perf.extra import run_scale

            run_scale(args, workdir)
        elif args.profile:
            from bench.perf.extra import run_profile

            run_profile(args, workdir)
        else:
            run_table(args, workdir)
    print(f"\n(total {time.perf_counter() - started:.0f} s; load average now {load()})")


if __name__ == "__main__":
    main()
