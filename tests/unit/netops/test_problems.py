"""How the console's "what is wrong now" page dates a condition and says how long ago."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from db.records import UtilizationSampleRecord
from netops.problems import ago, condition_start

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def sample(minutes_ago: int, direction: str, ratio: float) -> UtilizationSampleRecord:
    capacity = 10**10
    used = round(ratio * capacity) if ratio >= 0 else 0
    return {
        "link_id": "l",
        "direction": direction,
        "observed_at": NOW - timedelta(minutes=minutes_ago),
        "interval_s": 300,
        "utilized_bps": used,
        "available_bps": 0 if ratio < 0 else capacity - used,
        "utilization_ratio": max(ratio, 0.0),
        "capacity_bps": capacity,
    }


def test_a_hot_stretch_starts_at_its_first_sample_over_the_threshold_in_either_direction() -> None:
    samples = [sample(m, "a_to_b", r) for m, r in ((20, 0.5), (15, 0.85), (10, 0.2), (5, 0.9))]
    samples += [sample(m, "b_to_a", r) for m, r in ((20, 0.1), (15, 0.1), (10, 0.81), (5, 0.1))]
    assert condition_start(samples, "hot") == (NOW - timedelta(minutes=15), False)


def test_a_condition_over_the_whole_window_says_so_and_none_holding_is_no_start() -> None:
    down = [sample(m, d, -1) for m in (15, 10, 5) for d in ("a_to_b", "b_to_a")]
    assert condition_start(down, "down") == (NOW - timedelta(minutes=15), True)
    assert condition_start(down, "hot") == (None, False)
    assert condition_start([], "down") == (None, False)
    # down means nothing available either way: one direction carrying breaks the stretch
    half = [*down[:-1], sample(5, "b_to_a", 0.3)]
    assert condition_start(half, "down") == (None, False)


def test_ago_reads_as_a_person_says_it() -> None:
    assert ago(NOW - timedelta(minutes=55), NOW) == "55 min"
    assert ago(NOW - timedelta(hours=2), NOW) == "2 h"
    assert ago(NOW - timedelta(hours=1, minutes=55), NOW) == "1 h 55 min"
    assert ago(NOW - timedelta(days=3, hours=4), NOW) == "3 d 4 h"
    assert ago(NOW + timedelta(minutes=5), NOW) == "0 min"


def test_direction_stats_read_both_directions_in_bit_per_second_and_percent() -> None:
    from netops.topology import direction_stats, percentile

    assert percentile(list(range(1, 101)), 0.95) == 95
    assert percentile([7], 0.95) == 7
    samples = [sample(m, "a_to_b", m / 100) for m in range(5, 101, 5)]
    samples += [sample(m, "b_to_a", 0.1) for m in range(5, 101, 5)]
    header, a_to_b, b_to_a = direction_stats(samples, 10**10)
    assert header == ("Direction", "Now", "95th percentile", "Peak", "Mean")
    assert a_to_b == (
        "a to b",
        "500 Mbit/s (5.0 %)",  # the newest sample, 5 minutes ago
        "9.5 Gbit/s (95.0 %)",
        "10 Gbit/s (100.0 %)",
        "5.25 Gbit/s (52.5 %)",
    )
    assert b_to_a[1:] == ("1 Gbit/s (10.0 %)",) * 4
    assert direction_stats([], 10**10) == []
