"""The network view at the README's medium seed (26 sites, 616 devices, 1,203 links for acme),
in a real Chromium: everything it draws fits the screen and nothing overlaps.

Seeding. ``netagent seed --scale medium`` writes 2.7 million link samples (seven days every
15 minutes, both directions) and half a million device metrics: 80 s on SQLite on a quiet
2-core machine, 180 s beside another test, more than every other console test together. The
network view reads only the newest samples (15 minutes back), so by default this module seeds
the *same* topology
(the medium profile's sites, devices, interfaces, links, statuses, and its hot and down
links, which the simulator picks from the topology, not from the window) with two hours of
link samples and one of metrics (a few seconds). ``NETAGENT_E2E_MEDIUM=full`` seeds the
whole profile instead. Each run prints how long its seed took.

Screenshots go where the other browser tests put theirs (``tests/e2e/screenshots/`` or
``$NETAGENT_SCREENSHOTS``); the test prints their paths.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent.storage.engine import make_engine
from db import simulator
from db.migrate import upgrade
from db.scales import HOUR, SCALES
from tests.conftest import FIXED_NOW, RunningAgent, postgres_database, start_agent
from tests.e2e.test_console_browser import login
from tests.e2e.test_console_topology import assert_legend_explains_the_drawing, has, lines, view_box

pytestmark = pytest.mark.system

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails under CI) with the reason
    expect = None

CURRENT_ONLY = replace(SCALES["medium"], link_window_s=2 * HOUR, metric_window_s=HOUR)
"""The medium topology with only the telemetry the network view reads."""
VIEWPORT = {"width": 1400, "height": 900}
PAGE_HEIGHT_BOUND = 4_200
"""The tallest a network page may be: the drawing with its tools and legend, one page of 50
links, a link's chart."""
HOT = {"acme-lnk-00002", "acme-lnk-00010", "acme-lnk-00092"}

BOXES = """(selector) => [...document.querySelectorAll(selector)].map((e) => {
  const r = e.getBoundingClientRect();
  return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom, text: e.textContent.trim()};
})"""


def seed_medium(url: str) -> float:
    """Seed the medium network (see the module's docstring); the seconds it took."""
    full = os.environ.get("NETAGENT_E2E_MEDIUM") == "full"

    async def run() -> None:
        await upgrade(url)
        engine = make_engine(url)
        try:
            with pytest.MonkeyPatch.context() as patch:
                if not full:
                    patch.setattr(simulator, "resolve_profile", lambda *_: CURRENT_ONLY)
                await simulator.seed(engine, scale="medium", until=FIXED_NOW)
        finally:
            await engine.dispose()

    started = time.perf_counter()
    asyncio.run(run())
    return time.perf_counter() - started


@pytest.fixture(scope="module")
def console_agent(
    tmp_path_factory: pytest.TempPathFactory, backend: str, _agents_use_backend: None
) -> Iterator[RunningAgent]:
    """One agent on the medium network per backend (the browser fixture starts after it)."""
    home = tmp_path_factory.mktemp("console-medium")
    if backend == "postgresql":
        url = postgres_database(f"medium_{uuid.uuid4().hex[:12]}")
        assert url is not None
    else:
        url = f"sqlite+aiosqlite:///{home / 'netagent.db'}"
    seconds = seed_medium(url)
    mode = "full" if os.environ.get("NETAGENT_E2E_MEDIUM") == "full" else "current-only"
    print(f"\nmedium seed ({mode}, {backend}): {seconds:.1f} s")
    running = start_agent(home, database_url=url, seeded=False)
    yield running
    running.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    yield opened
    context.close()


def boxes(page: Any, selector: str) -> list[dict[str, Any]]:
    return list(page.evaluate(BOXES, selector))


def overlaps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a["x0"] < b["x1"] and b["x0"] < a["x1"] and a["y0"] < b["y1"] and b["y0"] < a["y1"]


def assert_apart(found: list[dict[str, Any]], others: list[dict[str, Any]] | None = None) -> None:
    """No two boxes of ``found`` overlap (nor one of ``found`` and one of ``others``)."""
    if others is None:
        clashes = [
            (a["text"], b["text"])
            for i, a in enumerate(found)
            for b in found[i + 1 :]
            if overlaps(a, b)
        ]
    else:
        clashes = [(a["text"], b["text"]) for a in found for b in others if overlaps(a, b)]
    assert clashes == [], clashes


def assert_within_viewport(page: Any, found: list[dict[str, Any]]) -> None:
    width, height = VIEWPORT["width"], VIEWPORT["height"]
    outside = [
        b["text"]
        for b in found
        if b["x0"] < 0 or b["y0"] < 0 or b["x1"] > width or b["y1"] > height
    ]
    assert outside == [], outside


def assert_page_bounded(page: Any) -> None:
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height <= PAGE_HEIGHT_BOUND, height
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def print_size(page: Any, what: str) -> None:
    """Print a drawing's size in its own units and on the screen (docs/console.md quotes it)."""
    [svg] = boxes(page, "svg#topology")
    units = (
        page.locator("svg#topology").get_attribute("width"),
        page.locator("svg#topology").get_attribute("height"),
    )
    width, height = svg["x1"] - svg["x0"], svg["y1"] - svg["y0"]
    print(
        f"\n{what}: {float(units[0]):,.0f} by {float(units[1]):,.0f} units, "
        f"{width:,.0f} by {height:,.0f} px"
    )


def shot(page: Any, screenshots: Path, name: str) -> None:
    path = screenshots / name
    page.screenshot(path=path, full_page=True)
    print(f"screenshot: {path}")


def test_the_medium_overview_fits_the_screen_and_nothing_overlaps(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    expect(page.locator("#network-summary")).to_contain_text("26 sites, 616 devices, 1,203 links.")
    graph = page.locator("svg#topology")
    expect(graph.locator("a.site-mark")).to_have_count(26)
    expect(graph.locator("a.bundle")).to_have_count(25)
    # The whole overview is on the screen at once, and inside it nothing overlaps.
    graph.scroll_into_view_if_needed()
    [svg] = boxes(page, "svg#topology")
    assert svg["y1"] - svg["y0"] <= VIEWPORT["height"], svg
    print_size(page, "medium overview")
    labels = boxes(page, "a.site-mark text")
    marks = boxes(page, "a.site-mark circle")
    assert len(labels) == len(marks) == 26
    assert_within_viewport(page, labels + marks)
    assert_apart(labels)
    assert_apart(marks)
    assert_apart(labels, marks)
    # Readable: the labels are not shrunk below 11 px to make the ring fit.
    assert min(b["y1"] - b["y0"] for b in labels) >= 2 * 11, labels[:3]
    hot = graph.locator('a.bundle[data-load="hot"]')
    expect(hot).to_have_count(1)
    expect(hot).to_have_attribute("data-bundle", "lon1~nyc1")
    # The links table: one page of 50, the hot links and then the down one on top.
    expect(page.locator("#links-count")).to_have_text(
        "Links 1 to 50 of 1,203, hot and down links first."
    )
    rows = page.locator("#links-table tbody tr")
    expect(rows).to_have_count(50)
    assert {rows.nth(i).locator("td").first.inner_text() for i in range(3)} == HOT
    expect(rows.nth(3).locator("td").nth(2)).to_have_text("down")
    expect(page.locator("#links-pager")).to_contain_text("page 1 of 25")
    assert_page_bounded(page)
    shot(page, screenshots, "medium-overview.png")

    page.locator("#links-pager").get_by_role("link", name="Next").click()
    expect(page.locator("#links-count")).to_contain_text("Links 51 to 100 of 1,203")
    page.get_by_label("Find").fill("lon1-edge-01")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#links-count")).to_contain_text("matching (of 1,203)")
    for text in page.locator("#links-table tbody tr td:nth-child(2)").all_inner_texts():
        assert "lon1-edge-01" in text, text

    # The hot bundle opens lon1's view with the table down to its links with nyc1.
    page.goto(f"{console_agent.base_url}/console/network")
    hot.focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"site=lon1&peer=nyc1"))
    expect(page.locator("#links-title")).to_have_text("Links of lon1 with nyc1")
    expect(page.locator("#links-table tbody tr")).to_have_count(2)
    expect(page.locator("#links-table tbody tr").first).to_contain_text("acme-lnk-00092")
    shot(page, screenshots, "medium-pair.png")


def test_a_medium_site_view_fits_the_screen_and_nothing_overlaps(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    page.locator('a.site-mark[data-site="nyc1"]').click()
    graph = page.locator("svg#topology")
    expect(graph.locator("g.node")).to_have_count(25)
    graph.scroll_into_view_if_needed()
    [svg] = boxes(page, "svg#topology")
    assert svg["y1"] - svg["y0"] <= VIEWPORT["height"], svg
    print_size(page, "medium site view of nyc1")
    labels = boxes(page, "g.node text")
    nodes = boxes(page, "g.node rect")
    peers = boxes(page, "a.peer rect")
    assert_within_viewport(page, labels + nodes + peers)
    assert_apart(labels)
    assert_apart(nodes)
    # each device's name sits inside its own opaque box, which no other box touches
    assert len(labels) == len(nodes) == 25
    for label, node in zip(labels, nodes, strict=True):
        assert node["x0"] <= label["x0"] and label["x1"] <= node["x1"], (label, node)
        assert node["y0"] <= label["y0"] and label["y1"] <= node["y1"], (label, node)
    assert_apart(nodes, peers)
    expect(page.locator("#links-count")).to_contain_text("of 48,")
    # A link of the site opens with its chart, and the page stays bounded.
    graph.locator('a.edge[data-link="acme-lnk-00002"]').focus()
    page.keyboard.press("Enter")
    expect(page.locator("#current-utilization")).to_have_class("load-hot")
    expect(page.locator("g.node")).to_have_count(25)  # still the site's view
    assert_page_bounded(page)
    shot(page, screenshots, "medium-site.png")


def test_what_is_wrong_search_and_a_device_page_at_the_medium_scale(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    page.get_by_role("navigation", name="Console views").get_by_role(
        "link", name="Problems"
    ).click()
    expect(page.locator("#problems-count")).to_contain_text(
        "6 problems: 1 critical, 2 major, 3 warning."
    )
    rows = page.locator("#problems-table tbody tr")
    expect(rows).to_have_count(6)
    assert {rows.nth(i).get_attribute("data-name") for i in range(3, 6)} == HOT
    expect(page.get_by_label("Site").locator("option")).to_have_count(27)  # all, and 26 sites
    assert_page_bounded(page)
    shot(page, screenshots, "medium-problems.png")
    page.get_by_label("Site").select_option("lon1")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("acme-lnk-00092")

    page.get_by_role("navigation", name="Console views").get_by_role("link", name="Search").click()
    page.get_by_label("Site, device, interface or link").fill("lon9")
    page.get_by_role("button", name="Search").click()
    count = page.locator("#search-count")
    expect(count).to_contain_text("1 site, 15 devices, 0 interfaces, 25 links")
    assert_page_bounded(page)
    shot(page, screenshots, "medium-search.png")
    page.locator("#hits-devices").get_by_role("link", name="lon9-core-01").click()
    expect(page.locator("h1")).to_contain_text("lon9-core-01")
    expect(page.locator("#device-facts")).to_contain_text("Junos OS")
    expect(page.locator('.gauge[data-metric="cpu"] .gauge-value')).to_have_text(
        re.compile(r"^\d+\.\d %$")
    )
    assert_page_bounded(page)
    shot(page, screenshots, "medium-device.png")


def test_a_capacity_check_and_its_task_lead_with_the_answer_at_the_medium_scale(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    page.goto(f"{console_agent.base_url}/console/try?skill=lookup_inventory")
    page.get_by_label("Arguments as JSON").fill('{"kind": "links"}')
    expect(page.locator("#validity")).to_have_text("Valid against the input schema.")
    page.get_by_role("button", name="Invoke (stream)").click()
    expect(page.locator("#final-state")).to_contain_text("COMPLETED")
    # The answer in words; the JSON of every link folded (the page stays short).
    expect(page.locator("#result-answer")).to_have_text(re.compile(r"^[\d,]+ links"))
    assert_page_bounded(page)
    shot(page, screenshots, "medium-try-it.png")
    page.goto(f"{console_agent.base_url}/console/tasks?skill=lookup_inventory")
    expect(page.locator("#tasks-table .answer").first).to_have_text(re.compile(r"^[\d,]+ links"))
    assert_page_bounded(page)
    shot(page, screenshots, "medium-tasks.png")


def test_busiest_links_both_directions_and_csv_at_the_medium_scale(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    busiest = page.locator("#busiest-list li a")
    expect(busiest).to_have_count(10)
    assert set(busiest.all_inner_texts()[:3]) == HOT
    busiest.first.click()
    stats = page.locator("#direction-stats tbody tr")
    expect(stats).to_have_count(2)
    expect(stats.first.locator("td").nth(1)).to_have_text(re.compile(r"bit/s \(\d+\.\d %\)$"))
    expect(page.locator("svg#utilization-chart text.tick-label").first).to_be_visible()
    assert_page_bounded(page)
    shot(page, screenshots, "medium-link-directions.png")
    with page.expect_download() as download:
        page.locator("#links-csv").click()
    rows = Path(download.value.path()).read_text("utf-8").splitlines()
    assert rows[0] == "id,ends,status,capacity,load_percent_now"
    assert len(rows) == 1 + 1_203  # every link, not one page


def test_the_medium_overview_groups_regions_and_its_tools_highlight_exact_lines(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    graph = page.locator("svg#topology")
    # 26 sites in 3 regions: a sector each, naming its sites' count, a region's sites side by side
    regions = graph.locator("g.region")
    expect(regions).to_have_count(3)
    expect(graph.locator("g.region-name text")).to_have_text(
        ["ap-southeast · 8 sites", "eu-west · 9 sites", "us-east · 9 sites"]
    )
    graph.scroll_into_view_if_needed()
    names = boxes(page, "g.region-name rect")
    assert_apart(names, boxes(page, "a.site-mark text") + boxes(page, "a.site-mark circle"))
    assert_apart(names)
    ring = [m.get_attribute("data-region") for m in graph.locator("a.site-mark").all()]
    changes = sum(1 for a, b in itertools.pairwise(ring) if a != b)
    assert changes == 2, ring
    assert_legend_explains_the_drawing(page)
    # 25 bundles: figures wait for a zoom (they would pile up at the ring's middle)
    expect(graph).not_to_have_class(re.compile(r"\bfigures\b"))
    page.get_by_label("utilization").select_option("hot")
    drawn = lines(page)
    assert [d["id"] for d in drawn if has(d, "match")] == ["lon1~nyc1"]
    assert [d["id"] for d in drawn if "hot" in d["loads"].split()] == ["lon1~nyc1"]
    shot(page, screenshots, "medium-overview-filtered.png")
    page.get_by_label("utilization").select_option("")
    page.get_by_label("one end").select_option("sin3")
    page.get_by_label("other end").select_option("lon3")
    assert [d["id"] for d in lines(page) if has(d, "pair")] == ["lon3~sin3"]
    expect(page.locator("#pair-result")).to_have_text("2 links between sin3 and lon3")
    graph.focus()
    whole = view_box(page)
    for _ in range(3):
        page.keyboard.press("+")
    page.keyboard.press("ArrowLeft")
    assert view_box(page)[2] < whole[2] / 1.9
    expect(graph).to_have_class(re.compile(r"\bfigures\b"))
    shot(page, screenshots, "medium-overview-zoomed.png")


def test_a_medium_site_puts_each_access_switch_under_its_aggregation_switches(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    page.goto(f"{console_agent.base_url}/console/network?site=nyc1")
    graph = page.locator("svg#topology")
    expect(graph.locator("text.tier")).to_have_text(["edge", "core", "aggregation", "access"])
    assert_legend_explains_the_drawing(page)
    # Left to right, the access switches' feeders (mean x of their aggregation switches) never
    # step back: whoever feeds an access switch stands above it, not across the drawing.
    feeders = page.evaluate(
        """() => {
        const nodes = [...document.querySelectorAll('#topology g.node')];
        const at = Object.fromEntries(nodes.map((n) => {
          const r = n.querySelector('rect').getBoundingClientRect();
          return [n.dataset.node, {x: r.left + r.width / 2, kind: n.dataset.kinds}];
        }));
        const lines = [...document.querySelectorAll('#topology [data-a][data-b]')];
        return nodes.filter((n) => n.dataset.kinds === 'access').map((n) => {
          const id = n.dataset.node;
          const up = lines.map((l) => l.dataset.a === id ? l.dataset.b : l.dataset.b === id
            ? l.dataset.a : null).filter((o) => o && at[o] && at[o].kind === 'aggregation');
          return [at[id].x, up.length ? up.reduce((s, o) => s + at[o].x, 0) / up.length : null];
        }).filter(([, mean]) => mean !== null).sort((p, q) => p[0] - q[0]).map(([, m]) => m);
    }"""
    )
    assert len(feeders) >= 16, feeders
    assert feeders == sorted(feeders), feeders
    page.get_by_label("role").select_option("aggregation")
    expect(graph.locator("g.node.match")).to_have_count(4)
    page.get_by_label("role").select_option("")
    page.get_by_label("one end").select_option(label="agg-01")
    page.get_by_label("other end").select_option(label="access-01")
    drawn = lines(page)
    paired = [d for d in drawn if has(d, "pair")]
    assert len(paired) == 1 and paired[0]["load"] == "hot", paired
    shot(page, screenshots, "medium-site-pair.png")
