"""Caller text that Python or a library would read another way than the protocol does.

1. **Scopes** (RFC 6749 §3.3): only U+0020 separates scope-tokens. A scope claim joined by any
   other Unicode whitespace is one unknown scope: the preview skill it spells out stays off
   the extended card, and the token endpoint grants no scope from it; a ``scope`` parameter
   so joined is ``invalid_scope``.
"""

from __future__ import annotations

import sys
from typing import Any

import httpx
import pytest

from agent.security.auth import issue_token, load_or_create_signing_key
from agent.security.credentials import ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT
from agent.security.oauth import SCOPE_GRAMMAR
from tests.conftest import RunningAgent
from tests.integration.test_enforcement import agent_credential

JSONRPC = "/a2a/jsonrpc"
HEADERS = {"A2A-Version": "1.0"}
OTHER_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace() and c != 0x20]
PREVIEW_SKILL = "plan_link_upgrade"  # state preview, requires capacity.plan, tenant acme


# -- 1. scopes --------------------------------------------------------------------------------


def scoped_token(agent: RunningAgent, scope: str) -> str:
    """A token whose scope claim is ``scope`` exactly as written."""
    key = load_or_create_signing_key(agent.settings.home)
    return issue_token(
        key,
        agent.settings,
        subject="scoped",
        tenant="acme",
        scopes=[],
        extra_claims={"scope": scope},
    )


def extended_skills(http: httpx.Client, token: str) -> set[str]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
    response = http.post(JSONRPC, json=body, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return {skill["id"] for skill in response.json()["result"]["skills"]}


def exchange_form(agent: RunningAgent, subject_token: str, scope: str) -> dict[str, str]:
    return {
        "grant_type": TOKEN_EXCHANGE_GRANT,
        "subject_token": subject_token,
        "subject_token_type": ACCESS_TOKEN_TYPE,
        "actor_token": agent_credential(agent),
        "actor_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "audience": "inventory",
        "scope": scope,
    }


@pytest.fixture(scope="module")
def http(agent: RunningAgent) -> Any:
    with httpx.Client(base_url=agent.base_url, headers=HEADERS, timeout=30) as client:
        yield client


def test_a_scope_claim_split_by_other_whitespace_lists_no_preview_skill(
    agent: RunningAgent, http: httpx.Client
) -> None:
    pieces = ("inventory.read", "capacity.plan", "preview")
    assert PREVIEW_SKILL in extended_skills(http, scoped_token(agent, " ".join(pieces)))
    listed = {
        repr(separator): PREVIEW_SKILL
        in extended_skills(http, scoped_token(agent, separator.join(pieces)))
        for separator in OTHER_WHITESPACE
    }
    assert not any(listed.values()), [name for name, shown in listed.items() if shown]


def test_the_token_endpoint_grants_no_scope_out_of_a_joined_claim(
    agent: RunningAgent, http: httpx.Client
) -> None:
    held = scoped_token(agent, "inventory.read capacity.plan")
    granted = http.post("/oauth/token", data=exchange_form(agent, held, "capacity.plan"))
    assert granted.status_code == 200 and granted.json()["scope"] == "capacity.plan"
    answers = {}
    for separator in OTHER_WHITESPACE:
        joined = scoped_token(agent, f"inventory.read{separator}capacity.plan")
        response = http.post("/oauth/token", data=exchange_form(agent, joined, "capacity.plan"))
        answers[repr(separator)] = (response.status_code, response.json().get("error"))
    assert set(answers.values()) == {(400, "invalid_scope")}, answers


def test_a_scope_parameter_joined_by_other_whitespace_is_invalid_scope(
    agent: RunningAgent, http: httpx.Client
) -> None:
    held = scoped_token(agent, "inventory.read capacity.plan")
    answers = {}
    for separator in OTHER_WHITESPACE:
        form = exchange_form(agent, held, f"inventory.read{separator}capacity.plan")
        response = http.post("/oauth/token", data=form)
        answers[repr(separator)] = (response.status_code, response.json())
    expected = (400, {"error": "invalid_scope", "error_description": SCOPE_GRAMMAR})
    assert all(answer == expected for answer in answers.values()), answers
