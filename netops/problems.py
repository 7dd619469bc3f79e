"""The console's "what is wrong now": down and degraded links, devices and interfaces.

Read for the caller's tenant through :class:`db.overview.Overview` (filtered in SQL) and only
with the scopes the inventory gate (``db/gate.py``) would want: topology reads for the list,
utilization samples for the degraded (hot) links and for how long a link has been down.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from urllib.parse import urlencode

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.console.pages import PageAnswer
from agent.console.session import PREFIX
from agent.security.principal import Principal
from db.choices import DeviceStatus, LinkStatus
from db.overview import InterfaceStateRecord, Overview
from db.records import DeviceRecord, LinkRecord, UtilizationSampleRecord
from netops.access import may, needs, overview_for
from netops.topology import CURRENT_LOOKBACK

HOT_RATIO = 0.8
"""A link at or above this load now is degraded (the network page's "hot")."""
SINCE_LOOKBACK = timedelta(days=7)
"""How far back a condition's start is looked for; one older reads "over 7 days"."""
SEVERITIES = ("critical", "major", "warning")
DEVICE_SEVERITY = {DeviceStatus.FAILED: "critical", DeviceStatus.OFFLINE: "major"}


@dataclass(frozen=True)
class Problem:
    """One thing that is wrong, as the page lists it."""

    severity: str
    kind: str
    name: str
    href: str
    sites: tuple[str, ...]
    what: str
    since: datetime | None = None
    open_ended: bool = False
    """The condition holds over the whole look-back: it began before ``since``."""

    @property
    def rank(self) -> tuple[int, str, str]:
        return (SEVERITIES.index(self.severity), self.kind, self.name)


def ago(moment: datetime, now: datetime) -> str:
    """How long before ``now``: "45 min", "2 h 5 min", "3 d 4 h"."""
    minutes = max(0, int((now - moment).total_seconds() // 60))
    days, hours, mins = minutes // 1440, minutes // 60 % 24, minutes % 60
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {mins} min" if mins else f"{hours} h"
    return f"{mins} min"


def link_href(link_id: str) -> str:
    return f"{PREFIX}/network?{urlencode({'link': link_id})}#detail"


def device_href(resource_id: str) -> str:
    return f"{PREFIX}/device?{urlencode({'id': resource_id})}"


def condition_start(
    samples: Sequence[UtilizationSampleRecord], holds: str
) -> tuple[datetime | None, bool]:
    """When the newest unbroken run of ``holds`` ("down": nothing available either way;
    "hot": either direction at ``HOT_RATIO`` or above) began, and whether it fills the window."""
    by_time: dict[datetime, list[UtilizationSampleRecord]] = {}
    for sample in samples:
        by_time.setdefault(sample["observed_at"], []).append(sample)
    start: datetime | None = None
    moments = sorted(by_time, reverse=True)
    for moment in moments:
        group = by_time[moment]
        if holds == "down":
            held = all(s["available_bps"] == 0 for s in group)
        else:
            held = any(float(s["utilization_ratio"]) >= HOT_RATIO for s in group)
        if not held:
            return start, False
        start = moment
    return start, start is not None


def _down_link(link: LinkRecord) -> Problem:
    return Problem(
        "critical",
        "link",
        link["link_id"],
        link_href(link["link_id"]),
        (link["a_site"], link["b_site"]),
        f"down: {link['a_device']} {link['a_interface']} to {link['b_device']} "
        f"{link['b_interface']}",
    )


def _hot_link(link: LinkRecord, ratio: float) -> Problem:
    return Problem(
        "warning",
        "link",
        link["link_id"],
        link_href(link["link_id"]),
        (link["a_site"], link["b_site"]),
        f"degraded: {ratio * 100:.1f} % loaded now (80 % and above), "
        f"{link['a_device']} to {link['b_device']}",
    )


def _device(device: DeviceRecord) -> Problem:
    return Problem(
        DEVICE_SEVERITY.get(DeviceStatus(device["status"]), "major"),
        "device",
        device["name"],
        device_href(device["resource_id"]),
        (device["site"],),
        f"{device['status']}: {device['role']}, {device['platform']}",
    )


def _interface(port: InterfaceStateRecord, since: tuple[datetime | None, bool]) -> Problem:
    on_link = f", on link {port['link_id']}" if port["link_id"] else ""
    return Problem(
        "major",
        "interface",
        f"{port['device']} {port['name']}",
        device_href(port["device_resource_id"]) + "#interfaces",
        (port["site"],),
        f"oper {port['oper_status']} while admin {port['admin_status']}{on_link}",
        *since,
    )


class ProblemsPage:
    """The page's source (``agent.console.pages.PageSource``)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def __call__(
        self, principal: Principal, query: Mapping[str, str], now: datetime
    ) -> PageAnswer:
        overview = overview_for(self._engine, principal)
        site = query.get("site", "")
        severity = query.get("severity", "")
        sites = await overview.sites()
        known = {s["slug"] for s in sites}
        problems, note = await self._problems(overview, principal, now)
        shown = [
            p
            for p in problems
            if (not site or site in p.sites) and (not severity or p.severity == severity)
        ]
        counts = {s: sum(1 for p in shown if p.severity == s) for s in SEVERITIES}
        context = {
            "problems": shown,
            "total": len(problems),
            "counts": counts,
            "sites": sorted(known),
            "site": site,
            "severity": severity if severity in SEVERITIES else "",
            "severities": SEVERITIES,
            "note": note,
            "now": now,
            "ago": lambda moment: ago(moment, now),
        }
        missing = bool(site) and site not in known
        return PageAnswer(context, named=(site,) if site else (), missing=missing)

    async def _problems(
        self, overview: Overview, principal: Principal, now: datetime
    ) -> tuple[list[Problem], str]:
        with_load = may(principal, "utilization_samples")
        down = await overview.links(status=LinkStatus.DOWN)
        since: dict[str, tuple[datetime | None, bool]] = {}
        problems: list[Problem] = []
        for link in down:
            since[link["link_id"]] = await _start(overview, link, "down", now, with_load)
            problems.append(_since(_down_link(link), since[link["link_id"]]))
        for status in DEVICE_SEVERITY:
            problems += [_device(d) for d in await overview.devices(status=status)]
        for port in await overview.interfaces_not_up():
            problems.append(_interface(port, since.get(port["link_id"] or "", (None, False))))
        note = ""
        if with_load:
            current = await overview.current_utilization(now - CURRENT_LOOKBACK, now)
            hot = {k: v for k, v in current.items() if v >= HOT_RATIO}
            for link in await overview.links(status=LinkStatus.CONNECTED):
                if link["link_id"] in hot:
                    start = await _start(overview, link, "hot", now, True)
                    problems.append(_since(_hot_link(link, hot[link["link_id"]]), start))
        else:
            note = (
                "Degraded (hot) links and how long a link has been down need one of: "
                f"{needs('utilization_samples')}."
            )
        problems.sort(key=lambda p: p.rank)
        return problems, note


async def _start(
    overview: Overview, link: LinkRecord, holds: str, now: datetime, allowed: bool
) -> tuple[datetime | None, bool]:
    if not allowed:
        return None, False
    samples = await overview.utilization_samples(link["link_id"], now - SINCE_LOOKBACK, now)
    return condition_start(samples, holds)


def _since(problem: Problem, since: tuple[datetime | None, bool]) -> Problem:
    return replace(problem, since=since[0], open_ended=since[1])
