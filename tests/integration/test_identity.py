"""Identity claims end to end (issue 18, items 1 and 2), on both bindings and both databases.

1. **Owners do not collide.** For pairs of identities that a naive ``tenant:subject`` key, a
   ``/`` or ``|`` separator, percent-decoding, trimming, truncation or Unicode folding would
   confuse, the second caller (the attacker) must not read, list, follow up, cancel or
   subscribe to the first's (the victim's) tasks: its token is refused at the edge (401), or
   every answer is the one a task that does not exist gets. The victim's tasks are unchanged
   afterwards.
2. **Claims outside the policy are refused at the edge**, with 401 and a fixed reason that
   does not hold the claim, on every kind of call (the console's pages included), and the
   odd but valid identities are served: their skills run and the console's network page
   answers.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from agent.security.auth import MAX_SUBJECT_CHARS, MAX_TENANT_CHARS
from tests.a2a_helpers import BINDINGS
from tests.conftest import RunningAgent, start_agent
from tests.integration.test_security_probes import (
    HEADERS,
    Request,
    bearer,
    claims_for,
    describe_interface,
    invoke_request,
    list_request,
    message,
    normalized,
    send_request,
    signed,
    task_of,
    task_request,
)

SCOPES = "inventory.read assurance.read capacity.read"
Identity = tuple[str, str]  # (tenant, sub)


@dataclass(frozen=True)
class Pair:
    name: str
    victim: Identity
    attacker: Identity


PAIRS = [
    Pair("colon-in-tenant", ("acme", "bob:x"), ("acme:bob", "x")),
    Pair("colon-shifted", ("acme", ":x"), ("acme:", "x")),
    Pair("slash", ("acme", "bob/x"), ("acme/bob", "x")),
    Pair("bar", ("acme", "bob|x"), ("acme|bob", "x")),
    Pair("percent-encoded-colon", ("acme", "bob%3Ax"), ("acme", "bob:x")),
    Pair("percent-decoded-colon", ("acme", "bob:x"), ("acme", "bob%3Ax")),
    Pair("fullwidth-colon", ("acme", "bob:x"), ("acme", "bob\uff1ax")),
    Pair("fullwidth-colon-in-tenant", ("acme", "bob:x"), ("acme\uff1abob", "x")),
    Pair("nul", ("acme", "bob:x"), ("acme", "bob:x\x00")),
    Pair("nul-in-tenant", ("acme", "bob:x"), ("acme\x00bob", "x")),
    Pair("trailing-space", ("acme", "bob"), ("acme", "bob ")),
    Pair("space-tenant", ("acme", "bob"), ("acme ", "bob")),
    Pair("ideographic-space-tenant", ("acme", "bob"), ("\u3000", "acme:bob")),
    Pair("nfd", ("acme", "zo\u00eb"), ("acme", "zoe\u0308")),
    Pair(
        "truncated",
        ("acme", "s" * MAX_SUBJECT_CHARS),
        ("acme", "s" * MAX_SUBJECT_CHARS + "tail"),
    ),
    Pair("long-tenant", ("acme", "bob"), ("acme" + ":" * (MAX_TENANT_CHARS * 4), "bob")),
]


@pytest.fixture(scope="module")
def identity_agent(
    tmp_path_factory: pytest.TempPathFactory, backend: str
) -> Iterator[RunningAgent]:
    running = start_agent(tmp_path_factory.mktemp("identity-home"), backend=backend)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def http(identity_agent: RunningAgent) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=identity_agent.base_url, headers=HEADERS, timeout=30) as client:
        yield client


def token_of(agent: RunningAgent, who: Identity) -> dict[str, str]:
    tenant, subject = who
    return bearer(signed(agent, claims_for(agent, sub=subject, tenant=tenant, scope=SCOPES)))


@dataclass(frozen=True)
class Tasks:
    completed: str
    completed_context: str
    waiting: str
    waiting_context: str


def victims_tasks(http: httpx.Client, token: dict[str, str]) -> Tasks:
    """One completed task and one waiting for the victim's answer (INPUT_REQUIRED)."""
    describe = {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}
    done = task_of(send_request("JSONRPC", {"message": message(describe)}).send(http, token))
    asking = {"message": message(text="spare capacity on acme-lnk-00002")}
    waiting = task_of(send_request("JSONRPC", asking).send(http, token))
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
    assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", waiting
    return Tasks(done["id"], done["contextId"], waiting["id"], waiting["contextId"])


def probes(binding: str, tasks: Tasks, absent: str) -> list[tuple[str, Request, Request]]:
    """(what, the request naming the victim's task, the same request naming no task)."""
    found: list[tuple[str, Request, Request]] = []
    for task_id in (tasks.completed, tasks.waiting):
        for operation in ("get", "cancel", "subscribe"):
            found.append(
                (
                    f"{operation} {task_id}",
                    task_request(binding, operation, task_id),
                    task_request(binding, operation, absent),
                )
            )
    follow_up = {"message": message(text="check_link_capacity", taskId=tasks.waiting)}
    nowhere = {"message": message(text="check_link_capacity", taskId=absent)}
    found.append(("follow-up", send_request(binding, follow_up), send_request(binding, nowhere)))
    for context in (tasks.completed_context, tasks.waiting_context):
        found.append(
            (
                f"list {context}",
                list_request(binding, contextId=context),
                list_request(binding, contextId=absent),
            )
        )
    return found


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p.name)
def test_an_identity_that_looks_like_another_sees_none_of_its_tasks(
    identity_agent: RunningAgent, http: httpx.Client, binding: str, pair: Pair
) -> None:
    victim = token_of(identity_agent, pair.victim)
    attacker = token_of(identity_agent, pair.attacker)
    tasks = victims_tasks(http, victim)
    absent = str(uuid.uuid4())
    problems = {}
    for what, theirs, missing in probes(binding, tasks, absent):
        answer = theirs.send(http, attacker)
        if answer.status_code == 401:
            continue
        control = missing.send(http, attacker)
        for task_id in (tasks.completed, tasks.waiting):
            if normalized(answer, task_id) != normalized(control, absent) or task_id in answer.text:
                problems[what] = answer.text[:300]
    everything = list_request(binding).send(http, attacker)
    if everything.status_code != 401 and (
        tasks.completed in everything.text or tasks.waiting in everything.text
    ):
        problems["list all"] = everything.text[:300]
    assert not problems, problems
    states = [
        task_of(task_request(binding, "get", task_id).send(http, victim))["status"]["state"]
        for task_id in (tasks.completed, tasks.waiting)
    ]
    assert states == ["TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED"]


# -- 2. claims outside the policy are refused at the edge -------------------------------------

REFUSED_CLAIMS: dict[str, dict[str, Any]] = {
    "tenant-space": {"tenant": " "},
    "tenant-nbsp": {"tenant": "\u00a0"},
    "tenant-ideographic-space": {"tenant": "\u3000"},
    "tenant-line-separator": {"tenant": "\u2028"},
    "tenant-with-colon": {"tenant": "acme:bob"},
    "tenant-with-bidi-override": {"tenant": "acme\u202e"},
    "tenant-too-long": {"tenant": "t" * (MAX_TENANT_CHARS + 1)},
    "tenant-number": {"tenant": 7},
    "subject-space": {"sub": " "},
    "subject-nbsp": {"sub": "\u00a0"},
    "subject-ideographic-space": {"sub": "\u3000\u3000"},
    "subject-zero-width-space": {"sub": "\u200b"},
    "subject-padded": {"sub": " alice"},
    "subject-with-bidi-override": {"sub": "alice\u202egnp.exe"},
    "subject-with-nul": {"sub": "ali\x00ce"},
    "subject-with-escape": {"sub": "ali\x1bce"},
    "subject-not-nfc": {"sub": "zoe\u0308"},
    "subject-too-long": {"sub": "s" * (MAX_SUBJECT_CHARS + 1)},
    "subject-list": {"sub": ["alice"]},
}
REASONS = {
    f"token subject must be 1 to {MAX_SUBJECT_CHARS} printable characters in NFC, "
    "without surrounding whitespace",
    f"token tenant must be 1 to {MAX_TENANT_CHARS} characters of A-Z a-z 0-9 . _ -",
}


def edge_targets() -> list[Request]:
    lookup = {"message": message({"skill": "lookup_inventory", "arguments": {"kind": "sites"}})}
    targets = [Request("GET", "/console/network"), Request("GET", "/console/tasks")]
    for binding in BINDINGS:
        targets += [
            send_request(binding, lookup),
            send_request(binding, {"message": message(text="spare capacity on acme-lnk-00002")}),
            list_request(binding),
        ]
    return targets


@pytest.mark.parametrize("kind", REFUSED_CLAIMS)
def test_a_claim_outside_the_policy_is_refused_at_the_edge(
    identity_agent: RunningAgent, http: httpx.Client, kind: str
) -> None:
    token = signed(identity_agent, claims_for(identity_agent, **REFUSED_CLAIMS[kind]))
    for target in edge_targets():
        answer = target.send(http, bearer(token))
        assert answer.status_code == 401, (target.path, answer.status_code, answer.text[:300])
        assert answer.json()["error"]["message"] in REASONS, answer.text
        challenge = answer.headers["www-authenticate"]
        assert 'error="invalid_token"' in challenge, challenge


SERVED = [
    ("acme", "bob:x"),
    ("acme", "a/b|c%3Ad"),
    ("acme", "bob\uff1ax"),
    ("acme", "Zo\u00eb Smith"),
    ("acme", "s" * MAX_SUBJECT_CHARS),
]


@pytest.mark.parametrize("who", SERVED, ids=repr)
def test_an_odd_but_valid_identity_is_served(
    identity_agent: RunningAgent, http: httpx.Client, who: Identity
) -> None:
    token = token_of(identity_agent, who)
    assert http.get("/console/network", headers=token).status_code == 200
    interface = describe_interface(http, token["Authorization"][7:], "lookup_inventory")
    for binding in BINDINGS:
        lookup = invoke_request(binding, "lookup_inventory", interface, {"kind": "sites"})
        task = task_of(lookup.send(http, token))
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
        again = task_request(binding, "get", task["id"]).send(http, token)
        assert task_of(again)["id"] == task["id"]
        listed = list_request(binding, contextId=task["contextId"]).send(http, token)
        assert task["id"] in listed.text
