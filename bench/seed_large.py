"""Measure seeding: ``python bench/seed_large.py [--scale large] [--links N]``.

Seeds into a fresh temporary SQLite file (migrated with Alembic first) and
prints the elapsed time, row counts and database size. A measurement, not a
test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sqlite3
import tempfile
import time
from pathlib import Path

from agent.storage.engine import make_engine
from db.migrate import upgrade
from db.scales import resolve_profile
from db.simulator import seed


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="large", choices=["small", "medium", "large"])
    parser.add_argument("--links", type=int, default=None, help="override the link count")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path, default=None, help="where to put the temp file")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    parser.add_argument("--progress", action="store_true", help="show a progress bar")
    return parser.parse_args()


def mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB"


async def run(args: argparse.Namespace, path: Path) -> None:
    url = f"sqlite+aiosqlite:///{path}"
    profile = resolve_profile(args.scale, args.links)
    print(f"profile   {profile.summary()}")
    print(
        f"machine   {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, SQLite {sqlite3.sqlite_version}"
    )
    print(f"database  {path}")
    started = time.perf_counter()
    await upgrade(url)
    engine = make_engine(url)
    try:
        report = await seed(
            engine, scale=args.scale, links=args.links, seed=args.seed, progress=args.progress
        )
        async with engine.connect() as conn:
            await conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        await engine.dispose()
    total = time.perf_counter() - started
    print(f"seed()    {report.elapsed_s:,.1f} s  (with migrations: {total:,.1f} s)")
    width = max(len(name) for name in report.counts)
    for name, rows in report.counts.items():
        print(f"  {name:<{width}}  {rows:>12,}")
    print(f"  {'total rows':<{width}}  {report.total_rows:>12,}")
    print(f"  {'samples':<{width}}  {report.samples:>12,}")
    print(f"rate      {report.total_rows / report.elapsed_s:,.0f} rows/s")
    files = [p for p in path.parent.glob(path.name + "*") if p.is_file()]
    print(
        f"size      {mib(sum(p.stat().st_size for p in files))} "
        f"({', '.join(f'{p.name}={mib(p.stat().st_size)}' for p in sorted(files))})"
    )


def main() -> None:
    args = parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="netops-bench-", dir=args.dir))
    path = workdir / "netagent.db"
    try:
        asyncio.run(run(args, path))
    finally:
        if not args.keep:
            for leftover in workdir.iterdir():
                leftover.unlink()
            workdir.rmdir()


if __name__ == "__main__":
    main()
