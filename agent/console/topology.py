"""What the console draws for a topology view, with no idea what the domain is.

The console is generic (it lives in ``agent/``); a domain module implements
:class:`TopologySource` and hands back groups, nodes, edges and per-edge series. The console
lays them out and renders them as SVG on the server, so the graph needs no script and no CDN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agent.base.errors import SecurityError
from agent.security.principal import Principal

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from agent.console.pages import ConsolePage

WINDOWS: dict[str, timedelta] = {
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}
"""The chart windows an operator may pick; 7 days is the deepest a deployment's samples need go."""
DEFAULT_WINDOW = "7d"


class TopologyRefusedError(SecurityError):
    """The caller may not read this part of the topology (the message says what is missing)."""


@dataclass(frozen=True)
class Group:
    """A cluster of nodes drawn together; ``short`` names it on the overview, ``region`` is
    the larger area it belongs to (the overview draws a region's groups side by side, under
    one tinted sector; "" is no region)."""

    id: str
    label: str
    detail: str = ""
    short: str = ""
    region: str = ""


@dataclass(frozen=True)
class Node:
    """One vertex (a thing the domain names); ``rank`` orders the tiers of a group's view,
    lowest on top; ``kind`` names its tier and is what the drawing's kind filter matches."""

    id: str
    label: str
    group: str
    rank: int = 0
    detail: str = ""
    kind: str = ""


@dataclass(frozen=True)
class Edge:
    """One connection; ``ratio`` is the current load 0..1, or None when unknown to this caller."""

    id: str
    a: str
    b: str
    label: str
    status: str
    ratio: float | None
    capacity: str = ""


@dataclass(frozen=True)
class Graph:
    """A caller's view of the topology, plus a note when some data was withheld."""

    groups: Sequence[Group]
    nodes: Sequence[Node]
    edges: Sequence[Edge]
    note: str = ""


@dataclass(frozen=True)
class Series:
    """A time series of ratios 0..1, oldest first."""

    name: str
    points: Sequence[tuple[datetime, float]]


@dataclass(frozen=True)
class EdgeDetail:
    """Facts about one edge and its load over a window; ``stats``: a small table of figures
    per series (its first row the header), in the domain's units."""

    edge: Edge
    facts: Sequence[tuple[str, str]]
    series: Sequence[Series] = ()
    note: str = ""
    samples: int = 0
    stats: Sequence[Sequence[str]] = ()


class TopologySource(Protocol):
    """Implemented by the domain: reads only what ``principal`` may see."""

    async def graph(self, principal: Principal, now: datetime) -> Graph:
        """The caller's whole topology with the current load of each edge."""
        ...

    async def edge(
        self, principal: Principal, edge_id: str, since: datetime, until: datetime
    ) -> EdgeDetail | None:
        """One edge of the caller's (None when absent or not the caller's), with its series."""
        ...


@dataclass(frozen=True)
class TopologyView:
    """The console's topology page, in the deployment's words.

    The core draws the graph a :class:`TopologySource` returns (groups of nodes, edges, an
    edge's series): the overview, one group's view, the edges table and an edge's chart, at
    ``/console/<path>``. What those are called (warehouses, shelves and aisles, say) is
    the deployment's, so the page's template is too: it extends the core's ``base.html`` and
    renders the context ``agent/console/routes.py`` (``Console.topology_page``) gives it.
    A deployment hands it to the core as ``Deployment.topology`` (``agent/ports.py``).
    """

    source: Callable[[AsyncEngine], TopologySource]
    path: str
    """One lower-case word, the page's path below ``/console`` (the console's front page) and
    the ``operation`` of the audit row each view of it writes (tool ``console``)."""
    label: str
    """The page's name in the console's navigation."""
    templates: Path
    """The folder holding ``template`` (searched after the core's own templates)."""
    template: str
    """The page's template file; a name the core's templates do not use."""
    pages: Sequence[ConsolePage] = ()
    """The deployment's further pages (``agent/console/pages.py``), templates in ``templates``,
    in the navigation after the topology page in this order."""


# ------------------------------------------------------------------------------- layout

MARGIN = 30


def load_class(edge: Edge) -> str:
    """The colour bucket: not carrying traffic, unknown, or by load (thresholds 50 and 80 %)."""
    if edge.status != "connected":
        return "idle"
    if edge.ratio is None:
        return "unknown"
    if edge.ratio >= 0.8:
        return "hot"
    return "warm" if edge.ratio >= 0.5 else "ok"


def curve(
    x1: float, y1: float, x2: float, y2: float, index: int, at: float = 0.5
) -> tuple[str, tuple[float, float], float]:
    """A gently bent path, its handle's point and that point's share of the way along it;
    parallel edges bend further, alternating sides.

    The bend also gives vertical and horizontal edges an area, so they can be pointed at; the
    handle, ``at`` of the way from (x1, y1), is a target bigger than the line itself (two lines
    crossing at their middles, from either end of two tiers, keep their handles apart when
    each is put nearer its upper end). The path runs left to right, so a figure written along
    it reads the right way up.
    """
    if (x2, y2) < (x1, y1):
        x1, y1, x2, y2, at = x2, y2, x1, y1, 1 - at
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    bend = (12 + 14 * (index // 2)) * (1 if index % 2 == 0 else -1)
    cx = (x1 + x2) / 2 - (y2 - y1) / length * bend
    cy = (y1 + y2) / 2 + (x2 - x1) / length * bend
    u = 1 - at
    handle = (
        u * u * x1 + 2 * u * at * cx + at * at * x2,
        u * u * y1 + 2 * u * at * cy + at * at * y2,
    )
    return f"M{x1:.1f},{y1:.1f} Q{cx:.1f},{cy:.1f} {x2:.1f},{y2:.1f}", handle, at


# ------------------------------------------------------------------------------- charts

CHART_WIDTH = 720
CHART_HEIGHT = 240
CHART_PAD = 40
MAX_POINTS = 336


def downsample(points: Sequence[tuple[datetime, float]]) -> list[tuple[datetime, float]]:
    """At most MAX_POINTS points, each the maximum of its bucket, so peaks stay visible."""
    if len(points) <= MAX_POINTS:
        return list(points)
    size = math.ceil(len(points) / MAX_POINTS)
    return [max(points[i : i + size], key=lambda p: p[1]) for i in range(0, len(points), size)]


def polyline(points: Sequence[tuple[datetime, float]], since: datetime, until: datetime) -> str:
    """SVG ``points`` for a ratio series in the chart's box (0 % at the bottom, 100 % on top)."""
    span = max((until - since).total_seconds(), 1.0)
    inner_w = CHART_WIDTH - 2 * CHART_PAD
    inner_h = CHART_HEIGHT - 2 * CHART_PAD
    coords = []
    for moment, ratio in downsample(points):
        x = CHART_PAD + inner_w * (moment - since).total_seconds() / span
        y = CHART_PAD + inner_h * (1 - min(max(ratio, 0.0), 1.0))
        coords.append(f"{x:.1f},{y:.1f}")
    return " ".join(coords)


TICK_STEPS = (
    timedelta(minutes=5),
    timedelta(minutes=15),
    timedelta(minutes=30),
    timedelta(hours=1),
    timedelta(hours=2),
    timedelta(hours=3),
    timedelta(hours=6),
    timedelta(hours=12),
    timedelta(days=1),
)
MAX_TICKS = 8
HOVER_BANDS = 48


def _x(moment: datetime, since: datetime, until: datetime) -> float:
    span = max((until - since).total_seconds(), 1.0)
    return CHART_PAD + (CHART_WIDTH - 2 * CHART_PAD) * (moment - since).total_seconds() / span


def time_ticks(since: datetime, until: datetime) -> list[tuple[float, str]]:
    """Round times along the x axis, at most MAX_TICKS steps apart end to end: (x, "HH:MM",
    or "Nov 29" on a day's steps)."""
    span = until - since
    step = next((s for s in TICK_STEPS if span / s <= MAX_TICKS), TICK_STEPS[-1])
    seconds = int(step.total_seconds())
    first = since.timestamp() + (-since.timestamp()) % seconds
    ticks = []
    moment = datetime.fromtimestamp(first, tz=since.tzinfo)
    while moment <= until:
        label = moment.strftime("%b %d") if step >= timedelta(days=1) else moment.strftime("%H:%M")
        ticks.append((_x(moment, since, until), label))
        moment += step
    return ticks


def hover_bands(
    series: Sequence[Series], since: datetime, until: datetime, count: int = HOVER_BANDS
) -> list[tuple[float, float, str]]:
    """The chart cut in ``count`` slices of time, each with what it holds in words (each
    series' highest value in it), to read on hover: (x, width, text)."""
    span = (until - since) / count
    bands = []
    for index in range(count):
        start, end = since + span * index, since + span * (index + 1)
        values = []
        for line in series:
            inside = [v for t, v in line.points if start <= t < end or (t == end == until)]
            if inside:
                values.append(f"{line.name} {max(inside) * 100:.1f} %")
        if values:
            when = f"{start:%Y-%m-%d %H:%M} to {end:%H:%M}"
            x0, x1 = _x(start, since, until), _x(end, since, until)
            bands.append((x0, x1 - x0, f"{when}: " + ", ".join(values)))
    return bands


# ------------------------------------------------------------------- overview and site view
#
# A graph of every node stops being readable long before a graph is large (600 nodes drew a strip 70
# px tall), so the topology view draws two pictures whose size does not grow with the number of
# nodes: an overview with one mark per group and one line per pair of groups that share edges (a
# bundle), and a group's own view with its nodes and a box per neighbouring group. Every label's box
# is computed here, with a conservative text width, so that no two labels overlap whatever the seed.

LOAD_ORDER = {"hot": 0, "warm": 1, "ok": 2, "unknown": 3, "idle": 4}
"""Busiest first: a bundle and a group take the colour of their busiest member."""
LEGEND_LOADS = ("ok", "warm", "hot", "unknown", "idle")
"""The legend's order of the load classes: by load, then the unknown and the idle."""
CHAR_WIDTH = 8.0
"""A conservative width of one character of the 13 px labels (system-ui averages about 7)."""
LINE_HEIGHT = 16.0
SITE_WIDTH = 1100.0
"""The width of a group's own view's node area; the neighbour column sits to its right."""
PEER_HEIGHT, PEER_GAP, PEER_WIDTH = 40.0, 14.0, 210.0
PAGE_SIZE = 50
LINK_FILTERS = {
    "": "all links",
    "hot": "80 % and above",
    "warm": "50 to 80 %",
    "ok": "below 50 %",
    "down": "down",
    "idle": "not connected (down, planned)",
    "unknown": "unknown",
}
"""The links table's load filter: a bucket of :func:`load_class`, or down links only."""


def text_width(text: str) -> float:
    """The width a label is given (an over-estimate, so estimated boxes never under-lap)."""
    return len(text) * CHAR_WIDTH


def load_rank(edge: Edge) -> tuple[int, float, str]:
    """Sort key, busiest first: load bucket, then ratio, then id."""
    return (LOAD_ORDER[load_class(edge)], -(edge.ratio or 0.0), edge.id)


def busiest(edges: Sequence[Edge]) -> Edge | None:
    """The member that colours a bundle or a group."""
    return min(edges, key=load_rank, default=None)


def attention(edge: Edge) -> tuple[int, float, str]:
    """The links table's order: hot links, then down ones, then by load; ids break ties."""
    load = load_class(edge)
    if load == "hot":
        rank = 0
    elif edge.status == "down":
        rank = 1
    else:
        rank = 1 + LOAD_ORDER[load] + (1 if load == "idle" else 0)
    return (rank, -(edge.ratio or 0.0), edge.id)


@dataclass(frozen=True)
class Bundle:
    """The edges between two groups (``a`` < ``b``), drawn as one line."""

    a: str
    b: str
    edges: tuple[Edge, ...]

    @property
    def busiest(self) -> Edge:
        top = busiest(self.edges)
        assert top is not None  # a bundle has members
        return top

    @property
    def load(self) -> str:
        return load_class(self.busiest)

    @property
    def down(self) -> int:
        return sum(1 for e in self.edges if e.status == "down")

    def describe(self) -> str:
        """One sentence for the line's title and accessible name."""
        top = self.busiest
        busiest_text = (
            f"busiest {top.id} at {top.ratio * 100:.1f} %"
            if top.ratio is not None
            else f"busiest {top.id} ({top.status})"
        )
        down = f", {self.down} down" if self.down else ""
        count = len(self.edges)
        links = f"{count} link{'s' if count != 1 else ''}"
        return f"{self.a} to {self.b}: {links}, {busiest_text}{down}"

    @property
    def figure(self) -> str:
        """The short label drawn on the line: its count and its busiest member's figure."""
        count = len(self.edges)
        return f"{count} link{'s' if count != 1 else ''} · {edge_figure(self.busiest)}"

    @property
    def statuses(self) -> str:
        """Its members' statuses, space-separated (what the drawing's status filter matches)."""
        return " ".join(sorted({e.status for e in self.edges}))

    @property
    def loads(self) -> str:
        """Its members' load classes, space-separated (the drawing's load filter matches)."""
        return " ".join(sorted({load_class(e) for e in self.edges}))


def edge_figure(edge: Edge) -> str:
    """An edge's numbers in a few characters: "62 % of 10 Gbit/s", or its status."""
    capacity = f" of {edge.capacity}" if edge.capacity else ""
    if edge.ratio is None or edge.status != "connected":
        return f"{edge.status}{capacity}"
    return f"{edge.ratio * 100:.0f} %{capacity}"


def group_of(graph: Graph) -> dict[str, str]:
    """Node id -> group id."""
    return {n.id: n.group for n in graph.nodes}


def bundles(graph: Graph) -> list[Bundle]:
    """One bundle per pair of groups joined by at least one edge, in group-id order."""
    groups = group_of(graph)
    members: dict[tuple[str, str], list[Edge]] = {}
    for edge in graph.edges:
        ga, gb = groups.get(edge.a), groups.get(edge.b)
        if ga is None or gb is None or ga == gb:
            continue
        key = (ga, gb) if ga < gb else (gb, ga)
        members.setdefault(key, []).append(edge)
    return [Bundle(a, b, tuple(edges)) for (a, b), edges in sorted(members.items())]


@dataclass(frozen=True)
class DrawingFilters:
    """What the drawing's filters offer: the statuses, load classes and node kinds present."""

    statuses: list[str]
    loads: list[str]
    kinds: list[str]


def drawing_filters(graph: Graph) -> DrawingFilters:
    """The choices of the drawing's filters, from what the graph holds (busiest load first)."""
    loads = {load_class(e) for e in graph.edges}
    return DrawingFilters(
        statuses=sorted({e.status for e in graph.edges}),
        loads=sorted(loads, key=LOAD_ORDER.__getitem__),
        kinds=sorted({n.kind for n in graph.nodes if n.kind}),
    )


FIGURES_LIMIT = 12
"""Up to this many lines in a drawing, each carries its figures as a label; past it, figures
show once the drawing is zoomed in (and always in each line's title, on hover)."""

BUSIEST = 10


def busiest_now(edges: Sequence[Edge], count: int = BUSIEST) -> list[Edge]:
    """The ``count`` edges with the highest current load, busiest first (unknown left out)."""
    known = [e for e in edges if e.ratio is not None and e.status == "connected"]
    return sorted(known, key=lambda e: (-(e.ratio or 0.0), e.id))[:count]


@dataclass(frozen=True)
class LinkPage:
    """One page of the links table: filtered, hot and down links first."""

    rows: list[Edge]
    total: int
    matching: int
    page: int
    pages: int
    first: int
    last: int


def link_page(
    edges: Sequence[Edge], *, text: str = "", load: str = "", page: int = 1, size: int = PAGE_SIZE
) -> LinkPage:
    """The edges matching ``text`` (in id, label, status or capacity) and ``load`` (a bucket of
    :func:`load_class`, or "down"), in :func:`attention` order, page ``page`` of ``size``."""
    needle = text.strip().casefold()
    matching = [
        e
        for e in edges
        if (not needle or needle in f"{e.id} {e.label} {e.status} {e.capacity}".casefold())
        and (not load or (e.status == "down" if load == "down" else load_class(e) == load))
    ]
    matching.sort(key=attention)
    pages = max(1, math.ceil(len(matching) / size))
    page = min(max(page, 1), pages)
    rows = matching[(page - 1) * size : page * size]
    first = (page - 1) * size + 1 if rows else 0
    return LinkPage(rows, len(edges), len(matching), page, pages, first, first + len(rows) - 1)
