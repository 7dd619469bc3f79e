"""The multi-process cell judges what ours grows beyond the bare SDK's own growth (issue 17).

The verdict is arithmetic on measured cells; these cells are built by hand so that each case
sits on a known side of the 10 % bound.
"""

from __future__ import annotations

import pytest

from bench.perf.client import Cell
from bench.perf.scaleout import Scaled, growth_verdict, report


def cell(cpu_ms: float, requests: int = 1000, errors: int = 0) -> Cell:
    done = Cell(32, latencies=[0.01] * requests, elapsed=5.0, errors=errors)
    done.server_cpu = cpu_ms * (requests + errors) / 1000
    return done


def scaled(n: int, ours_ms: float, echo_ms: float | None, errors: int = 0) -> Scaled:
    echo = None if echo_ms is None else cell(echo_ms)
    return Scaled(n, cell(ours_ms, errors=errors), 1.0, echo)


@pytest.mark.parametrize(
    ("ours_2", "echo_2", "met"),
    [
        (4.39, 8.0, True),  # ours +9.75 %, echo +0 %: just within
        (4.6, 8.0, False),  # ours +15 %, echo +0 %
        (5.2, 9.6, True),  # ours +30 %, echo +20 %: +8.3 % beyond it
        (5.4, 9.6, False),  # ours +35 %, echo +20 %: +12.5 % beyond it
        (3.8, 8.0, True),  # ours fell
    ],
)
def test_growth_is_judged_beyond_the_echos(ours_2: float, echo_2: float, met: bool) -> None:
    verdict = growth_verdict(scaled(1, 4.0, 8.0), scaled(2, ours_2, echo_2))
    assert ("met" in verdict and "MISSED" not in verdict) is met, verdict
    assert "beyond the bare SDK" in verdict


def test_without_the_control_the_raw_growth_is_judged() -> None:
    assert "MISSED" in growth_verdict(scaled(1, 4.0, None), scaled(2, 4.6, None))
    assert "met" in growth_verdict(scaled(1, 4.0, None), scaled(2, 4.3, None))


def test_an_answer_that_did_not_count_gives_no_verdict() -> None:
    verdict = growth_verdict(scaled(1, 4.0, 8.0), scaled(2, 4.0, 8.0, errors=1))
    assert verdict.startswith("NO VERDICT")


def test_the_report_prints_both_servers_and_the_verdict_per_n() -> None:
    lines = report([scaled(1, 4.0, 8.0), scaled(2, 5.2, 9.6)])
    assert [line.split()[1] for line in lines[1:3]] == ["ours", "echo"]
    assert "+30.0%" in lines[3] and "+20.0%" in lines[4]
    assert "N=2" in lines[5] and "+8.3%" in lines[5] and "met" in lines[5]
