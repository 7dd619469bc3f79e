"""The console's session cookie at the HTTP level: what it opens, and what it never opens."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from agent.registry.loader import load_registry
from netops.deployment import SKILLS_DIR
from tests.conftest import RunningAgent

pytestmark = pytest.mark.system

REGISTRY = load_registry(SKILLS_DIR)
ROOT = Path(__file__).resolve().parents[2]
COOKIE = "netagent_console"
PAGE = {"Accept": "text/html"}


@pytest.fixture
def logged_in(console_agent: RunningAgent) -> Iterator[Callable[..., httpx.Client]]:
    """Log a subject in through POST /console/login; the client keeps the cookie."""
    opened: list[httpx.Client] = []

    def login(subject: str = "alice") -> httpx.Client:
        client = httpx.Client(base_url=console_agent.base_url, follow_redirects=False)
        opened.append(client)
        token = console_agent.token(subject)
        answer = client.post("/console/login", headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text
        return client

    yield login
    for client in opened:
        client.close()


def test_the_agent_runs_on_this_rounds_backend(console_agent, backend):
    url = console_agent.settings.resolved_database_url
    assert url.startswith("postgresql" if backend == "postgresql" else "sqlite"), url


def test_login_sets_a_strict_http_only_cookie_for_the_console_only(console_agent):
    token = console_agent.token("alice")
    answer = httpx.post(
        f"{console_agent.base_url}/console/login", headers={"Authorization": f"Bearer {token}"}
    )
    assert answer.json() == {"subject": "alice", "tenant": "acme"}
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}={token};"), cookie
    for flag in ("HttpOnly", "SameSite=Strict", "Path=/console"):
        assert flag in cookie, cookie
    max_age = int(cookie.split("Max-Age=")[1].split(";")[0])
    assert 3500 < max_age <= 3600  # the token's own lifetime, not longer


def test_login_without_a_token_or_with_a_bad_one_is_refused(console_agent):
    bare = httpx.post(f"{console_agent.base_url}/console/login")
    assert bare.status_code == 401 and "set-cookie" not in bare.headers
    bad = httpx.post(
        f"{console_agent.base_url}/console/login", headers={"Authorization": "Bearer nope"}
    )
    assert bad.status_code == 401 and bad.json()["error"]["message"] == "token is malformed"


def test_only_the_login_page_and_assets_are_open(console_agent):
    base = console_agent.base_url
    assert httpx.get(f"{base}/console/login").status_code == 200
    assert httpx.get(f"{base}/console/static/console.js").status_code == 200
    for path in ("/console/network", "/console/skills", "/console/tasks", "/console/audit"):
        answer = httpx.get(f"{base}{path}")  # a script, not a page: the edge's 401
        assert answer.status_code == 401, path
        page = httpx.get(f"{base}{path}", headers=PAGE)  # a browser: off to the login page
        assert (page.status_code, page.headers["location"]) == (303, "/console/login"), path
    refused = httpx.post(f"{base}/console/api/validate", json={"skill": "describe_skill"})
    assert refused.status_code == 401


def test_the_cookie_never_authenticates_the_a2a_endpoint(logged_in):
    client = logged_in()
    assert client.get("/console/skills", headers=PAGE).status_code == 200
    answer = client.post(
        "/a2a/jsonrpc",
        headers={"A2A-Version": "1.0"},
        json={"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}},
    )
    assert answer.status_code == 401
    # The cookie is scoped to /console, and the middleware reads it nowhere else anyway.
    assert client.cookies.jar and all(c.path == "/console" for c in client.cookies.jar)


def test_cross_site_requests_cannot_use_the_cookie(logged_in):
    client = logged_in()
    body = {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}
    same = client.post(
        "/console/api/validate", json=body, headers={"Origin": str(client.base_url).rstrip("/")}
    )
    assert same.status_code == 200 and same.json() == {"valid": True, "details": []}
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        answer = client.post("/console/api/invoke", json=body, headers=headers)
        assert answer.status_code == 403, headers


def test_an_expired_cookie_sends_the_browser_back_to_log_in(console_agent):
    expired = console_agent.token("alice", ttl=-120)  # beyond the verifier's 30 s leeway
    client = httpx.Client(base_url=console_agent.base_url, follow_redirects=False)
    client.headers["Cookie"] = f"{COOKIE}={expired}"
    answer = client.get("/console/network", headers=PAGE)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/console/login?expired=1"
    assert answer.headers["set-cookie"].startswith(f"{COOKIE}=; Max-Age=0;")
    api = client.post("/console/api/validate", json={})
    assert api.status_code == 401 and api.json()["error"]["message"] == "token has expired"
    client.close()


def test_validation_uses_the_skills_own_schema_and_hides_what_the_caller_cannot_see(logged_in):
    vic = logged_in("vic")
    worked = {"skill": "evaluate_resource_condition", "arguments": {}}
    assert vic.post("/console/api/validate", json=worked).status_code == 404
    assert vic.post("/console/api/invoke", json=worked).status_code == 404
    alice = logged_in("alice")
    answer = alice.post(
        "/console/api/validate",
        json={
            "skill": "evaluate_resource_condition",
            "arguments": {"resource_id": 7, "condition": {"metric": "cpu", "extra": 1}},
        },
    ).json()
    pointers = sorted((d["instance_path"], d["keyword"]) for d in answer["details"])
    assert pointers == [
        ("/condition/operator", "required"),
        ("/condition/threshold", "required"),
        ("/condition/unit", "required"),
        ("/resource_id", "type"),
    ]


def test_logout_clears_the_cookie_even_when_it_has_expired(console_agent):
    expired = console_agent.token("alice", ttl=-120)
    with httpx.Client(base_url=console_agent.base_url, follow_redirects=False) as client:
        client.headers["Cookie"] = f"{COOKIE}={expired}"
        foreign = client.post("/console/logout", headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403
        answer = client.post("/console/logout")
        assert (answer.status_code, answer.headers["location"]) == (303, "/console/login")
        assert answer.headers["set-cookie"].startswith(f"{COOKIE}=; Max-Age=0;")


def test_every_skill_a_caller_may_use_gets_a_form(console_agent, logged_in):
    paula = logged_in("paula")
    card = paula.get("/console/skills").text
    usable = re.findall(r'href="/console/try\?skill=([a-z_]+)"', card)
    assert sorted(usable) == [
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
        "plan_link_upgrade",
    ]
    for skill in usable:
        page = paula.get(f"/console/try?skill={skill}")
        assert page.status_code == 200 and 'id="invoke-form"' in page.text, skill
        capability = REGISTRY.get(skill)
        assert capability is not None
        schema = json.loads(
            (capability.manifest.folder / "input.schema.json").read_text(encoding="utf-8")
        )
        for member in schema.get("properties", {}):  # a control, or a fieldset of controls
            assert f'data-pointer="/{member}' in page.text, (skill, member)
        verdict = paula.post("/console/api/validate", json={"skill": skill, "arguments": {}})
        assert verdict.status_code == 200, skill
        required = {f"/{m}" for m in schema.get("required", [])}
        missing = {
            d["instance_path"] for d in verdict.json()["details"] if d["keyword"] == "required"
        }
        assert missing == required, skill


def test_the_open_static_prefix_opens_nothing_else(console_agent):
    """Raw request lines (an HTTP client would normalise the dots away)."""
    host, port = console_agent.base_url.removeprefix("http://").split(":")
    for path in (
        "/console/static/../network",
        "/console/static/..%2Fnetwork",
        "/console/static/../templates/base.html",
        "/console/static/../../a2a/jsonrpc",
    ):
        with socket.create_connection((host, int(port))) as connection:
            request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
            connection.sendall(request.encode())
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 404 "), (path, answer[:200])


def _invoke_describe(agent: RunningAgent, subject: str) -> str:
    """One invocation over A2A (describe_skill needs no scope); its task id."""
    answer = httpx.post(
        f"{agent.base_url}/a2a/jsonrpc",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {agent.token(subject)}"},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": f"audit-{subject}",
                    "role": "ROLE_USER",
                    "parts": [
                        {
                            "mediaType": "application/json",
                            "data": {
                                "skill": "describe_skill",
                                "arguments": {"skill_id": "lookup_inventory"},
                            },
                        }
                    ],
                }
            },
        },
    )
    return answer.json()["result"]["task"]["id"]


def _audit_rows(client: httpx.Client, **filters: str) -> list[str]:
    page = client.get("/console/audit", params=filters)
    assert page.status_code == 200, page.text
    row = r'<tr class="decision-(?:allow|deny|absent)">(.*?)</tr>'
    return re.findall(row, page.text, re.DOTALL)


def test_audit_is_the_callers_own_unless_audit_read_and_never_another_tenants(
    console_agent, logged_in
):
    alice_task = _invoke_describe(console_agent, "alice")
    paula_task = _invoke_describe(console_agent, "paula")
    alice = logged_in("alice")
    # Without audit.read the principal filter is the caller, whatever the query says.
    assert _audit_rows(alice, task=paula_task, principal="paula") == []
    assert len(_audit_rows(alice, task=alice_task)) == 1
    auditors = {
        "acme-auditor": ("acme", ["audit.read"]),
        "globex-auditor": ("globex", ["audit.read"]),
    }
    for subject, (tenant, scopes) in auditors.items():
        client = httpx.Client(base_url=console_agent.base_url, follow_redirects=False)
        token = console_agent.token(subject, tenant=tenant, scopes=scopes)
        assert client.post("/console/login", headers={"Authorization": f"Bearer {token}"})
        try:
            rows = _audit_rows(client, task=paula_task, principal="paula")
            if tenant == "acme":  # the whole tenant's trail, filtered by principal and task
                assert len(rows) == 1 and "paula" in rows[0] and "describe_skill" in rows[0]
                assert len(_audit_rows(client, principal="alice", task=alice_task)) == 1
                assert _audit_rows(client, task=alice_task, since="2999-01-01T00:00") == []
                assert len(_audit_rows(client, task=alice_task, since="1d")) == 1
            else:  # another tenant's rows do not exist for this caller
                assert rows == []
                assert _audit_rows(client, principal="alice") == []
        finally:
            client.close()


def test_the_form_lists_required_members_first_in_their_schema_order(logged_in):
    page = logged_in("alice").get("/console/try?skill=evaluate_resource_condition").text
    pointers = re.findall(r'data-pointer="([^"]+)"', page)
    assert pointers == [
        "/resource_id",
        "/condition/metric",
        "/condition/operator",
        "/condition/threshold",
        "/condition/unit",
    ]


def test_a_caller_without_a_topology_scope_is_told_what_is_missing(console_agent):
    token = console_agent.token("acme-auditor", tenant="acme", scopes=["audit.read"])
    with httpx.Client(base_url=console_agent.base_url, follow_redirects=False) as client:
        client.post("/console/login", headers={"Authorization": f"Bearer {token}"})
        page = client.get("/console/network")
        assert page.status_code == 403
        assert (
            "the network view needs one of: assurance.read or capacity.plan or capacity.read "
            "or inventory.read"
        ) in page.text
        assert "acme-lnk-" not in page.text


def test_each_network_view_writes_one_audit_row(logged_in):
    alice, gary = logged_in("alice"), logged_in("gary")
    assert alice.get("/console/network?link=acme-lnk-00002").status_code == 200
    assert gary.get("/console/network?link=acme-lnk-00002").status_code == 404
    # Recorded, but the audit page leaves page views out unless asked (they would flood it).
    assert not [r for r in _audit_rows(alice) if "console · network" in r]
    assert "console page views" in alice.get("/console/audit").text
    mine = next(r for r in _audit_rows(alice, views="1") if "console · network" in r)
    assert "acme-lnk-00002" in mine and ">allow<" in mine and ">ok<" in mine
    refused = next(r for r in _audit_rows(gary, views="1") if "console · network" in r)
    # found nothing in gary's own tenant: shown as what it is, not as a refusal
    assert "acme-lnk-00002" in refused and ">not found<" in refused and ">deny<" not in refused
    assert "not found in the caller&#39;s tenant" in refused


def test_the_console_is_found_from_its_bare_path_and_from_the_root(console_agent):
    base = console_agent.base_url
    for path, location in (("/console", "/console/"), ("/console?a=1", "/console/?a=1")):
        answer = httpx.get(f"{base}{path}")
        assert (answer.status_code, answer.headers["location"]) == (308, location), path
    # A browser at / lands on a page that links the card, the console and the docs.
    landing = httpx.get(f"{base}/", headers=PAGE)
    assert landing.status_code == 200 and landing.headers["content-type"].startswith("text/html")
    links = re.findall(r'href="([^"]+)"', landing.text)
    for wanted in ("/.well-known/agent-card.json", "/console/", "/docs/console.md"):
        assert wanted in links, (wanted, links)
    docs = httpx.get(f"{base}/docs/console.md")
    assert docs.status_code == 200 and docs.text.startswith("# The operator console")
    assert docs.headers["content-type"].startswith("text/plain")
    # A client that does not ask for HTML keeps today's answer; nothing else is served.
    script = httpx.get(f"{base}/")
    assert script.status_code == 401 and script.headers["content-type"] == "application/json"
    for other in ("/docs/../pyproject.toml", "/docs/missing.md", "/docs/"):
        assert httpx.get(f"{base}{other}", headers=PAGE).status_code in (401, 404), other
