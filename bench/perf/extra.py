"""bench.perf's other modes: memory over many invocations, the large inventory, the profile."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path

from bench.perf.client import Cell, Target, run_load
from bench.perf.postgres import Postgres
from bench.perf.scenarios import governed_targets
from bench.perf.servers import Server, agent_server, netagent, tokens

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
        target = governed_targets(server.port, server.base_url, bearers)["evaluate"]
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
                *netagent(),
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
            # The large seed samples hourly: its window holds fewer records than the demo's.
            targets = governed_targets(server.port, server.base_url, bearers, None)
            figures[name] = {
                key: _p50_cells(targets[key], max(50, args.requests // 4), args.seconds)
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

    The backend is the first of ``--backends`` (sqlite or postgresql). Writes
    DIR/<backend>-evaluate.svg (flame graph) and DIR/<backend>-evaluate.txt (collapsed
    stacks), then prints where the samples fall: own time of the hottest functions, and the
    share of samples under a few functions that matter (inclusive).
    """
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed: .venv/bin/pip install py-spy")
    out: Path = args.profile
    out.mkdir(parents=True, exist_ok=True)
    backend = args.backends[0]
    postgres = Postgres()
    if backend == "sqlite":
        server, bearers = _sqlite_server(args, workdir)
    else:  # the replica-safe configuration: tasks and inventory on PostgreSQL
        home = workdir / "home-postgresql"
        bearers = tokens(home, args.caller, 32)
        url = postgres.database(f"profile_{uuid.uuid4().hex[:8]}")
        tracing = args.sdk_tracing == "on"
        server = agent_server(workdir, home, url, tracing, tree=args.agent_tree).start()
    key = args.profile_target
    try:
        target = governed_targets(server.port, server.base_url, bearers)[key]
        asyncio.run(run_load(target, 8, args.warmup, 60))
        stem = out / f"{backend}-{key}"
        seconds = int(args.seconds)
        command = [spy, "record", "-p", str(server.pid), "-r", str(PROFILE_RATE)]
        command += ["--gil", "-d"] if args.profile_gil else ["-d"]
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
        postgres.stop()
    print(
        f"profiled {target.name} at c={args.profile_concurrency}: {cell.rps:.1f} req/s, "
        f"p50 {cell.quantile(0.5):.1f} ms"
    )
    summarize_stacks(Path(f"{stem}.txt"), cell.ok)


LEAF_KINDS = (  # (label, substrings of the innermost frame's file), first match wins
    ("event loop idle (epoll wait)", ("selectors.py",)),
    ("JWT / ECDSA (PyJWT, cryptography)", ("jwt/", "cryptography/")),
    ("JSON Schema validation", ("jsonschema/", "referencing/", "rfc3339")),
    ("protobuf <-> dict/JSON", ("protobuf/",)),
    ("SQLAlchemy (statements, ORM, pool)", ("sqlalchemy/",)),
    ("DB driver (aiosqlite / asyncpg)", ("aiosqlite/", "asyncpg/")),
    ("json encode/decode", ("json/",)),
    (
        "tracing wrappers (a2a-sdk, OpenTelemetry)",
        ("opentelemetry/", "a2a/utils/telemetry.py", "trace/", "_decorator.py", "context/"),
    ),
    (
        "asyncio machinery",
        ("asyncio/", "aiologic/", "contextlib.py", "threading.py", "<frozen abc>", "copy.py"),
    ),
    ("HTTP: uvicorn, h11, Starlette, FastAPI", ("uvicorn/", "h11/", "starlette/", "fastapi/")),
    ("a2a-sdk (handler, tasks, events)", ("a2a/",)),
    ("text routing (scikit-learn, numpy)", ("sklearn/", "numpy/", "scipy/")),
    ("this project (agent/, db/, skills/)", ("agent/", "db/", "skills/")),
)
STAGES = (  # (label, a frame that marks the stage), the innermost marked frame wins
    ("edge: bearer token check", "BearerAuthMiddleware._authenticated"),
    # JSON-RPC SendMessage's straight path (agent/edge/jsonrpc_send.py) runs inside the bearer
    # check's frame: its parse and answer are counted here, not as the token check
    ("JSON-RPC straight path (parse, answer)", "SendMessageRoute.endpoint"),
    ("pre-task checks + routing", "GovernedRequestHandler._precheck"),
    ("tool calls: token exchange", "LocalTokenExchanger.exchange"),
    ("tool calls: gate (verify, query)", "InventoryGate.call"),
    ("audit rows", "AuditLog."),
    ("input/output/record validation", "error_details"),
    ("skill run (handler, emitting)", "SkillExecutor._run_decision"),
    ("task store writes (SDK)", "TaskManager._save_task"),
    ("task store reads (SDK)", "TaskManager.get_task"),
    ("SDK events and task machinery", "ActiveTask"),
    ("JSON-RPC dispatch + response", "JsonRpcDispatcher"),
    ("middleware + HTTP", "Starlette.__call__"),
)


def _on_loop(frames: list[str]) -> bool:
    # asyncio's loop shows run_forever and Handle._run; uvloop's (C) shows neither, its
    # callbacks sit right under asyncio's Runner.run
    return any("run_forever" in f or "Handle._run" in f or "Runner.run" in f for f in frames)


def summarize_stacks(path: Path, requests: int) -> None:
    """Where the event-loop thread spends its samples, from py-spy's collapsed stacks
    (``frame;frame N``): by the kind of code at the top of the stack, and by the stage of the
    request the stack is in. Worker threads (aiosqlite's) are left out: they mostly wait."""
    kinds: Counter[str] = Counter()
    stages: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for row in path.read_text().splitlines():
        stack, _, count = row.rpartition(" ")
        frames, n = stack.split(";"), int(count)
        if not _on_loop(frames):
            continue
        total += n
        own[frames[-1]] += n
        leaf = frames[-1]
        kinds[next((k for k, marks in LEAF_KINDS if any(m in leaf for m in marks)), "other")] += n
        stage = "other (loop bookkeeping)"
        for frame in reversed(frames):
            found = next((label for label, mark in STAGES if mark in frame), None)
            if found is not None:
                stage = found
                break
        stages[stage] += n
    busy = total - kinds["event loop idle (epoll wait)"]
    print(
        f"{total} event-loop samples at {PROFILE_RATE}/s over {requests} requests: "
        f"{busy / PROFILE_RATE / max(requests, 1) * 1000:.2f} ms of loop time per request"
    )
    for title, counter in (("by kind of code (innermost frame)", kinds), ("by stage", stages)):
        print(f"\n{title}:")
        for label, n in counter.most_common():
            print(
                f"  {n / total:6.1%}  {n / PROFILE_RATE / max(requests, 1) * 1000:6.2f} ms  {label}"
            )
    print("\nown time, top 20:")
    for frame, n in own.most_common(20):
        print(f"  {n / total:6.1%}  {frame[:140]}")
