"""The performance targets, and what one run's figures say about each (met, missed, or not valid).

Every target is a ratio against the bare in-memory echo's SendMessage at c=32, measured in the
same run, seconds before ours. A cell with any answer that did not count (bench/perf/answers.py)
gets no verdict: its figures would credit failures as throughput or lose them from the p99.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bench.perf.client import Cell

TARGET_CONCURRENCY = 32


@dataclass(frozen=True)
class Goal:
    """Ours at least ``rps`` times the in-memory echo's req/s (and, if set, a p99 at most
    ``p99`` times the echo's), one worker, c=32."""

    backend: str
    key: str
    rps: float
    p99: float | None = None

    @property
    def wording(self) -> str:
        return f">= {self.rps}x" + ("" if self.p99 is None else f", p99 <= {self.p99}x")


TARGETS = (
    Goal("sqlite", "evaluate", 1.5, p99=1.0),
    Goal("sqlite", "text", 1.2),
    Goal("sqlite", "stream", 1.0),
    Goal("sqlite", "describe", 2.5),
    Goal("sqlite", "capacity", 0.8),
    Goal("postgresql", "evaluate", 0.8),
    Goal("postgresql", "capacity", 0.5),
)


@dataclass
class Row:
    """One governed cell and the reference cells taken just before it."""

    ours: Cell
    memory: Cell
    """The bare echo on the SDK's InMemoryTaskStore (the same request kind)."""
    database: Cell | None = None
    """The bare echo on the SDK's DatabaseTaskStore over aiosqlite (None: not measured)."""


def ratio(ours: float, reference: float) -> float:
    """ours / reference, NaN when either is missing or the reference is zero."""
    if math.isnan(ours) or math.isnan(reference) or reference == 0:
        return float("nan")
    return ours / reference


def judge(goal: Goal, row: Row) -> str:
    """met / MISSED by req/s (and p99), or why there is no verdict."""
    errors = row.ours.errors + row.memory.errors
    if errors:
        return f"NO VERDICT: {errors} answers did not count"
    if not row.ours.ok or not row.memory.ok:
        return "NO VERDICT: nothing answered"
    missed = []
    if not ratio(row.ours.rps, row.memory.rps) >= goal.rps:
        missed.append("req/s")
    p99 = ratio(row.ours.quantile(0.99), row.memory.quantile(0.99))
    if goal.p99 is not None and not p99 <= goal.p99:
        missed.append("p99")
    return "met" if not missed else "MISSED (" + ", ".join(missed) + ")"


def by_cpu(goal: Goal, row: Row) -> str:
    """The same bound on server CPU per request (echo's / ours): on a busy machine the closer
    estimate of what an idle one would show as throughput."""
    capacity = ratio(row.memory.cpu_ms, row.ours.cpu_ms)
    if math.isnan(capacity):
        return "-"
    return f"{capacity:.2f}x " + ("met" if capacity >= goal.rps else "MISSED")
