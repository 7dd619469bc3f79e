"""Size profiles for the simulator: how big the network is and how dense its telemetry."""

from __future__ import annotations

from dataclasses import dataclass, replace

HOUR = 3600
DAY = 24 * HOUR


@dataclass(frozen=True, slots=True)
class ScaleProfile:
    """Topology shape plus sampling cadence for one ``--scale``.

    ``links`` is the exact number of links to build; None means "the five demo
    sites, no more, no less". Intervals and windows shrink for big profiles so
    the sample count stays tractable on SQLite.
    """

    name: str
    pods_per_site: int
    access_per_pod: int
    links: int | None
    link_interval_s: int
    link_window_s: int
    metric_interval_s: int
    metric_window_s: int

    def link_samples_per_direction(self) -> int:
        """Samples per link direction: one per interval, ending at ``until``."""
        return self.link_window_s // self.link_interval_s

    def metric_samples_per_series(self) -> int:
        """Samples per device metric series."""
        return self.metric_window_s // self.metric_interval_s

    def summary(self) -> str:
        """One line for CLI help and reports."""
        return (
            f"{self.name}: links={self.links or 'demo (5 sites)'}, "
            f"link samples every {self.link_interval_s}s over {self.link_window_s // HOUR}h, "
            f"metrics every {self.metric_interval_s}s over {self.metric_window_s // HOUR}h"
        )


SCALES: dict[str, ScaleProfile] = {
    # Demo: 5 sites, ~90 links, 5-minute link samples and hourly device metrics over 7 days.
    "small": ScaleProfile("small", 1, 4, None, 300, 7 * DAY, HOUR, 7 * DAY),
    # Lab: 2,000 links, 15-minute link samples and hourly device metrics over 7 days.
    "medium": ScaleProfile("medium", 2, 8, 2_000, 900, 7 * DAY, HOUR, 7 * DAY),
    # Load test: 100,000 links with hourly link samples over 2 days (9.6M rows) and
    # 6-hourly device metrics over 2 days, i.e. >10M samples in total.
    "large": ScaleProfile("large", 4, 24, 100_000, HOUR, 2 * DAY, 6 * HOUR, 2 * DAY),
}


def resolve_profile(scale: str, links: int | None = None) -> ScaleProfile:
    """The profile for ``scale``, with an explicit link count if one was given."""
    try:
        profile = SCALES[scale]
    except KeyError:
        raise ValueError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}") from None
    if links is None:
        return profile
    if links <= 0:
        raise ValueError(f"links must be positive, got {links}")
    return replace(profile, links=links)
