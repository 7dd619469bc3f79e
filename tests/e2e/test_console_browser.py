"""The operator console in a real headless Chromium against a real agent on loopback.

Each test logs in through the login page like an operator, and saves a screenshot of the view
it checked (paths in docs/console.md).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import RunningAgent

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.system

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails under CI) with the reason
    expect = None

WORKED_EXAMPLE = "evaluate_resource_condition"


def login(page: Any, agent: RunningAgent, subject: str) -> None:
    """Paste the subject's token into the login page, as an operator would."""
    page.goto(f"{agent.base_url}/console/login")
    page.get_by_label("Bearer token").fill(agent.token(subject))
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/console/network$"))


def nav(page: Any, view: str) -> None:
    """Follow the console's navigation to a view, as a keyboard or mouse user would."""
    page.get_by_role("navigation", name="Console views").get_by_role("link", name=view).click()


def invoke_over_a2a(agent: RunningAgent, subject: str, arguments: dict[str, Any]) -> dict:
    """Invoke the worked example directly on the A2A endpoint (not through the console)."""
    card = httpx.post(
        f"{agent.base_url}/a2a/jsonrpc",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {agent.token(subject)}"},
        json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
    ).json()["result"]
    [bound] = [
        s
        for s in card["capabilities"]["extensions"][0]["params"]["skills"]
        if s["skill_id"] == WORKED_EXAMPLE
    ]
    message = {
        "messageId": f"e2e-{subject}",
        "role": "ROLE_USER",
        "parts": [
            {
                "mediaType": "application/json",
                "data": {
                    "skill": WORKED_EXAMPLE,
                    "skill_version": bound["skill_version"],
                    "interface_digest": bound["interface_digest"],
                    "arguments": arguments,
                },
            }
        ],
    }
    answer = httpx.post(
        f"{agent.base_url}/a2a/jsonrpc",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {agent.token(subject)}"},
        json={"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": message}},
    )
    return answer.json()["result"]["task"]


def test_pages_need_a_login_and_a_bad_token_is_refused(page, console_agent, screenshots: Path):
    page.goto(f"{console_agent.base_url}/console/network")
    expect(page).to_have_url(re.compile(r"/console/login$"))
    error = page.locator("#login-error")
    # What is not a token is named before anything is sent, with what to paste instead.
    page.get_by_label("Bearer token").fill("not-a-jwt")
    page.get_by_role("button", name="Log in").click()
    expect(error).to_contain_text("That is not a token")
    expect(error).to_contain_text("export ALICE_TOKEN=eyJ... is fine too")
    page.get_by_label("Bearer token").fill("export ALICE_TOKEN=eyJ.a.b\nexport PAULA_TOKEN=eyJ.c.d")
    page.get_by_role("button", name="Log in").click()
    expect(error).to_contain_text("That is 2 lines. Paste one token")
    # A token-shaped string the agent refuses: the agent's own reason, and what to do.
    page.get_by_label("Bearer token").fill("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln")
    page.get_by_role("button", name="Log in").click()
    expect(error).to_contain_text("Log-in failed: token")
    expect(error).to_contain_text("Mint a new token with netagent token")
    expect(page).to_have_url(re.compile(r"/console/login$"))
    page.screenshot(path=screenshots / "login-refused.png", full_page=True)


def test_login_takes_the_line_serve_printed_or_a_bearer_header_value(
    page, console_agent, screenshots: Path
):
    token = console_agent.token("alice")
    for pasted in (f"export ALICE_TOKEN={token}\n", f"  Bearer {token}", f'ALICE_TOKEN="{token}"'):
        page.context.clear_cookies()
        page.goto(f"{console_agent.base_url}/console/login")
        page.get_by_label("Bearer token").fill(pasted)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_url(re.compile(r"/console/network$"))
        expect(page.locator("#caller")).to_contain_text("alice · tenant acme")


def test_a_browser_at_the_root_finds_the_console(page, console_agent, screenshots: Path):
    page.goto(f"{console_agent.base_url}/")
    links = page.locator("#landing-links")
    expect(links.get_by_role("link", name="Agent card")).to_have_attribute(
        "href", "/.well-known/agent-card.json"
    )
    page.screenshot(path=screenshots / "landing.png", full_page=True)
    links.get_by_role("link", name="Operator console", exact=True).click()
    expect(page).to_have_url(re.compile(r"/console/login$"))
    page.goto(f"{console_agent.base_url}/console")
    expect(page).to_have_url(re.compile(r"/console/login$"))


def test_network_graph_link_detail_and_window(page, console_agent, screenshots: Path):
    login(page, console_agent, "alice")
    graph = page.locator("svg#topology")
    expect(graph).to_be_visible()
    # The overview of the seeded acme network (3 sites, 31 devices, 58 links): one mark per
    # site, one line per pair of linked sites, coloured by its busiest member.
    expect(page.locator("#network-summary")).to_contain_text("3 sites, 31 devices, 58 links.")
    expect(graph.locator("a.site-mark")).to_have_count(3)
    expect(graph.locator('a.site-mark[data-site="nyc1"] text')).to_have_text("nyc111 devices")
    expect(graph.locator("a.bundle")).to_have_count(3)
    expect(graph.locator('a.bundle[data-bundle="lon1~nyc1"]')).to_have_attribute("data-load", "hot")
    expect(graph.locator('a.bundle[data-bundle="lon1~nyc1"]')).to_have_attribute(
        "aria-label", re.compile(r"busiest acme-lnk-00036 at 94\.4 %")
    )
    expect(graph.locator('a.site-mark[data-site="nyc1"]')).to_have_attribute("data-load", "hot")
    assert "globex" not in page.content()
    # The table beside the graph: hot links first, then the down one, then by load.
    rows = page.locator("#links-table tbody tr")
    expect(rows.locator("td:first-child").nth(0)).to_have_text("acme-lnk-00036")
    expect(rows.nth(2).locator("td").last).to_have_text("82.1 %")
    expect(rows.nth(3).locator("td").nth(2)).to_have_text("down")
    expect(page.locator("#links-count")).to_have_text(
        "Links 1 to 50 of 58, hot and down links first."
    )
    # The tenant's busiest links now, with their load and capacity.
    busiest = page.locator("#busiest-list li")
    expect(busiest).to_have_count(10)
    expect(busiest.first).to_contain_text("acme-lnk-00036 94.4 % of 50 Gbit/s")
    page.screenshot(path=screenshots / "network.png", full_page=True)
    page.get_by_role("navigation", name="Pages of links").get_by_role("link", name="Next").click()
    expect(page.locator("#links-count")).to_contain_text("Links 51 to 58 of 58")
    expect(page.locator("#links-table tbody tr").last).to_contain_text("acme-lnk-00018")  # planned
    page.get_by_label("Load").select_option("hot")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#links-table tbody tr td:first-child")).to_have_text(
        ["acme-lnk-00036", "acme-lnk-00010", "acme-lnk-00002"]
    )

    # A site opens its own view: its devices, its links, a box per site it links to.
    page.goto(f"{console_agent.base_url}/console/network")
    graph.locator('a.site-mark[data-site="nyc1"]').click()
    expect(page).to_have_url(re.compile(r"site=nyc1"))
    expect(graph.locator("g.node")).to_have_count(11)
    expect(graph.locator("a.peer")).to_have_count(2)
    expect(graph.locator('a.edge[data-link="acme-lnk-00002"]')).to_have_attribute(
        "data-load", "hot"
    )
    expect(graph.locator('a.edge[data-link="acme-lnk-00015"]')).to_have_attribute(
        "data-load", "idle"
    )
    expect(graph.locator('a.edge[data-link="acme-lnk-00018"]')).to_have_attribute(
        "data-load", "idle"
    )
    expect(page.locator("#links-count")).to_contain_text("of 22")
    page.screenshot(path=screenshots / "network-site.png", full_page=True)

    # Each link has a handle at its middle; clicking it opens the link.
    graph.locator('a.edge[data-link="acme-lnk-00002"] circle.handle').click()
    detail = page.locator("#detail")
    expect(detail.get_by_role("heading")).to_have_text("Link acme-lnk-00002")
    expect(detail.locator("dd").first).to_have_text("acme-lnk-00002")
    expect(detail).to_contain_text("100 Gbit/s")
    expect(page.locator("#current-utilization")).to_have_text("82.1 %")
    chart = page.locator("svg#utilization-chart")
    expect(chart.locator("polyline")).to_have_count(2)  # both directions
    week = chart.get_attribute("aria-label")
    assert re.search(r", (\d+) samples,", week), week
    week_samples = int(re.search(r", (\d+) samples,", week).group(1))
    assert week_samples > 2 * 288 * 6, week  # seven days of 5-minute samples, both directions
    page.screenshot(path=screenshots / "network-link.png", full_page=True)

    page.get_by_label("Window").select_option("24h")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"window=24h"))
    day = page.locator("svg#utilization-chart").get_attribute("aria-label")
    day_samples = int(re.search(r", (\d+) samples,", day).group(1))
    assert day_samples == 2 * (288 + 1), day  # both ends of the window included
    # Both directions in bit/s and percent: now, the 95th percentile, peak and mean.
    stats = page.locator("#direction-stats")
    expect(stats.locator("thead th")).to_have_text(
        ["Direction", "Now", "95th percentile", "Peak", "Mean"]
    )
    expect(stats.locator("tbody th")).to_have_text(["a to b", "b to a"])
    expect(stats.locator("tbody tr").first.locator("td").first).to_have_text(
        "82.06 Gbit/s (82.1 %)"
    )
    expect(stats.locator("tbody tr").first.locator("td").nth(1)).to_have_text(
        re.compile(r"^\d+(\.\d+)? Gbit/s \(\d+\.\d %\)$")
    )
    # Time ticks along the axis, and every slice of the chart says its values on hover.
    chart = page.locator("svg#utilization-chart")
    expect(chart.locator("text.tick-label")).to_have_count(9)  # every 3 h over 24 h, both ends
    expect(chart.locator("rect.band")).to_have_count(48)
    expect(chart.locator("rect.band title").last).to_have_text(
        re.compile(r"^2026-11-29 11:30 to 12:00: a to b \d+\.\d %, b to a \d+\.\d %$")
    )

    # Keyboard: a link of the graph is reachable and opens with Enter.
    page.locator('a.edge[data-link="acme-lnk-00010"]').focus()
    page.keyboard.press("Enter")
    expect(page.locator("#detail").get_by_role("heading")).to_have_text("Link acme-lnk-00010")


def test_skills_view_cards_side_by_side_and_interfaces(page, console_agent, screenshots: Path):
    login(page, console_agent, "alice")
    nav(page, "Skills")
    public = page.locator("#public-card")
    extended = page.locator("#extended-card")
    expect(public.locator("li code")).to_have_text(["describe_skill", "lookup_inventory"])
    expect(extended.locator("li code")).to_have_text(
        [
            "check_link_capacity",
            "describe_skill",
            WORKED_EXAMPLE,
            "link_headroom",
            "lookup_inventory",
        ]
    )
    expect(page.locator("#card-diff")).to_contain_text(
        "Skills only on your extended card: check_link_capacity, evaluate_resource_condition, "
        "link_headroom"
    )
    # Beyond the skill list, the differences are named where they are: here the bindings of
    # the schema-interface extension, one per extended-only skill, and the card version.
    diff_rows = page.locator("#card-diff li")
    expect(diff_rows).to_have_count(5)
    binding = diff_rows.filter(
        has_text=f"capabilities.extensions[0].params.skills[{WORKED_EXAMPLE}]"
    )
    expect(binding).to_contain_text("public (absent)")
    headroom = page.locator("#skill-link_headroom")
    expect(headroom).to_contain_text("deprecated · replaced by check_link_capacity")
    worked = page.locator(f"#skill-{WORKED_EXAMPLE}")
    card = httpx.get(f"{console_agent.base_url}/.well-known/agent-card.json").json()
    assert card["skills"]  # the public card does not list the worked example; describe it
    described = httpx.post(
        f"{console_agent.base_url}/a2a/jsonrpc",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {console_agent.token('alice')}"},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": "e2e-describe",
                    "role": "ROLE_USER",
                    "parts": [
                        {
                            "mediaType": "application/json",
                            "data": {
                                "skill": "describe_skill",
                                "arguments": {"skill_id": WORKED_EXAMPLE},
                            },
                        }
                    ],
                }
            },
        },
    ).json()["result"]["task"]["artifacts"][0]["parts"][0]["data"]
    document = described["skill_interface"]
    expect(worked).to_contain_text(described["interface_digest"])
    expect(binding).to_contain_text(described["interface_digest"])
    expect(worked).to_contain_text(document["input_schema"]["digest"])
    expect(worked).to_contain_text("observe_only, no approval needed")
    expect(worked).to_contain_text("sync, stream, poll; not cancelable")
    expect(worked).to_contain_text("timeout_seconds 10")
    # The input schema as a tree: condition's members, with their requirement and enum.
    tree = worked.locator(".schema").first.locator(".tree")
    expect(tree).to_contain_text("unit")
    expect(tree).to_contain_text('one of "gt", "gte", "lt", "lte"')
    expect(worked).to_contain_text("Supporting record: resource-observation")
    # A oneOf branch that only names members says which.
    capacity_tree = page.locator("#skill-check_link_capacity .schema").first
    expect(capacity_tree).to_contain_text("oneOf[1] any requires: a_device, b_device")
    page.screenshot(path=screenshots / "skills.png", full_page=True)


def test_try_the_worked_example_then_its_task_and_audit_row(page, console_agent, screenshots: Path):
    login(page, console_agent, "alice")
    nav(page, "Try it")
    page.get_by_label("Skill", exact=True).select_option(WORKED_EXAMPLE)
    page.get_by_role("button", name="Open form").click()
    validity = page.locator("#validity")

    page.get_by_label("resource_id").fill("network-resource-123")
    expect(page.locator("#validation-problems")).to_contain_text("/condition is required")
    page.get_by_label("metric").fill("utilization")
    page.get_by_label("operator").select_option("gte")
    page.get_by_label("threshold").fill("eighty")
    # Validation as you type, by the agent's own validator for this schema.
    expect(page.locator("#validation-problems")).to_contain_text("/condition/threshold fails type")
    expect(page.locator("#validation-problems")).to_contain_text("/condition/unit is required")
    expect(page.get_by_label("threshold")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("threshold").fill("80")
    page.get_by_label("unit").fill("percent")
    expect(validity).to_have_text("Valid against the input schema.")

    page.get_by_role("button", name="Invoke (stream)").click()
    expect(page.locator("#final-state")).to_contain_text("COMPLETED")
    stream = page.locator("#stream li")
    expect(stream.first).to_contain_text("SUBMITTED")
    expect(page.locator("#stream")).to_contain_text("status: WORKING")
    expect(page.locator("#stream")).to_contain_text("(resource-observation)")
    expect(page.locator("#result-data")).to_contain_text('"result": "condition_not_met"')
    expect(page.locator("#result-data")).to_contain_text('"observed_value": 42')
    reference = page.locator("#references tbody tr")
    expect(reference).to_have_count(1)
    expect(reference.locator("td").first).to_have_text("/supporting_record_refs/0")
    record_id = reference.locator("td a").text_content()  # folded under the answer
    record = page.locator(f"#record-{record_id}")
    expect(record).to_contain_text('"value": 42')
    expect(record).to_contain_text('"resource_id": "network-resource-123"')
    task_id = re.search(r"Task (\S+):", page.locator("#final-state").inner_text()).group(1)
    page.screenshot(path=screenshots / "try-it.png", full_page=True)

    page.locator("#audit-link").click()
    expect(page).to_have_url(re.compile(rf"/console/audit\?task={task_id}$"))
    rows = page.locator("#audit-table tbody tr")
    invoke_row = rows.filter(has_text="agent · invoke")
    expect(invoke_row).to_have_count(1)
    expect(invoke_row).to_contain_text(f"{WORKED_EXAMPLE} 1.0")
    expect(invoke_row).to_contain_text("alice")
    expect(invoke_row.locator("td").nth(7)).to_have_text("allow")
    expect(invoke_row.locator("td").nth(8)).to_have_text("completed")
    tool_row = rows.filter(has_text="inventory · latest_metric")
    expect(tool_row).to_contain_text("agent:netops-agent")
    expect(tool_row).to_contain_text("network-resource-123")
    page.screenshot(path=screenshots / "audit.png", full_page=True)

    nav(page, "Tasks")
    task_row = page.locator(f'#tasks-table tr[data-task="{task_id}"]')
    expect(task_row).to_contain_text("completed")
    expect(task_row).to_contain_text(WORKED_EXAMPLE)
    # The answer first, in words with its unit; the result and its record folded.
    expect(task_row.locator(".answer")).to_have_text("condition not met; observed 42 percent")
    expect(task_row.locator(".refs")).not_to_be_visible()
    task_row.get_by_text("result and 1 record").click()
    expect(task_row.locator(".refs")).to_have_text(
        f"result /supporting_record_refs/0 names record {record_id}"
    )
    expect(task_row).to_contain_text('"result": "condition_not_met"')
    page.screenshot(path=screenshots / "tasks.png", full_page=True)


def test_a_refused_invocation_shows_its_error_object(page, console_agent, screenshots: Path):
    login(page, console_agent, "alice")
    page.goto(f"{console_agent.base_url}/console/try?skill={WORKED_EXAMPLE}")
    page.get_by_label("resource_id").fill("network-resource-1012")  # globex's fra1-core-01
    page.get_by_label("metric").fill("utilization")
    page.get_by_label("operator").select_option("gte")
    page.get_by_label("threshold").fill("80")
    page.get_by_label("unit").fill("percent")
    expect(page.locator("#validity")).to_have_text("Valid against the input schema.")
    page.get_by_role("button", name="Invoke (stream)").click()
    expect(page.locator("#final-state")).to_contain_text("REJECTED")
    expect(page.locator("#error-object")).to_contain_text('"code": "authorization_failed"')
    expect(page.locator("#error-object")).to_contain_text("resource not found or not accessible")
    task_id = re.search(r"Task (\S+):", page.locator("#final-state").inner_text()).group(1)
    nav(page, "Tasks")
    task_row = page.locator(f'#tasks-table tr[data-task="{task_id}"]')
    expect(task_row).to_contain_text("rejected")
    expect(task_row.locator(".answer")).to_contain_text("authorization_failed: ")
    task_row.locator("summary").get_by_text("error object").click()
    expect(task_row.locator(".error-object pre")).to_contain_text("authorization_failed")
    page.screenshot(path=screenshots / "tasks-error.png", full_page=True)


def test_the_other_tenant_sees_none_of_acme(page, console_agent, screenshots: Path):
    task = invoke_over_a2a(
        console_agent,
        "alice",
        {
            "resource_id": "network-resource-123",
            "condition": {
                "metric": "utilization",
                "operator": "gte",
                "threshold": 80,
                "unit": "percent",
            },
        },
    )
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
    login(page, console_agent, "gary")
    expect(page.locator("#caller")).to_contain_text("gary · tenant globex")
    graph = page.locator("svg#topology")
    expect(graph.locator("a.site-mark")).to_have_count(2)
    expect(page.locator("#links-count")).to_contain_text("of 36,")
    expect(page.locator("#links-table tbody tr")).to_have_count(36)
    expect(page.locator('#links-table a[href*="link=globex-lnk-"]')).to_have_count(36)
    for acme in ("acme", "nyc1", "lon1", "sin1"):
        assert acme not in page.content(), acme
    page.screenshot(path=screenshots / "network-globex.png", full_page=True)

    page.goto(f"{console_agent.base_url}/console/network?link=acme-lnk-00002")
    expect(page.locator("#detail")).to_contain_text("No link acme-lnk-00002 in your tenant.")
    assert "100 Gbit/s" not in page.locator("#detail").inner_text()

    nav(page, "Tasks")
    expect(page.locator("h1")).to_have_text("Your tasks")
    assert task["id"] not in page.content()
    assert "condition_not_met" not in page.content()

    nav(page, "Audit")
    expect(page.locator("h1")).to_have_text("Audit trail of globex")
    assert "alice" not in page.content() and task["id"] not in page.content()
    page.goto(f"{console_agent.base_url}/console/audit?task={task['id']}")
    expect(page.locator("#audit-table tbody tr")).to_have_count(0)
    page.screenshot(path=screenshots / "audit-globex.png", full_page=True)


def test_a_caller_without_capacity_scopes_sees_no_utilization(page, console_agent):
    login(page, console_agent, "vic")
    expect(page.locator("main")).to_contain_text(
        "Utilization needs one of: capacity.plan or capacity.read."
    )
    graph = page.locator("svg#topology")
    expect(graph.locator("a.site-mark")).to_have_count(3)
    expect(page.locator("#links-count")).to_contain_text("of 58,")
    expect(graph.locator('[data-load="hot"]')).to_have_count(0)
    expect(graph.locator('a.bundle[data-load="unknown"]')).to_have_count(3)
    page.goto(f"{console_agent.base_url}/console/try?skill={WORKED_EXAMPLE}")
    expect(page.locator("main")).to_contain_text(f"You may not use a skill named {WORKED_EXAMPLE}.")


UNLABELLED = """() => [...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
  .filter((c) => c.labels.length === 0 && !c.getAttribute("aria-label"))
  .map((c) => c.id || c.name || c.outerHTML)"""


def test_keyboard_labels_small_screens_and_logout(page, console_agent, screenshots: Path):
    login(page, console_agent, "alice")
    # The first Tab reaches the skip link, which moves the focus to the content.
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to content")
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    for path in (
        "/console/network?link=acme-lnk-00002",
        "/console/skills",
        f"/console/try?skill={WORKED_EXAMPLE}",
        "/console/tasks",
        "/console/audit",
    ):
        page.goto(f"{console_agent.base_url}{path}")
        assert page.evaluate(UNLABELLED) == [], path

    # A phone-sized screen: the page itself never scrolls sideways (the graph scrolls in its box).
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{console_agent.base_url}/console/network")
    expect(page.locator("svg#topology")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=screenshots / "network-small-screen.png")

    page.get_by_role("button", name="Log out").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/console/login$"))
    page.goto(f"{console_agent.base_url}/console/tasks")
    expect(page).to_have_url(re.compile(r"/console/login$"))


def test_a_result_feeds_the_skill_whose_input_is_its_output(page, console_agent, screenshots):
    login(page, console_agent, "paula")  # plan_link_upgrade needs capacity.plan and preview
    page.goto(f"{console_agent.base_url}/console/try?skill=check_link_capacity")
    page.get_by_label("link_id").fill("acme-lnk-00002")
    expect(page.locator("#validity")).to_have_text("Valid against the input schema.")
    page.get_by_role("button", name="Invoke (stream)").click()
    expect(page.locator("#final-state")).to_contain_text("COMPLETED")
    capacity = json.loads(page.locator("#result-data").text_content() or "")
    assert capacity["link_id"] == "acme-lnk-00002"
    # printed in the output schema's order (its required members first, as the CLI prints
    # them), not in the wire's Struct order
    schema = json.loads((ROOT / "skills/check_link_capacity/output.schema.json").read_text())
    assert [k for k in capacity if k in schema["required"]] == schema["required"]
    assert list(capacity)[: len(schema["required"])] == schema["required"]

    page.get_by_role("button", name="Use the result as input of plan_link_upgrade").click()
    expect(page).to_have_url(re.compile(r"/console/try\?skill=plan_link_upgrade$"))
    expect(page.locator("#json-mode")).to_be_checked()
    assert json.loads(page.get_by_label("Arguments as JSON").input_value()) == capacity
    expect(page.get_by_label("link_id")).to_have_value("acme-lnk-00002")  # the fields show it
    expect(page.locator("#validity")).to_have_text("Valid against the input schema.")
    page.get_by_role("button", name="Invoke (stream)").click()
    expect(page.locator("#final-state")).to_contain_text("COMPLETED")
    plan = json.loads(page.locator("#result-data").text_content() or "")
    assert plan["link_id"] == "acme-lnk-00002" and plan["recommendation"]
    page.screenshot(path=screenshots / "try-it-composed.png", full_page=True)

    # JSON typed by hand is checked by the same validator as the fields.
    page.get_by_label("Arguments as JSON").fill('{"link_id": 5}')
    expect(page.locator("#validation-problems")).to_contain_text("/link_id fails type")
    page.get_by_label("Arguments as JSON").fill("{not json")
    expect(page.locator("#validation-problems")).to_contain_text("(arguments) is not valid JSON")


def test_a_result_offers_no_hand_off_to_a_skill_the_caller_may_not_use(page, console_agent):
    login(page, console_agent, "alice")  # no capacity.plan, no preview
    page.goto(f"{console_agent.base_url}/console/try?skill=check_link_capacity")
    page.get_by_label("link_id").fill("acme-lnk-00002")
    expect(page.locator("#validity")).to_have_text("Valid against the input schema.")
    page.get_by_role("button", name="Invoke (stream)").click()
    expect(page.locator("#final-state")).to_contain_text("COMPLETED")
    expect(page.locator("button.feed")).to_have_count(0)


def test_try_it_explains_a_one_of_shows_defaults_and_says_why_it_did_not_invoke(
    page, console_agent, screenshots: Path
):
    login(page, console_agent, "alice")
    page.goto(f"{console_agent.base_url}/console/try?skill=check_link_capacity")
    alternatives = page.locator("#alternatives")
    expect(alternatives).to_contain_text("exactly one of these (oneOf)")
    expect(alternatives.locator("li")).to_have_text(
        ["link_id, without a_device or b_device", "a_device and b_device, without link_id"]
    )
    # Defaults are shown (the skill applies them when a member is left out).
    expect(page.get_by_label("window_seconds")).to_have_attribute("placeholder", "3600 (default)")
    expect(page.get_by_label("direction")).to_contain_text("(left out: the skill uses both)")
    # Which alternative failed, and why.
    problems = page.locator("#validation-problems")
    expect(problems).to_contain_text("(arguments) matches none of the 2 alternatives (oneOf):")
    expect(problems.locator('[data-alternative="1"]')).to_contain_text("missing link_id")
    expect(problems.locator('[data-alternative="2"]')).to_contain_text("missing a_device, b_device")
    page.get_by_label("link_id").fill("acme-lnk-00002")
    page.get_by_label("a_device").fill("nyc1-core-01")
    expect(problems.locator('[data-alternative="1"]')).to_contain_text("must not have a_device")
    expect(problems.locator('[data-alternative="2"]')).to_contain_text("must not have link_id")
    # Invoking invalid arguments says so, visibly, and sends nothing.
    page.get_by_role("button", name="Invoke (stream)").click()
    expect(page.locator("#not-invoked")).to_have_text(
        "Not invoked: the arguments fail the input schema (1 problem above). "
        "Fix them, then invoke again."
    )
    expect(page.locator("#validity")).to_be_focused()
    expect(page.locator("#stream li")).to_have_count(0)
    page.screenshot(path=screenshots / "try-it-one-of.png", full_page=True)
    page.get_by_label("a_device").fill("")
    expect(page.locator("#validity")).to_have_text("Valid against the input schema.")


def test_the_audit_page_hides_console_page_views_unless_asked(page, console_agent):
    login(page, console_agent, "alice")  # the log-in lands on the network view: one row
    page.goto(f"{console_agent.base_url}/console/network?site=nyc1")
    nav(page, "Audit")
    expect(page.locator("#audit-count")).to_contain_text("console page views")
    rows = page.locator("#audit-table tbody tr")
    expect(rows.filter(has_text="console · network")).to_have_count(0)
    page.get_by_label("Show console page views").check()
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"views=1"))
    expect(rows.filter(has_text="console · network").first).to_contain_text("nyc1")
