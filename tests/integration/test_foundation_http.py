"""The HTTP edge of a live agent, with raw httpx: the public card, health, and 401s.

Deny by default: only the public card, health and a send naming a skill an anonymous caller
may use pass without a token; every refusal is a 401 with a Bearer challenge and a JSON body.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent.cli.cards import SNAPSHOT, SNAPSHOT_GRPC_URL
from agent.registry.loader import load_registry
from agent.security.auth import issue_token, load_or_create_signing_key
from netops.deployment import SKILLS_DIR
from tests.a2a_helpers import edge_reason
from tests.conftest import RunningAgent
from tests.registry_view import card_ids, demo_only

HEADERS = {"A2A-Version": "1.0"}
SNAPSHOT_BASE = "http://127.0.0.1:8000"
JSONRPC = "/a2a/jsonrpc"
REST = "/a2a/rest"


def message(skill: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [
            {"mediaType": "application/json", "data": {"skill": skill, "arguments": arguments}}
        ],
    }


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@pytest.fixture(scope="module")
def http(agent: RunningAgent) -> httpx.Client:
    with httpx.Client(base_url=agent.base_url, headers=HEADERS, timeout=30) as client:
        yield client


def assert_unauthorized(response: httpx.Response, error: str | None = None) -> dict[str, Any]:
    assert response.status_code == 401, response.text
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="netagent"'), challenge
    if error is None:
        assert "error=" not in challenge
    else:
        assert f'error="{error}"' in challenge, challenge
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert edge_reason(body) == "UNAUTHENTICATED"
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body


# -- the public card and health ---------------------------------------------------------------


def test_public_card_equals_the_committed_snapshot(agent: RunningAgent, http: httpx.Client) -> None:
    response = http.get("/.well-known/agent-card.json")
    assert response.status_code == 200
    assert agent.base_url != SNAPSHOT_BASE
    assert agent.base_url in response.text
    served = json.loads(
        response.text.replace(agent.base_url, SNAPSHOT_BASE).replace(
            agent.grpc_target, SNAPSHOT_GRPC_URL
        )
    )
    signatures = served.pop("signatures")  # tests/integration/test_signed_cards.py checks them
    assert len(signatures) == 1
    assert served == json.loads(Path(SNAPSHOT).read_text())


def test_public_card_is_cacheable_and_revalidates(http: httpx.Client) -> None:
    response = http.get("/.well-known/agent-card.json")
    assert response.status_code == 200
    assert response.headers["cache-control"] == "public, max-age=300"
    etag = response.headers["etag"]
    assert etag
    again = http.get("/.well-known/agent-card.json", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["etag"] == etag
    other = http.get("/.well-known/agent-card.json", headers={"If-None-Match": '"stale"'})
    assert other.status_code == 200
    assert other.json() == response.json()


def test_public_card_has_last_modified_and_revalidates_by_date(http: httpx.Client) -> None:
    response = http.get("/.well-known/agent-card.json")
    modified = response.headers["last-modified"]
    assert parsedate_to_datetime(modified) <= datetime.now(UTC)
    card = "/.well-known/agent-card.json"
    same = http.get(card, headers={"If-Modified-Since": modified})
    assert (same.status_code, same.content) == (304, b"")
    assert same.headers["last-modified"] == modified
    older = http.get(card, headers={"If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"})
    assert older.status_code == 200 and older.json() == response.json()
    for nonsense in ("yesterday", "Mon, 99 Foo 2020", "Sun, 06 Nov 1994 08:49:37"):
        assert http.get(card, headers={"If-Modified-Since": nonsense}).status_code == 200
    # If-None-Match decides when both are sent (RFC 9110 13.2.2)
    both = http.get(card, headers={"If-None-Match": '"stale"', "If-Modified-Since": modified})
    assert both.status_code == 200


def test_public_card_needs_no_token(http: httpx.Client) -> None:
    response = http.get("/.well-known/agent-card.json")
    ids = [s["id"] for s in response.json()["skills"]]
    assert ids == card_ids(None)
    assert demo_only(ids) == ["describe_skill", "lookup_inventory"]


def test_healthz(http: httpx.Client) -> None:
    """Serving from the start; the classifier's background training reported, then ready."""
    skills = len(load_registry(SKILLS_DIR))  # removed ones too
    deadline = time.monotonic() + 300  # a cold start trains the routing model
    while True:
        response = http.get("/healthz")
        assert response.status_code == 200
        health = response.json()
        assert health.pop("classifier") in ("training", "ready")
        assert health == {"status": "ok", "skills": skills}
        if response.json()["classifier"] == "ready" or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert response.json()["classifier"] == "ready"


# -- 401 for everything that needs a token ----------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        pytest.param(
            "POST",
            JSONRPC,
            rpc("SendMessage", {"message": message("lookup_inventory", {"kind": "sites"})}),
            id="jsonrpc-send-lookup_inventory",
        ),
        pytest.param(
            "POST",
            JSONRPC,
            rpc(
                "SendStreamingMessage", {"message": message("lookup_inventory", {"kind": "sites"})}
            ),
            id="jsonrpc-stream-lookup_inventory",
        ),
        pytest.param(
            "POST",
            f"{REST}/message:send",
            {"message": message("lookup_inventory", {"kind": "sites"})},
            id="rest-send-lookup_inventory",
        ),
        pytest.param(
            "POST",
            JSONRPC,
            rpc("SendMessage", {"message": message("evaluate_resource_condition", {})}),
            id="jsonrpc-send-extended-skill",
        ),
        pytest.param(
            "POST",
            JSONRPC,
            rpc("SendMessage", {"message": message("port_report", {})}),
            id="jsonrpc-send-removed-skill",
        ),
        pytest.param("POST", JSONRPC, rpc("GetTask", {"id": str(uuid.uuid4())}), id="get-task"),
        pytest.param("GET", f"{REST}/tasks/{uuid.uuid4()}", None, id="rest-get-task"),
        pytest.param("POST", JSONRPC, rpc("GetExtendedAgentCard", {}), id="jsonrpc-extended-card"),
        pytest.param("GET", f"{REST}/extendedAgentCard", None, id="rest-extended-card"),
    ],
)
def test_no_token_is_401(http: httpx.Client, method: str, path: str, body: Any) -> None:
    response = http.request(method, path, json=body)
    body_json = assert_unauthorized(response)
    assert body_json["error"]["message"] == "authentication required"


def _bad_credentials(agent: RunningAgent, tmp: Path) -> dict[str, tuple[str, str, str]]:
    """Case -> (Authorization header value, challenge error, message)."""
    stranger = load_or_create_signing_key(tmp / "stranger-home")
    forged = issue_token(stranger, agent.settings, subject="alice", tenant="acme", scopes=["x"])
    expired = agent.token("alice", ttl=-3600)
    return {
        "expired": (f"Bearer {expired}", "invalid_token", "token has expired"),
        "malformed": ("Bearer not.a.token", "invalid_token", "token is malformed"),
        "garbage": ("Bearer garbage", "invalid_token", "token is malformed"),
        "another-key": (
            f"Bearer {forged}",
            "invalid_token",
            "token signature or claims are invalid",
        ),
        "basic": (
            "Basic YWxpY2U6c2VjcmV0",
            "invalid_request",
            "expected 'Authorization: Bearer <token>'",
        ),
        "empty-bearer": ("Bearer", "invalid_request", "expected 'Authorization: Bearer <token>'"),
    }


@pytest.fixture(scope="module")
def bad_credentials(
    agent: RunningAgent, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[str, str, str]]:
    return _bad_credentials(agent, tmp_path_factory.mktemp("bad-credentials"))


BAD = ["expired", "malformed", "garbage", "another-key", "basic", "empty-bearer"]
TARGETS = [
    pytest.param(
        "POST",
        JSONRPC,
        rpc("SendMessage", {"message": message("describe_skill", {"skill_id": "x"})}),
        id="jsonrpc-send-describe",
    ),
    pytest.param("POST", JSONRPC, rpc("GetExtendedAgentCard", {}), id="jsonrpc-extended-card"),
    pytest.param("GET", f"{REST}/extendedAgentCard", None, id="rest-extended-card"),
]


@pytest.mark.parametrize(("method", "path", "body"), TARGETS)
@pytest.mark.parametrize("kind", BAD)
def test_bad_credentials_are_401(
    http: httpx.Client,
    bad_credentials: dict[str, tuple[str, str, str]],
    kind: str,
    method: str,
    path: str,
    body: Any,
) -> None:
    """A bad token is refused even where no token is needed: it is never silently dropped."""
    header, error, description = bad_credentials[kind]
    response = http.request(method, path, json=body, headers={"Authorization": header})
    body_json = assert_unauthorized(response, error)
    assert body_json["error"]["message"] == description
    assert f'error_description="{description}"' in response.headers["www-authenticate"]


def test_a_good_token_gets_the_extended_card(agent: RunningAgent, http: httpx.Client) -> None:
    """The control for the 401s above: the same request with alice's token succeeds."""
    response = http.get(
        f"{REST}/extendedAgentCard", headers={"Authorization": f"Bearer {agent.token('alice')}"}
    )
    assert response.status_code == 200
    assert "evaluate_resource_condition" in [s["id"] for s in response.json()["skills"]]


# -- the one open door: anonymous describe_skill ----------------------------------------------


def test_anonymous_describe_over_jsonrpc_completes(http: httpx.Client) -> None:
    card = http.get("/.well-known/agent-card.json").json()
    (binding,) = [
        s
        for s in card["capabilities"]["extensions"][0]["params"]["skills"]
        if s["skill_id"] == "lookup_inventory"
    ]
    response = http.post(
        JSONRPC,
        json=rpc(
            "SendMessage", {"message": message("describe_skill", {"skill_id": "lookup_inventory"})}
        ),
    )
    assert response.status_code == 200, response.text
    task = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    (artifact,) = task["artifacts"]
    data = artifact["parts"][0]["data"]
    assert data["skill_id"] == "lookup_inventory"
    assert data["interface_digest"] == binding["interface_digest"]
    assert data["skill_version"] == binding["skill_version"]


def test_anonymous_describe_over_rest_completes(http: httpx.Client) -> None:
    response = http.post(
        f"{REST}/message:send",
        json={"message": message("describe_skill", {"skill_id": "describe_skill"})},
    )
    assert response.status_code == 200, response.text
    task = response.json()["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    (artifact,) = task["artifacts"]
    assert artifact["parts"][0]["data"]["skill_id"] == "describe_skill"


def _anonymous_describe_error(http: httpx.Client, skill_id: str) -> dict[str, Any]:
    response = http.post(
        JSONRPC,
        json=rpc("SendMessage", {"message": message("describe_skill", {"skill_id": skill_id})}),
    )
    assert response.status_code == 200, response.text
    status = response.json()["result"]["task"]["status"]
    assert status["state"] == "TASK_STATE_REJECTED"
    (part,) = status["message"]["parts"]
    return part["data"]


def test_anonymous_describe_of_an_extended_skill_looks_like_an_unknown_one(
    http: httpx.Client,
) -> None:
    hidden = _anonymous_describe_error(http, "evaluate_resource_condition")
    unknown = _anonymous_describe_error(http, "no_such_skill")
    assert hidden == {
        "code": "skill_not_advertised",
        "message": "no such skill is advertised to you",
    }
    assert hidden == unknown


# -- the REST tenant-mount pitfall ------------------------------------------------------------


@pytest.mark.parametrize(
    "skill_arguments",
    [
        pytest.param(("lookup_inventory", {"kind": "sites"}), id="lookup_inventory"),
        pytest.param(("describe_skill", {"skill_id": "lookup_inventory"}), id="describe_skill"),
    ],
)
def test_tenant_prefixed_rest_send_without_token_is_never_served(
    http: httpx.Client, skill_arguments: tuple[str, dict[str, Any]]
) -> None:
    skill, arguments = skill_arguments
    response = http.post(f"/t1{REST}/message:send", json={"message": message(skill, arguments)})
    assert response.status_code in (401, 404), response.text
    assert response.status_code != 200


def test_tenant_segment_inside_the_rest_mount_still_needs_a_token_for_lookup(
    http: httpx.Client,
) -> None:
    response = http.post(
        f"{REST}/t1/message:send",
        json={"message": message("lookup_inventory", {"kind": "sites"})},
    )
    assert_unauthorized(response)
