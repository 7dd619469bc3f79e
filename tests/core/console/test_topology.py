"""The network view's geometry: readable at any size, by construction (docs/console.md)."""

from __future__ import annotations

import itertools
import math

import pytest

from agent.console.topology import (
    PAGE_SIZE,
    Box,
    Edge,
    Graph,
    Group,
    Node,
    bundles,
    link_page,
    overview,
    site_view,
    text_width,
)

ROLES = (("core", 2), ("edge", 2), ("aggregation", 4), ("access", 16))


def network(sites: int, *, per_site: tuple[tuple[str, int], ...] = ROLES) -> Graph:
    """A ring of sites like the simulator's: devices by rank, a chain per site, peer links."""
    groups, nodes, edges = [], [], []
    for s in range(sites):
        gid = f"site{s:02d}"
        devices = sum(n for _, n in per_site)
        groups.append(Group(gid, f"{gid} (Site {s})", f"{devices} devices", gid))
        previous = None
        for rank, (role, count) in enumerate(per_site):
            for i in range(count):
                node = Node(f"{gid}-{role}-{i + 1:02d}", f"{gid}-{role}-{i + 1:02d}", gid, rank)
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


@pytest.mark.parametrize("access", [1, 5, 16, 40, 120])
def test_a_site_view_wraps_rows_so_labels_never_overlap(access: int) -> None:
    graph = network(3, per_site=(("core", 2), ("edge", 2), ("aggregation", 4), ("access", access)))
    view = site_view(graph, "site01")
    assert view is not None
    boxes = [label.box for _, label in view.nodes]
    assert overlapping(boxes) == []
    for box in boxes:
        assert box.x0 >= 0 and box.x1 <= view.width and box.y1 <= view.height
    assert {n.node.id for n, _ in view.nodes} == {n.id for n in graph.nodes if n.group == "site01"}
    assert [p.group.id for p in view.peers] == ["site00", "site02"]
    # Labels drop the site's prefix: the view already names the site.
    assert all(not label.lines[0].startswith("site01-") for _, label in view.nodes)
    assert site_view(graph, "nowhere") is None


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
