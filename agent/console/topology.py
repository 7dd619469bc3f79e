"""What the console draws for a topology view, with no idea what the domain is.

The console is generic (it lives in ``agent/``); a domain module implements
:class:`TopologySource` and hands back groups, nodes, edges and per-edge series. The console
lays them out and renders them as SVG on the server, so the graph needs no script and no CDN.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agent.errors import SecurityError
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
SPACING = 110.0
"""The overview's distance between neighbouring groups along the ellipse."""
BASE_RX, BASE_RY = 440.0, 220.0
SITE_WIDTH = 1100.0
"""The width of a group's own view's node area; the neighbour column sits to its right."""
SITE_ROW = 92.0
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
class Box:
    """An axis-aligned box in the SVG's user space."""

    x0: float
    y0: float
    x1: float
    y1: float

    def overlaps(self, other: Box) -> bool:
        across = self.x0 < other.x1 and other.x0 < self.x1
        return across and self.y0 < other.y1 and other.y0 < self.y1


@dataclass(frozen=True)
class Label:
    """Lines of text at (x, first baseline), anchored start, middle or end, and its box."""

    x: float
    y: float
    anchor: str
    lines: tuple[str, ...]

    @property
    def box(self) -> Box:
        width = max(text_width(line) for line in self.lines)
        left = {"start": self.x, "middle": self.x - width / 2, "end": self.x - width}[self.anchor]
        top = self.y - LINE_HEIGHT + 3
        return Box(left, top, left + width, top + LINE_HEIGHT * len(self.lines) + 2)


@dataclass(frozen=True)
class GroupMark:
    """A group on the overview: a circle sized by its node count, coloured by its busiest
    internal edge, and its label."""

    group: Group
    x: float
    y: float
    r: float
    load: str
    nodes: int
    internal: int
    label: Label


@dataclass(frozen=True)
class BundleMark:
    """A bundle on the overview, with its handle at the middle of its curve; ``kinds``: the
    kinds of the nodes its members join (what the drawing's kind filter matches)."""

    bundle: Bundle
    path: str
    width: int
    mx: float
    my: float
    kinds: str = ""


@dataclass(frozen=True)
class RegionMark:
    """A region on the overview: a tinted sector behind its groups, its name inside the ring
    (``named``: only for a region of two groups or more; one group's label says enough, and
    the names of one-group regions would crowd a small ring)."""

    name: str
    path: str
    x: float
    y: float
    groups: tuple[str, ...]
    tint: int
    named: bool = True


@dataclass
class Overview:
    width: float
    height: float
    groups: list[GroupMark] = field(default_factory=list)
    bundles: list[BundleMark] = field(default_factory=list)
    regions: list[RegionMark] = field(default_factory=list)

    @property
    def marks(self) -> list[str]:
        """The kinds of mark this drawing uses (``data-mark``), each the legend must explain."""
        loads = {m.bundle.load for m in self.bundles} | {m.load for m in self.groups}
        shapes = (["region"] if self.regions else []) + ["group"]
        shapes += ["bundle", "handle", "figure"] if self.bundles else []
        return shapes + [f"load-{load}" for load in LEGEND_LOADS if load in loads]


def _ring_order(group_ids: list[str], weights: dict[tuple[str, str], int]) -> list[str]:
    """Groups around the ellipse so that joined groups sit side by side where they can.

    Greedy and deterministic: start from the first group, then repeatedly take the unplaced
    group with the most edges to the last one placed (ties and strangers in id order).
    """
    if not group_ids:
        return []
    order = [group_ids[0]]
    left = set(group_ids[1:])
    while left:
        last = order[-1]

        def pull(candidate: str, last: str = last) -> tuple[int, str]:
            key = (last, candidate) if last < candidate else (candidate, last)
            return (-weights.get(key, 0), candidate)

        chosen = min(left, key=pull)
        order.append(chosen)
        left.remove(chosen)
    return order


def _ellipse_points(n: int, rx: float, ry: float) -> list[tuple[float, float, float]]:
    """n points at equal arc length on an ellipse, clockwise from the top: (x, y, angle)."""
    steps = 2880
    angles = [-math.pi / 2 + 2 * math.pi * i / steps for i in range(steps + 1)]
    xy = [(rx * math.cos(t), ry * math.sin(t)) for t in angles]
    lengths = [0.0]
    for (x0, y0), (x1, y1) in itertools.pairwise(xy):
        lengths.append(lengths[-1] + math.hypot(x1 - x0, y1 - y0))
    total = lengths[-1]
    points = []
    j = 0
    for i in range(n):
        target = total * i / n
        while lengths[j + 1] < target:
            j += 1
        points.append((xy[j][0], xy[j][1], angles[j]))
    return points


def _perimeter(rx: float, ry: float) -> float:
    h = ((rx - ry) / (rx + ry)) ** 2
    return math.pi * (rx + ry) * (1 + 3 * h / (10 + math.sqrt(4 - 3 * h)))


def _place_labels(
    order: list[str],
    spots: list[tuple[float, float, float]],
    radius: dict[str, float],
    labels: dict[str, tuple[str, str]],
    rx: float,
    ry: float,
) -> list[Label] | None:
    """A label per group, outside the ring, touching no mark and no other label; None when
    some group has no free place at this size.

    Each group tries the side its ellipse normal points to first (beside it on the left and
    right of the ring, above or below it at the top and bottom), then the others.
    """
    marks = [Box(x - radius[g], y - radius[g], x + radius[g], y + radius[g])
             for g, (x, y, _) in zip(order, spots, strict=True)]  # fmt: skip
    chosen: list[Label] = []
    for index, (gid, (x, y, angle)) in enumerate(zip(order, spots, strict=True)):
        r, lines = radius[gid], labels[gid]
        nx, ny = (math.cos(angle) / (rx or 1.0), math.sin(angle) / (ry or 1.0))
        if rx == 0:
            nx, ny = 0.0, 1.0
        norm = math.hypot(nx, ny) or 1.0
        nx, ny = nx / norm, ny / norm
        right = Label(x + r + 8, y - 2 + ny * 10, "start", lines)
        left = Label(x - r - 8, y - 2 + ny * 10, "end", lines)
        above = Label(x, y - r - 8 - LINE_HEIGHT, "middle", lines)
        below = Label(x, y + r + 8 + LINE_HEIGHT - 3, "middle", lines)
        vertical = [above, below] if ny < 0 else [below, above]
        side = [right, left] if nx > 0 else [left, right]
        candidates = side + vertical if abs(nx) > 0.6 else vertical + side
        others = marks[:index] + marks[index + 1 :] + [c.box for c in chosen]
        label = next((c for c in candidates if not any(c.box.overlaps(o) for o in others)), None)
        if label is None:
            return None
        chosen.append(label)
    return chosen


def crossings(slots: Sequence[str | None], pairs: Iterable[tuple[str, str]]) -> int:
    """How many pairs of chords between ring slots cross (chords sharing an end do not)."""
    at = {gid: i for i, gid in enumerate(slots) if gid is not None}
    chords = [tuple(sorted((at[a], at[b]))) for a, b in pairs if a in at and b in at]
    count = 0
    for (i, j), (k, m) in itertools.combinations(chords, 2):
        if len({i, j, k, m}) == 4 and (i < k < j) != (i < m < j):
            count += 1
    return count


def region_slots(
    graph: Graph, ids: Sequence[str], weights: dict[tuple[str, str], int]
) -> list[str | None]:
    """The ring's order: each region's groups side by side, an empty slot (None) before each
    region when there are several.

    Inside a region, groups keep the order of a chain through the whole graph (joined groups
    close together); then each region is turned round where that makes fewer lines cross.
    """
    region = {g.id: g.region for g in graph.groups}
    names = sorted({region.get(gid, "") for gid in ids})
    chain = {gid: i for i, gid in enumerate(_ring_order(sorted(ids), weights))}
    runs = [
        sorted((g for g in ids if region.get(g, "") == n), key=chain.__getitem__) for n in names
    ]

    def laid(runs: list[list[str]]) -> list[str | None]:
        slots: list[str | None] = []
        for run in runs:
            slots += ([None] if len(runs) > 1 else []) + list(run)
        return slots

    if len(runs) > 1:
        for index in range(len(runs)):
            turned = [*runs[:index], runs[index][::-1], *runs[index + 1 :]]
            if crossings(laid(turned), weights) < crossings(laid(runs), weights):
                runs = turned
    return laid(runs)


@dataclass(frozen=True)
class Ring:
    """The ellipse the overview's groups sit on, in a canvas of ``width`` by ``height``."""

    width: float
    height: float
    cx: float
    cy: float
    rx: float
    ry: float

    def points(self, count: int) -> list[tuple[float, float, float]]:
        """``count`` points at equal arc length, clockwise from the top: (x, y, angle)."""
        found = _ellipse_points(count, self.rx, self.ry)
        return [(self.cx + px, self.cy + py, angle) for px, py, angle in found]


def _fit_ring(
    slots: list[str | None], radius: dict[str, float], labels: dict[str, tuple[str, str]]
) -> tuple[Ring, list[Label]]:
    """The smallest ring (from ``SPACING`` per slot) on which every label has a free place."""
    n = len(slots)
    widest = max((text_width(line) for pair in labels.values() for line in pair), default=0.0)
    r_max = 24.0
    scale = max(0.5, n * SPACING / _perimeter(BASE_RX, BASE_RY))
    while True:  # grow the ring until every label has a free place (the first try, usually)
        rx, ry = (BASE_RX * scale, BASE_RY * scale) if n > 1 else (0.0, 0.0)
        margin_x = r_max + 10 + widest + MARGIN
        margin_y = r_max + 10 + 2 * LINE_HEIGHT + MARGIN
        width, height = 2 * (rx + margin_x), 2 * (ry + margin_y)
        ring = Ring(width, height, width / 2, height / 2, rx, ry)
        spots = ring.points(n)
        taken = [(gid, spot) for gid, spot in zip(slots, spots, strict=True) if gid is not None]
        order = [gid for gid, _ in taken]
        placed = _place_labels(order, [spot for _, spot in taken], radius, labels, rx, ry)
        if placed is not None or scale > 50:
            return ring, placed or []
        scale *= 1.08


SECTOR_STEPS = 8
"""Points per slot along a region's sector's rim."""
REGION_LABEL_TAIL = 10
"""Room for what follows a region's name (" · 26 sites"), in characters."""
REGION_CHAR_WIDTH = 9.5
"""A conservative width of one character of a region's name (15 px, bold)."""
REGION_LABEL_INSET = 62.0
"""A region's name sits this far inside the ring from its sector's middle (at most halfway to
the centre): inside its own sector, clear of its sites' marks (24 px at most), and away from
the middle where the lines between regions meet."""


def _region_label_box(name: str, x: float, y: float) -> Box:
    """The box a region's name takes, centred on (x, y), with room for " · 26 sites"."""
    half = (len(name) + REGION_LABEL_TAIL) * REGION_CHAR_WIDTH / 2
    return Box(x - half, y - LINE_HEIGHT, x + half, y + 6)


def _region_label_at(
    ring: Ring, x: float, y: float, name: str, taken: list[Box]
) -> tuple[float, float]:
    """Where a region's name goes: from (x, y) on the rim towards the centre, the first spot
    ``REGION_LABEL_INSET`` or more inside whose box touches nothing ``taken``; halfway to the
    centre when none is free."""
    distance = math.hypot(ring.cx - x, ring.cy - y) or 1.0
    inset = REGION_LABEL_INSET
    while inset < distance / 2:
        share = inset / distance
        spot = (x + (ring.cx - x) * share, y + (ring.cy - y) * share)
        if not any(_region_label_box(name, *spot).overlaps(box) for box in taken):
            return spot
        inset += LINE_HEIGHT
    return (x + ring.cx) / 2, (y + ring.cy) / 2


def _sector(ring: Ring, rim: list[tuple[float, float, float]], first: int, last: int) -> str:
    """The path of the sector from half a slot before slot ``first`` to half a slot after
    slot ``last`` (``rim``: SECTOR_STEPS points per slot)."""
    half = SECTOR_STEPS // 2
    steps = range(first * SECTOR_STEPS - half, last * SECTOR_STEPS + half + 1)
    edge = " ".join(f"L{x:.1f},{y:.1f}" for x, y, _ in (rim[i % len(rim)] for i in steps))
    return f"M{ring.cx:.1f},{ring.cy:.1f} {edge} Z"


def _region_marks(
    graph: Graph, slots: list[str | None], ring: Ring, taken: list[Box]
) -> list[RegionMark]:
    """A tinted sector per named region (its run of slots), its name inside the ring towards
    the sector's middle, clear of the boxes ``taken`` (the groups' marks and labels, the
    bundles' handles) and of each other."""
    region = {g.id: g.region for g in graph.groups}
    rim = ring.points(len(slots) * SECTOR_STEPS) if slots else []
    marks: list[RegionMark] = []
    index = 0
    while index < len(slots):
        gid = slots[index]
        if gid is None:
            index += 1
            continue
        name = region.get(gid, "")
        last = index
        while last + 1 < len(slots) and slots[last + 1] is not None:
            last += 1
        if name:
            members = tuple(g for g in slots[index : last + 1] if g is not None)
            mx, my, _ = rim[((index + last) * SECTOR_STEPS // 2) % len(rim)]
            x, y = _region_label_at(ring, mx, my, name, taken)
            named = len(members) > 1
            if named:
                taken.append(_region_label_box(name, x, y))
            sector = _sector(ring, rim, index, last)
            marks.append(RegionMark(name, sector, x, y, members, len(marks) % 4, named))
        index = last + 1
    return marks


def _bundle_marks(
    joined: list[Bundle], positions: dict[str, tuple[float, float]], ring: Ring, graph: Graph
) -> list[BundleMark]:
    """A curve per bundle bent towards the ring's centre, quiet ones first (busy on top)."""
    kind = {n.id: n.kind for n in graph.nodes}
    marks = []
    for bundle in joined:
        # left to right, so that its figure, written along it, reads the right way up
        (x1, y1), (x2, y2) = sorted((positions[bundle.a], positions[bundle.b]))
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        qx, qy = mx + (ring.cx - mx) * 0.35, my + (ring.cy - my) * 0.35
        handle = (0.25 * x1 + 0.5 * qx + 0.25 * x2, 0.25 * y1 + 0.5 * qy + 0.25 * y2)
        width = min(10, 2 + round(2 * math.log2(len(bundle.edges))))
        path = f"M{x1:.1f},{y1:.1f} Q{qx:.1f},{qy:.1f} {x2:.1f},{y2:.1f}"
        ends = {kind.get(e.a, "") for e in bundle.edges} | {kind.get(e.b, "") for e in bundle.edges}
        kinds = " ".join(sorted(k for k in ends if k))
        marks.append(BundleMark(bundle, path, width, *handle, kinds=kinds))
    marks.sort(key=lambda m: (-LOAD_ORDER[m.bundle.load], m.bundle.a, m.bundle.b))
    return marks


def overview(graph: Graph) -> Overview:
    """Groups on an ellipse, a region's side by side, bundles as curves bent towards its centre.

    Every node of a convex ring sits on its boundary, so no bundle passes through another
    group's mark; labels sit outside the ring, where no line goes. The ring grows with the
    number of groups (``SPACING`` between neighbours), never with the number of nodes.
    """
    known = {g.id: g for g in graph.groups}
    members: dict[str, int] = {g.id: 0 for g in graph.groups}
    for node in graph.nodes:
        members[node.group] = members.get(node.group, 0) + 1
    groups = group_of(graph)
    internal: dict[str, list[Edge]] = {gid: [] for gid in members}
    for edge in graph.edges:
        ga, gb = groups.get(edge.a), groups.get(edge.b)
        if ga is not None and ga == gb:
            internal[ga].append(edge)
    joined = bundles(graph)
    slots = region_slots(graph, sorted(members), {(b.a, b.b): len(b.edges) for b in joined})
    order = [gid for gid in slots if gid is not None]
    group = {gid: known.get(gid, Group(gid, gid)) for gid in order}
    labels = {
        gid: (group[gid].short or gid, group[gid].detail or f"{members[gid]} nodes")
        for gid in order
    }
    biggest = max(members.values(), default=1) or 1
    radius = {gid: 10 + 14 * math.sqrt(members[gid] / biggest) for gid in order}
    ring, placed = _fit_ring(slots, radius, labels)
    spots = [spot for gid, spot in zip(slots, ring.points(len(slots)), strict=True) if gid]
    result = Overview(width=ring.width, height=ring.height)
    for gid, (x, y, _), label in zip(order, spots, placed, strict=False):
        top = busiest(internal[gid])
        load = load_class(top) if top is not None else "unknown"
        result.groups.append(
            GroupMark(group[gid], x, y, radius[gid], load, members[gid], len(internal[gid]), label)
        )
    positions = {m.group.id: (m.x, m.y) for m in result.groups}
    result.bundles = _bundle_marks(joined, positions, ring, graph)
    taken = [m.label.box for m in result.groups]
    taken += [Box(m.x - m.r, m.y - m.r, m.x + m.r, m.y + m.r) for m in result.groups]
    taken += [Box(b.mx - 8, b.my - 8, b.mx + 8, b.my + 8) for b in result.bundles]
    result.regions = _region_marks(graph, slots, ring, taken)
    return result


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
