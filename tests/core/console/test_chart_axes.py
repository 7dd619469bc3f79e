"""The utilization chart's time axis and hover slices (agent/console/topology.py), and the
busiest-now list, for any window."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent.console.topology import (
    CHART_PAD,
    CHART_WIDTH,
    MAX_TICKS,
    Edge,
    Series,
    busiest_now,
    hover_bands,
    time_ticks,
)

UNTIL = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "window",
    [timedelta(minutes=7), timedelta(hours=1), timedelta(hours=6), timedelta(days=1),
     timedelta(days=7), timedelta(days=30)],
)  # fmt: skip
def test_ticks_are_round_inside_the_plot_and_few(window: timedelta) -> None:
    ticks = time_ticks(UNTIL - window, UNTIL)
    assert 1 <= len(ticks) <= MAX_TICKS + 1 or window > timedelta(days=8)
    xs = [x for x, _ in ticks]
    assert xs == sorted(xs)
    assert all(CHART_PAD - 0.01 <= x <= CHART_WIDTH - CHART_PAD + 0.01 for x in xs)
    assert all(" " in label or int(label[-2:]) % 5 == 0 for _, label in ticks)


def test_a_seven_day_window_ticks_each_midnight() -> None:
    labels = [label for _, label in time_ticks(UNTIL - timedelta(days=7), UNTIL)]
    assert labels == ["Nov 23", "Nov 24", "Nov 25", "Nov 26", "Nov 27", "Nov 28", "Nov 29"]


def test_each_slice_names_each_series_highest_value_in_it() -> None:
    since = UNTIL - timedelta(hours=1)
    a = Series("a to b", [(since + timedelta(minutes=m), m / 100) for m in range(0, 61, 5)])
    b = Series("b to a", [(since + timedelta(minutes=30), 0.5)])
    bands = hover_bands([a, b], since, UNTIL, count=4)
    assert len(bands) == 4
    assert bands[0][2] == "2026-11-29 11:00 to 11:15: a to b 10.0 %"
    assert bands[2][2] == "2026-11-29 11:30 to 11:45: a to b 40.0 %, b to a 50.0 %"
    assert bands[3][2].endswith("a to b 60.0 %")  # the sample at the window's end counts
    assert hover_bands([], since, UNTIL) == []


def test_busiest_now_leaves_out_unknown_and_idle_and_orders_by_load() -> None:
    def edge(name: str, ratio: float | None, status: str = "connected") -> Edge:
        return Edge(name, "x", "y", name, status, ratio)

    edges = [
        edge("a", 0.2),
        edge("b", 0.9),
        edge("c", None),
        edge("d", 0.9),
        edge("e", 0.0, "down"),
    ]
    assert [e.id for e in busiest_now(edges)] == ["b", "d", "a"]
    assert [e.id for e in busiest_now(edges, count=1)] == ["b"]
