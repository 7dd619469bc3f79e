"""bench.perf's other modes: memory over many invocations, the large inventory, the profile."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bench.perf.client import Cell, Target, run_load
from bench.perf.scenarios import governed_targets
from bench.perf.servers import Server, agent_server, tokens

PROFILE_RATE = 250  # samples per second


def _sqlite_server(
    args: argparse.Namespace, workdir: Path, name: str = "home-sqlite"
) -> tuple[Server, tuple[str, ...]]:
    home = workdir / name
    bearers = tokens(home, args.caller, 32)
    url = f"sqlite+aiosqlite:///{home / 'netagent.db'}"
    server = agent_server(workdir, home, url, args.sdk_tracing == "on", tree=args.agent_tree)
    return server.start(), bearers


def run_memory(args: argparse.Namespace, workdir: Path) -> None:
    """RSS of `netagent serve` (SQLite) over N governed invocations at concurrency 32.

    VmRSS is read from /proc/<pid>/status after the warm-up and every N/10 invocations; the
    figure that matters is the last reading against the first one after warm-up.
    """
    total = args.memory
    server, bearers = _sqlite_server(args, workdir)
    try:
        target = governed_targets(server.port, server.base_url, bearers)["evaluate"][0]
        asyncio.run(run_load(target, 32, 2000, 120))  # warm: caches, pools, allocator arenas
        readings: list[tuple[int, int, float]] = [(0, server.rss_kib(), 0.0)]
        step = max(1, total // 10)
        started = time.perf_counter()

        def sample(done: int) -> None:
            if done % step == 0:
                readings.append((done, server.rss_kib(), time.perf_counter() - started))

        cell = asyncio.run(run_load(target, 32, total, 3600, on_sample=sample))
        readings.append((cell.ok + cell.errors, server.rss_kib(), time.perf_counter() - started))
    finally:
        server.stop()
    base = readings[0][1]
    print(f"memory: {total} evaluate_resource_condition invocations (Data Part), c=32, SQLite")
    print(f"{'invocations':>12}{'VmRSS MiB':>11}{'vs first':>10}{'elapsed s':>11}")
    for done, rss, elapsed in readings:
        print(f"{done:>12}{rss / 1024:>11.1f}{(rss - base) / base:>+10.1%}{elapsed:>11.0f}")
    growth = (readings[-1][1] - base) / base
    print(
        f"{cell.ok} completed, {cell.errors} errors, {cell.rps:.0f} req/s; RSS growth "
        f"{growth:+.1%} after warm-up: {'flat (within 10%)' if abs(growth) <= 0.10 else 'NOT flat'}"
    )


def _p50_cells(target: Target, count: int, seconds: float) -> Cell:
    async def go() -> Cell:
        await run_load(target, 4, 50, seconds)
        return await run_load(target, 1, count, seconds)

    return asyncio.run(go())


def run_scale(args: argparse.Namespace, workdir: Path) -> None:
    """p50 (c=1) of evaluate and check_link_capacity on the demo data and on the large seed."""
    from bench.perf.plans import print_plans

    large = args.large_db
    seeded_here = large is None
    if seeded_here:
        large = workdir / "large" / "netagent.db"
        large.parent.mkdir()
        print("seeding --scale large into a temporary SQLite file (about 2-3 minutes)...")
        subprocess.run(
            [
                str(Path(sys.executable).parent / "netagent"),
                "seed",
                "--scale",
                "large",
                "--database-url",
                f"sqlite:///{large}",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    figures: dict[str, dict[str, Cell]] = {}
    for name, url in (
        ("demo", None),
        ("large", f"sqlite+aiosqlite:///{large}"),
    ):
        home = workdir / f"home-{name}"
        bearers = tokens(home, args.caller, 32)
        url = url or f"sqlite+aiosqlite:///{home / 'netagent.db'}"
        server = agent_server(workdir, home, url, args.sdk_tracing == "on", seed=name == "demo")
        server.start()
        try:
            targets = governed_targets(server.port, server.base_url, bearers)
            figures[name] = {
                key: _p50_cells(targets[key][0], max(50, args.requests // 4), args.seconds)
                for key in ("evaluate", "capacity")
            }
        finally:
            server.stop()
        for key, cell in figures[name].items():
            print(
                f"{name:<6}{key:<10} c=1 p50 {cell.quantile(0.5):7.2f} ms  "
                f"p99 {cell.quantile(0.99):7.2f} ms  n={cell.ok} errors={cell.errors}"
                + (f" first: {cell.first_error[:200]}" if cell.errors else "")
            )
    for key in ("evaluate", "capacity"):
        ratio = figures["large"][key].quantile(0.5) / figures["demo"][key].quantile(0.5)
        verdict = "met" if ratio <= 2 else "MISSED"
        print(f"large/demo p50 {key:<10} {ratio:5.2f}x (target <= 2x): {verdict}")
    print()
    asyncio.run(print_plans(f"sqlite+aiosqlite:///{large}"))
    if seeded_here:
        shutil.rmtree(large.parent, ignore_errors=True)


def run_profile(args: argparse.Namespace, workdir: Path) -> None:
    """py-spy record on the server while it serves one target (default: the worked example).

    Writes DIR/<backend>-evaluate.svg (flame graph) and DIR/<backend>-evaluate.txt (collapsed
    stacks), then prints where the samples fall: own time of the hottest functions, and the
    share of samples under a few functions that matter (inclusive).
    """
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed: .venv/bin/pip install py-spy")
    out: Path = args.profile
    out.mkdir(parents=True, exist_ok=True)
    server, bearers = _sqlite_server(args, workdir)
    key = args.profile_target
    try:
        target = governed_targets(server.port, server.base_url, bearers)[key][0]
        asyncio.run(run_load(target, 8, args.warmup, 60))
        stem = out / f"sqlite-{key}"
        seconds = int(args.seconds)
        command = [spy, "record", "-p", str(server.pid), "-r", str(PROFILE_RATE), "-d"]
        raw = subprocess.Popen(
            [*command, str(seconds), "-f", "raw", "-o", f"{stem}.txt"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(1)
        cell = asyncio.run(run_load(target, args.profile_concurrency, 10**6, seconds - 2))
        raw.wait(timeout=60)
    finally:
        server.stop()
    print(
        f"profiled {target.name} at c={args.profile_concurrency}: {cell.rps:.1f} req/s, "
        f"p50 {cell.quantile(0.5):.1f} ms"
    )
    summarize_stacks(Path(f"{stem}.txt"), cell.ok)


def summarize_stacks(path: Path, requests: int) -> None:
    """Own and inclusive sample shares from py-spy's collapsed stacks (``frame;frame N``)."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for row in path.read_text().splitlines():
        stack, _, count = row.rpartition(" ")
        n = int(count)
        frames = stack.split(";")
        total += n
        own[frames[-1]] += n
        for frame in set(frames):
            inclusive[frame] += n
    print(f"{total} samples at {PROFILE_RATE}/s over {requests} requests")
    print("\nown time (top 25):")
    for frame, n in own.most_common(25):
        print(f"  {n / total:6.1%}  {frame[:150]}")
    print("\ninclusive (top 60):")
    for frame, n in inclusive.most_common(60):
        print(f"  {n / total:6.1%}  {frame[:150]}")
