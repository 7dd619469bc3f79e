"""Every filter a skill's input schema accepts is applied, or refused with ``input_invalid``.

The cases come from the schemas themselves: for each ``kind`` of ``lookup_inventory``, each
member the schema accepts with it is a filter to test, and the test must know what it means
(``MEANINGS``), so a filter added to a schema without an implementation fails here. Each
filter is tried with values that keep different records (and some that keep none), through
the real agent over A2A and over MCP; the expected records are the unfiltered inventory,
filtered here in Python. A member a schema refuses for a kind must be refused with a JSON
Pointer to it. Every member of every skill's input schema is listed in ``EXERCISED``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.routing.skill_request import plain_json
from agent.storage.engine import make_engine
from db.inventory import Inventory
from tests.a2a_helpers import invoke
from tests.conftest import RunningAgent
from tests.integration.test_foundation_a2a import interface_of
from tests.integration.test_mcp_http import mcp_client

SKILLS = Path(__file__).resolve().parents[2] / "skills"
SKILL = "lookup_inventory"
LOOKUP_SCHEMA: dict[str, Any] = json.loads((SKILLS / SKILL / "input.schema.json").read_text())
LOOKUP = Draft202012Validator(LOOKUP_SCHEMA)
KINDS: list[str] = LOOKUP_SCHEMA["properties"]["kind"]["enum"]
KEY = {"sites": "slug", "devices": "resource_id", "interfaces": "resource_id", "links": "link_id"}
BASE_DEVICE = "nyc1-core-01"
"""The device an ``interfaces`` request names when the filter under test is another one."""


def _base(kind: str, member: str) -> dict[str, Any]:
    """The least a request of ``kind`` needs besides ``member``."""
    return (
        {"kind": kind, "device": BASE_DEVICE}
        if kind == "interfaces" and member != "device"
        else {"kind": kind}
    )


def _placeholders(member: str) -> list[Any]:
    """Values of the member's own type, to ask the schema whether it takes it with a kind."""
    declared = LOOKUP_SCHEMA["properties"][member]
    if "enum" in declared:
        return list(declared["enum"])
    return [declared.get("minimum", 1)] if declared.get("type") == "integer" else ["x"]


def _accepted(kind: str, member: str) -> bool:
    base = _base(kind, member)
    return any(LOOKUP.is_valid({**base, member: v}) for v in _placeholders(member))


MEMBERS = [m for m in LOOKUP_SCHEMA["properties"] if m != "kind"]
ACCEPTED = [(k, m) for k in KINDS for m in MEMBERS if _accepted(k, m)]
REFUSED = [(k, m) for k in KINDS for m in MEMBERS if not _accepted(k, m)]


@dataclass
class Truth:
    """The caller's whole inventory, read without filters (what the answers are judged by)."""

    sites: list[dict[str, Any]]
    devices: list[dict[str, Any]]
    links: list[dict[str, Any]]
    ports: dict[str, list[dict[str, Any]]]

    def device(self, ref: str) -> dict[str, Any]:
        (found,) = [d for d in self.devices if ref in (d["name"], d["resource_id"])]
        return found

    def role(self, name: str) -> str:
        return str(self.device(name)["role"])

    def unfiltered(self, kind: str) -> list[dict[str, Any]]:
        return self.ports[BASE_DEVICE] if kind == "interfaces" else getattr(self, kind)


Meaning = Callable[[Truth, Any, dict[str, Any]], bool]
"""Whether a record (the third argument) passes the filter's value (the second)."""


def _device_passes(member: str) -> Meaning:
    """An interface passes a device filter (site, role) when its device does."""
    return lambda truth, value, port: truth.device(port["device_resource_id"])[member] == value


MEANINGS: dict[tuple[str, str], Meaning] = {
    ("sites", "site"): lambda t, v, s: s["slug"] == v,
    ("sites", "device"): lambda t, v, s: s["slug"] == t.device(v)["site"],
    ("devices", "site"): lambda t, v, d: d["site"] == v,
    ("devices", "device"): lambda t, v, d: v in (d["name"], d["resource_id"]),
    ("devices", "role"): lambda t, v, d: d["role"] == v,
    ("devices", "status"): lambda t, v, d: d["status"] == v,
    ("interfaces", "device"): lambda t, v, p: p["device_resource_id"] == t.device(v)["resource_id"],
    ("interfaces", "site"): _device_passes("site"),
    ("interfaces", "role"): _device_passes("role"),
    ("links", "site"): lambda t, v, link: v in (link["a_site"], link["b_site"]),
    ("links", "device"): lambda t, v, link: (
        t.device(v)["name"] in (link["a_device"], link["b_device"])
    ),
    ("links", "role"): lambda t, v, link: v in (t.role(link["a_device"]), t.role(link["b_device"])),
    ("links", "status"): lambda t, v, link: link["status"] == v,
    ("links", "link"): lambda t, v, link: link["link_id"] == v,
}
"""What each (kind, filter) the schema accepts keeps; ``limit`` is checked on its own."""


def _values(truth: Truth, kind: str, member: str) -> list[Any]:
    """Values that keep different records, some none (another tenant's site, no such site)."""
    if member == "limit":
        return [1, 2, 500]
    if member == "site":
        return [s["slug"] for s in truth.sites] + ["fra1", "zzz9"]
    if member == "device":
        access = next(d for d in truth.devices if d["role"] == "access" and d["site"] != "nyc1")
        return [BASE_DEVICE, truth.device(BASE_DEVICE)["resource_id"], access["name"]]
    if member == "link":
        return [
            truth.links[0]["link_id"],
            next(x for x in truth.links if x["status"] == "down")["link_id"],
        ]
    return [v for v in _placeholders(member) if LOOKUP.is_valid({**_base(kind, member), member: v})]


def _expected(truth: Truth, kind: str, member: str, value: Any) -> list[str]:
    rows = (
        truth.ports[value] if (kind, member) == ("interfaces", "device") else truth.unfiltered(kind)
    )
    if member == "limit":
        return [r[KEY[kind]] for r in rows]  # every one counted; the first ``value`` listed
    try:
        meaning = MEANINGS[(kind, member)]
    except KeyError:
        pytest.fail(
            f"{SKILL}'s input schema accepts {member!r} with kind {kind!r}, and nothing says what "
            "it keeps: apply it (and add its meaning to MEANINGS), or refuse it in the schema"
        )
    return [r[KEY[kind]] for r in rows if meaning(truth, value, r)]


@pytest.fixture(scope="module")
async def engine(agent: RunningAgent) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(agent.settings.resolved_database_url)
    yield engine
    await engine.dispose()


@pytest.fixture(scope="module")
async def truth(engine: AsyncEngine) -> Truth:
    acme = Inventory(engine, "acme")
    devices = await acme.devices()
    ports = {}
    for device in devices:
        ports[device["name"]] = ports[device["resource_id"]] = await acme.interfaces(device["name"])
    return Truth(await acme.sites(), devices, await acme.links(), ports)


def _answer(result: dict[str, Any], kind: str) -> tuple[int, list[str]]:
    return result["count"], [item[KEY[kind]] for item in result["items"]]


def _cases(truth: Truth, kind: str, member: str) -> list[tuple[dict[str, Any], int, list[str]]]:
    """(arguments, count, keys listed) for each value; the values must keep different records
    (else ignoring the filter would pass)."""
    cases = []
    for value in _values(truth, kind, member):
        kept = _expected(truth, kind, member, value)
        arguments = {**_base(kind, member), member: value}
        if member == "limit":
            cases.append((arguments, len(kept), kept[:value]))
        else:
            cases.append(({**arguments, "limit": 500}, len(kept), kept))
    assert len({tuple(listed) for _, _, listed in cases}) > 1, (kind, member)
    return cases


@pytest.mark.parametrize(("kind", "member"), ACCEPTED, ids=[f"{k}-{m}" for k, m in ACCEPTED])
async def test_an_accepted_filter_is_applied(
    agent: RunningAgent, truth: Truth, kind: str, member: str
) -> None:
    token = agent.token("alice")
    interface = await interface_of(agent, token, SKILL, "JSONRPC")
    for arguments, count, listed in _cases(truth, kind, member):
        outcome = await invoke(agent.base_url, token, SKILL, arguments, interface)
        assert outcome.state == "TASK_STATE_COMPLETED", (arguments, outcome.task)
        assert _answer(plain_json(outcome.result(SKILL)), kind) == (count, listed), arguments


@pytest.mark.parametrize(("kind", "member"), ACCEPTED, ids=[f"{k}-{m}" for k, m in ACCEPTED])
async def test_an_accepted_filter_is_applied_over_mcp(
    agent: RunningAgent, truth: Truth, kind: str, member: str
) -> None:
    cases = _cases(truth, kind, member)
    async with mcp_client(agent, agent.token("alice")) as client:
        for arguments, count, listed in cases:
            answer = await client.call_tool(SKILL, arguments)
            assert not answer.is_error, (arguments, answer.structured_content)
            assert isinstance(answer.structured_content, dict)
            assert _answer(answer.structured_content, kind) == (count, listed), arguments


@pytest.mark.parametrize(("kind", "member"), REFUSED, ids=[f"{k}-{m}" for k, m in REFUSED])
async def test_a_refused_filter_is_input_invalid_at_its_member(
    agent: RunningAgent, kind: str, member: str
) -> None:
    token = agent.token("alice")
    interface = await interface_of(agent, token, SKILL, "JSONRPC")
    for value in _placeholders(member):
        arguments = {**_base(kind, member), member: value}
        outcome = await invoke(agent.base_url, token, SKILL, arguments, interface)
        assert outcome.state == "TASK_STATE_REJECTED", (arguments, outcome.task)
        assert outcome.error["code"] == "input_invalid"
        pointers = {d["instance_path"] for d in outcome.error["details"]}
        assert f"/{member}" in pointers, (arguments, outcome.error)


def test_the_cases_cover_both_outcomes() -> None:
    """The schema both takes and refuses filters by kind (else a parametrisation is empty)."""
    assert ("links", "site") in ACCEPTED and ("links", "role") in ACCEPTED
    assert ("sites", "status") in REFUSED and ("devices", "link") in REFUSED
    assert ("sites", "role") in REFUSED  # every site has every role: the filter would keep all


EXERCISED: dict[str, dict[str, str]] = {
    "lookup_inventory": {
        "kind": "every test below (what is listed)",
        **dict.fromkeys(MEMBERS, "test_an_accepted_filter_is_applied"),
    },
    "check_link_capacity": {
        "link_id": "test_foundation_a2a (named link)",
        "a_device": "test_foundation_a2a (link between two devices)",
        "b_device": "test_foundation_a2a (link between two devices)",
        "requested_bps": "test_foundation_a2a (fits / does not fit)",
        "window_seconds": "test_capacity_window_keeps_that_window (below)",
        "max_sample_age_seconds": "not through the server: the seed's telemetry ends at the "
        "test clock, never stale; the handler refuses a newest sample older than it",
        "direction": "test_capacity_direction_keeps_that_direction (below)",
    },
    "link_headroom": {"link_id": "test_foundation_a2a"},
    "evaluate_resource_condition": {
        "resource_id": "test_foundation_a2a (worked example)",
        "condition": "test_foundation_a2a (each operator and metric)",
    },
    "plan_link_upgrade": {
        "link_id": "test_foundation_a2a (the link planned)",
        "requested_bps": "test_foundation_a2a (its reason names the request)",
        "fits": "test_foundation_a2a (a request that does not fit means upgrade)",
        **dict.fromkeys(
            (
                "a_device",
                "b_device",
                "status",
                "capacity_bps",
                "window_seconds",
                "window_end",
                "available_bps",
                "verdict",
                "directions",
                "supporting_record_refs",
            ),
            "read again from the inventory, as it is now (its handler's docstring)",
        ),
    },
}
"""Where each member of each skill's input schema is shown to change the answer."""


def test_every_member_of_every_input_schema_is_exercised() -> None:
    found = {}
    for schema in sorted(SKILLS.glob("*/input.schema.json")):
        found[schema.parent.name] = set(json.loads(schema.read_text()).get("properties", {}))
    assert {skill: set(members) for skill, members in EXERCISED.items()} == found


@pytest.mark.parametrize("direction", ["a_to_b", "b_to_a", "both"])
async def test_capacity_direction_keeps_that_direction(
    agent: RunningAgent, truth: Truth, direction: str
) -> None:
    token = agent.token("alice")
    link = next(x for x in truth.links if x["status"] == "connected")
    arguments = {"link_id": link["link_id"], "direction": direction}
    interface = await interface_of(agent, token, "check_link_capacity", "JSONRPC")
    outcome = await invoke(agent.base_url, token, "check_link_capacity", arguments, interface)
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task
    shown = [d["direction"] for d in outcome.result("check_link_capacity")["directions"]]
    assert shown == (["a_to_b", "b_to_a"] if direction == "both" else [direction])


async def test_capacity_window_keeps_that_window(agent: RunningAgent, truth: Truth) -> None:
    token = agent.token("alice")
    link = next(x for x in truth.links if x["status"] == "connected")
    interface = await interface_of(agent, token, "check_link_capacity", "JSONRPC")
    samples = []
    for window in (300, 3600):
        arguments = {"link_id": link["link_id"], "window_seconds": window}
        outcome = await invoke(agent.base_url, token, "check_link_capacity", arguments, interface)
        assert outcome.state == "TASK_STATE_COMPLETED", outcome.task
        result = outcome.result("check_link_capacity")
        assert result["window_seconds"] == window
        samples.append(sum(d["samples"] for d in result["directions"]))
    assert 0 < samples[0] < samples[1]
