"""What the console draws for a network view, with no idea what a network is.

The console is generic (it lives in ``agent/``); a domain module implements
:class:`TopologySource` and hands back groups, nodes, edges and per-edge series. The console
lays them out and renders them as SVG on the server, so the graph needs no script and no CDN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from agent.errors import SecurityError
from agent.security.principal import Principal

WINDOWS: dict[str, timedelta] = {
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}
"""The chart windows an operator may pick; 7 days is the simulated telemetry's depth."""
DEFAULT_WINDOW = "7d"


class TopologyRefusedError(SecurityError):
    """The caller may not read this part of the topology (the message says what is missing)."""


@dataclass(frozen=True)
class Group:
    """A cluster of nodes drawn together (a site)."""

    id: str
    label: str
    detail: str = ""


@dataclass(frozen=True)
class Node:
    """One vertex (a device); ``rank`` orders rows inside a group, lowest on top."""

    id: str
    label: str
    group: str
    rank: int = 0
    detail: str = ""


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
    """Facts about one edge and its load over a window."""

    edge: Edge
    facts: Sequence[tuple[str, str]]
    series: Sequence[Series] = ()
    note: str = ""
    samples: int = 0


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


# ------------------------------------------------------------------------------- layout

GROUP_WIDTH = 360
ROW_HEIGHT = 110
MARGIN = 30


@dataclass(frozen=True)
class Placed:
    """A node with its position in the SVG's user space."""

    node: Node
    x: float
    y: float


@dataclass(frozen=True)
class Drawn:
    """An edge with its end points and its colour class."""

    edge: Edge
    x1: float
    y1: float
    x2: float
    y2: float
    load: str
    path: str
    mx: float
    my: float


@dataclass
class Layout:
    """Everything the template needs to draw a graph."""

    width: float
    height: float
    groups: list[tuple[Group, float, float, float, float]] = field(default_factory=list)
    nodes: list[Placed] = field(default_factory=list)
    edges: list[Drawn] = field(default_factory=list)


def load_class(edge: Edge) -> str:
    """The colour bucket: not carrying traffic, unknown, or by load (thresholds 50 and 80 %)."""
    if edge.status != "connected":
        return "idle"
    if edge.ratio is None:
        return "unknown"
    if edge.ratio >= 0.8:
        return "hot"
    return "warm" if edge.ratio >= 0.5 else "ok"


def layout(graph: Graph) -> Layout:
    """Groups side by side; inside a group, one row per rank, nodes spread along the row.

    Deterministic, so the same topology always draws the same picture.
    """
    by_group: dict[str, list[Node]] = {g.id: [] for g in graph.groups}
    for node in graph.nodes:
        by_group.setdefault(node.group, []).append(node)
    ranks = sorted({n.rank for n in graph.nodes}) or [0]
    height = MARGIN * 2 + 40 + ROW_HEIGHT * len(ranks)
    result = Layout(width=MARGIN * 2 + GROUP_WIDTH * max(len(by_group), 1), height=height)
    known = {g.id: g for g in graph.groups}
    positions: dict[str, tuple[float, float]] = {}
    for index, (group_id, members) in enumerate(by_group.items()):
        left = MARGIN + index * GROUP_WIDTH
        group = known.get(group_id, Group(group_id, group_id))
        result.groups.append((group, left + 8, MARGIN, GROUP_WIDTH - 16, height - 2 * MARGIN))
        for row, rank in enumerate(ranks):
            row_nodes = sorted((n for n in members if n.rank == rank), key=lambda n: n.label)
            for column, node in enumerate(row_nodes):
                # Odd rows spread wider, so a row's links to the row below do not run
                # through the row in between.
                slots = len(row_nodes) + (1 if row % 2 == 0 else 0)
                offset = 1.0 if row % 2 == 0 else 0.5
                x = left + GROUP_WIDTH * (column + offset) / slots
                # Stagger crowded rows so labels do not overlap.
                stagger = 18 if column % 2 and len(row_nodes) > 3 else 0
                y = MARGIN + 70 + row * ROW_HEIGHT + stagger
                positions[node.id] = (x, y)
                result.nodes.append(Placed(node, x, y))
    seen: dict[frozenset[str], int] = {}
    for edge in graph.edges:
        if edge.a in positions and edge.b in positions:
            (x1, y1), (x2, y2) = positions[edge.a], positions[edge.b]
            pair = frozenset((edge.a, edge.b))
            index = seen[pair] = seen.get(pair, -1) + 1
            path, (mx, my) = _curve(x1, y1, x2, y2, index)
            result.edges.append(Drawn(edge, x1, y1, x2, y2, load_class(edge), path, mx, my))
    # Longest first: SVG paints in document order, so short links end up on top of the
    # long ones that cross them, and every link keeps a spot where it can be clicked.
    result.edges.sort(key=lambda d: -math.hypot(d.x2 - d.x1, d.y2 - d.y1))
    return result


def _curve(
    x1: float, y1: float, x2: float, y2: float, index: int
) -> tuple[str, tuple[float, float]]:
    """A gently bent path and its midpoint; parallel edges bend further, alternating sides.

    The bend also gives vertical and horizontal edges an area, so they can be pointed at; the
    midpoint carries a handle, a target bigger than the line itself.
    """
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    bend = (12 + 14 * (index // 2)) * (1 if index % 2 == 0 else -1)
    cx = (x1 + x2) / 2 - (y2 - y1) / length * bend
    cy = (y1 + y2) / 2 + (x2 - x1) / length * bend
    middle = (0.25 * x1 + 0.5 * cx + 0.25 * x2, 0.25 * y1 + 0.5 * cy + 0.25 * y2)
    return f"M{x1:.1f},{y1:.1f} Q{cx:.1f},{cy:.1f} {x2:.1f},{y2:.1f}", middle


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
