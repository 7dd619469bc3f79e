"""The overview: groups on a ring, a region's side by side, bundles bent towards its centre.

Why a ring: every point of a convex ring lies on its boundary, so no bundle between two groups
passes through a third group's mark, and the labels sit outside, where no line goes. The ring
grows with the number of groups (``SPACING`` between neighbours), never with the number of
nodes; every label's box is computed with a conservative text width so none overlaps another.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agent.console.topology import (
    LEGEND_LOADS,
    LINE_HEIGHT,
    LOAD_ORDER,
    MARGIN,
    Bundle,
    Edge,
    Graph,
    Group,
    bundles,
    busiest,
    group_of,
    load_class,
    text_width,
)

SPACING = 110.0
"""The overview's distance between neighbouring groups along the ellipse."""
BASE_RX, BASE_RY = 440.0, 220.0


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
