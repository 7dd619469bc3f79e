"""The network view's geometry: readable at any size, by construction (docs/console.md)."""

from __future__ import annotations

import itertools
import math

import pytest

from agent.console.ring_layout import Box, crossings, overview
from agent.console.site_layout import NodeMark, site_view
from agent.console.topology import (
    PAGE_SIZE,
    Edge,
    Graph,
    Group,
    Node,
    bundles,
    drawing_filters,
    edge_figure,
    link_page,
    text_width,
)

ROLES = (("core", 2), ("edge", 2), ("aggregation", 4), ("access", 16))


def network(
    sites: int, *, per_site: tuple[tuple[str, int], ...] = ROLES, regions: int = 0
) -> Graph:
    """A ring of sites like the simulator's: devices by rank, a chain per site, peer links."""
    groups, nodes, edges = [], [], []
    for s in range(sites):
        gid = f"site{s:02d}"
        devices = sum(n for _, n in per_site)
        region = f"r{s % regions}" if regions else ""
        groups.append(Group(gid, f"{gid} (Site {s})", f"{devices} devices", gid, region))
        previous = None
        for rank, (role, count) in enumerate(per_site):
            for i in range(count):
                name = f"{gid}-{role}-{i + 1:02d}"
                node = Node(name, name, gid, rank, kind=role)
                nodes.append(node)
                if previous is not None:
                    edges.append(
                        Edge(f"{node.id}~{previous}", previous, node.id, "", "connected", 0.3)
                    )
                previous = node.id
        if s:
            a, b = f"site{s - 1:02d}-core-01", f"{gid}-core-01"
            ratio = 0.9 if s % 5 == 0 else 0.55 if s % 3 == 0 else 0.2
            edges.append(Edge(f"peer-{s}-a", a, b, "", "connected", ratio))
            edges.append(Edge(f"peer-{s}-b", a, b, "", "down" if s % 4 == 0 else "connected", 0.1))
    return Graph(groups, nodes, edges)


def overlapping(boxes: list[Box]) -> list[tuple[int, int]]:
    pairs = itertools.combinations(enumerate(boxes), 2)
    return [(i, j) for (i, a), (j, b) in pairs if a.overlaps(b)]


def circle_box(x: float, y: float, r: float) -> Box:
    return Box(x - r, y - r, x + r, y + r)


@pytest.mark.parametrize("sites", [1, 2, 3, 5, 9, 26, 43, 80, 150])
def test_the_overview_never_overlaps_a_label_and_grows_with_sites_only(sites: int) -> None:
    drawn = overview(network(sites))
    assert len(drawn.groups) == sites
    labels = [m.label.box for m in drawn.groups]
    marks = [circle_box(m.x, m.y, m.r) for m in drawn.groups]
    assert overlapping(labels) == []
    assert overlapping(marks) == []
    assert [(i, j) for i, a in enumerate(labels) for j, b in enumerate(marks) if a.overlaps(b)] == (
        []
    )
    for box in labels + marks:
        assert box.x0 >= 0 and box.x1 <= drawn.width and box.y0 >= 0 and box.y1 <= drawn.height
    # Landscape, and no taller than a screen until the ring must grow to keep labels apart.
    assert drawn.width > drawn.height
    if sites <= 30:
        assert drawn.height <= 820 and drawn.width <= 1500, (drawn.width, drawn.height)


def test_the_overview_does_not_grow_with_devices() -> None:
    few = overview(network(26, per_site=(("core", 10),)))
    many = overview(network(26, per_site=(("core", 3), ("access", 96))))
    assert (few.width, few.height) == (many.width, many.height)


def test_bundles_aggregate_inter_site_links_coloured_by_the_busiest() -> None:
    graph = network(6)
    joined = {(b.a, b.b): b for b in bundles(graph)}
    assert len(joined) == 5 and all(len(b.edges) == 2 for b in joined.values())
    assert joined[("site04", "site05")].load == "hot"  # 90 % beats the other member's 10 %
    assert joined[("site02", "site03")].load == "warm"
    assert joined[("site00", "site01")].load == "ok"
    assert joined[("site03", "site04")].down == 1
    assert "1 down" in joined[("site03", "site04")].describe()
    drawn = overview(graph)
    assert [m.bundle.load for m in drawn.bundles][-1] == "hot"  # painted last, on top


def box_of(mark: NodeMark) -> Box:
    return Box(mark.x - mark.w / 2, mark.y - mark.h / 2, mark.x + mark.w / 2, mark.y + mark.h / 2)


@pytest.mark.parametrize("access", [1, 5, 16, 40, 120])
def test_a_site_view_puts_a_tier_per_rank_and_no_two_boxes_overlap(access: int) -> None:
    graph = network(3, per_site=(("core", 2), ("edge", 2), ("aggregation", 4), ("access", access)))
    view = site_view(graph, "site01")
    assert view is not None
    boxes = [box_of(m) for m in view.nodes]
    assert overlapping(boxes) == []
    for box in boxes:
        assert box.x0 >= 0 and box.x1 <= view.width and box.y1 <= view.height
    assert {m.node.id for m in view.nodes} == {n.id for n in graph.nodes if n.group == "site01"}
    assert [t.text for t in view.tiers] == ["core", "edge", "aggregation", "access"]
    # every tier lies wholly below the one before it (a zig-zagged tier takes two lines)
    tops = [[m.y for m in view.nodes if m.node.kind == t.text] for t in view.tiers]
    assert all(max(upper) < min(lower) for upper, lower in itertools.pairwise(tops))
    assert [p.group.id for p in view.peers] == ["site00", "site02"]
    # Labels drop the site's prefix: the view already names the site.
    assert all(not m.text.startswith("site01-") for m in view.nodes)
    assert site_view(graph, "nowhere") is None


def test_a_lower_tier_sits_under_the_nodes_that_feed_it() -> None:
    """Two uppers, each feeding its own lowers: each upper's lowers sit on its side."""
    nodes = [Node("u-b", "u-b", "g", 0), Node("u-a", "u-a", "g", 0)]
    nodes += [Node(f"l{i}", f"l{i}", "g", 1) for i in range(6)]
    feeds = {"l0": "u-b", "l1": "u-a", "l2": "u-b", "l3": "u-a", "l4": "u-b", "l5": "u-a"}
    edges = [Edge(f"{lo}~{up}", up, lo, "", "connected", 0.1) for lo, up in feeds.items()]
    view = site_view(Graph([Group("g", "g")], nodes, edges), "g")
    assert view is not None
    x = {m.node.id: m.x for m in view.nodes}
    assert x["u-a"] < x["u-b"]
    assert max(x[lo] for lo, up in feeds.items() if up == "u-a") < min(
        x[lo] for lo, up in feeds.items() if up == "u-b"
    )


def test_a_node_takes_its_own_colour_and_a_line_under_it_gives_it_none() -> None:
    """A hot edge between a and c passes where b sits: b stays by its own (quiet) edge."""
    nodes = [Node("a", "a", "g", 0), Node("b", "b", "g", 1), Node("c", "c", "g", 2)]
    edges = [
        Edge("hot", "a", "c", "", "connected", 0.95),
        Edge("quiet", "a", "b", "", "connected", 0.1),
    ]
    view = site_view(Graph([Group("g", "g")], nodes, edges), "g")
    assert view is not None
    load = {m.node.id: m.load for m in view.nodes}
    assert load == {"a": "hot", "b": "ok", "c": "hot"}


def test_edges_to_other_groups_run_in_lanes_above_every_node() -> None:
    graph = network(3)
    view = site_view(graph, "site01")
    assert view is not None
    top = min(m.y - m.h / 2 for m in view.nodes)
    outward = [d for d in view.edges if d.b in {"site00", "site02"}]
    assert len(outward) == 4
    assert all(d.my < top for d in outward)  # each handle in its lane, above the top tier
    assert len({d.my for d in outward}) == 4  # a lane each


def test_figures_say_load_of_capacity_or_status() -> None:
    assert edge_figure(Edge("e", "a", "b", "", "connected", 0.623, "10 Gbit/s")) == (
        "62 % of 10 Gbit/s"
    )
    assert edge_figure(Edge("e", "a", "b", "", "down", None, "1 Gbit/s")) == "down of 1 Gbit/s"
    assert edge_figure(Edge("e", "a", "b", "", "connected", None)) == "connected"


def test_regions_sit_together_on_the_ring_with_a_sector_each() -> None:
    graph = network(26, regions=3)
    drawn = overview(graph)
    assert [r.name for r in drawn.regions] == ["r0", "r1", "r2"]
    region = {g.id: g.region for g in graph.groups}
    for mark in drawn.regions:
        assert {region[g] for g in mark.groups} == {mark.name}
    assert sorted(g for r in drawn.regions for g in r.groups) == sorted(region)
    # a region's groups take consecutive places on the ring
    order = [m.group.id for m in drawn.groups]
    names = [region[g] for g in order]
    assert sum(1 for a, b in itertools.pairwise(names) if a != b) == 2
    assert overview(network(5)).regions == []  # no regions given, none drawn


def test_turning_a_region_round_uncrosses_its_lines() -> None:
    assert crossings(["a", "b", "c", "d"], [("a", "c"), ("b", "d")]) == 1
    assert crossings(["a", "b", "c", "d"], [("a", "d"), ("b", "c")]) == 0
    assert crossings(["a", "b", "c"], [("a", "b"), ("b", "c")]) == 0  # a shared end


def test_the_legend_marks_and_filters_cover_what_is_drawn() -> None:
    graph = network(6, regions=2)
    drawn = overview(graph)
    assert {"region", "group", "bundle", "handle", "figure", "load-hot", "load-ok"} <= set(
        drawn.marks
    )
    view = site_view(graph, "site01")
    assert view is not None
    assert {"tier", "node", "edge", "peer", "load-ok"} <= set(view.marks)
    filters = drawing_filters(graph)
    assert filters.statuses == ["connected", "down"]
    assert filters.kinds == ["access", "aggregation", "core", "edge"]
    assert filters.loads[0] == "hot"


def test_text_width_over_estimates_the_label_font() -> None:
    assert text_width("access-16") >= 9 * 7.5


def test_the_links_table_puts_hot_then_down_first_and_pages() -> None:
    edges = [
        Edge("e-ok", "a", "b", "x", "connected", 0.2),
        Edge("e-unknown", "a", "b", "x", "connected", None),
        Edge("e-planned", "a", "b", "x", "planned", None),
        Edge("e-warm", "a", "b", "x", "connected", 0.6),
        Edge("e-down", "a", "b", "x", "down", None),
        Edge("e-hot2", "a", "b", "x", "connected", 0.85),
        Edge("e-hot1", "a", "b", "x", "connected", 0.95),
    ]
    order = [e.id for e in link_page(edges).rows]
    assert order == ["e-hot1", "e-hot2", "e-down", "e-warm", "e-ok", "e-unknown", "e-planned"]
    assert [e.id for e in link_page(edges, load="down").rows] == ["e-down"]
    assert [e.id for e in link_page(edges, load="idle").rows] == ["e-down", "e-planned"]
    assert [e.id for e in link_page(edges, text="HOT").rows] == ["e-hot1", "e-hot2"]
    many = [Edge(f"l{i:04d}", "a", "b", "x", "connected", 0.1) for i in range(1203)]
    last = link_page(many, page=999)
    assert (last.page, last.pages, last.first, last.last) == (25, 25, 1201, 1203)
    assert len(link_page(many).rows) == PAGE_SIZE and link_page(many, page=0).page == 1
    assert math.ceil(1203 / PAGE_SIZE) == last.pages
