"""The tasks page for people (agent/console/tasks.py), in a real Chromium on the demo network:
the answer first, filters by state, skill and time, and paging through ListTasks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import RunningAgent
from tests.e2e.test_console_browser import nav

pytestmark = pytest.mark.system

try:
    from playwright.sync_api import expect
except ImportError:  # the browser fixture skips (or fails under CI) with the reason
    expect = None

SCOPES = ["inventory.read", "assurance.read", "capacity.read"]


def send(agent: RunningAgent, subject: str, skill: str, arguments: dict[str, Any]) -> str:
    """One explicit invocation over A2A as ``subject`` (alice's scopes); its task's state."""
    card = httpx.post(
        f"{agent.base_url}/a2a/jsonrpc",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token(agent, subject)}"},
        json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
    ).json()["result"]
    bound = {s["skill_id"]: s for s in card["capabilities"]["extensions"][0]["params"]["skills"]}[
        skill
    ]
    data = {
        "skill": skill,
        "skill_version": bound["skill_version"],
        "interface_digest": bound["interface_digest"],
        "arguments": arguments,
    }
    message = {
        "messageId": f"tasks-{subject}-{skill}-{len(str(arguments))}-{id(arguments)}",
        "role": "ROLE_USER",
        "parts": [{"mediaType": "application/json", "data": data}],
    }
    answer = httpx.post(
        f"{agent.base_url}/a2a/jsonrpc",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token(agent, subject)}"},
        json={"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": message}},
        timeout=60,
    )
    return str(answer.json()["result"]["task"]["status"]["state"])


def token(agent: RunningAgent, subject: str) -> str:
    return agent.token(subject, tenant="acme", scopes=SCOPES)


def login_as(page: Any, agent: RunningAgent, subject: str) -> None:
    page.goto(f"{agent.base_url}/console/login")
    page.get_by_label("Bearer token").fill(token(agent, subject))
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/console/network$"))


def test_the_answer_leads_and_filters_narrow_by_state_skill_and_time(
    page, console_agent, screenshots: Path
):
    who = "tina"
    assert send(console_agent, who, "check_link_capacity", {"link_id": "acme-lnk-00002"}) == (
        "TASK_STATE_COMPLETED"
    )
    send(console_agent, who, "lookup_inventory", {"kind": "links", "site": "lon1"})
    condition = {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"}
    refused = {"resource_id": "network-resource-1012", "condition": condition}  # globex's
    assert send(console_agent, who, "evaluate_resource_condition", refused) == (
        "TASK_STATE_REJECTED"
    )
    login_as(page, console_agent, who)
    nav(page, "Tasks")
    rows = page.locator("#tasks-table tbody tr")
    expect(rows).to_have_count(3)
    answers = page.locator("#tasks-table .answer")
    expect(answers.nth(2)).to_have_text(
        re.compile(r"^acme-lnk-00002: \d+(\.\d+)? Gbit/s available at worst in the window$")
    )
    expect(answers.nth(0)).to_contain_text("authorization_failed: ")
    # The records stay folded: the page is short whatever the results hold.
    assert page.evaluate("document.documentElement.scrollHeight") < 1_500
    page.screenshot(path=screenshots / "tasks-answers.png", full_page=True)

    page.get_by_label("State").select_option("REJECTED")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"state=REJECTED"))
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("evaluate_resource_condition")
    page.goto(f"{console_agent.base_url}/console/tasks?skill=lookup_inventory")
    expect(rows).to_have_count(1)
    expect(answers.first).to_have_text(re.compile(r"^\d+ links$"))
    page.goto(f"{console_agent.base_url}/console/tasks?since=2999-01-01T00:00Z")
    expect(page.locator("#tasks-count")).to_contain_text("No tasks match.")
    page.goto(f"{console_agent.base_url}/console/tasks?state=DONE&skill=plan_link_upgrade")
    problem = page.locator("#tasks-problem")
    expect(problem).to_contain_text("No task state 'DONE'")
    expect(problem).to_contain_text("No skill 'plan_link_upgrade' you may see.")  # paula's only
    expect(rows).to_have_count(3)


def test_tasks_come_a_page_at_a_time(page, console_agent):
    who = "petra"
    for index in range(27):
        send(console_agent, who, "lookup_inventory", {"kind": "sites", "limit": index + 1})
    login_as(page, console_agent, who)
    nav(page, "Tasks")
    rows = page.locator("#tasks-table tbody tr")
    expect(rows).to_have_count(25)
    expect(page.locator("#tasks-count")).to_contain_text("there are more")
    first_page = set(rows.evaluate_all("(rs) => rs.map((r) => r.dataset.task)"))
    page.locator("#tasks-pager").get_by_role("link", name="Next page").click()
    expect(rows).to_have_count(2)
    second_page = set(rows.evaluate_all("(rs) => rs.map((r) => r.dataset.task)"))
    assert not first_page & second_page
    page.locator("#tasks-pager").get_by_role("link", name="First page").click()
    expect(rows).to_have_count(25)
    # A page token the agent never issued: the agent's refusal, 400, no 500.
    answer = page.goto(f"{console_agent.base_url}/console/tasks?page=forged")
    assert answer is not None and answer.status == 400
    expect(page.locator("main")).to_contain_text("not a page token this agent issued")


def test_a_plan_filled_by_hand_from_a_link_and_a_demand_leads_with_its_answer(
    page, console_agent, screenshots: Path
):
    page.goto(f"{console_agent.base_url}/console/login")
    page.get_by_label("Bearer token").fill(console_agent.token("paula"))  # capacity.plan
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(re.compile(r"/console/network$"))
    page.goto(f"{console_agent.base_url}/console/try?skill=plan_link_upgrade")
    # Its input is check_link_capacity's result: its 13 members are folded away, and the
    # way to fill it by hand is the check's form (a link and a demand).
    expect(page.locator("#all-members")).not_to_have_attribute("open", "")
    expect(page.get_by_label("capacity_bps")).not_to_be_visible()
    page.locator("#by-hand").get_by_role("link", name="check_link_capacity's form").click()
    expect(page).to_have_url(re.compile(r"skill=check_link_capacity&then=plan_link_upgrade"))
    expect(page.locator("#then")).to_contain_text("handed to plan_link_upgrade")
    page.get_by_label("link_id").fill("acme-lnk-00002")
    page.get_by_label("requested_bps").fill("5000000000")
    expect(page.locator("#validity")).to_have_text("Valid against the input schema.")
    page.get_by_role("button", name="Invoke (stream)").click()
    # Completed: the result is handed over (as the button did, and still does).
    expect(page).to_have_url(re.compile(r"/console/try\?skill=plan_link_upgrade$"))
    expect(page.locator("#handed")).to_have_text(
        "Filled from the result of check_link_capacity: invoke to run plan_link_upgrade on it."
    )
    expect(page.locator("#validity")).to_have_text("Valid against the input schema.")
    page.get_by_role("button", name="Invoke (stream)").click()
    expect(page.locator("#final-state")).to_contain_text("COMPLETED")
    expect(page.locator("#result-answer")).to_have_text(
        re.compile(
            r"^acme-lnk-00002: upgrade; peak utilization \d+% .*recommended capacity \d+ Gbit/s$"
        )
    )
    # The JSON and the records are folded below the answer: the page stays short.
    expect(page.locator("#result-data")).not_to_be_visible()
    expect(page.locator("#result-details > summary")).to_contain_text("The result and its")
    assert page.evaluate("document.documentElement.scrollHeight") < 2_500
    page.screenshot(path=screenshots / "try-it-plan-by-hand.png", full_page=True)
    page.locator("#result-details > summary").click()
    expect(page.locator("#result-data")).to_contain_text('"recommendation": "upgrade"')
