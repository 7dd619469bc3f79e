"""One group's own view: its nodes in tiers by rank, its edges behind them, its neighbours.

Why tiers and not rows that wrap: a tier per rank, its members ordered under the nodes they
hang from (the mean position of their neighbours in the tiers above), lets a reader follow a
line from one tier to the next and tell which upper node feeds which lower one. A tier too wide
for one line zig-zags on two (neighbours alternate up and down, half a slot apart), so a line
to the lower half passes between the upper half's boxes rather than under them.

Why opaque boxes drawn after every line: a line that crosses a node's place runs *under* its
box and cannot lend it its colour; a node's outline is its own (the load of its busiest own
edge). Edges to other groups leave their node upwards into a lane of their own above the top
tier and run right to the neighbour's box: from a node of the top tier they cross no node at
all (a deployment ranks the nodes that reach other groups first).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from agent.console.topology import (
    LEGEND_LOADS,
    LOAD_ORDER,
    MARGIN,
    PEER_GAP,
    PEER_HEIGHT,
    PEER_WIDTH,
    SITE_WIDTH,
    Edge,
    Graph,
    Group,
    Node,
    busiest,
    curve,
    edge_figure,
    group_of,
    load_class,
    text_width,
)

NODE_HEIGHT = 24.0
NODE_PAD = 16.0
"""A box is its label's width plus this (8 px each side)."""
NODE_GAP = 14.0
TIER_GAP = 92.0
"""From one tier's line to the next one's."""
STAGGER = 36.0
"""How far the lower half of a zig-zagged tier sits below its upper half."""
GUTTER = 110.0
"""The left column that names each tier."""
HANDLE_AT = 0.4
"""A handle between two tiers sits this share of the way down from the upper node: two lines
crossing at their middles (a to d, b to c) keep their handles and figures apart."""
LANE = 7.0
"""The distance between two lanes of edges to other groups, above the top tier."""


@dataclass(frozen=True)
class NodeMark:
    """A node's box (centre x, y; width, height), its short label, its own load class."""

    node: Node
    x: float
    y: float
    w: float
    h: float
    text: str
    load: str


@dataclass(frozen=True)
class TierMark:
    """A tier's name at the left of its line."""

    text: str
    y: float


@dataclass(frozen=True)
class PeerMark:
    """A neighbouring group in a group's own view: a box to the right, linking to its view."""

    group: Group
    x: float
    y: float
    w: float
    h: float
    edges: int
    load: str


@dataclass(frozen=True)
class Drawn:
    """An edge as drawn: its path, the colour class, its handle and figure at (mx, my); ``a``
    and ``b`` the marks it joins (a node id, or a neighbouring group's id)."""

    edge: Edge
    a: str
    b: str
    load: str
    path: str
    mx: float
    my: float
    figure: str
    kinds: str = ""
    """The kinds of the nodes it joins here, space-separated (the kind filter matches them)."""
    along: float | None = 0.5
    """Where along the line its figure is written (the handle's share of the way), or None:
    on a lane to another group, the figure stands above the handle."""


@dataclass
class SiteView:
    """One group's nodes in tiers, its internal edges, its edges to neighbouring groups."""

    group: Group
    width: float
    height: float
    nodes: list[NodeMark] = field(default_factory=list)
    tiers: list[TierMark] = field(default_factory=list)
    edges: list[Drawn] = field(default_factory=list)
    peers: list[PeerMark] = field(default_factory=list)

    @property
    def marks(self) -> list[str]:
        """The kinds of mark this drawing uses (``data-mark``), each the legend must explain."""
        loads = {d.load for d in self.edges} | {n.load for n in self.nodes}
        loads |= {p.load for p in self.peers}
        shapes = ["tier", "node"] + (["edge", "handle", "figure"] if self.edges else [])
        shapes += ["peer"] if self.peers else []
        return shapes + [f"load-{load}" for load in LEGEND_LOADS if load in loads]


def split_edges(
    edges: Sequence[Edge], groups: dict[str, str], group_id: str
) -> tuple[list[Edge], dict[str, list[Edge]]]:
    """The group's internal edges, and its edges to each other group."""
    outward: dict[str, list[Edge]] = {}
    inside: list[Edge] = []
    for edge in edges:
        ga, gb = groups.get(edge.a), groups.get(edge.b)
        if ga == group_id and gb == group_id:
            inside.append(edge)
        elif ga == group_id and gb is not None:
            outward.setdefault(gb, []).append(edge)
        elif gb == group_id and ga is not None:
            outward.setdefault(ga, []).append(edge)
    return inside, outward


def tier_rows(mine: Sequence[Node], inside: Sequence[Edge]) -> list[list[Node]]:
    """One row per rank, top rank first; each row after the first ordered by where its
    nodes' neighbours sit in the rows above (0..1 across), so a node sits under its feeders."""
    neighbours: dict[str, set[str]] = {n.id: set() for n in mine}
    for edge in inside:
        neighbours[edge.a].add(edge.b)
        neighbours[edge.b].add(edge.a)
    where: dict[str, float] = {}
    rows: list[list[Node]] = []
    for rank in sorted({n.rank for n in mine}):
        members = [n for n in mine if n.rank == rank]

        def key(node: Node) -> tuple[float, str]:
            above = [where[o] for o in neighbours[node.id] if o in where]
            return (sum(above) / len(above) if above else 2.0, node.label)

        row = sorted(members, key=key)
        where.update({n.id: (i + 0.5) / len(row) for i, n in enumerate(row)})
        rows.append(row)
    return rows


def node_loads(edges: Sequence[Edge]) -> dict[str, str]:
    """Each node's own load class: its busiest edge's (a node with none is "unknown")."""
    own: dict[str, list[Edge]] = {}
    for edge in edges:
        own.setdefault(edge.a, []).append(edge)
        own.setdefault(edge.b, []).append(edge)
    result = {}
    for node, members in own.items():
        top = busiest(members)
        result[node] = load_class(top) if top is not None else "unknown"
    return result


def place_tiers(
    rows: list[list[Node]], group_id: str, loads: dict[str, str], top: float
) -> tuple[list[NodeMark], list[TierMark], float, float]:
    """Boxes for every node, tier names, the node area's width, and the bottom of the last
    tier. A tier that does not fit SITE_WIDTH on one line zig-zags; the area widens only when
    even that does not fit."""

    def short(node: Node) -> str:
        return node.label.removeprefix(f"{group_id}-") or node.label

    widest = max((text_width(short(n)) for row in rows for n in row), default=0.0)
    slot = widest + NODE_PAD + NODE_GAP

    def needed(count: int) -> float:
        return count * slot if count * slot <= SITE_WIDTH else (count + 1) * slot / 2

    area = max([SITE_WIDTH, *(needed(len(row)) for row in rows)])
    left = MARGIN + GUTTER
    marks: list[NodeMark] = []
    tiers: list[TierMark] = []
    y = top + NODE_HEIGHT / 2
    for row in rows:
        zigzag = len(row) * slot > SITE_WIDTH
        kinds = sorted({n.kind for n in row if n.kind})
        tiers.append(TierMark(", ".join(kinds), y))
        for index, node in enumerate(row):
            x = left + area * (index + 0.5) / len(row)
            drop = STAGGER if zigzag and index % 2 else 0.0
            width = text_width(short(node)) + NODE_PAD
            load = loads.get(node.id, "unknown")
            marks.append(NodeMark(node, x, y + drop, width, NODE_HEIGHT, short(node), load))
        y += TIER_GAP + (STAGGER if zigzag else 0.0)
    bottom = y - TIER_GAP + NODE_HEIGHT / 2 if rows else top
    return marks, tiers, area, bottom


def peer_marks(outward: dict[str, list[Edge]], known: dict[str, Group], x: float) -> list[PeerMark]:
    """A box per neighbouring group, top down in id order, coloured by its busiest edge."""
    marks = []
    for index, peer in enumerate(sorted(outward)):
        top = busiest(outward[peer])
        marks.append(
            PeerMark(
                known.get(peer, Group(peer, peer)),
                x,
                MARGIN + index * (PEER_HEIGHT + PEER_GAP),
                PEER_WIDTH,
                PEER_HEIGHT,
                len(outward[peer]),
                load_class(top) if top is not None else "unknown",
            )
        )
    return marks


def draw_inside(inside: Sequence[Edge], at: dict[str, NodeMark]) -> list[Drawn]:
    """Internal edges centre to centre (the boxes hide the ends); parallel ones bend apart."""
    seen: dict[frozenset[str], int] = {}
    drawn = []
    for edge in inside:
        a, b = at[edge.a], at[edge.b]
        pair = frozenset((edge.a, edge.b))
        index = seen[pair] = seen.get(pair, -1) + 1
        upper, lower = (a, b) if (a.y, a.x) <= (b.y, b.x) else (b, a)
        share = 0.5 if upper.y == lower.y else HANDLE_AT
        path, (mx, my), along = curve(upper.x, upper.y, lower.x, lower.y, index, share)
        kinds = " ".join(sorted({a.node.kind, b.node.kind} - {""}))
        figure = edge_figure(edge)
        load = load_class(edge)
        drawn.append(Drawn(edge, edge.a, edge.b, load, path, mx, my, figure, kinds, along=along))
    # long lines first, so short ones (easier to miss) are painted on top of them
    drawn.sort(key=lambda d: -math.hypot(at[d.a].x - at[d.b].x, at[d.a].y - at[d.b].y))
    return drawn


def draw_outward(
    outward: dict[str, list[Edge]], at: dict[str, NodeMark], peers: list[PeerMark]
) -> list[Drawn]:
    """Each edge to another group: up from its node into its own lane above the top tier,
    right to beside the neighbour's box, then into it (lane 0, the highest, for the first)."""
    drawn = []
    lane = 0
    box = {p.group.id: p for p in peers}
    leaving: dict[str, int] = {}
    per_node: dict[str, int] = {}
    for edges in outward.values():
        for edge in edges:
            end = edge.a if edge.a in at else edge.b
            per_node[end] = per_node.get(end, 0) + 1
    for peer, edges in sorted(outward.items()):
        mark = box[peer]
        for index, edge in enumerate(sorted(edges, key=lambda e: e.id)):
            local = at[edge.a] if edge.a in at else at[edge.b]
            # two lines leaving one node rise side by side, not on top of each other
            nth = leaving[local.node.id] = leaving.get(local.node.id, -1) + 1
            x = local.x + (nth - (per_node[local.node.id] - 1) / 2) * 6
            ly = MARGIN + lane * LANE
            turn = mark.x - 40 - 4 * (lane % 5)
            py = mark.y + mark.h / 2 + (index - (len(edges) - 1) / 2) * 5
            path = f"M{x:.1f},{local.y:.1f} V{ly:.1f} H{turn:.1f} L{mark.x:.1f},{py:.1f}"
            mx = (x + turn) / 2
            figure, kind = edge_figure(edge), local.node.kind
            load = load_class(edge)
            drawn.append(
                Drawn(edge, local.node.id, peer, load, path, mx, ly, figure, kind, along=None)
            )
            lane += 1
    return drawn


def site_view(graph: Graph, group_id: str) -> SiteView | None:
    """The view of one group; None when the graph has no such group."""
    known = {g.id: g for g in graph.groups}
    if group_id not in known:
        return None
    mine = [n for n in graph.nodes if n.group == group_id]
    inside, outward = split_edges(graph.edges, group_of(graph), group_id)
    lanes = sum(len(edges) for edges in outward.values())
    top = MARGIN + lanes * LANE + 24
    nodes, tiers, area, bottom = place_tiers(
        tier_rows(mine, inside), group_id, node_loads(graph.edges), top
    )
    peer_x = MARGIN + GUTTER + area + 90
    peers = peer_marks(outward, known, peer_x)
    at = {m.node.id: m for m in nodes}
    peers_bottom = MARGIN + len(peers) * (PEER_HEIGHT + PEER_GAP)
    view = SiteView(
        known[group_id],
        width=peer_x + PEER_WIDTH + MARGIN,
        height=max(bottom + 30 + MARGIN, peers_bottom + MARGIN, 160.0),
        nodes=nodes,
        tiers=tiers,
        peers=peers,
    )
    # busiest painted last: a hot line is never hidden under a quiet one
    outward_drawn = draw_outward(outward, at, peers)
    view.edges = draw_inside(inside, at) + sorted(outward_drawn, key=lambda d: -LOAD_ORDER[d.load])
    return view
