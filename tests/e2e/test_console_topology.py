"""The topology drawing's tools in a real Chromium at the demo seed (3 sites, 31 devices, 58
links for acme): zoom and pan, highlight filters, the pair view, the legend, regions, and a
site's devices in tiers with their own colours. tests/e2e/test_console_medium.py repeats the
checks that depend on scale at the medium seed.

The helpers here read what the page drew (attributes the server wrote) and compare it with what
the page's script did (classes it added), so each check fails if either side is wrong.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_console_browser import login

pytestmark = pytest.mark.system

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails under CI) with the reason
    expect = None

LINES = "#topology [data-a][data-b]"


def view_box(page: Any) -> list[float]:
    return [float(v) for v in page.locator("svg#topology").get_attribute("viewBox").split()]


def lines(page: Any) -> list[dict[str, str]]:
    """Every line of the drawing: its ends, filter data and classes, as the page holds them."""
    return list(
        page.evaluate(
            """(selector) => [...document.querySelectorAll(selector)].map((e) => ({
                a: e.dataset.a, b: e.dataset.b, loads: e.dataset.loads || "",
                statuses: e.dataset.statuses || "", kinds: e.dataset.kinds || "",
                load: e.dataset.load || "", cls: e.getAttribute("class"),
                id: e.dataset.link || e.dataset.bundle }))""",
            LINES,
        )
    )


def has(item: dict[str, str], css_class: str) -> bool:
    return css_class in item["cls"].split()


def drawn_marks(page: Any) -> set[str]:
    return set(
        page.evaluate(
            "() => [...document.querySelectorAll('#topology [data-mark]')]"
            ".map((e) => e.dataset.mark)"
        )
    )


def legend_marks(page: Any) -> set[str]:
    return set(
        page.evaluate(
            "() => [...document.querySelectorAll('#legend li')].map((e) => e.dataset.mark)"
        )
    )


def assert_legend_explains_the_drawing(page: Any) -> None:
    """The legend lists every mark the drawing uses, and nothing it does not (but the
    highlight, which the tools add)."""
    drawn, listed = drawn_marks(page), legend_marks(page)
    assert drawn, "the drawing holds no marks"
    assert listed - {"highlight"} == drawn, (drawn, listed)


def test_zoom_and_pan_move_the_view_box_by_button_key_wheel_and_drag(page, console_agent):
    login(page, console_agent, "alice")
    svg = page.locator("svg#topology")
    whole = view_box(page)
    page.get_by_role("button", name="Zoom in").click()
    zoomed = view_box(page)
    assert zoomed[2] == pytest.approx(whole[2] / 1.25, rel=1e-3), zoomed
    expect(page.locator("#zoom-level")).to_have_text("125 %")
    page.get_by_role("button", name="Reset view").click()
    assert view_box(page) == whole
    # The keyboard: focus the drawing, then + zooms, arrows pan, - zooms out, 0 resets.
    svg.focus()
    page.keyboard.press("+")
    page.keyboard.press("+")
    in_twice = view_box(page)
    assert in_twice[2] < whole[2] and in_twice[3] < whole[3]
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    moved = view_box(page)
    assert moved[0] > in_twice[0] and moved[1] > in_twice[1], (in_twice, moved)
    page.keyboard.press("-")
    assert view_box(page)[2] > in_twice[2]
    page.keyboard.press("0")
    assert view_box(page) == whole
    page.keyboard.press("-")  # never smaller than the whole drawing
    assert view_box(page) == whole
    # The wheel zooms where the pointer is; a drag pans (and does not follow a link).
    box = svg.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.5)
    page.mouse.wheel(0, 300)  # at the whole drawing, down scrolls the page, not the drawing
    page.wait_for_function("() => window.scrollY > 0")
    assert view_box(page) == whole
    svg.scroll_into_view_if_needed()
    box = svg.bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.5)
    page.mouse.wheel(0, -200)
    expect(svg).to_have_attribute("data-zoom", "1.25")
    before = view_box(page)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.7, steps=8)
    page.mouse.up()
    after = view_box(page)
    assert after[0] < before[0] and after[1] < before[1], (before, after)
    expect(page).to_have_url(re.compile(r"/console/network$"))


def test_figures_show_on_few_lines_or_once_zoomed_in(page, console_agent, screenshots: Path):
    login(page, console_agent, "alice")
    svg = page.locator("svg#topology")
    # three bundles: each says its links and its busiest one's load of its capacity
    expect(svg).to_have_class(re.compile(r"\bfigures\b"))
    expect(svg.locator('a.bundle[data-bundle="lon1~nyc1"] text.figure')).to_have_text(
        "2 links · 94 % of 50 Gbit/s"
    )
    expect(svg.locator('a.bundle[data-bundle="lon1~nyc1"] text.figure')).to_be_visible()
    # a site's 22 lines: figures only in each title, until zoomed in
    page.goto(f"{console_agent.base_url}/console/network?site=nyc1")
    hot = svg.locator('a.edge[data-link="acme-lnk-00002"]')
    expect(hot.locator("title")).to_contain_text("82 % of 100 Gbit/s")
    expect(hot.locator("text.figure")).to_be_hidden()
    svg.focus()
    for _ in range(3):
        page.keyboard.press("+")
    expect(svg).to_have_class(re.compile(r"\bfigures\b"))
    expect(hot.locator("text.figure")).to_have_text("82 % of 100 Gbit/s")
    page.screenshot(path=screenshots / "network-site-zoomed.png")


def test_highlight_filters_mark_exactly_the_matching_lines(page, console_agent, screenshots):
    login(page, console_agent, "alice")
    page.get_by_label("utilization").select_option("hot")
    expect(page.locator("#filter-result")).to_contain_text("lines highlighted")
    drawn = lines(page)
    hot = [d["id"] for d in drawn if "hot" in d["loads"].split()]
    assert hot and len(hot) < len(drawn)
    assert [d["id"] for d in drawn if has(d, "match")] == hot
    expect(page.locator("svg#topology")).to_have_class(re.compile(r"\bfiltering\b"))
    # In a site's view: down links, then a role (its devices, and the lines touching them)
    page.goto(f"{console_agent.base_url}/console/network?site=nyc1")
    page.get_by_label("status").select_option("down")
    drawn = lines(page)
    assert [d["id"] for d in drawn if has(d, "match")] == ["acme-lnk-00015"]
    page.get_by_label("status").select_option("")
    page.get_by_label("role").select_option("access")
    drawn = lines(page)
    touching = {d["id"] for d in drawn if "access" in d["kinds"].split()}
    assert touching and {d["id"] for d in drawn if has(d, "match")} == touching
    matched = page.locator("#topology g.node.match")
    expect(matched).to_have_count(5)
    for name in matched.locator("text").all_text_contents():
        assert name.startswith("access-"), name
    page.screenshot(path=screenshots / "network-site-filtered.png")
    page.get_by_label("role").select_option("")
    expect(page.locator("#topology .match")).to_have_count(0)
    expect(page.locator("svg#topology")).not_to_have_class(re.compile(r"\bfiltering\b"))


def test_the_pair_view_highlights_exactly_the_links_between_two_ends(page, console_agent):
    login(page, console_agent, "alice")
    page.get_by_label("one end").select_option("nyc1")
    page.get_by_label("other end").select_option("lon1")
    expect(page.locator("#pair-result")).to_have_text("2 links between nyc1 and lon1")
    paired = [d["id"] for d in lines(page) if has(d, "pair")]
    assert paired == ["lon1~nyc1"]
    ends = page.locator("#topology .pair-end")
    expect(ends).to_have_count(2)
    # In a site's view: two devices, then a device and another site
    page.goto(f"{console_agent.base_url}/console/network?site=nyc1")
    node = page.evaluate(
        "() => Object.fromEntries([...document.querySelectorAll('#topology g.node')]"
        ".map((g) => [g.querySelector('text').textContent, g.dataset.node]))"
    )
    core, edge = node["core-01"], node["edge-01"]
    page.get_by_label("one end").select_option(label="core-01")
    page.get_by_label("other end").select_option(label="edge-01")
    drawn = lines(page)
    between = {d["id"] for d in drawn if {d["a"], d["b"]} == {core, edge}}
    assert between and {d["id"] for d in drawn if has(d, "pair")} == between
    expect(page.locator("#pair-result")).to_have_text(
        f"{len(between)} link{'s' if len(between) != 1 else ''} between core-01 and edge-01"
    )
    # a device and another site: the device's links to that site
    page.get_by_label("one end").select_option(label="edge-01")
    page.get_by_label("other end").select_option(label="site lon1")
    drawn = lines(page)
    to_lon1 = {d["id"] for d in drawn if {d["a"], d["b"]} == {edge, "lon1"}}
    assert to_lon1 and {d["id"] for d in drawn if has(d, "pair")} == to_lon1
    page.get_by_label("other end").select_option("")
    expect(page.locator("#topology .pair")).to_have_count(0)


def test_the_legend_lists_every_mark_of_each_drawing(page, console_agent):
    login(page, console_agent, "alice")
    assert_legend_explains_the_drawing(page)
    assert {"region", "group", "bundle", "handle", "figure", "load-hot"} <= drawn_marks(page)
    page.goto(f"{console_agent.base_url}/console/network?site=nyc1")
    assert_legend_explains_the_drawing(page)
    assert {"tier", "node", "edge", "peer", "load-idle", "load-hot"} <= drawn_marks(page)


def test_regions_group_the_sites_on_the_overview(page, console_agent):
    login(page, console_agent, "alice")
    regions = page.locator("#topology g.region")
    named = set(
        page.evaluate(
            "() => [...document.querySelectorAll('#topology a.site-mark')]"
            ".map((e) => e.dataset.region)"
        )
    )
    assert named == {"us-east", "eu-west", "ap-southeast"}
    expect(regions).to_have_count(len(named))
    for region in named:
        expect(regions.locator(f"xpath=self::*[@data-region='{region}']")).to_have_count(1)


def test_a_site_draws_tiers_and_each_device_in_its_own_colour_on_top(page, console_agent):
    login(page, console_agent, "alice")
    page.goto(f"{console_agent.base_url}/console/network?site=nyc1")
    expect(page.locator("#topology text.tier")).to_have_text(
        ["edge", "core", "aggregation", "access"]
    )
    found = page.evaluate(
        """() => {
        const order = ["hot", "warm", "ok", "unknown", "idle"];
        const lines = [...document.querySelectorAll('#topology [data-a][data-b]')];
        return [...document.querySelectorAll('#topology g.node')].map((node) => {
          const id = node.dataset.node;
          const own = lines.filter((l) => l.dataset.a === id || l.dataset.b === id)
            .map((l) => l.dataset.load).sort((x, y) => order.indexOf(x) - order.indexOf(y));
          const r = node.querySelector('rect').getBoundingClientRect();
          const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
          return {id, cls: node.getAttribute('class'), own: own[0] || 'unknown',
                  onTop: node.contains(top)};
        });
    }"""
    )
    assert len(found) == 11
    for node in found:
        # each device's outline is its own busiest link's load, whatever passes under it
        assert node["cls"] == f"node {node['own']}", node
        # and nothing is painted over it: the box is what the pointer finds at its centre
        assert node["onTop"], node


def test_pointing_at_a_device_shows_its_own_links(page, console_agent, screenshots: Path):
    login(page, console_agent, "alice")
    page.goto(f"{console_agent.base_url}/console/network?site=nyc1")
    node = page.locator("#topology g.node").filter(has_text="agg-01")
    node_id = node.get_attribute("data-node")
    node.hover()
    expect(page.locator("svg#topology")).to_have_class(re.compile(r"\bhovering\b"))
    drawn = lines(page)
    own = {d["id"] for d in drawn if node_id in (d["a"], d["b"])}
    assert own and len(own) < len(drawn)
    assert {d["id"] for d in drawn if has(d, "touching")} == own
    page.screenshot(path=screenshots / "network-site-hover.png")
    page.mouse.move(1, 1)
    expect(page.locator("#topology .touching")).to_have_count(0)
