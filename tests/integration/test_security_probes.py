"""Security probes (issue 7, point 5), end to end against a real agent on both bindings.

What is probed here, over real HTTP (JSON-RPC at the card's JSON-RPC URL, HTTP+JSON under
``/a2a/rest``) against a real uvicorn agent (on PostgreSQL when the session has a cluster):

1. **Tokens.** Every forged, stale or malformed credential (tampered signature, tampered
   payload, expired, not yet valid, ``alg: none``, HS256 keyed with the public key, wrong
   audience, wrong issuer, no subject, no tenant, garbage, another key, oversized; a missing,
   non-Bearer, empty or duplicated ``Authorization`` header) is a 401 with a
   ``WWW-Authenticate`` challenge, on sends (even of the anonymously open ``describe_skill``),
   task reads and the extended card alike.
2. **Tenants.** Another tenant's resource is answered exactly like a resource that does not
   exist, and another caller's tasks (GetTask, ListTasks, SubscribeToTask, CancelTask, a
   follow-up message) are answered exactly like a task that does not exist. The audit trail
   has no network interface (``netagent audit`` reads the database); what is checked here is
   that a probing caller's rows are written under its own tenant and never among acme's.
3. **Remote ``$ref``.** A skill schema, or a served Skill Interface Document, referring to a
   schema on a local port the test listens on: the registry and the governed client refuse it,
   naming the manifest or document and the JSON Pointer, and nothing ever connects.
4. **No input values in errors.** A unique marker is sent in every position of a request; it
   must not come back in an error object (JSON-RPC ``error``, REST ``error``), in the parts of
   a task's status message (where a REJECTED/FAILED task's error object lives, and where a
   clarifying question is asked) or in a response header. The rest of a task is not an error
   detail: its ``history`` is the caller's own message and ``id``/``contextId`` are identifiers
   the caller may choose (A2A's contract), as is the JSON-RPC ``id``; those are not checked.
5. **No internal text.** No answer above, nor any deliberately provoked failure (overlong or
   NUL-bearing identifiers and subjects, bad JSON, a handler that raises), contains a
   traceback, a file path, a module name, SQL or a database driver's name.

The SDK's own parse and version errors quote the input; ``agent/edge/error_scrub.py`` rewrites them
to fixed text naming the field, and the probes here hold it to that. Identifiers the task store
cannot hold (too long, control characters) are refused before the store: TaskNotFound for a
lookup by task id, InvalidParams for a context id.

Covered elsewhere and not repeated: the verifier's refusals one by one with their exact
reasons (tests/core/security/test_auth.py), the tool-token verifier
(tests/core/security/test_credentials.py),
the inventory gate refusing another tenant's rows to a misbehaving handler
(tests/integration/test_enforcement.py), and ``check_schema``/``compile_validator`` refusing a
remote ``$ref`` in isolation (tests/core/interfaces/test_schema_validation.py).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import re
import shutil
import socket
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from agent.client.errors import InterfaceInvalidError
from agent.client.governed import GovernedClient
from agent.edge.error_scrub import parse_error_text
from agent.interfaces import digest_of
from agent.registry.loader import (
    BUILTIN_SKILLS_DIR,
    RegistryError,
    load_registry,
    validate_registry,
)
from agent.security.auth import (
    MAX_SUBJECT_CHARS,
    MAX_TENANT_CHARS,
    MAX_TOKEN_BYTES,
    SIGNING_ALGORITHM,
    issue_token,
    load_or_create_signing_key,
)
from agent.storage.audit import DatabaseAuditLog
from agent.storage.engine import make_engine
from tests.a2a_helpers import BINDINGS, binding_of, edge_reason
from tests.conftest import RunningAgent, start_agent
from tests.integration.conftest import enforcement_skills
from tests.lying_agent import SKILL_ID as WORKED_SKILL
from tests.lying_agent import LyingAgent

ROOT = Path(__file__).resolve().parents[2]
MARKER = "SECRET-MARKER-4f1c"
JSONRPC = "/a2a/jsonrpc"
REST = "/a2a/rest"
HEADERS = {"A2A-Version": "1.0"}
ACME_LINK = "acme-lnk-00002"
ABSENT_LINK = "acme-lnk-99999"
WORKED_ARGUMENTS = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
INTERNAL_TEXT = re.compile(
    r"Traceback|File \"|line \d+, in |/work/|/tmp/|site-packages|\.py\b|sqlalchemy|psycopg|"
    r"asyncpg|aiosqlite|sqlite3|\bSELECT\s|\bINSERT\s|\bUPDATE\s|\bDELETE\s|character varying|"
    r"\bvarchar\b|StringDataRightTruncation|IntegrityError|OperationalError|ProgrammingError|"
    r"DataError|\b(?:Key|Type|Value|Attribute|Index|Runtime|Assertion|Lookup|Name|Unicode\w*)"
    r"Error\b"
)


# -- a real agent, real HTTP ------------------------------------------------------------------


@pytest.fixture(scope="module")
def probe_agent(tmp_path_factory: pytest.TempPathFactory, backend: str) -> Iterator[RunningAgent]:
    """Demo skills plus the faulty handler, on the suite's database backend (one per backend)."""
    home = tmp_path_factory.mktemp("probe-home")
    running = start_agent(home, registry=load_registry(enforcement_skills(home)))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def http(probe_agent: RunningAgent) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=probe_agent.base_url, headers=HEADERS, timeout=30) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def message(data: Any = None, *, text: str | None = None, **members: Any) -> dict[str, Any]:
    part = {"text": text} if text is not None else {"mediaType": "application/json", "data": data}
    return {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [part], **members}


def rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@dataclass(frozen=True)
class Request:
    """One raw HTTP request; ``body`` is JSON unless it is bytes."""

    method: str
    path: str
    body: Any = None
    headers: tuple[tuple[str, str], ...] = ()

    def send(self, http: httpx.Client, headers: dict[str, str] | None = None) -> httpx.Response:
        merged = httpx.Headers(HEADERS)
        for name, value in (headers or {}).items():
            merged[name] = value
        for name, value in self.headers:
            merged[name] = value
        if isinstance(self.body, bytes):
            merged["Content-Type"] = "application/json"
            return http.request(self.method, self.path, content=self.body, headers=merged)
        return http.request(self.method, self.path, json=self.body, headers=merged)


def send_request(
    binding: str, params: Any, headers: dict[str, str] | None = None, streaming: bool = False
) -> Request:
    extra = tuple((headers or {}).items())
    if binding == "JSONRPC":
        method = "SendStreamingMessage" if streaming else "SendMessage"
        return Request("POST", JSONRPC, rpc(method, params), extra)
    return Request("POST", f"{REST}/message:{'stream' if streaming else 'send'}", params, extra)


def task_request(binding: str, operation: str, task_id: str, **extra: Any) -> Request:
    """GetTask, CancelTask or SubscribeToTask of one task id."""
    if binding == "JSONRPC":
        method = {"get": "GetTask", "cancel": "CancelTask", "subscribe": "SubscribeToTask"}
        return Request("POST", JSONRPC, rpc(method[operation], {"id": task_id, **extra}))
    quoted = urllib.parse.quote(task_id, safe="")
    if operation == "get":
        query = f"?{httpx.QueryParams(extra)}" if extra else ""
        return Request("GET", f"{REST}/tasks/{quoted}{query}")
    return Request("POST", f"{REST}/tasks/{quoted}:{operation}")


def list_request(binding: str, **query: Any) -> Request:
    if binding == "JSONRPC":
        return Request("POST", JSONRPC, rpc("ListTasks", query))
    encoded = str(httpx.QueryParams(query))
    return Request("GET", f"{REST}/tasks" + (f"?{encoded}" if encoded else ""))


def body_of(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text


def task_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    result = body.get("result", body)
    return result.get("task", result)


# -- 1. tokens --------------------------------------------------------------------------------


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_json(value: Any) -> str:
    return b64url(json.dumps(value, separators=(",", ":")).encode())


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def claims_for(agent: RunningAgent, **changes: Any) -> dict[str, Any]:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": agent.settings.issuer,
        "aud": agent.settings.audience,
        "sub": "alice",
        "tenant": "acme",
        "scope": "inventory.read assurance.read capacity.read",
        "iat": now,
        "nbf": now,
        "exp": now + 600,
    }
    claims.update(changes)
    return {k: v for k, v in claims.items() if v is not None}


def signed(agent: RunningAgent, claims: dict[str, Any]) -> str:
    key = load_or_create_signing_key(agent.settings.home)
    return jwt.encode(
        claims, key.private_key, algorithm=SIGNING_ALGORITHM, headers={"kid": key.kid}
    )


def forged_credentials(agent: RunningAgent, tmp: Path) -> dict[str, tuple[list[str], str | None]]:
    """Kind -> (the Authorization header values sent, the challenge's expected ``error``)."""
    good = agent.token("alice")
    header, payload, signature = good.split(".")
    flipped = bytearray(unb64url(signature))
    flipped[0] ^= 0x01
    widened = json.loads(unb64url(payload))
    widened.update(tenant="globex", scope="inventory.read capacity.plan preview")
    key = load_or_create_signing_key(agent.settings.home)
    public_pem = key.private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    hs_input = f"{b64url_json({'alg': 'HS256', 'typ': 'JWT', 'kid': key.kid})}.{payload}"
    hs_mac = hmac.new(public_pem, hs_input.encode(), hashlib.sha256).digest()
    stranger = load_or_create_signing_key(tmp / "stranger-home")
    later = int(time.time()) + 3600
    tokens = {
        "tampered-signature": f"{header}.{payload}.{b64url(bytes(flipped))}",
        "tampered-payload": f"{header}.{b64url_json(widened)}.{signature}",
        "expired": agent.token("alice", ttl=-3600),
        "not-yet-valid": signed(agent, claims_for(agent, iat=later, nbf=later, exp=later + 600)),
        "alg-none": f"{b64url_json({'alg': 'none', 'typ': 'JWT'})}.{payload}.",
        "alg-none-with-signature": f"{b64url_json({'alg': 'none'})}.{payload}.{signature}",
        "hs256-keyed-with-the-public-key": f"{hs_input}.{b64url(hs_mac)}",
        "wrong-audience": signed(agent, claims_for(agent, aud="another-agent")),
        "wrong-issuer": signed(agent, claims_for(agent, iss="https://issuer.example.net")),
        "no-subject": signed(agent, claims_for(agent, sub=None)),
        "empty-subject": signed(agent, claims_for(agent, sub="")),
        "no-tenant": signed(agent, claims_for(agent, tenant=None)),
        "subject-with-nul": signed(agent, claims_for(agent, sub="ali\u0000ce")),
        "subject-with-a-newline": signed(agent, claims_for(agent, sub="alice\n")),
        "subject-longer-than-the-store-holds": signed(
            agent, claims_for(agent, sub="s" * (MAX_SUBJECT_CHARS + 1))
        ),
        "tenant-longer-than-the-store-holds": signed(
            agent, claims_for(agent, tenant="t" * (MAX_TENANT_CHARS + 1))
        ),
        "another-key": issue_token(
            stranger, agent.settings, subject="alice", tenant="acme", scopes=["inventory.read"]
        ),
        "garbage": "garbage",
        "three-garbage-segments": "a.b.c",
        "oversized": good + "x" * MAX_TOKEN_BYTES,
        "token-then-junk": f"{good} junk",
    }
    credentials: dict[str, tuple[list[str], str | None]] = {
        kind: ([f"Bearer {token}"], "invalid_token") for kind, token in tokens.items()
    }
    credentials["no-authorization-header"] = ([], None)
    credentials["basic-scheme"] = (["Basic YWxpY2U6c2VjcmV0"], "invalid_request")
    credentials["bearer-without-token"] = (["Bearer"], "invalid_request")
    credentials["a-bad-token-then-a-good-one"] = (
        [f"Bearer {tokens['another-key']}", f"Bearer {good}"],
        "invalid_request",
    )
    credentials["a-good-token-twice"] = ([f"Bearer {good}", f"Bearer {good}"], "invalid_request")
    return credentials


@dataclass(frozen=True)
class Target:
    name: str
    request: Request
    open_without_token: bool = False


def token_targets() -> list[Target]:
    """Every kind of call, on both bindings; the describe sends are open to anonymous callers."""
    describe = {"message": message({"skill": "describe_skill", "arguments": {"skill_id": "x"}})}
    lookup = {"message": message({"skill": "lookup_inventory", "arguments": {"kind": "sites"}})}
    some_task = str(uuid.uuid4())
    targets: list[Target] = []
    for binding in BINDINGS:
        targets += [
            Target(f"{binding}-send-describe", send_request(binding, describe), True),
            Target(f"{binding}-stream-describe", send_request(binding, describe, None, True), True),
            Target(f"{binding}-send-lookup", send_request(binding, lookup)),
            Target(f"{binding}-get-task", task_request(binding, "get", some_task)),
            Target(f"{binding}-cancel-task", task_request(binding, "cancel", some_task)),
            Target(f"{binding}-subscribe", task_request(binding, "subscribe", some_task)),
            Target(f"{binding}-list-tasks", list_request(binding)),
        ]
    targets += [
        Target("JSONRPC-extended-card", Request("POST", JSONRPC, rpc("GetExtendedAgentCard", {}))),
        Target("HTTP+JSON-extended-card", Request("GET", f"{REST}/extendedAgentCard")),
    ]
    return targets


TOKEN_KINDS = [
    "tampered-signature",
    "tampered-payload",
    "expired",
    "not-yet-valid",
    "alg-none",
    "alg-none-with-signature",
    "hs256-keyed-with-the-public-key",
    "wrong-audience",
    "wrong-issuer",
    "no-subject",
    "empty-subject",
    "no-tenant",
    "subject-with-nul",
    "subject-with-a-newline",
    "subject-longer-than-the-store-holds",
    "tenant-longer-than-the-store-holds",
    "another-key",
    "garbage",
    "three-garbage-segments",
    "oversized",
    "token-then-junk",
    "no-authorization-header",
    "basic-scheme",
    "bearer-without-token",
    "a-bad-token-then-a-good-one",
    "a-good-token-twice",
]


@pytest.fixture(scope="module")
def credentials(
    probe_agent: RunningAgent, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[list[str], str | None]]:
    return forged_credentials(probe_agent, tmp_path_factory.mktemp("forgeries"))


def refusal_problem(response: httpx.Response, error: str | None) -> str | None:
    """Why ``response`` is not a proper 401 (None when it is one)."""
    if response.status_code != 401:
        return f"status {response.status_code}: {response.text[:200]}"
    challenge = response.headers.get("www-authenticate", "")
    if not challenge.startswith('Bearer realm="netagent"'):
        return f"challenge {challenge!r}"
    if (error is None) == ("error=" in challenge) or (
        error and f'error="{error}"' not in challenge
    ):
        return f"challenge {challenge!r}, expected error {error!r}"
    body = response.json()
    if edge_reason(body) != "UNAUTHENTICATED" or not body["error"]["message"]:
        return f"body {body}"
    return None


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_a_bad_credential_is_refused_with_401_everywhere(
    http: httpx.Client, credentials: dict[str, tuple[list[str], str | None]], kind: str
) -> None:
    values, error = credentials[kind]
    problems = {}
    for target in token_targets():
        if not values and target.open_without_token:
            continue  # no header at all is how an anonymous caller uses the open door
        headers = httpx.Headers([("A2A-Version", "1.0")] + [("Authorization", v) for v in values])
        response = http.request(
            target.request.method, target.request.path, json=target.request.body, headers=headers
        )
        problem = refusal_problem(response, error)
        if problem:
            problems[target.name] = problem
    assert not problems, problems


def test_the_good_token_passes_every_target(probe_agent: RunningAgent, http: httpx.Client) -> None:
    """The control for the refusals above: the same requests with alice's token are served."""
    token = probe_agent.token("alice")
    for target in token_targets():
        response = target.request.send(http, bearer(token))
        assert response.status_code != 401, (target.name, response.text)
        assert "www-authenticate" not in response.headers, target.name


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_longest_identity_the_store_holds_is_served(
    probe_agent: RunningAgent, http: httpx.Client, binding: str
) -> None:
    """The control for the length limits: at the limit, a task is created and read back."""
    token = signed(
        probe_agent,
        claims_for(probe_agent, sub="s" * MAX_SUBJECT_CHARS, tenant="t" * MAX_TENANT_CHARS),
    )
    created = send_request(binding, {"message": _describe()}).send(http, bearer(token))
    task = task_of(created)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", created.text
    again = task_request(binding, "get", task["id"]).send(http, bearer(token))
    assert task_of(again)["id"] == task["id"]


def test_the_tampered_payload_is_refused_although_its_original_is_good(
    probe_agent: RunningAgent, http: httpx.Client, credentials: dict[str, Any]
) -> None:
    """The forgery differs from a token the agent accepts only in the widened claims."""
    ([forged], _) = credentials["tampered-payload"]
    card = Request("GET", f"{REST}/extendedAgentCard")
    assert card.send(http, bearer(probe_agent.token("alice"))).status_code == 200
    assert refusal_problem(card.send(http, {"Authorization": forged}), "invalid_token") is None


# -- 2. tenants -------------------------------------------------------------------------------


def describe_interface(http: httpx.Client, token: str, skill: str) -> dict[str, str]:
    """{skill_version, interface_digest} from describe_skill, over raw JSON-RPC."""
    request = {"skill": "describe_skill", "arguments": {"skill_id": skill}}
    response = send_request("JSONRPC", {"message": message(request)}).send(http, bearer(token))
    task = task_of(response)
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
    data = task["artifacts"][0]["parts"][0]["data"]
    return {"skill_version": data["skill_version"], "interface_digest": data["interface_digest"]}


def invoke_request(
    binding: str, skill: str, interface: dict[str, str], arguments: Any, **members: Any
) -> Request:
    data = {"skill": skill, **interface, "arguments": arguments}
    return send_request(binding, {"message": message(data, **members)})


def status_error(response: httpx.Response) -> dict[str, Any]:
    status = task_of(response)["status"]
    (part,) = status["message"]["parts"]
    return {"state": status["state"], **part["data"]}


@pytest.mark.parametrize("binding", BINDINGS)
def test_another_tenants_link_is_answered_like_a_missing_one(
    probe_agent: RunningAgent, http: httpx.Client, binding: str
) -> None:
    gary = probe_agent.token("gary")
    interface = describe_interface(http, gary, "check_link_capacity")
    answers = {
        link: status_error(
            invoke_request(binding, "check_link_capacity", interface, {"link_id": link}).send(
                http, bearer(gary)
            )
        )
        for link in (ACME_LINK, ABSENT_LINK)
    }
    assert (
        answers[ACME_LINK]
        == answers[ABSENT_LINK]
        == {
            "state": "TASK_STATE_REJECTED",
            "code": "authorization_failed",
            "message": "resource not found or not accessible",
        }
    )
    alice = probe_agent.token("alice")
    own = invoke_request(binding, "check_link_capacity", interface, {"link_id": ACME_LINK})
    assert task_of(own.send(http, bearer(alice)))["status"]["state"] == "TASK_STATE_COMPLETED"


@dataclass(frozen=True)
class AliceTasks:
    completed: str
    completed_context: str
    waiting: str
    waiting_context: str


@pytest.fixture(scope="module")
def alice_tasks(probe_agent: RunningAgent, http: httpx.Client) -> AliceTasks:
    """One completed task of alice's and one waiting for her answer (INPUT_REQUIRED)."""
    alice = bearer(probe_agent.token("alice"))
    describe = {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}
    done = task_of(send_request("JSONRPC", {"message": message(describe)}).send(http, alice))
    asking = {"message": message(text="spare capacity on acme-lnk-00002")}
    waiting = task_of(send_request("JSONRPC", asking).send(http, alice))
    assert done["status"]["state"] == "TASK_STATE_COMPLETED", done["status"]
    assert waiting["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", waiting["status"]
    return AliceTasks(done["id"], done["contextId"], waiting["id"], waiting["contextId"])


def normalized(response: httpx.Response, *identifiers: str) -> tuple[int, Any]:
    text = response.text
    for identifier in identifiers:
        text = text.replace(identifier, "<id>")
    try:
        return response.status_code, json.loads(text)
    except ValueError:
        return response.status_code, text


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("caller", ["gary", "carl"])
@pytest.mark.parametrize("operation", ["get", "cancel", "subscribe"])
def test_another_callers_task_is_answered_like_a_missing_one(
    probe_agent: RunningAgent,
    http: httpx.Client,
    alice_tasks: AliceTasks,
    binding: str,
    caller: str,
    operation: str,
) -> None:
    """gary (globex) and carl (acme, another subject) both see none of alice's tasks."""
    token = bearer(probe_agent.token(caller))
    absent = str(uuid.uuid4())
    for task_id in (alice_tasks.completed, alice_tasks.waiting):
        theirs = task_request(binding, operation, task_id).send(http, token)
        missing = task_request(binding, operation, absent).send(http, token)
        assert normalized(theirs, task_id) == normalized(missing, absent), theirs.text
        assert theirs.status_code in (200, 404) and "not found" in theirs.text.lower()
    # Control: the ids are real, alice still reads both, and the waiting one was not cancelled.
    alice = bearer(probe_agent.token("alice"))
    states = [
        task_of(task_request(binding, "get", task_id).send(http, alice))["status"]["state"]
        for task_id in (alice_tasks.completed, alice_tasks.waiting)
    ]
    assert states == ["TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED"]


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("caller", ["gary", "carl"])
def test_another_callers_task_is_absent_from_lists(
    probe_agent: RunningAgent,
    http: httpx.Client,
    alice_tasks: AliceTasks,
    binding: str,
    caller: str,
) -> None:
    token = bearer(probe_agent.token(caller))
    alice = bearer(probe_agent.token("alice"))
    absent = str(uuid.uuid4())
    for task_id, context_id in (
        (alice_tasks.completed, alice_tasks.completed_context),
        (alice_tasks.waiting, alice_tasks.waiting_context),
    ):
        theirs = list_request(binding, contextId=context_id).send(http, token)
        missing = list_request(binding, contextId=absent).send(http, token)
        assert theirs.status_code == 200, theirs.text
        assert normalized(theirs) == normalized(missing)
        assert task_id not in theirs.text
        # Control: alice's own list of that context holds the task.
        own = list_request(binding, contextId=context_id).send(http, alice)
        assert task_id in own.text


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("caller", ["gary", "carl"])
def test_a_follow_up_to_another_callers_task_is_answered_like_a_missing_one(
    probe_agent: RunningAgent,
    http: httpx.Client,
    alice_tasks: AliceTasks,
    binding: str,
    caller: str,
) -> None:
    """Answering alice's clarifying question in her task is refused as for an unknown task."""
    token = bearer(probe_agent.token(caller))
    absent = str(uuid.uuid4())
    answers = {
        task_id: send_request(
            binding, {"message": message(text="check_link_capacity", taskId=task_id)}
        ).send(http, token)
        for task_id in (alice_tasks.waiting, absent)
    }
    assert normalized(answers[alice_tasks.waiting], alice_tasks.waiting) == normalized(
        answers[absent], absent
    )
    assert "not found" in answers[absent].text.lower()
    alice = bearer(probe_agent.token("alice"))
    task = task_of(task_request(binding, "get", alice_tasks.waiting).send(http, alice))
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"


async def test_cancel_of_another_callers_running_task_is_task_not_found(lab_agent) -> None:
    """While alice's non-cancelable skill runs, its id must not answer differently to gary."""
    with httpx.Client(base_url=lab_agent.base_url, headers=HEADERS, timeout=30) as client:
        alice = bearer(lab_agent.token("alice"))
        interface = await binding_of(
            lab_agent.base_url, lab_agent.token("alice"), "evaluate_resource_condition"
        )
        data = {"skill": "evaluate_resource_condition", **interface, "arguments": WORKED_ARGUMENTS}
        polling = {"message": message(data), "configuration": {"returnImmediately": True}}
        task_id = task_of(send_request("JSONRPC", polling).send(client, alice))["id"]
        state = ""
        while state not in ("TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED"):
            await asyncio.sleep(0.05)
            state = task_of(task_request("JSONRPC", "get", task_id).send(client, alice))["status"][
                "state"
            ]
        assert state == "TASK_STATE_WORKING", "the slow tool should keep the task running"
        gary = bearer(lab_agent.token("gary"))
        theirs = task_request("JSONRPC", "cancel", task_id).send(client, gary)
        absent = str(uuid.uuid4())
        missing = task_request("JSONRPC", "cancel", absent).send(client, gary)
        assert normalized(theirs, task_id) == normalized(missing, absent), theirs.text


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_probing_caller_is_audited_under_its_own_tenant(
    probe_agent: RunningAgent, http: httpx.Client, binding: str
) -> None:
    gary = probe_agent.token("gary")
    interface = describe_interface(http, gary, "check_link_capacity")
    request = invoke_request(binding, "check_link_capacity", interface, {"link_id": ACME_LINK})
    task_id = task_of(request.send(http, bearer(gary)))["id"]
    engine = make_engine(probe_agent.settings.resolved_database_url)
    try:
        audit = DatabaseAuditLog(engine)
        rows = await audit.query(task_id=task_id)
        acme = await audit.query(tenant="acme", limit=10_000)
    finally:
        await engine.dispose()
    assert rows, "the refused invocation is audited"
    assert {(r["principal"], r["tenant"]) for r in rows} == {("gary", "globex")}
    assert not [r for r in acme if r["principal"] == "gary" or r["task_id"] == task_id]


# -- 3. a remote $ref is never fetched --------------------------------------------------------


class Spy:
    """A listening socket on 127.0.0.1 that accepts and counts every connection, in a thread."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(16)
        self._socket.settimeout(0.05)
        self.port: int = self._socket.getsockname()[1]
        self._count = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            self._count += 1
            connection.close()

    @property
    def connections(self) -> int:
        """Accepted connections, plus any still waiting in the backlog."""
        return self._count

    def close(self) -> int:
        """Stop, count what is left in the backlog, and return the total."""
        if self._stop.is_set():
            return self._count
        self._stop.set()
        self._thread.join()
        self._socket.setblocking(False)
        while True:
            try:
                connection, _ = self._socket.accept()
            except BlockingIOError:
                break
            self._count += 1
            connection.close()
        self._socket.close()
        return self._count


@pytest.fixture
def spy() -> Iterator[Spy]:
    listening = Spy()
    yield listening
    listening.close()


def test_the_spy_counts_a_connection(spy: Spy) -> None:
    """The control for the probes below: a connection to the spy is seen."""
    with socket.create_connection(("127.0.0.1", spy.port)):
        pass
    assert spy.close() == 1


REMOTE_SCHEMAS: dict[str, tuple[Callable[[Spy], dict[str, Any]], str, str]] = {
    "ref": (
        lambda s: {"properties": {"skill_id": {"$ref": s.url("skill-id.json")}}},
        "/properties/skill_id/$ref",
        "not a local '#' reference",
    ),
    "ref-with-a-fragment": (
        lambda s: {"$ref": s.url("x.json#/$defs/a")},
        "/$ref",
        "not a local '#' reference",
    ),
    "relative-ref-under-a-remote-id": (
        lambda s: {"$id": s.url("base.json"), "properties": {"skill_id": {"$ref": "x.json"}}},
        "/properties/skill_id/$ref",
        "not a local '#' reference",
    ),
    "dynamic-ref": (
        lambda s: {"$defs": {"a": {"$dynamicRef": s.url("x.json#meta")}}},
        "/$defs/a/$dynamicRef",
        "not a local '#' reference",
    ),
    "local-ref-inside-a-remote-subresource": (
        lambda s: {"$defs": {"a": {"$id": s.url("y.json"), "$ref": "#/$defs/b"}}},
        "/$defs/a/$ref",
        "does not resolve inside the schema",
    ),
    "remote-dialect": (
        lambda s: {"$schema": s.url("meta.json")},
        "/$schema",
        "is not https://json-schema.org/draft/2020-12/schema",
    ),
}


BUILTIN_DESCRIBE = BUILTIN_SKILLS_DIR / "describe_skill"


def skills_with_input_schema(tmp: Path, schema: dict[str, Any]) -> Path:
    """A skills folder holding describe_skill alone, its input schema replaced."""
    target = tmp / "skills" / "describe_skill"
    shutil.copytree(BUILTIN_DESCRIBE, target, ignore=shutil.ignore_patterns("__pycache__"))
    (target / "input.schema.json").write_text(json.dumps({"type": "object", **schema}))
    return tmp / "skills"


def test_the_fixture_skill_folder_loads_with_a_local_schema(tmp_path: Path) -> None:
    """The control: the same folder with a self-contained schema is a valid registry."""
    local = {
        "$defs": {"id": {"type": "string"}},
        "properties": {"skill_id": {"$ref": "#/$defs/id"}},
    }
    assert [
        c.id for c in load_registry(skills_with_input_schema(tmp_path, local), builtin=False)
    ] == ["describe_skill"]


@pytest.mark.parametrize("variant", list(REMOTE_SCHEMAS))
def test_the_registry_refuses_a_remote_ref_and_fetches_nothing(
    tmp_path: Path, spy: Spy, variant: str
) -> None:
    build, pointer, reason = REMOTE_SCHEMAS[variant]
    skills = skills_with_input_schema(tmp_path, build(spy))
    manifest = (skills / "describe_skill" / "manifest.json").resolve()
    with pytest.raises(RegistryError) as caught:
        load_registry(skills, builtin=False)
    message = str(caught.value)
    assert message.startswith(f"{manifest}: /interface: "), message
    assert f"/input_schema/resolution/schema{pointer}: " in message, message
    assert reason in message, message
    registry, problems = validate_registry(skills, builtin=False)
    assert registry is None and message in problems
    assert spy.close() == 0


@pytest.mark.parametrize("binding", BINDINGS)
async def test_the_governed_client_refuses_a_served_remote_ref_and_fetches_nothing(
    spy: Spy, binding: str
) -> None:
    """Every digest agrees with the document: only the remote $ref is wrong with it."""
    lying = LyingAgent("honest")
    served = lying._served  # what it will serve
    reference = served.document["input_schema"]
    schema = reference["resolution"]["schema"]
    schema["properties"]["resource_id"] = {"$ref": spy.url("resource-id.json")}
    reference["digest"] = digest_of(schema)
    served.returned_digest = served.advertised_digest = digest_of(served.document)
    with lying:
        async with GovernedClient(lying.base_url, binding=binding) as client:
            with pytest.raises(InterfaceInvalidError) as caught:
                await client.invoke(WORKED_SKILL, WORKED_ARGUMENTS)
        assert lying.invocations == []
    assert caught.value.code.value == "interface_invalid"
    expected = "/input_schema/resolution/schema/properties/resource_id/$ref: "
    assert [p for p in caught.value.details if p.startswith(expected)], caught.value.details
    assert "not a local '#' reference" in str(caught.value.details)
    assert spy.close() == 0


# -- 4. and 5. no input values and no internal text in any error ------------------------------


@dataclass(frozen=True)
class ProbeContext:
    token: str
    interfaces: dict[str, dict[str, str]]
    task_id: str  # a task of the probing caller's own


@pytest.fixture(scope="module")
def probe_context(probe_agent: RunningAgent, http: httpx.Client) -> ProbeContext:
    token = probe_agent.token("alice")
    skills = ("lookup_inventory", "evaluate_resource_condition", "check_link_capacity")
    own = task_of(_send("JSONRPC", {"message": _describe()}).send(http, bearer(token)))
    return ProbeContext(token, {s: describe_interface(http, token, s) for s in skills}, own["id"])


def _skill(ctx: ProbeContext, binding: str, skill: str, arguments: Any, **members: Any) -> Request:
    return invoke_request(binding, skill, ctx.interfaces[skill], arguments, **members)


def _describe(**members: Any) -> dict[str, Any]:
    return message(
        {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}, **members
    )


def _send(binding: str, params: Any, **headers: str) -> Request:
    return send_request(binding, params, headers)


Probe = Callable[[ProbeContext, str], Request]
M = MARKER
MARKER_PROBES: dict[str, Probe] = {
    "argument-enum": lambda c, b: _skill(c, b, "lookup_inventory", {"kind": M}),
    "argument-too-long": lambda c, b: _send(
        b, {"message": message({"skill": "describe_skill", "arguments": {"skill_id": M * 8}})}
    ),
    "argument-wrong-type": lambda c, b: _skill(
        c,
        b,
        "evaluate_resource_condition",
        {**WORKED_ARGUMENTS, "condition": {**WORKED_ARGUMENTS["condition"], "threshold": M}},
    ),
    "argument-pattern": lambda c, b: _skill(c, b, "check_link_capacity", {"link_id": f"{M} !"}),
    "argument-unknown-property": lambda c, b: _skill(
        c, b, "lookup_inventory", {"kind": "sites", "unexpected": M}
    ),
    "argument-as-resource-id": lambda c, b: _skill(
        c, b, "evaluate_resource_condition", {**WORKED_ARGUMENTS, "resource_id": M}
    ),
    "argument-as-link-id": lambda c, b: _skill(c, b, "check_link_capacity", {"link_id": M}),
    "arguments-not-an-object": lambda c, b: _skill(c, b, "lookup_inventory", M),
    "skill-request-unknown-member": lambda c, b: _send(
        b, {"message": message({"skill": "describe_skill", "arguments": {}, M: M})}
    ),
    "skill-name": lambda c, b: _send(b, {"message": message({"skill": M, "arguments": {}})}),
    "skill-version-and-digest": lambda c, b: _send(
        b,
        {
            "message": message(
                {"skill": "lookup_inventory", "skill_version": M, "interface_digest": M}
            )
        },
    ),
    "text-part": lambda c, b: _send(b, {"message": message(text=M)}),
    "text-naming-a-link": lambda c, b: _send(
        b, {"message": message(text=f"does a 20G flow fit on {M}?")}
    ),
    "metadata-skill-hint": lambda c, b: _send(
        b, {"message": message(text="check the link", metadata={"skill_id": M})}
    ),
    "message-metadata": lambda c, b: _send(b, {"message": _describe(metadata={M: M})}),
    "request-metadata": lambda c, b: _send(b, {"message": _describe(), "metadata": {M: M}}),
    "message-id": lambda c, b: _send(b, {"message": {**_describe(), "messageId": M}}),
    "task-id": lambda c, b: _send(b, {"message": _describe(taskId=M)}),
    "context-id": lambda c, b: _send(b, {"message": _describe(contextId=M)}),
    "context-id-too-long": lambda c, b: _send(b, {"message": _describe(contextId=M * 3)}),
    "context-id-of-a-named-task": lambda c, b: _send(
        b, {"message": _describe(taskId=c.task_id, contextId=M)}
    ),
    "message-extensions": lambda c, b: _send(b, {"message": _describe(extensions=[M])}),
    "extensions-header": lambda c, b: _send(b, {"message": _describe()}, **{"A2A-Extensions": M}),
    "version-header": lambda c, b: _send(b, {"message": _describe()}, **{"A2A-Version": M}),
    "bearer-token": lambda c, b: _send(b, {"message": _describe()}, Authorization=f"Bearer {M}"),
    "accepted-output-mode": lambda c, b: _send(
        b, {"message": _describe(), "configuration": {"acceptedOutputModes": [M]}}
    ),
    "part-media-type": lambda c, b: _send(
        b, {"message": {**_describe(), "parts": [{"mediaType": M, "data": {"skill": M}}]}}
    ),
    "part-url": lambda c, b: _send(b, {"message": {**_describe(), "parts": [{"url": M}]}}),
    "role": lambda c, b: _send(b, {"message": {**_describe(), "role": M}}),
    "unknown-message-member": lambda c, b: _send(b, {"message": {**_describe(), M: M}}),
    "history-length": lambda c, b: _send(
        b, {"message": _describe(), "configuration": {"historyLength": M}}
    ),
    "metadata-not-an-object": lambda c, b: _send(b, {"message": _describe(metadata=M)}),
    "extensions-not-a-list": lambda c, b: _send(b, {"message": _describe(extensions=M)}),
    "params-not-an-object": lambda c, b: (
        Request("POST", JSONRPC, rpc("SendMessage", M))
        if b == "JSONRPC"
        else Request("POST", f"{REST}/message:send", M)
    ),
    # protobuf names a member it cannot hash by its value: "Failed to parse {'<M>': ...} field"
    "message-a-list-of-objects": lambda c, b: _send(b, {"message": [{M: M}]}),
    "stream-argument-enum": lambda c, b: send_request(
        b,
        {
            "message": message(
                {
                    "skill": "lookup_inventory",
                    **c.interfaces["lookup_inventory"],
                    "arguments": {"kind": M},
                }
            )
        },
        streaming=True,
    ),
    "stream-text-part": lambda c, b: send_request(
        b, {"message": message(text=f"is {M} hot?")}, streaming=True
    ),
    "stream-skill-version": lambda c, b: send_request(
        b,
        {"message": message({"skill": "lookup_inventory", "skill_version": M, "arguments": {}})},
        streaming=True,
    ),
    "get-task-id": lambda c, b: task_request(b, "get", M),
    "get-task-history-length": lambda c, b: task_request(
        b, "get", str(uuid.uuid4()), historyLength=M
    ),
    "cancel-task-id": lambda c, b: task_request(b, "cancel", M),
    "subscribe-task-id": lambda c, b: task_request(b, "subscribe", M),
    "list-context-id": lambda c, b: list_request(b, contextId=M),
    "list-page-token": lambda c, b: list_request(b, pageToken=M),
    "list-status": lambda c, b: list_request(b, status=M),
    "list-page-size": lambda c, b: list_request(b, pageSize=M),
    "method-or-path": lambda c, b: (
        Request("POST", JSONRPC, rpc(M, {}))
        if b == "JSONRPC"
        else Request("POST", f"{REST}/{M}", {})
    ),
    "bad-json": lambda c, b: Request(
        "POST",
        JSONRPC if b == "JSONRPC" else f"{REST}/message:send",
        f'{{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {{"{M}": '.encode(),
    ),
    "jsonrpc-version-or-body": lambda c, b: Request(
        "POST",
        JSONRPC if b == "JSONRPC" else f"{REST}/message:send",
        {"jsonrpc": M, "id": 1, "method": "GetTask", "params": {}} if b == "JSONRPC" else [M],
    ),
}


def error_surfaces(response: httpx.Response) -> list[Any]:
    """The parts of an answer that are error details or questions (see the module docstring)."""
    # Location is the request's own URL (a redirect adding a slash), not an error detail.
    surfaces: list[Any] = [{k: v for k, v in response.headers.items() if k != "location"}]
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        bodies = [
            json.loads(line.removeprefix("data:"))
            for line in response.text.splitlines()
            if line.startswith("data:")
        ]
    else:
        bodies = [body_of(response)]
    for body in bodies:
        if not isinstance(body, dict):
            surfaces.append(body)
            continue
        surfaces.append(body.get("error"))
        result = body.get("result", body)
        if not isinstance(result, dict):
            continue
        for item in (result.get("task"), result.get("statusUpdate"), result):
            if isinstance(item, dict) and isinstance(item.get("status"), dict):
                surfaces.append(item["status"].get("message", {}).get("parts"))
        if isinstance(result.get("message"), dict):  # a direct Message answer
            surfaces.append(result["message"].get("parts"))
    return surfaces


def internal_text(response: httpx.Response, agent: RunningAgent) -> list[str]:
    """Internal text anywhere in the answer, headers included."""
    text = response.text + json.dumps(dict(response.headers))
    found = INTERNAL_TEXT.findall(text)
    return [*found, *([str(agent.settings.home)] if str(agent.settings.home) in text else [])]


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("probe", list(MARKER_PROBES))
def test_no_error_echoes_an_input_value(
    http: httpx.Client, probe_context: ProbeContext, probe: str, binding: str
) -> None:
    sent = MARKER_PROBES[probe](probe_context, binding)
    response = sent.send(http, bearer(probe_context.token))
    if probe != "bearer-token":
        assert response.status_code != 401, response.text  # the probe got past the edge
    surfaces = json.dumps(error_surfaces(response))
    assert MARKER not in surfaces, (response.status_code, response.text[:1500])


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_marker_probes_reach_their_checks(
    http: httpx.Client, probe_context: ProbeContext, binding: str
) -> None:
    """The control: the probes are refused by the checks they aim at, not by something earlier,
    and the error object is among the surfaces the marker is looked for in."""
    responses = {
        name: MARKER_PROBES[name](probe_context, binding).send(http, bearer(probe_context.token))
        for name in (
            "argument-enum",
            "argument-too-long",
            "argument-wrong-type",
            "argument-unknown-property",
            "arguments-not-an-object",
            "argument-as-resource-id",
            "skill-name",
            "skill-version-and-digest",
        )
    }
    answers = {name: status_error(response) for name, response in responses.items()}
    for name, response in responses.items():
        assert json.dumps(answers[name]["code"]) in json.dumps(error_surfaces(response)), name
    codes = {name: answer["code"] for name, answer in answers.items()}
    assert codes == {
        "argument-enum": "input_invalid",
        "argument-too-long": "input_invalid",
        "argument-wrong-type": "input_invalid",
        "argument-unknown-property": "input_invalid",
        "arguments-not-an-object": "input_invalid",
        "argument-as-resource-id": "authorization_failed",
        "skill-name": "skill_not_advertised",
        "skill-version-and-digest": "interface_mismatch",
    }
    assert answers["argument-enum"]["details"][0]["instance_path"] == "/kind"
    # A member name is a location, not a value: the pointer names the member, never its value.
    (unknown,) = answers["argument-unknown-property"]["details"]
    assert (unknown["instance_path"], unknown["keyword"]) == ("/unexpected", "additionalProperties")


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("probe", list(MARKER_PROBES))
def test_no_marker_probe_answer_holds_internal_text(
    probe_agent: RunningAgent,
    http: httpx.Client,
    probe_context: ProbeContext,
    probe: str,
    binding: str,
) -> None:
    response = MARKER_PROBES[probe](probe_context, binding).send(http, bearer(probe_context.token))
    assert not internal_text(response, probe_agent), response.text[:1500]


FAILURE_PROBES: dict[str, Callable[[RunningAgent, str], tuple[Request, str]]] = {
    "context-id-37-characters": lambda a, b: (
        _send(b, {"message": _describe(contextId="c" * 37)}),
        a.token("alice"),
    ),
    "task-id-37-characters": lambda a, b: (
        _send(b, {"message": _describe(taskId="t" * 37)}),
        a.token("alice"),
    ),
    "context-id-with-nul": lambda a, b: (
        _send(b, {"message": _describe(contextId="ctx\u0000nul")}),
        a.token("alice"),
    ),
    "message-id-with-nul": lambda a, b: (
        _send(b, {"message": {**_describe(), "messageId": "m\u0000nul"}}),
        a.token("alice"),
    ),
    "text-with-nul": lambda a, b: (
        _send(b, {"message": message(text="spare capacity on acme-lnk-00002\u0000")}),
        a.token("alice"),
    ),
    "task-id-with-nul": lambda a, b: (
        _send(b, {"message": _describe(taskId="t\u0000nul")}),
        a.token("alice"),
    ),
    "context-id-with-an-escape": lambda a, b: (
        _send(b, {"message": _describe(contextId="ctx\u001b[0m")}),
        a.token("alice"),
    ),
    "get-task-id-with-nul": lambda a, b: (task_request(b, "get", "t\u0000nul"), a.token("alice")),
    "cancel-task-id-with-nul": lambda a, b: (
        task_request(b, "cancel", "t\u0000nul"),
        a.token("alice"),
    ),
    "subscribe-task-id-with-nul": lambda a, b: (
        task_request(b, "subscribe", "t\u0000nul"),
        a.token("alice"),
    ),
    "get-task-id-1000-characters": lambda a, b: (
        task_request(b, "get", "t" * 1000),
        a.token("alice"),
    ),
    "list-context-id-with-nul": lambda a, b: (
        list_request(b, contextId="c\u0000nul"),
        a.token("alice"),
    ),
    "handler-raises": lambda a, b: (
        _send(
            b,
            {
                "message": message(
                    {"skill": "faulty_handler", "arguments": {"attack": "service_credential"}}
                )
            },
        ),
        a.token("alice"),
    ),
    "handler-asks-for-an-undeclared-tool": lambda a, b: (
        _send(
            b,
            {
                "message": message(
                    {"skill": "faulty_handler", "arguments": {"attack": "undeclared_tool"}}
                )
            },
        ),
        a.token("alice"),
    ),
    "not-utf-8": lambda a, b: (
        Request("POST", JSONRPC if b == "JSONRPC" else f"{REST}/message:send", b"\xff\xfe{"),
        a.token("alice"),
    ),
    "empty-body": lambda a, b: (
        Request("POST", JSONRPC if b == "JSONRPC" else f"{REST}/message:send", b""),
        a.token("alice"),
    ),
    "a-json-array": lambda a, b: (
        Request("POST", JSONRPC if b == "JSONRPC" else f"{REST}/message:send", [1, 2]),
        a.token("alice"),
    ),
    "params-not-an-object": lambda a, b: (
        Request("POST", JSONRPC, rpc("SendMessage", "x"))
        if b == "JSONRPC"
        else Request("POST", f"{REST}/message:send", "x"),
        a.token("alice"),
    ),
    "a-deeply-nested-argument": lambda a, b: (
        _send(b, {"message": message({"skill": "describe_skill", "arguments": _nested(200)})}),
        a.token("alice"),
    ),
}


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("probe", list(FAILURE_PROBES))
def test_a_provoked_failure_holds_no_internal_text(
    probe_agent: RunningAgent, http: httpx.Client, probe: str, binding: str
) -> None:
    request, token = FAILURE_PROBES[probe](probe_agent, binding)
    response = request.send(http, bearer(token))
    assert not internal_text(response, probe_agent), response.text[:1500]
    assert response.status_code != 401, response.text


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("probe", list(FAILURE_PROBES))
def test_a_provoked_failure_is_not_an_internal_error(
    probe_agent: RunningAgent, http: httpx.Client, probe: str, binding: str
) -> None:
    """Bad input is the caller's error (4xx, or a JSON-RPC error other than -32603); on
    PostgreSQL a NUL that reached the task store would be a driver error, that is -32603."""
    sent, token = FAILURE_PROBES[probe](probe_agent, binding)
    response = sent.send(http, bearer(token))
    body = body_of(response)
    error = body.get("error") if isinstance(body, dict) else None
    assert response.status_code < 500, response.text
    assert not (isinstance(error, dict) and error.get("code") == -32603), response.text


def error_answer(binding: str, response: httpx.Response) -> tuple[int, str]:
    """(JSON-RPC code, or HTTP status on HTTP+JSON; message) of an error answer."""
    error = response.json()["error"]
    return (error["code"] if binding == "JSONRPC" else response.status_code), error["message"]


UNSTORABLE_IDS = {
    "nul": "t\u0000nul",
    "escape": "t\u001b[0m",
    "delete": "t\u007fx",
    "c1-control": "t\u0085x",
    "37-characters": "t" * 37,
}


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_id_the_store_cannot_hold_is_refused_before_the_store(
    probe_context: ProbeContext, http: httpx.Client, binding: str
) -> None:
    """The documented answers: a lookup by such a task id is TaskNotFound (no task of ours has
    it), a context id with a control character is InvalidParams naming the field."""
    token = bearer(probe_context.token)
    not_found = (-32001 if binding == "JSONRPC" else 404, "Task not found")
    invalid = -32602 if binding == "JSONRPC" else 400
    for name, bad in UNSTORABLE_IDS.items():
        for operation in ("get", "cancel", "subscribe"):
            answer = error_answer(binding, task_request(binding, operation, bad).send(http, token))
            assert answer == not_found, (name, operation, answer)
        follow_up = _send(binding, {"message": _describe(taskId=bad)}).send(http, token)
        assert error_answer(binding, follow_up) == not_found, name
        if name == "37-characters":
            continue  # a long context id is refused for its length (the send) or finds nothing
        sent = _send(binding, {"message": _describe(contextId=bad)}).send(http, token)
        assert error_answer(binding, sent) == (
            invalid,
            "message.context_id holds a control character",
        ), name
        listed = list_request(binding, contextId=bad).send(http, token)
        assert error_answer(binding, listed) == (invalid, "context_id holds a control character")
    # Control: a well-formed id reaches the store, and the caller's own task is still found.
    absent = task_request(binding, "get", str(uuid.uuid4())).send(http, token)
    assert error_answer(binding, absent) == not_found
    own = task_request(binding, "get", probe_context.task_id).send(http, token)
    assert task_of(own)["id"] == probe_context.task_id


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_sdks_parse_and_version_errors_keep_their_codes_and_name_the_field(
    probe_context: ProbeContext, http: httpx.Client, binding: str
) -> None:
    """The control for the rewritten SDK errors: the same error, the field named by pointer."""
    token = bearer(probe_context.token)
    pointers = {
        "history-length": "/configuration/historyLength",
        "get-task-history-length": "/historyLength",
        "list-page-size": "/pageSize",
        "metadata-not-an-object": "/message/metadata",
        "extensions-not-a-list": "/message/extensions",
    }
    for probe, pointer in pointers.items():
        response = MARKER_PROBES[probe](probe_context, binding).send(http, token)
        error = response.json()["error"]
        if binding == "JSONRPC":
            (info,) = error["data"]
            assert (error["code"], info["reason"]) == (-32602, "INVALID_PARAMS"), probe
            assert info["metadata"] == {"parseError": f"invalid value at {pointer}"}, probe
        else:
            assert (response.status_code, error["status"]) == (400, "INVALID_ARGUMENT"), probe
            assert error["message"] == f"invalid value at {pointer}", probe
    version = MARKER_PROBES["version-header"](probe_context, binding).send(http, token)
    assert error_answer(binding, version) == (
        -32009 if binding == "JSONRPC" else 400,
        "this A2A version is not supported; send A2A-Version: 1.0",
    )
    if binding == "JSONRPC":
        params = MARKER_PROBES["params-not-an-object"](probe_context, binding).send(http, token)
        error = params.json()["error"]
        assert error["code"] == -32600
        assert error["data"][0]["metadata"] == {"parseError": "params must be an object"}


def test_a_parse_error_pointer_holds_protocol_field_names_only() -> None:
    """The scrubber's own rule, on texts protobuf writes: names outside the protocol stop it."""
    assert (
        parse_error_text(
            "Failed to parse configuration field: Failed to parse historyLength field: invalid "
            "literal for int() with base 10: 'x'.."
        )
        == "invalid value at /configuration/historyLength"
    )
    assert parse_error_text("Failed to parse secret_marker_4f1c field: x.") == (
        "the request does not parse"
    )
    assert (
        parse_error_text(
            "Failed to parse message field: Failed to parse messageId field: Failed to parse "
            "secret field: x.."
        )
        == "invalid value at /message/messageId"
    )
    assert parse_error_text("Failed to load JSON: Expecting value: line 1 column 7 (char 6).") == (
        "the request body is not valid JSON"
    )


def test_the_internal_text_patterns_match_what_they_guard_against() -> None:
    """The control: the patterns catch a traceback, a path, SQL and a driver error."""
    leaks = [
        'Traceback (most recent call last):\n  File "/work/main/agent/executor.py", line 3',
        "(sqlalchemy.dialects.postgresql.asyncpg.Error) value too long for type character "
        "varying(36) [SQL: INSERT INTO tasks (id) VALUES ($1)]",
        "KeyError: 'credential'",
        "sqlite3.OperationalError: no such table: tasks",
    ]
    assert all(INTERNAL_TEXT.search(leak) for leak in leaks)
    assert not INTERNAL_TEXT.search('{"code": "input_invalid", "message": "select a skill"}')
