"""The demo skills through the real a2a-sdk client, on both bindings, against the database.

Every expected value comes from the database (the tenant-scoped read layer or the samples
themselves), never from the skill under test; the skill's answer must equal that truth.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from a2a.client.errors import A2AClientError
from a2a.types import GetExtendedAgentCardRequest
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.interfaces.reference import reference_identity
from agent.registry.loader import load_registry
from agent.routing.skill_request import plain_json
from agent.server.skill_context import rfc3339
from agent.storage.engine import make_engine
from db.inventory import Inventory
from netops.deployment import SKILLS_DIR
from tests.a2a_helpers import BINDINGS, Outcome, invoke, make_client, send, text_message
from tests.conftest import FIXED_NOW, RunningAgent
from tests.registry_view import card_ids, demo_only

NOT_ACCESSIBLE = {"code": "authorization_failed", "message": "resource not found or not accessible"}
NOT_ADVERTISED = {"code": "skill_not_advertised", "message": "no such skill is advertised to you"}
COMPLETED, REJECTED = "TASK_STATE_COMPLETED", "TASK_STATE_REJECTED"
HOT_LINK = "acme-lnk-00002"
LAG_LINK = "acme-lnk-00001"
DOWN_LINK = "acme-lnk-00015"
PLANNED_LINK = "acme-lnk-00018"
WINDOW = 3600


@pytest.fixture(scope="module")
async def engine(agent: RunningAgent) -> AsyncIterator[AsyncEngine]:
    engine = make_engine(agent.settings.resolved_database_url)
    yield engine
    await engine.dispose()


@pytest.fixture(scope="module")
def acme(engine: AsyncEngine) -> Inventory:
    return Inventory(engine, "acme")


@pytest.fixture(scope="module")
def globex(engine: AsyncEngine) -> Inventory:
    return Inventory(engine, "globex")


def jsonable(value: Any) -> Any:
    """The database's answer in the shape it has on the wire."""
    if isinstance(value, datetime):
        return rfc3339(value)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return plain_json(value)


async def interface_of(
    agent: RunningAgent, token: str | None, skill: str, binding: str
) -> dict[str, str]:
    outcome = await invoke(
        agent.base_url, token, "describe_skill", {"skill_id": skill}, binding=binding
    )
    assert outcome.state == COMPLETED, outcome.task
    described = outcome.result("describe_skill")
    assert described["skill_id"] == skill
    return {
        "skill_version": described["skill_version"],
        "interface_digest": described["interface_digest"],
    }


async def call(
    agent: RunningAgent, who: str, skill: str, arguments: dict[str, Any], binding: str
) -> Outcome:
    """Describe first, then invoke with the described version and digest."""
    token = agent.token(who)
    interface = await interface_of(agent, token, skill, binding)
    return await invoke(agent.base_url, token, skill, arguments, interface, binding=binding)


def result_of(outcome: Outcome, skill: str) -> dict[str, Any]:
    assert outcome.state == COMPLETED, outcome.task
    return plain_json(outcome.result(skill))


def error_of(outcome: Outcome, state: str = REJECTED) -> dict[str, Any]:
    assert outcome.state == state, outcome.task
    assert not outcome.task.artifacts
    return outcome.error


# -- extended cards ---------------------------------------------------------------------------

CARD_IDS = {
    "alice": {
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
    },
    "vic": {"describe_skill", "lookup_inventory"},
    "paula": {
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
        "plan_link_upgrade",
    },
    "carl": {
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
    },
    "gary": {
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
    },
}


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("who", sorted(CARD_IDS))
async def test_extended_card_per_caller(agent: RunningAgent, binding: str, who: str) -> None:
    async with make_client(agent.base_url, agent.token(who), binding) as client:
        card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    ids = {s.id for s in card.skills}
    assert ids == set(card_ids(who))  # what the registry offers this caller, a fork's skills too
    assert set(demo_only(ids)) == CARD_IDS[who]
    assert ("evaluate_resource_condition" in ids) is (who != "vic")
    assert ("plan_link_upgrade" in ids) is (who == "paula")
    assert "port_report" not in ids


@pytest.mark.parametrize("binding", BINDINGS)
async def test_extended_card_refuses_anonymous(agent: RunningAgent, binding: str) -> None:
    async with make_client(agent.base_url, None, binding) as client:
        with pytest.raises(A2AClientError) as caught:
            await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    assert "401" in str(caught.value)


# -- lookup_inventory equals the read layer ---------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize(
    ("arguments", "read"),
    [
        pytest.param({"kind": "sites"}, lambda inv: inv.sites(), id="sites"),
        pytest.param(
            {"kind": "devices", "site": "nyc1"}, lambda inv: inv.devices(site="nyc1"), id="devices"
        ),
        pytest.param(
            {"kind": "interfaces", "device": "nyc1-core-01"},
            lambda inv: inv.interfaces("nyc1-core-01"),
            id="interfaces",
        ),
        pytest.param(
            {"kind": "links", "device": "nyc1-core-01"},
            lambda inv: inv.links(device="nyc1-core-01"),
            id="links",
        ),
        pytest.param(
            {"kind": "links", "status": "down"},
            lambda inv: inv.links(status="down"),
            id="down-links",
        ),
    ],
)
async def test_lookup_inventory_equals_the_read_layer(
    agent: RunningAgent, acme: Inventory, binding: str, arguments: dict[str, Any], read: Any
) -> None:
    rows = await read(acme)
    assert rows, "the demo data has rows for this query"
    result = result_of(
        await call(agent, "alice", "lookup_inventory", {**arguments, "limit": 500}, binding),
        "lookup_inventory",
    )
    assert result == {
        "kind": arguments["kind"],
        "tenant": "acme",
        "count": len(rows),
        "truncated": False,
        "items": jsonable(rows),
    }


async def test_lookup_inventory_truncates_at_the_limit(
    agent: RunningAgent, acme: Inventory
) -> None:
    rows = await acme.links()
    assert len(rows) > 5
    result = result_of(
        await call(agent, "alice", "lookup_inventory", {"kind": "links", "limit": 5}, "JSONRPC"),
        "lookup_inventory",
    )
    assert result["count"] == len(rows)
    assert result["truncated"] is True
    assert result["items"] == jsonable(rows[:5])


async def test_lookup_inventory_names_one_link_or_device_as_the_list_would_hold_it(
    agent: RunningAgent, acme: Inventory
) -> None:
    """1.1: a named link or device is that one record, kept only if every other filter given
    would keep it in the list (so the answer is the list's, cut to one)."""
    links = await acme.links()
    down = next(r for r in links if r["status"] == "down")
    connected = next(r for r in links if r["status"] == "connected")
    cases: list[tuple[dict[str, Any], Any]] = []
    for link in (down, connected):
        for filters in (
            {},
            {"status": "down"},
            {"status": "connected"},
            {"device": link["a_device"]},
            {"device": link["b_device_resource_id"]},
            {"device": "nyc1-core-01", "status": link["status"]},
        ):
            cases.append(({"kind": "links", "link": link["link_id"], **filters}, link))
    devices = await acme.devices()
    for device in (devices[0], devices[-1]):
        for filters in (
            {},
            {"site": device["site"]},
            {"site": "lon1" if device["site"] != "lon1" else "nyc1"},
            {"role": device["role"]},
            {"role": "access" if device["role"] != "access" else "core"},
            {"status": device["status"]},
            {"status": "failed" if device["status"] != "failed" else "active"},
        ):
            for ref in (device["name"], device["resource_id"]):
                cases.append(({"kind": "devices", "device": ref, **filters}, device))
    token = agent.token("alice")
    interface = await interface_of(agent, token, "lookup_inventory", "JSONRPC")
    kept = 0
    for arguments, record in cases:
        kind, filters = (
            arguments["kind"],
            {k: v for k, v in arguments.items() if k not in ("kind", "link", "device")},
        )
        if kind == "links":
            listed = await acme.links(device=arguments.get("device"), **filters)
            expected = [r for r in listed if r["link_id"] == record["link_id"]]
        else:
            listed = await acme.devices(**filters)
            expected = [r for r in listed if r["resource_id"] == record["resource_id"]]
        outcome = await invoke(
            agent.base_url, token, "lookup_inventory", arguments, interface, binding="JSONRPC"
        )
        result = result_of(outcome, "lookup_inventory")
        assert result["items"] == jsonable(expected), arguments
        assert (result["count"], result["truncated"]) == (len(expected), False)
        kept += bool(expected)
    assert 0 < kept < len(cases)  # the filters both kept and dropped the named record


@pytest.mark.parametrize(
    ("arguments", "pointer"),
    [
        pytest.param({"kind": "devices", "link": HOT_LINK}, "/link", id="link-for-devices"),
        pytest.param({"kind": "sites", "link": HOT_LINK}, "/link", id="link-for-sites"),
        pytest.param({"kind": "links", "link": ""}, "/link", id="empty"),
        pytest.param({"kind": "links", "link": "acme-lnk-" + "9" * 60}, "/link", id="huge"),
        pytest.param({"kind": "links", "link": 2}, "/link", id="number"),
        pytest.param({"kind": "links", "link": [HOT_LINK]}, "/link", id="array"),
    ],
)
async def test_lookup_inventory_a_link_it_cannot_take_is_input_invalid_by_pointer(
    agent: RunningAgent, arguments: dict[str, Any], pointer: str
) -> None:
    error = error_of(await call(agent, "alice", "lookup_inventory", arguments, "JSONRPC"))
    assert error["code"] == "input_invalid", error
    assert pointer in {d["instance_path"] for d in error["details"]}, error


@pytest.mark.parametrize(
    "link",
    [
        HOT_LINK.upper(),
        HOT_LINK + " ",
        HOT_LINK + "'--",
        "acme-lnk-%",
        "acme-lnk-_____",
        "acme:lnk:00002",
        "5:acme:acme-lnk-00002",
        "*",
    ],
)
async def test_lookup_inventory_a_hostile_link_id_looks_absent(
    agent: RunningAgent, link: str
) -> None:
    """Wildcards, quotes, separators and encodings name no link: the same answer as an absent
    one (only the exact id is a link)."""
    outcome = await call(
        agent, "alice", "lookup_inventory", {"kind": "links", "link": link}, "JSONRPC"
    )
    assert error_of(outcome) == NOT_ACCESSIBLE


async def test_lookup_inventory_a_link_id_with_nul_is_invalid_params_by_pointer(
    agent: RunningAgent,
) -> None:
    """No backend can hold NUL: the edge refuses it as the protocol's error, naming where."""
    with pytest.raises(InvalidParamsError, match="/arguments/link"):
        await call(
            agent,
            "alice",
            "lookup_inventory",
            {"kind": "links", "link": HOT_LINK + "\x00"},
            "JSONRPC",
        )


@pytest.mark.parametrize("status", ["up", "bogus"])
async def test_lookup_inventory_unknown_status_is_refused_not_an_internal_error(
    agent: RunningAgent, status: str
) -> None:
    """A status the inventory does not know is the caller's mistake: REJECTED, not FAILED."""
    outcome = await call(
        agent, "alice", "lookup_inventory", {"kind": "links", "status": status}, "JSONRPC"
    )
    assert outcome.state == REJECTED, outcome.error
    assert outcome.error["code"] in ("input_invalid", "constraint_rejected")


# -- check_link_capacity ----------------------------------------------------------------------


async def window_samples(inventory: Inventory, link_id: str) -> list[dict[str, Any]]:
    return await inventory.utilization_samples(
        link_id, since=FIXED_NOW - timedelta(seconds=WINDOW), until=FIXED_NOW
    )


def record_id(sample: dict[str, Any]) -> str:
    return f"sample-{sample['direction']}-{int(sample['observed_at'].timestamp())}"


def check_evidence(outcome: Outcome, result: dict[str, Any], samples: list[dict]) -> None:
    records = outcome.artifacts("link-utilization-sample")
    assert len(records) == len(samples)
    assert len(outcome.task.artifacts) == len(samples) + 1  # the records and the result
    assert result["supporting_record_refs"] == [a["artifactId"] for a in records]
    by_id = {a["artifactId"]: plain_json(a["parts"][0]["data"]) for a in records}
    for sample in samples:
        record = by_id[record_id(sample)]
        assert record == {
            "record_id": record_id(sample),
            "link_id": sample["link_id"],
            "direction": sample["direction"],
            "observed_at": rfc3339(sample["observed_at"]),
            "interval_s": sample["interval_s"],
            "utilized_bps": sample["utilized_bps"],
            "available_bps": sample["available_bps"],
            "utilization_ratio": plain_json(sample["utilization_ratio"]),
        }


@pytest.mark.parametrize("binding", BINDINGS)
async def test_check_link_capacity_fits_and_does_not_fit(
    agent: RunningAgent, acme: Inventory, binding: str
) -> None:
    link = await acme.link(HOT_LINK)
    samples = await window_samples(acme, HOT_LINK)
    assert link is not None and link["status"] == "connected" and samples
    available = min(s["available_bps"] for s in samples)
    for requested, fits in ((available, True), (available + 1, False)):
        outcome = await call(
            agent,
            "alice",
            "check_link_capacity",
            {"link_id": HOT_LINK, "requested_bps": requested},
            binding,
        )
        result = result_of(outcome, "check_link_capacity")
        assert result["link_id"] == HOT_LINK
        assert (result["a_device"], result["b_device"]) == (link["a_device"], link["b_device"])
        assert result["status"] == "connected"
        assert result["capacity_bps"] == link["capacity_bps"]
        assert result["window_seconds"] == WINDOW
        assert result["window_end"] == rfc3339(FIXED_NOW)
        assert result["available_bps"] == available
        assert result["requested_bps"] == requested
        assert result["fits"] is fits
        stats = {d["direction"]: d for d in result["directions"]}
        assert set(stats) == {"a_to_b", "b_to_a"}
        for direction, entry in stats.items():
            mine = [s for s in samples if s["direction"] == direction]
            assert entry["samples"] == len(mine)
            assert entry["available_bps_min"] == min(s["available_bps"] for s in mine)
            assert entry["utilized_bps_max"] == max(s["utilized_bps"] for s in mine)
            assert entry["utilization_ratio_max"] == plain_json(
                max(s["utilization_ratio"] for s in mine)
            )
        check_evidence(outcome, result, samples)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_check_link_capacity_by_device_pair(
    agent: RunningAgent, acme: Inventory, binding: str
) -> None:
    link = await acme.link(HOT_LINK)
    assert link is not None
    between = await acme.link_between(link["a_device"], link["b_device"])
    assert between is not None
    samples = await window_samples(acme, between["link_id"])
    available = min(s["available_bps"] for s in samples)
    for a_device, b_device in (
        (link["a_device"], link["b_device"]),
        (link["b_device"], link["a_device"]),
    ):
        outcome = await call(
            agent,
            "alice",
            "check_link_capacity",
            {"a_device": a_device, "b_device": b_device, "requested_bps": available + 1},
            binding,
        )
        result = result_of(outcome, "check_link_capacity")
        assert result["link_id"] == between["link_id"]
        assert result["available_bps"] == available
        assert result["fits"] is False
        check_evidence(outcome, result, samples)


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("link_id", [DOWN_LINK, PLANNED_LINK])
async def test_check_link_capacity_on_a_link_that_carries_nothing(
    agent: RunningAgent, acme: Inventory, binding: str, link_id: str
) -> None:
    link = await acme.link(link_id)
    assert link is not None and link["status"] != "connected"
    outcome = await call(
        agent, "alice", "check_link_capacity", {"link_id": link_id, "requested_bps": 1}, binding
    )
    result = result_of(outcome, "check_link_capacity")
    assert result["status"] == link["status"]
    assert result["fits"] is False
    assert result["available_bps"] == 0
    assert result["directions"] == []
    assert result["supporting_record_refs"] == []
    assert len(outcome.task.artifacts) == 1


async def test_only_one_link_is_down_and_one_planned(acme: Inventory) -> None:
    """The demo facts the two cases above rely on, read from the database."""
    assert [x["link_id"] for x in await acme.links(status="down")] == [DOWN_LINK]
    assert PLANNED_LINK in [x["link_id"] for x in await acme.links(status="planned")]
    assert await acme.utilization_samples(PLANNED_LINK, since=FIXED_NOW - timedelta(days=30)) == []


# -- link_headroom (deprecated) ---------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_link_headroom_on_a_connected_link(
    agent: RunningAgent, acme: Inventory, binding: str
) -> None:
    link = await acme.link(LAG_LINK)
    assert link is not None and link["status"] == "connected"
    assert link["kind"] == "lag" and link["capacity_bps"] == 200_000_000_000
    samples = await acme.utilization_samples(
        LAG_LINK, since=FIXED_NOW - timedelta(hours=1), until=FIXED_NOW
    )
    latest = max(s["observed_at"] for s in samples)
    busiest = max(s["utilization_ratio"] for s in samples if s["observed_at"] == latest)
    result = result_of(
        await call(agent, "alice", "link_headroom", {"link_id": LAG_LINK}, binding),
        "link_headroom",
    )
    assert result == {
        "link_id": LAG_LINK,
        "capacity_bps": link["capacity_bps"],
        "headroom_percent": plain_json(round(max(0.0, 1.0 - busiest) * 100, 2)),
        "observed_at": rfc3339(latest),
    }


# -- plan_link_upgrade (preview, acme only): takes a check_link_capacity result ---------------

LOOKBACK = 604800
UPGRADE_ABOVE = 0.8
STANDARD_RATES = [r * 1_000_000_000 for r in (1, 10, 25, 40, 100, 200, 400, 800)]
COOL_LINK = "acme-lnk-00003"
GLOBEX_HOT_LINK = "globex-lnk-00006"


async def capacity_result(
    agent: RunningAgent, who: str, link_id: str, binding: str, requested: int | None = None
) -> dict[str, Any]:
    """A real check_link_capacity result, as a client holds it to pass on."""
    arguments: dict[str, Any] = {"link_id": link_id}
    if requested is not None:
        arguments["requested_bps"] = requested
    outcome = await call(agent, who, "check_link_capacity", arguments, binding)
    return result_of(outcome, "check_link_capacity")


async def week_truth(inventory: Inventory, link_id: str) -> dict[str, Any]:
    """The link and its peak and mean ratio over the lookback, read from the database."""
    link = await inventory.link(link_id)
    assert link is not None
    samples = await inventory.utilization_samples(
        link_id, since=FIXED_NOW - timedelta(seconds=LOOKBACK), until=FIXED_NOW
    )
    ratios = [s["utilization_ratio"] for s in samples]
    return {
        "link": link,
        "samples": len(ratios),
        "peak": max(ratios, default=0.0),
        "mean": round(sum(ratios) / len(ratios), 6) if ratios else 0.0,
    }


def smallest_rate_over(capacity: int, needed: float) -> int:
    return min(r for r in STANDARD_RATES if r >= needed and r > capacity)


def check_plan(outcome: Outcome, truth: dict[str, Any]) -> dict[str, Any]:
    """The plan's figures and its one utilization-peak record equal the database's."""
    result = result_of(outcome, "plan_link_upgrade")
    link = truth["link"]
    assert result["link_id"] == link["link_id"]
    assert result["current_capacity_bps"] == link["capacity_bps"]
    assert result["peak_utilization_ratio"] == plain_json(truth["peak"])
    assert result["mean_utilization_ratio"] == plain_json(truth["mean"])
    record_id = f"peak-{link['link_id']}"
    assert result["supporting_record_refs"] == [record_id]
    peaks = outcome.artifacts("utilization-peak")
    assert [a["artifactId"] for a in peaks] == [record_id]
    assert len(outcome.task.artifacts) == 2  # the record and the result
    assert plain_json(peaks[0]["parts"][0]["data"]) == {
        "record_id": record_id,
        "link_id": link["link_id"],
        "window_start": rfc3339(FIXED_NOW - timedelta(seconds=LOOKBACK)),
        "window_end": rfc3339(FIXED_NOW),
        "samples": truth["samples"],
        "peak_utilization_ratio": plain_json(truth["peak"]),
        "mean_utilization_ratio": plain_json(truth["mean"]),
    }
    return result


def test_capacity_result_and_plan_input_are_the_same_schema_reference() -> None:
    """Direct composition: check_link_capacity's output reference is plan_link_upgrade's input."""
    registry = load_registry(SKILLS_DIR)
    capacity, plan = registry.get("check_link_capacity"), registry.get("plan_link_upgrade")
    assert capacity is not None and capacity.interface is not None
    assert plan is not None and plan.interface is not None
    produced = capacity.interface.document["output_schema"]
    consumed = plan.interface.document["input_schema"]
    members = ("schema_uri", "version", "dialect", "digest")
    assert [consumed[m] for m in members] == [produced[m] for m in members]
    assert reference_identity(consumed) == reference_identity(produced)
    assert produced["schema_uri"] == "urn:netops-agent:schema:check-link-capacity:output"
    assert produced["version"] == "1.0"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_plan_link_upgrade_recommends_upgrading_the_hot_link(
    agent: RunningAgent, acme: Inventory, binding: str
) -> None:
    truth = await week_truth(acme, HOT_LINK)
    capacity = truth["link"]["capacity_bps"]
    assert truth["link"]["status"] == "connected" and truth["peak"] > UPGRADE_ABOVE
    checked = await capacity_result(agent, "paula", HOT_LINK, binding)
    assert checked["fits"] is None
    outcome = await call(agent, "paula", "plan_link_upgrade", checked, binding)
    result = check_plan(outcome, truth)
    assert result["recommendation"] == "upgrade"
    expected = smallest_rate_over(capacity, capacity * truth["peak"] / 0.5)
    assert result["recommended_capacity_bps"] == expected > capacity
    assert expected * 0.5 >= capacity * truth["peak"]
    assert "above 80%" in result["reason"]
    plan = load_registry(SKILLS_DIR).get("plan_link_upgrade")
    assert plan is not None and plan.handler is not None and plan.handler.summarize is not None
    assert plan.handler.summarize(result) == (
        f"{HOT_LINK}: upgrade to {expected // 1_000_000_000} Gbit/s "
        f"(peak {round(truth['peak'] * 100)}%)"
    )


@pytest.mark.parametrize("binding", BINDINGS)
async def test_plan_link_upgrade_leaves_a_cool_link_alone(
    agent: RunningAgent, acme: Inventory, binding: str
) -> None:
    truth = await week_truth(acme, COOL_LINK)
    assert truth["link"]["status"] == "connected" and 0 < truth["peak"] <= UPGRADE_ABOVE
    checked = await capacity_result(agent, "paula", COOL_LINK, binding, requested=1000)
    assert checked["fits"] is True
    outcome = await call(agent, "paula", "plan_link_upgrade", checked, binding)
    result = check_plan(outcome, truth)
    assert result["recommendation"] == "no_change"
    assert result["recommended_capacity_bps"] == truth["link"]["capacity_bps"]


async def test_plan_link_upgrade_upgrades_a_cool_link_when_the_request_does_not_fit(
    agent: RunningAgent, acme: Inventory
) -> None:
    truth = await week_truth(acme, COOL_LINK)
    capacity = truth["link"]["capacity_bps"]
    assert truth["peak"] <= UPGRADE_ABOVE
    window = await window_samples(acme, COOL_LINK)
    requested = min(s["available_bps"] for s in window) + 1
    checked = await capacity_result(agent, "paula", COOL_LINK, "JSONRPC", requested=requested)
    assert checked["fits"] is False
    outcome = await call(agent, "paula", "plan_link_upgrade", checked, "JSONRPC")
    result = check_plan(outcome, truth)
    assert result["recommendation"] == "upgrade"
    peak_bps = capacity * truth["peak"]
    expected = smallest_rate_over(capacity, max(peak_bps / 0.5, peak_bps + requested))
    assert result["recommended_capacity_bps"] == expected > capacity
    assert "does not fit" in result["reason"]


async def test_plan_link_upgrade_never_upgrades_a_link_that_is_down(
    agent: RunningAgent, acme: Inventory
) -> None:
    truth = await week_truth(acme, DOWN_LINK)
    assert truth["link"]["status"] == "down"
    checked = await capacity_result(agent, "paula", DOWN_LINK, "JSONRPC", requested=1)
    assert checked["fits"] is False  # a request never fits a link that carries nothing
    outcome = await call(agent, "paula", "plan_link_upgrade", checked, "JSONRPC")
    result = check_plan(outcome, truth)
    assert result["recommendation"] == "no_change"
    assert result["recommended_capacity_bps"] == truth["link"]["capacity_bps"]
    assert "down" in result["reason"]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_plan_link_upgrade_refuses_another_tenants_capacity_result(
    agent: RunningAgent, acme: Inventory, globex: Inventory, binding: str
) -> None:
    """A genuine globex capacity result, handed to an acme caller, names a link acme lacks."""
    assert await globex.link(GLOBEX_HOT_LINK) is not None
    assert await acme.link(GLOBEX_HOT_LINK) is None
    checked = await capacity_result(agent, "gary", GLOBEX_HOT_LINK, binding)
    assert checked["link_id"] == GLOBEX_HOT_LINK
    outcome = await call(agent, "paula", "plan_link_upgrade", checked, binding)
    assert error_of(outcome) == NOT_ACCESSIBLE


async def test_plan_link_upgrade_text_asks_for_the_rest_of_the_capacity_result(
    agent: RunningAgent,
) -> None:
    """From text only the link id is read; the rest of the input is asked for by pointer."""
    outcome = await send(
        agent.base_url, agent.token("paula"), text_message("should we upgrade acme-lnk-00002")
    )
    assert outcome.state == "TASK_STATE_INPUT_REQUIRED", outcome.task
    parts = [MessageToDict(p) for p in outcome.task.status.message.parts]
    data = next(p["data"] for p in parts if "data" in p)
    assert data["skill"] == "plan_link_upgrade"
    assert data["arguments"] == {"link_id": HOT_LINK}
    pointers = [m["pointer"] for m in data["missing"]]
    assert "/fits" in pointers and "/capacity_bps" in pointers and "/link_id" not in pointers


async def test_gary_has_hot_links_of_his_own_but_never_sees_acmes(
    agent: RunningAgent, globex: Inventory
) -> None:
    """The globex hot link exists, yet plan_link_upgrade stays hidden from globex callers."""
    hot = await globex.hot_links(0.8, since=FIXED_NOW - timedelta(days=7))
    assert hot and all(h["link_id"].startswith("globex-lnk-") for h in hot)
    assert GLOBEX_HOT_LINK in [h["link_id"] for h in hot]
    checked = await capacity_result(agent, "gary", GLOBEX_HOT_LINK, "JSONRPC")
    outcome = await invoke(agent.base_url, agent.token("gary"), "plan_link_upgrade", checked)
    assert error_of(outcome) == NOT_ADVERTISED


# -- removed skill ----------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_port_report_is_rejected_and_names_its_replacement(
    agent: RunningAgent, binding: str
) -> None:
    outcome = await invoke(
        agent.base_url,
        agent.token("alice"),
        "port_report",
        {"device": "nyc1-core-01"},
        binding=binding,
    )
    error = error_of(outcome)
    assert error["code"] == "skill_not_advertised"
    assert "lookup_inventory" in error["message"]


# -- tenant isolation -------------------------------------------------------------------------

CONDITION = {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"}
OTHER_TENANT_CASES = [
    pytest.param(
        "check_link_capacity",
        {"link_id": HOT_LINK},
        {"link_id": "acme-lnk-99999"},
        id="check_link_capacity-link",
    ),
    pytest.param(
        "check_link_capacity",
        {"a_device": "nyc1-core-01", "b_device": "nyc1-edge-01"},
        {"a_device": "nyc9-core-01", "b_device": "nyc9-edge-01"},
        id="check_link_capacity-devices",
    ),
    pytest.param("link_headroom", {"link_id": HOT_LINK}, {"link_id": "x-lnk-1"}, id="headroom"),
    pytest.param(
        "evaluate_resource_condition",
        {"resource_id": "network-resource-123", "condition": CONDITION},
        {"resource_id": "network-resource-999999", "condition": CONDITION},
        id="evaluate_resource_condition",
    ),
    pytest.param(
        "lookup_inventory",
        {"kind": "interfaces", "device": "nyc1-core-01"},
        {"kind": "interfaces", "device": "nyc9-core-01"},
        id="lookup_inventory-interfaces",
    ),
    pytest.param(
        "lookup_inventory",
        {"kind": "links", "device": "network-resource-1001"},
        {"kind": "links", "device": "network-resource-999999"},
        id="lookup_inventory-links",
    ),
    pytest.param(
        "lookup_inventory",
        {"kind": "links", "link": HOT_LINK},
        {"kind": "links", "link": "acme-lnk-99999"},
        id="lookup_inventory-one-link",
    ),
    pytest.param(
        "lookup_inventory",
        {"kind": "devices", "device": "nyc1-core-01"},
        {"kind": "devices", "device": "nyc9-core-01"},
        id="lookup_inventory-one-device",
    ),
]


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize(("skill", "acme_args", "absent_args"), OTHER_TENANT_CASES)
async def test_another_tenants_resource_looks_absent(
    agent: RunningAgent,
    binding: str,
    skill: str,
    acme_args: dict[str, Any],
    absent_args: dict[str, Any],
) -> None:
    token = agent.token("gary")
    interface = await interface_of(agent, token, skill, binding)
    other = await invoke(agent.base_url, token, skill, acme_args, interface, binding=binding)
    absent = await invoke(agent.base_url, token, skill, absent_args, interface, binding=binding)
    assert error_of(other) == NOT_ACCESSIBLE
    assert error_of(absent) == NOT_ACCESSIBLE
    # The control: the same acme arguments work for an acme caller.
    mine = await call(agent, "alice", skill, acme_args, binding)
    assert mine.state == COMPLETED, mine.task


async def test_the_isolation_cases_name_real_acme_and_truly_absent_resources(
    acme: Inventory, globex: Inventory
) -> None:
    device = await acme.device("network-resource-1001")
    assert device is not None and device["name"] == "nyc1-core-01"
    assert await acme.link(HOT_LINK) is not None
    assert await acme.link_between("nyc1-core-01", "nyc1-edge-01") is not None
    assert await acme.resource_exists("network-resource-123")
    for inventory in (acme, globex):
        for link_id in ("acme-lnk-99999", "x-lnk-1"):
            assert await inventory.link(link_id) is None
        for ref in ("nyc9-core-01", "nyc9-edge-01", "network-resource-999999"):
            assert await inventory.device(ref) is None
        assert not await inventory.resource_exists("network-resource-999999")
    assert await globex.link(HOT_LINK) is None
    assert not await globex.resource_exists("network-resource-123")
    assert await globex.device("nyc1-core-01") is None


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize(
    ("who", "tenant", "mine", "sites"),
    [
        pytest.param("alice", "acme", "acme-", {"nyc1", "lon1", "sin1"}, id="acme"),
        pytest.param("gary", "globex", "globex-", {"fra1", "sfo1"}, id="globex"),
    ],
)
async def test_no_row_of_another_tenant_in_any_answer(
    agent: RunningAgent,
    engine: AsyncEngine,
    binding: str,
    who: str,
    tenant: str,
    mine: str,
    sites: set[str],
) -> None:
    truth = Inventory(engine, tenant)
    token = agent.token(who)
    interface = await interface_of(agent, token, "lookup_inventory", binding)

    async def lookup(arguments: dict[str, Any]) -> dict[str, Any]:
        outcome = await invoke(
            agent.base_url,
            token,
            "lookup_inventory",
            {**arguments, "limit": 500},
            interface,
            binding=binding,
        )
        result = result_of(outcome, "lookup_inventory")
        assert result["tenant"] == tenant
        assert result["truncated"] is False
        return result

    links = await lookup({"kind": "links"})
    assert links["items"] == jsonable(await truth.links())
    assert links["count"] == len(links["items"]) > 0
    for link in links["items"]:
        assert link["tenant"] == tenant
        assert link["link_id"].startswith(f"{mine}lnk-")
        assert {link["a_site"], link["b_site"]} <= sites

    devices = await lookup({"kind": "devices"})
    assert devices["items"] == jsonable(await truth.devices())
    assert devices["count"] > 0
    for device in devices["items"]:
        assert device["tenant"] == tenant
        assert device["site"] in sites
        assert device["name"].split("-")[0] in sites

    site_rows = await lookup({"kind": "sites"})
    assert {s["slug"] for s in site_rows["items"]} == sites
    assert all(s["tenant"] == tenant for s in site_rows["items"])

    other_sites = {"nyc1", "lon1", "sin1", "fra1", "sfo1"} - sites
    for site in sorted(other_sites):
        assert (await lookup({"kind": "devices", "site": site}))["items"] == []


async def test_the_two_tenants_share_no_device_or_link(acme: Inventory, globex: Inventory) -> None:
    acme_devices = {d["resource_id"] for d in await acme.devices()}
    globex_devices = {d["resource_id"] for d in await globex.devices()}
    assert acme_devices and globex_devices and not acme_devices & globex_devices
    acme_links = {x["link_id"] for x in await acme.links()}
    globex_links = {x["link_id"] for x in await globex.links()}
    assert acme_links and globex_links and not acme_links & globex_links


# -- scopes and visibility --------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_caller_without_the_scope_is_refused(agent: RunningAgent, binding: str) -> None:
    token = agent.token("alice", scopes=["assurance.read"])
    interface = await interface_of(agent, token, "lookup_inventory", binding)
    outcome = await invoke(
        agent.base_url, token, "lookup_inventory", {"kind": "sites"}, interface, binding=binding
    )
    assert error_of(outcome) == {
        "code": "authorization_failed",
        "message": "skill 'lookup_inventory' needs scopes: inventory.read",
    }


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize(
    ("who", "skill", "arguments"),
    [
        pytest.param(
            "vic",
            "evaluate_resource_condition",
            {
                "resource_id": "network-resource-123",
                "condition": CONDITION,
            },
            id="vic-evaluate",
        ),
        pytest.param("vic", "check_link_capacity", {"link_id": HOT_LINK}, id="vic-capacity"),
        pytest.param("carl", "plan_link_upgrade", {}, id="carl-plan-no-preview"),
        pytest.param("gary", "plan_link_upgrade", {}, id="gary-plan-other-tenant"),
        pytest.param("alice", "plan_link_upgrade", {}, id="alice-plan"),
    ],
)
async def test_a_hidden_skill_looks_exactly_like_an_unknown_one(
    agent: RunningAgent, binding: str, who: str, skill: str, arguments: dict[str, Any]
) -> None:
    token = agent.token(who)
    hidden = await invoke(agent.base_url, token, skill, arguments, binding=binding)
    unknown = await invoke(agent.base_url, token, "no_such_skill", arguments, binding=binding)
    assert error_of(hidden) == NOT_ADVERTISED
    assert error_of(unknown) == NOT_ADVERTISED
    described = await invoke(
        agent.base_url, token, "describe_skill", {"skill_id": skill}, binding=binding
    )
    described_unknown = await invoke(
        agent.base_url, token, "describe_skill", {"skill_id": "no_such_skill"}, binding=binding
    )
    assert error_of(described) == error_of(described_unknown) == NOT_ADVERTISED
