"""The console's operator pages on the demo network, in a real Chromium and over HTTP: what
is wrong now, search, and a device's page (netops/problems.py, netops/device_page.py).

Screenshots of each view go with the other browser tests' (docs/console.md).
"""

from __future__ import annotations

import csv
import io
import re
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import quote_from_bytes

import httpx
import pytest

from tests.conftest import RunningAgent
from tests.e2e.test_console_browser import login, nav

pytestmark = pytest.mark.system

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails under CI) with the reason
    expect = None

DOWN_LINK = "acme-lnk-00015"
HOT_LINKS = ["acme-lnk-00002", "acme-lnk-00010", "acme-lnk-00036"]
HOT_ORDER = ["acme-lnk-00036", "acme-lnk-00010", "acme-lnk-00002"]
"""The hot links busiest first, as the links table orders them."""


def client_for(agent: RunningAgent, subject: str, **token: Any) -> httpx.Client:
    client = httpx.Client(base_url=agent.base_url, follow_redirects=False, timeout=30)
    bearer = agent.token(subject, **token)
    answer = client.post("/console/login", headers={"Authorization": f"Bearer {bearer}"})
    assert answer.status_code == 200, answer.text
    return client


def test_what_is_wrong_lists_the_down_link_its_ports_and_the_hot_links_with_since(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    nav(page, "Problems")
    expect(page.locator("#problems-count")).to_contain_text(
        "6 problems: 1 critical, 2 major, 3 warning."
    )
    rows = page.locator("#problems-table tbody tr")
    expect(rows).to_have_count(6)
    first = rows.nth(0)
    expect(first).to_contain_text("critical")
    expect(first).to_contain_text(DOWN_LINK)
    # Since: the start of the outage, from the link's samples (the clock stands at 12:00).
    expect(first.locator("td.since")).to_have_text("2026-11-29 11:05 (55 min)")
    expect(rows.nth(1)).to_contain_text(f"oper DOWN while admin UP, on link {DOWN_LINK}")
    names = [rows.nth(i).get_attribute("data-name") for i in range(3, 6)]
    assert names == HOT_LINKS
    expect(rows.nth(5)).to_contain_text("degraded: 94.4 % loaded now")
    page.screenshot(path=screenshots / "problems.png", full_page=True)
    # Filtered by site: lon1 has only the hot circuit to nyc1.
    page.get_by_label("Site").select_option("lon1")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"site=lon1"))
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("acme-lnk-00036")
    expect(page.locator("#problems-count")).to_contain_text("(of 6 in the tenant)")
    # The down link's row opens its detail on the network page.
    page.goto(f"{console_agent.base_url}/console/problems")
    rows.first.get_by_role("link", name=DOWN_LINK).click()
    expect(page.locator("#detail-title")).to_have_text(f"Link {DOWN_LINK}")


def test_search_finds_a_device_and_its_page_shows_ports_links_and_cpu(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    nav(page, "Search")
    page.get_by_label("Site, device, interface or link").fill("NYC1-agg-02")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#search-count")).to_contain_text(
        "for NYC1-agg-02: 0 sites, 1 device, 0 interfaces, 7 links"
    )
    page.screenshot(path=screenshots / "search.png", full_page=True)
    page.locator("#hits-devices").get_by_role("link", name="nyc1-agg-02").click()
    expect(page.locator("h1")).to_contain_text("nyc1-agg-02")
    facts = page.locator("#device-facts")
    expect(facts).to_contain_text("arista-eos (Arista)")
    expect(facts).to_contain_text("EOS")
    expect(facts).to_contain_text("10.0.0.6")
    expect(facts).to_contain_text("8, 1 down")
    expect(page.locator('.gauge[data-metric="cpu"] .gauge-value')).to_have_text(
        re.compile(r"^\d+\.\d %$")
    )
    expect(page.locator('.gauge[data-metric="memory"] svg polyline')).to_have_count(1)
    down = page.locator("#device-interfaces tr.sev-row-major")
    expect(down).to_have_count(1)
    expect(down).to_contain_text("Ethernet5")
    expect(down).to_contain_text("10 Gbit/s")
    expect(page.locator("#device-links tbody tr")).to_have_count(7)
    page.screenshot(path=screenshots / "device.png", full_page=True)
    # The far end of a link is a device page too.
    page.locator("#device-links").get_by_role("link", name="nyc1-core-01").click()
    expect(page.locator("h1")).to_contain_text("nyc1-core-01")


def test_a_caller_without_telemetry_scopes_is_told_what_each_part_needs(console_agent):
    with closing(client_for(console_agent, "vic")) as vic:
        problems = vic.get("/console/problems")
        assert problems.status_code == 200
        assert "Degraded (hot) links and how long a link has been down need one of" in (
            problems.text
        )
        assert DOWN_LINK in problems.text and "acme-lnk-00002" not in problems.text
        device = vic.get("/console/device", params={"id": "nyc1-agg-02"})
        assert device.status_code == 200
        assert "CPU and memory need one of: assurance.read." in device.text
        assert 'class="gauge"' not in device.text


def test_another_tenants_things_are_not_found_and_each_view_is_audited(console_agent):
    with closing(client_for(console_agent, "gary")) as gary:
        assert gary.get("/console/problems").status_code == 200
        assert DOWN_LINK not in gary.get("/console/problems").text
        missing = gary.get("/console/device", params={"id": "nyc1-agg-02"})
        assert missing.status_code == 404
        assert "No device nyc1-agg-02 in your tenant." in missing.text
        assert gary.get("/console/problems", params={"site": "nyc1"}).status_code == 404
        found = gary.get("/console/search", params={"q": "nyc1"}).text
        assert "Nothing in your tenant is named like" in found
        audit = gary.get("/console/audit", params={"views": "1"}).text
        assert "console · device" in audit and "console · problems" in audit
        assert "not found" in audit


@pytest.mark.parametrize(
    "query",
    [
        {"q": "a\x00b"},
        {"id": "x\x00"},
        {"site": "\x00"},
    ],
    ids=["nul-search", "nul-device", "nul-site"],
)
def test_hostile_query_values_are_refused_with_400_never_500(console_agent, query):
    path = {"q": "search", "id": "device", "site": "problems"}[next(iter(query))]
    with closing(client_for(console_agent, "alice")) as alice:
        raw = {k: v.encode("utf-8", "surrogatepass") for k, v in query.items()}
        encoded = "&".join(f"{k}={quote_from_bytes(v)}" for k, v in raw.items())
        answer = alice.get(f"/console/{path}?{encoded}")
        assert answer.status_code == 400, answer.text
        assert "Filters may not contain U+0000" in answer.text


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("search", {"q": "é" * 2_000}),
        ("search", {"q": "\u3000nyc1-core-01\u2003"}),
        ("device", {"id": "\u00a0"}),
        ("problems", {"site": "lon1", "severity": "x" * 5000}),
        ("search", {"q": "%_%", "unknown": "ignored"}),
        ("search", {"q": "\ud800".encode("utf-8", "surrogatepass").decode("latin-1")}),
    ],
    ids=["huge", "unicode-spaces", "nbsp-id", "unknown-severity", "wildcards", "bad-utf-8"],
)
def test_odd_but_bindable_values_get_an_answer_not_an_error(console_agent, path, params):
    with closing(client_for(console_agent, "alice")) as alice:
        answer = alice.get(f"/console/{path}", params=params)
        assert answer.status_code in (200, 404), answer.text
        assert "Internal Server Error" not in answer.text


def test_concurrent_views_each_get_their_whole_page(console_agent):
    with closing(client_for(console_agent, "alice")) as alice:

        def fetch(index: int) -> tuple[int, str]:
            path = ("/console/problems", "/console/device?id=nyc1-core-01")[index % 2]
            answer = alice.get(path)
            return answer.status_code, answer.text

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(fetch, range(16)))
    assert all(code == 200 for code, _ in answers)
    assert all("</html>" in text for _, text in answers)


def test_the_operator_reads_the_tenants_trail_and_not_found_is_no_refusal(
    page, console_agent, screenshots: Path
):
    """nora (the demo's operator, with audit.read) sees every acme caller's rows; a check
    that found nothing in her tenant reads "not found", a refused call "deny"."""
    with closing(client_for(console_agent, "alice")) as alice:
        assert alice.get("/console/device", params={"id": "nyc1-core-01"}).status_code == 200
    with closing(client_for(console_agent, "vic")) as vic:  # another acme caller's row
        assert vic.get("/console/network", params={"link": "acme-lnk-00002"}).status_code == 200
    login(page, console_agent, "nora")
    expect(page.locator("#caller")).to_contain_text("nora · tenant acme")
    page.goto(f"{console_agent.base_url}/console/device?id=no-such-device")
    expect(page.locator("#device-missing")).to_have_text("No device no-such-device in your tenant.")
    nav(page, "Audit")
    expect(page.locator("#audit-table")).to_be_visible()
    page.get_by_label("Show console page views").check()
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("#audit-table tbody tr")
    expect(rows.filter(has_text="alice").first).to_contain_text("console · device")
    missing = rows.filter(has_text="no-such-device")
    expect(missing.first).to_contain_text("not found")
    expect(missing.first).to_have_class("decision-absent")
    expect(page.locator("#audit-legend")).to_contain_text("reads not found")
    page.screenshot(path=screenshots / "audit-operator.png", full_page=True)


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[1, 2]",
        b'{"result": ' + b"[" * 5_000 + b"]" * 5_000 + b"}",
        b'{"result": {"verdict": "' + "\u2003é".encode() * 50_000 + b'"}}',
        b'{"error": {"code": "x\\u0000y", "message": "\\ud800"}}',
    ],
    ids=["not-json", "a-list", "deep", "huge-unicode", "nul-and-surrogate"],
)
def test_the_summary_endpoint_answers_any_body_without_a_500(console_agent, body):
    with closing(client_for(console_agent, "alice")) as alice:
        answer = alice.post(
            "/console/api/summary", content=body, headers={"Content-Type": "application/json"}
        )
    assert answer.status_code in (200, 400, 413), answer.text
    if answer.status_code == 200:
        assert len(answer.json()["summary"]) <= 240


ORDERED = "/console/api/ordered"


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"not json", 404),  # names no skill, as the other console endpoints read it
        (b"[1, 2]", 404),
        (b'{"skill": "no_such_skill", "artifacts": []}', 404),
        (b'{"skill": "check_link_capacity", "artifacts": {"a": 1}}', 400),
        (
            b'{"skill": "check_link_capacity", "artifacts": ['
            + b"[" * 5_000
            + b"]" * 5_000
            + b"]}",
            400,
        ),
        (b'{"skill": "check_link_capacity", "artifacts": [{"artifactId": "x\u0000"}]}', 400),
    ],
    ids=["not-json", "a-list", "unknown-skill", "not-a-list", "deep", "nul"],
)
def test_the_order_endpoint_answers_any_body_without_a_500(console_agent, body, status):
    with closing(client_for(console_agent, "alice")) as alice:
        answer = alice.post(ORDERED, content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == status, answer.text


def test_the_order_endpoint_orders_by_the_skills_schemas(console_agent):
    result = {"verdict": "v", "fits": True, "link_id": "l", "zzz": 1, "status": "up"}
    body = {"skill": "check_link_capacity", "artifacts": [{"artifactId": "result", "data": result}]}
    with closing(client_for(console_agent, "alice")) as alice:
        answer = alice.post(ORDERED, json=body)
    assert answer.status_code == 200, answer.text
    assert list(answer.json()["artifacts"][0]["data"]) == [
        "link_id",
        "status",
        "fits",
        "verdict",
        "zzz",
    ]


def test_the_links_table_and_the_audit_trail_download_as_csv(console_agent):
    with closing(client_for(console_agent, "alice")) as alice:
        every = alice.get("/console/network", params={"format": "csv"})
        assert every.status_code == 200
        assert every.headers["content-type"].startswith("text/csv")
        assert 'filename="network-links.csv"' in every.headers["content-disposition"]
        rows = list(csv.reader(io.StringIO(every.text)))
        assert rows[0] == ["id", "ends", "status", "capacity", "load_percent_now"]
        assert len(rows) == 1 + 58  # every page, not the first 50
        assert rows[1][0] == "acme-lnk-00036" and rows[1][4] == "94.4"  # hot first, as the table
        hot = alice.get("/console/network", params={"format": "csv", "load": "hot"})
        assert [r[0] for r in csv.reader(io.StringIO(hot.text))][1:] == HOT_ORDER
        alice.get("/console/device", params={"id": "no-such-device"})
    with closing(client_for(console_agent, "nora")) as nora:
        trail = nora.get("/console/audit", params={"format": "csv", "views": "1"})
        assert trail.status_code == 200
        assert 'filename="audit-acme.csv"' in trail.headers["content-disposition"]
        lines = list(csv.DictReader(io.StringIO(trail.text)))
        assert {"alice"} <= {line["principal"] for line in lines}
        missing = [line for line in lines if line["resources"] == "no-such-device"]
        assert missing and missing[0]["decision"] == "not found"
    with closing(client_for(console_agent, "gary")) as gary:  # globex's: nothing of acme
        theirs = gary.get("/console/audit", params={"format": "csv", "views": "1"}).text
        assert (
            "alice" not in theirs
            and "acme-lnk" not in gary.get("/console/network", params={"format": "csv"}).text
        )


def problem_views(client: httpx.Client) -> int:
    """The caller's audit rows of a problems-page view (its own rows: no audit.read)."""
    trail = client.get("/console/audit", params={"format": "csv", "views": "1"})
    assert trail.status_code == 200
    lines = csv.DictReader(io.StringIO(trail.text))
    return sum(1 for line in lines if (line["tool"], line["operation"]) == ("console", "problems"))


def test_a_live_refresh_of_a_view_just_audited_writes_no_row(console_agent):
    """console.js says a refresh is one (X-Console-Refresh: 1); the server writes no row for it
    while it audited that caller's view of that page and query a moment ago, and a row for any
    other request, header or not."""
    refresh = {"X-Console-Refresh": "1"}
    major, critical = {"severity": "major"}, {"severity": "critical"}
    with closing(client_for(console_agent, "carl")) as carl:
        before = problem_views(carl)
        assert carl.get("/console/problems", params=major, headers=refresh).status_code == 200
        assert problem_views(carl) == before + 1  # no view before it: the header hides nothing
        for _ in range(5):
            assert carl.get("/console/problems", params=major, headers=refresh).status_code == 200
        assert problem_views(carl) == before + 1
        carl.get("/console/problems", params=critical, headers=refresh)  # another query
        carl.get("/console/problems", params=major)  # a view again, not a refresh
        for other in ("0", "true", "1,1", "\u00a01".encode(), ""):
            carl.get("/console/problems", params=major, headers={"X-Console-Refresh": other})
        assert problem_views(carl) == before + 3 + 5
    with closing(client_for(console_agent, "vic")) as vic:  # another caller's view is its own
        before = problem_views(vic)
        vic.get("/console/problems", params=major, headers=refresh)
        assert problem_views(vic) == before + 1


def test_what_is_wrong_refreshes_itself_until_paused(page, console_agent):
    page.clock.install()
    login(page, console_agent, "alice")
    with closing(client_for(console_agent, "alice")) as alice:
        before = problem_views(alice)
    page.goto(f"{console_agent.base_url}/console/problems")
    toggle = page.get_by_label("Refresh every 30 s")
    expect(toggle).to_be_checked()
    page.clock.run_for(31_000)
    status = page.locator("#live-status")
    expect(status).to_contain_text("Updated at")
    expect(page.locator("#problems-table tbody tr")).to_have_count(6)  # swapped in whole
    for _ in range(2):  # two more refreshes, each seen through
        shown = status.text_content()
        page.clock.run_for(31_000)
        expect(status).not_to_have_text(shown or "")
    with closing(client_for(console_agent, "alice")) as alice:
        assert problem_views(alice) == before + 1  # the view; its three refreshes write none
    toggle.uncheck()
    expect(page.locator("#live-status")).to_have_text("Live refresh paused.")
    # A tasks page with nothing running offers no refresh at all.
    page.goto(f"{console_agent.base_url}/console/tasks")
    expect(page.locator("#live-toggle")).to_have_count(0)


def test_on_a_phone_each_problem_is_a_block_that_fits_the_screen(
    browser, console_agent, screenshots
):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        login(page, console_agent, "alice")
        page.goto(f"{console_agent.base_url}/console/problems")
        cells = page.locator('#problems-table td[data-label="State"]')
        expect(cells).to_have_count(6)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        for box in cells.evaluate_all("(cs) => cs.map((c) => c.getBoundingClientRect().right)"):
            assert box <= 390, box
        page.screenshot(path=screenshots / "problems-small-screen.png", full_page=True)
    finally:
        context.close()
