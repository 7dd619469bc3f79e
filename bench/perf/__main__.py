"""Command line of bench.perf; the module docstring of bench/perf/__init__.py says what it does."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import signal
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import bench.perf as package
from bench.perf.client import Cell, Target, run_load
from bench.perf.postgres import Postgres
from bench.perf.scenarios import NAMES
from bench.perf.servers import Server, agent_server, echo_server, pin_generator, pinning, tokens
from bench.perf.table import TARGETS_HEADER, header, load, rows, target_line
from bench.perf.targets import TARGET_CONCURRENCY, TARGETS, Row

KEYS = ("card", "describe", "evaluate", "text", "capacity", "stream", "mcp")
CELLS = {  # what each backend measures unless --only says otherwise: the target cells
    "sqlite": ("card", "evaluate", "text", "stream", "describe", "capacity", "mcp"),
    "postgresql": ("evaluate", "capacity"),
}


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
    pinned = "servers on CPU 0, generator on CPU 1" if pinning() else "not pinned"
    return (
        f"{os.cpu_count()} cores ({model}); Python {platform.python_version()}; {pinned}; "
        f"load average {load()}"
    )


@dataclass
class Budget:
    """How much each measured cell may send and for how long, and the warm-up before it."""

    requests: int
    seconds: float
    warmup: int
    concurrency: tuple[int, ...]

    def count(self, concurrency: int) -> int:
        return self.requests if concurrency > 1 else max(50, self.requests // 4)


@dataclass
class Echoes:
    """The two references, both running for the whole table."""

    memory: Server
    database: Server


def measure_rows(
    ours: tuple[Target, Server],
    memory: tuple[Target, Server],
    database: tuple[Target, Server] | None,
    budget: Budget,
) -> dict[int, Row]:
    """Warm all up, then per concurrency the reference cells and, right after them, ours.

    Interleaved so that each ratio compares cells taken a few seconds apart: on a shared
    machine the load drifts, and a reference taken minutes earlier would carry that drift
    into the ratio.
    """
    measured = [ours, memory] + ([database] if database else [])

    async def go() -> dict[int, Row]:
        for target, _ in measured:
            await run_load(target, 8, budget.warmup, budget.seconds)
        found = {}
        for concurrency in budget.concurrency:
            count = budget.count(concurrency)
            on_memory = await _cell(memory, concurrency, count, budget.seconds)
            on_database = (
                await _cell(database, concurrency, count, budget.seconds) if database else None
            )
            ours_cell = await _cell(ours, concurrency, count, budget.seconds)
            found[concurrency] = Row(ours_cell, on_memory, on_database)
        return found

    return asyncio.run(go())


async def _cell(
    measure: tuple[Target, Server], concurrency: int, count: int, seconds: float
) -> Cell:
    """One cell of ``measure``'s target, with its server's CPU."""
    target, server = measure
    return await run_load(target, concurrency, count, seconds, cpu=server.cpu_seconds)


def run_backend(
    server: Server,
    echoes: Echoes,
    backend: str,
    bearers: tuple[str, ...],
    budget: Budget,
    keys: list[str],
) -> dict[str, dict[int, Row]]:
    """Each of ``keys`` on ``server`` against both echoes (the card against the card route)."""
    from bench.perf.scenarios import governed_targets, reference_targets

    memory = reference_targets(echoes.memory.port, bearers)
    database = reference_targets(echoes.database.port, bearers)
    governed = governed_targets(server.port, server.base_url, bearers)
    measured = {}
    for key in keys:
        against = "card" if key == "card" else "send"
        on_database = None if key == "card" else (database[against], echoes.database)
        measured[key] = measure_rows(
            (governed[key], server), (memory[against], echoes.memory), on_database, budget
        )
        names = (f"{memory[against].name} (memory)", f"{database[against].name} (database)")
        for row in measured[key].values():
            print("\n".join(rows(backend, governed[key].name, names, row)), flush=True)
    return measured


def run_table(args: argparse.Namespace, workdir: Path) -> None:
    """The cells of each backend against both echoes, their targets, then the multi-process
    cell; one private PostgreSQL serves both PostgreSQL parts."""
    budget = Budget(args.requests, args.seconds, args.warmup, tuple(args.concurrency))
    tracing = args.sdk_tracing == "on"
    print(f"machine: {machine()}")
    print(
        f"a2a-sdk tracing wrappers: {'on (the default)' if tracing else 'off'}, the same for "
        f"every server; cells: up to {budget.requests} requests (c=1: a quarter) or "
        f"{budget.seconds:.0f} s, after {budget.warmup} warm-up requests"
    )
    postgres = Postgres()
    try:
        measured = run_cells(args, workdir, budget, postgres)
        print_targets(args, measured)
        if "postgresql" in args.backends and args.processes:
            run_processes(args, workdir, budget, postgres)
    finally:
        postgres.stop()


def run_cells(
    args: argparse.Namespace, workdir: Path, budget: Budget, postgres: Postgres
) -> dict[tuple[str, str], dict[int, Row]]:
    """Per backend: its agent, seeded, measured cell by cell against both echoes."""
    tracing = args.sdk_tracing == "on"
    echoes = Echoes(
        echo_server(workdir, tracing, "memory"), echo_server(workdir, tracing, "sqlite")
    )
    measured: dict[tuple[str, str], dict[int, Row]] = {}
    try:
        echoes.memory.start()
        echoes.database.start()
        for backend in args.backends:
            home = workdir / f"home-{backend}"
            bearers = tokens(home, args.caller, TARGET_CONCURRENCY)
            if backend == "sqlite":
                url = f"sqlite+aiosqlite:///{home / 'netagent.db'}"
            else:
                url = postgres.database(f"perf_{uuid.uuid4().hex[:8]}")
            server = agent_server(workdir, home, url, tracing, tree=args.agent_tree)
            keys = [k for k in CELLS[backend] if not args.only or k in args.only]
            try:
                server.start()
                print(f"\n{header()}")
                found = run_backend(server, echoes, backend, bearers, budget, keys)
            finally:
                server.stop()
            measured |= {(backend, key): cells for key, cells in found.items()}
    finally:
        echoes.memory.stop()
        echoes.database.stop()
    return measured


def print_targets(
    args: argparse.Namespace, measured: dict[tuple[str, str], dict[int, Row]]
) -> None:
    print(
        f"\nissue 17 targets at c={TARGET_CONCURRENCY} (one worker; each ratio against the "
        "reference cells taken just before ours; x db echo is shown, not judged)"
    )
    print(f"  {TARGETS_HEADER}")
    for goal in TARGETS:
        if goal.backend not in args.backends or (args.only and goal.key not in args.only):
            continue
        cells = measured.get((goal.backend, goal.key), {})
        print(f"  {target_line(goal, NAMES[goal.key], cells.get(TARGET_CONCURRENCY))}")


def run_processes(
    args: argparse.Namespace, workdir: Path, budget: Budget, postgres: Postgres
) -> None:
    from bench.perf.scaleout import report, run_scaleout

    print(
        f"\nmulti-process: N `netagent serve` replicas on one PostgreSQL "
        f"database, all on the servers' core; evaluate (Data Part), c={TARGET_CONCURRENCY} "
        "spread round robin; the control: the bare SDK's echo in N processes the same way, just "
        "before ours (bench/perf/scaleout.py)",
        flush=True,
    )
    scaled = run_scaleout(
        args.processes,
        postgres,
        workdir,
        args.caller,
        args.sdk_tracing == "on",
        (budget.requests, budget.seconds, budget.warmup),
        args.agent_tree,
    )
    for entry in report(scaled):
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
        "--only", nargs="+", choices=KEYS, metavar="KEY", help=f"measure only these: {KEYS}"
    )
    parser.add_argument(
        "--concurrency", nargs="+", type=int, default=[1, 32], help="the targets are at 32"
    )
    parser.add_argument(
        "--processes",
        nargs="*",
        type=int,
        default=[1, 2],
        metavar="N",
        help="the multi-process cell's replica counts on PostgreSQL; none: skip it",
    )
    parser.add_argument(
        "--sdk-tracing",
        choices=["on", "off"],
        default="on",
        help="off sets OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=false for every server",
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
    parser.add_argument(
        "--profile-gil",
        action="store_true",
        help="count only samples that hold the GIL (py-spy --gil): waiting for it is not work",
    )
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
