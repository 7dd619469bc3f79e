"""How bench.perf prints its figures: one row per cell, then the targets, one line each."""

from __future__ import annotations

import math
from pathlib import Path

from bench.perf.client import Cell
from bench.perf.targets import TARGET_CONCURRENCY, Goal, Row, by_cpu, judge, ratio

WIDTHS = (11, 30, 3, 9, 9, 9, 5, 8)
GROUP = 7 + 7 + 7  # x req/s, x p99, x cpu


def fmt(value: float, digits: int = 1) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def header() -> str:
    lead = sum(WIDTHS)
    groups = f"{'| vs in-memory echo':<{GROUP + 2}}{'| vs DatabaseTaskStore echo':<{GROUP + 2}}"
    names = (
        f"{'backend':<11}{'what':<30}{'c':>3}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'err':>5}"
        f"{'cpu ms':>8}"
    )
    ratios = f"{'x req/s':>7}{'x p99':>7}{'x cpu':>7}"
    return f"{' ' * lead}{groups}\n{names}  {ratios}  {ratios}  load"


def _ratios(cell: Cell, ref: Cell | None) -> str:
    """ours / ref for req/s and p99 (lower is better), ref / ours for CPU per request."""
    if ref is None:
        return " " * GROUP
    return (
        f"{fmt(ratio(cell.rps, ref.rps), 2):>7}"
        f"{fmt(ratio(cell.quantile(0.99), ref.quantile(0.99)), 2):>7}"
        f"{fmt(ratio(ref.cpu_ms, cell.cpu_ms), 2):>7}"
    )


def line(backend: str, name: str, cell: Cell, refs: tuple[Cell | None, Cell | None] | None) -> str:
    """One cell; ``refs`` (in-memory echo, DatabaseTaskStore echo) adds the ratio columns."""
    memory, database = refs if refs is not None else (None, None)
    return (
        f"{backend:<11}{name:<30}{cell.concurrency:>3}{fmt(cell.rps):>9}"
        f"{fmt(cell.quantile(0.5), 2):>9}{fmt(cell.quantile(0.99), 2):>9}{cell.errors:>5}"
        f"{fmt(cell.cpu_ms, 2):>8}  {_ratios(cell, memory)}  {_ratios(cell, database)}  {load()}"
    )


def rows(backend: str, ours: str, references: tuple[str, str | None], row: Row) -> list[str]:
    """The reference cells, then ours against both."""
    found = [line("  ref mem", references[0], row.memory, None)]
    if row.database is not None and references[1] is not None:
        found.append(line("  ref db", references[1], row.database, None))
    found.append(line(backend, ours, row.ours, (row.memory, row.database)))
    for label, cell in (("ours", row.ours), ("ref mem", row.memory), ("ref db", row.database)):
        if cell is not None and cell.errors:
            found.append(
                f"   ! {label} {ours if label == 'ours' else ''} c={cell.concurrency}: "
                f"{cell.errors} answers did not count, first: {cell.first_error}"
            )
    return found


TARGETS_HEADER = (
    f"{'backend':<11}{'cell':<25}{'x mem echo':>11}{'x db echo':>11}{'p99 x mem':>11}"
    f"{'err':>6}   {'target':<22}{'verdict':<30}by server CPU"
)


def target_line(goal: Goal, name: str, row: Row | None) -> str:
    """One target: the ratios of its c=32 cell and the verdict, or why there is none."""
    lead = f"{goal.backend:<11}{name:<25}"
    if row is None:
        return f"{lead}{'not measured at c=' + str(TARGET_CONCURRENCY):<49}   {goal.wording}"
    database = row.database
    errors = row.ours.errors + row.memory.errors + (database.errors if database else 0)
    return (
        f"{lead}{fmt(ratio(row.ours.rps, row.memory.rps), 2):>11}"
        f"{fmt(ratio(row.ours.rps, database.rps) if database else math.nan, 2):>11}"
        f"{fmt(ratio(row.ours.quantile(0.99), row.memory.quantile(0.99)), 2):>11}"
        f"{errors:>6}   {goal.wording:<22}{judge(goal, row):<30}{by_cpu(goal, row)}"
    )
