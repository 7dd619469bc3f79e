"""Deterministic synthetic telemetry: link utilisation and device metrics.

Everything is drawn from one ``random.Random`` in a fixed order, and all
timestamps are anchored on ``until``, so the same seed and ``until`` always
yield the same rows. Rows are produced lazily; the large profile never holds
its samples in memory.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from db.choices import (
    METRIC_UNITS,
    DeviceStatus,
    Direction,
    LinkStatus,
    MetricName,
    MetricUnit,
)
from db.scales import HOUR, ScaleProfile
from db.topology import WORKED_EXAMPLE_RESOURCE_ID, Row, Special, Topology

NORMAL_MAX_RATIO = 0.75
"""Ordinary links never exceed this, so only the designated ones look hot."""
HOT_WINDOW_S = 2 * HOUR
DOWN_WINDOW_S = 1 * HOUR
MIN_CONDITION_SAMPLES = 3
"""Hot and down stretches last at least this many samples (">= 3 consecutive" checks)."""
ERROR_WINDOW_S = 6 * HOUR
"""Interface errors climb for this long before the down link fails."""

WORKED_EXAMPLE_AT = datetime(2026, 8, 11, 12, 0, 1, tzinfo=UTC)
WORKED_EXAMPLE_VALUE = 42.0
WORKED_EXAMPLE_HISTORY = 12
"""The documented example: hourly utilization samples ending 42 percent at 12:00:01Z."""

_TWO_PI = 2 * math.pi


def floor_time(moment: datetime, step_s: int) -> datetime:
    """Round ``moment`` down to a multiple of ``step_s`` since the epoch (UTC)."""
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % step_s, tz=UTC)


def timeline(until: datetime, interval_s: int, samples: int) -> list[datetime]:
    """``samples`` timestamps, oldest first, the last one exactly ``until``."""
    step = timedelta(seconds=interval_s)
    return [until - step * k for k in range(samples - 1, -1, -1)]


def diurnal(moments: list[datetime], utc_offset_h: float) -> list[float]:
    """Daily sine in -1..1, peaking at 14:00 local time and bottoming at 02:00."""
    return [
        math.sin(_TWO_PI * ((m.timestamp() / HOUR + utc_offset_h - 8) % 24) / 24) for m in moments
    ]


def tail_length(window_s: int, interval_s: int, total: int) -> int:
    """How many trailing samples cover ``window_s`` (at least the condition minimum)."""
    return min(total, max(MIN_CONDITION_SAMPLES, math.ceil(window_s / interval_s)))


@dataclass(slots=True)
class LinkTelemetry:
    """Both directions of every non-planned link, one sample per interval up to ``until``."""

    topology: Topology
    profile: ScaleProfile
    until: datetime

    def links(self) -> list[Row]:
        """Links that carry traffic samples (planned links have none yet)."""
        return [row for row in self.topology.links if row["status"] != LinkStatus.PLANNED]

    def count(self) -> int:
        """Rows ``rows()`` will yield, for progress reporting."""
        return len(self.links()) * len(Direction) * self.profile.link_samples_per_direction()

    def rows(self, rng: random.Random) -> Iterator[Row]:
        """Samples in primary-key order (link, direction, time), which SQLite inserts fastest."""
        interval = self.profile.link_interval_s
        moments = timeline(self.until, interval, self.profile.link_samples_per_direction())
        total = len(moments)
        hot_from = total - tail_length(HOT_WINDOW_S, interval, total)
        down_from = total - tail_length(DOWN_WINDOW_S, interval, total)
        curves: dict[float, list[float]] = {}
        for link in self.links():
            offset = self.topology.link_offset_h[link["id"]]
            curve = curves.get(offset) or curves.setdefault(offset, diurnal(moments, offset))
            special = self.topology.special.get(link["id"])
            capacity: int = link["capacity_bps"]
            for direction in Direction:
                base = rng.uniform(0.10, 0.40)
                swing = rng.uniform(0.05, 0.20)
                noise = 0.02
                if special is Special.DECOMMISSIONING:  # drained ahead of removal
                    base, swing, noise = base / 20, swing / 20, noise / 20
                hot = special is Special.HOT and direction is Direction.A_TO_B
                for k, moment in enumerate(moments):
                    if special is Special.DOWN and k >= down_from:
                        utilized = available = 0
                        ratio = 0.0
                    else:
                        if hot and k >= hot_from:
                            raw = min(0.98, max(0.81, rng.gauss(0.89, 0.03)))
                        else:
                            raw = base + swing * curve[k] + rng.gauss(0.0, noise)
                            raw = min(NORMAL_MAX_RATIO, max(0.0, raw))
                        ratio = round(raw, 4)
                        utilized = round(ratio * capacity)
                        available = capacity - utilized
                    yield {
                        "link_id": link["id"],
                        "direction": direction.value,
                        "observed_at": moment,
                        "interval_s": interval,
                        "utilized_bps": utilized,
                        "available_bps": available,
                        "utilization_ratio": ratio,
                    }


@dataclass(slots=True)
class MetricTelemetry:
    """Device utilization/cpu/memory series, interface errors, and the worked example."""

    topology: Topology
    profile: ScaleProfile
    until: datetime

    def devices(self) -> list[Row]:
        """Deployed devices; planned ones have nothing to report yet."""
        return [row for row in self.topology.devices if row["status"] != DeviceStatus.PLANNED]

    def error_interfaces(self) -> list[Row]:
        """Both ends of the down link: their error counters tell the story of its failure."""
        down = [
            link
            for link in self.topology.links
            if self.topology.special.get(link["id"]) is Special.DOWN
        ]
        wanted = {link[end] for link in down for end in ("a_interface_id", "b_interface_id")}
        return [row for row in self.topology.interfaces if row["id"] in wanted]

    def count(self) -> int:
        """Rows ``rows()`` will yield, for progress reporting."""
        per_series = self.profile.metric_samples_per_series()
        devices = self.devices()
        series = len(devices) * 3 + len(self.error_interfaces())
        example = any(d["resource_id"] == WORKED_EXAMPLE_RESOURCE_ID for d in devices)
        if example:
            series -= 1
        return series * per_series + (WORKED_EXAMPLE_HISTORY if example else 0)

    def rows(self, rng: random.Random) -> Iterator[Row]:
        """Device series first, then interface errors, each oldest sample first."""
        interval = self.profile.metric_interval_s
        moments = timeline(
            floor_time(self.until, interval), interval, self.profile.metric_samples_per_series()
        )
        weekly = [math.sin(_TWO_PI * m.timestamp() / (7 * 24 * HOUR)) for m in moments]
        curves: dict[float, list[float]] = {}
        for device in self.devices():
            offset = self.topology.device_offset_h[device["id"]]
            curve = curves.get(offset) or curves.setdefault(offset, diurnal(moments, offset))
            resource, tenant_id = device["resource_id"], device["tenant_id"]
            if resource == WORKED_EXAMPLE_RESOURCE_ID:
                yield from self._worked_example(rng, tenant_id)
            else:
                base, swing = rng.uniform(20, 50), rng.uniform(10, 25)
                values = [base + swing * c + rng.gauss(0, 3) for c in curve]
                yield from _series(tenant_id, resource, MetricName.UTILIZATION, moments, values)
            base, swing = rng.uniform(15, 40), rng.uniform(5, 15)
            values = [base + swing * c + rng.gauss(0, 3) for c in curve]
            yield from _series(tenant_id, resource, MetricName.CPU, moments, values)
            base = rng.uniform(35, 70)
            values = [base + 3 * w + rng.gauss(0, 1) for w in weekly]
            yield from _series(tenant_id, resource, MetricName.MEMORY, moments, values)
        yield from self._interface_errors(rng, moments)

    def _interface_errors(self, rng: random.Random, moments: list[datetime]) -> Iterator[Row]:
        """Errors per interval: background noise, a burst before the failure, silence after."""
        owners = {row["id"]: row["tenant_id"] for row in self.topology.devices}
        link_interval = self.profile.link_interval_s
        down_samples = tail_length(
            DOWN_WINDOW_S, link_interval, self.profile.link_samples_per_direction()
        )
        down_at = self.until - timedelta(seconds=down_samples * link_interval)
        burst_from = down_at - timedelta(seconds=ERROR_WINDOW_S)
        for interface in self.error_interfaces():
            values = []
            for moment in moments:
                if moment > down_at:
                    values.append(0.0)
                elif moment > burst_from:
                    values.append(float(rng.randint(150, 900)))
                else:
                    values.append(float(rng.choice((0, 0, 0, 1, 2))))
            yield from _series(
                owners[interface["device_id"]],
                interface["resource_id"],
                MetricName.ERRORS,
                moments,
                values,
                digits=0,
            )

    def _worked_example(self, rng: random.Random, tenant_id: int) -> Iterator[Row]:
        """Short hourly history ending at exactly 42 percent on 2026-08-11T12:00:01Z."""
        moments = timeline(WORKED_EXAMPLE_AT, HOUR, WORKED_EXAMPLE_HISTORY)
        values = [rng.uniform(30, 48) for _ in moments[:-1]] + [WORKED_EXAMPLE_VALUE]
        yield from _series(
            tenant_id, WORKED_EXAMPLE_RESOURCE_ID, MetricName.UTILIZATION, moments, values
        )


def _series(
    tenant_id: int,
    resource_id: str,
    metric: MetricName,
    moments: list[datetime],
    values: list[float],
    digits: int = 1,
) -> Iterator[Row]:
    """metric_sample rows; percentages are clamped to 0..100."""
    unit = METRIC_UNITS[metric]
    percent = unit is MetricUnit.PERCENT
    for moment, value in zip(moments, values, strict=True):
        if percent:
            value = min(100.0, max(0.0, value))
        yield {
            "tenant_id": tenant_id,
            "resource_id": resource_id,
            "metric": metric.value,
            "value": round(value, digits),
            "unit": unit.value,
            "observed_at": moment,
        }
