"""Argument extraction from plain text: the shared parsers and each skill's ``extract``.

Tables pin what is read (and what is deliberately not); junk and fuzzed input must give a dict
that never breaks the skill's input schema; and the routing utterances stay usable.
"""

from __future__ import annotations

import copy
import importlib
import json
import random
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agent.registry.loader import load_registry
from skills.common import text as t

SKILLS_DIR = Path(__file__).resolve().parents[2] / "skills"
REGISTRY = load_registry(SKILLS_DIR)
EXTRACTING = (
    "describe_skill",
    "lookup_inventory",
    "evaluate_resource_condition",
    "check_link_capacity",
    "link_headroom",
    "plan_link_upgrade",
)
WITH_HANDLER = tuple(s for s in EXTRACTING if s != "describe_skill")
G = 1_000_000_000
M = 1_000_000


def extractor(skill: str) -> Callable[[Any], dict[str, Any]]:
    """The extractor the router uses (describe_skill's is bound to the registry's ids)."""
    capability = REGISTRY.get(skill)
    assert capability is not None and capability.handler is not None
    assert capability.handler.extract is not None
    return capability.handler.extract


def folder(skill: str) -> Path:
    capability = REGISTRY.get(skill)
    assert capability is not None
    return capability.manifest.folder


def input_schema(skill: str) -> dict[str, Any]:
    return json.loads((folder(skill) / "input.schema.json").read_text(encoding="utf-8"))


def _without_required(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_required(v) for k, v in node.items() if k != "required"}
    if isinstance(node, list):
        return [_without_required(v) for v in node]
    return node


def partial_validator(skill: str) -> Draft202012Validator:
    """The skill's input schema for a partial object: its properties, nothing required."""
    schema = input_schema(skill)
    relaxed = {
        "$schema": schema["$schema"],
        "type": "object",
        "properties": _without_required(copy.deepcopy(schema.get("properties", {}))),
    }
    if "additionalProperties" in schema:
        relaxed["additionalProperties"] = schema["additionalProperties"]
    return Draft202012Validator(relaxed)


FULL = {skill: Draft202012Validator(input_schema(skill)) for skill in EXTRACTING}
PARTIAL = {skill: partial_validator(skill) for skill in EXTRACTING}


def is_complete(skill: str, args: dict[str, Any]) -> bool:
    """Whether ``args`` has everything the full schema requires (then it must validate)."""
    if skill == "describe_skill":
        return "skill_id" in args
    if skill == "lookup_inventory":
        return "kind" in args and (args["kind"] != "interfaces" or "device" in args)
    if skill == "evaluate_resource_condition":
        condition = args.get("condition", {})
        return "resource_id" in args and {"metric", "operator", "threshold", "unit"} <= set(
            condition
        )
    if skill == "check_link_capacity":
        return "link_id" in args or {"a_device", "b_device"} <= set(args)
    if skill == "link_headroom":
        return "link_id" in args
    if skill == "plan_link_upgrade":  # a whole check_link_capacity result: never from text
        return set(input_schema(skill)["required"]) <= set(args)
    return True


def assert_conforms(skill: str, text: Any, args: Any) -> None:
    """The contract every extractor output keeps, whatever the input."""
    assert isinstance(args, dict), (skill, text)
    json.dumps(args, allow_nan=False)
    schema = input_schema(skill)
    assert set(args) <= set(schema["properties"]), (skill, text, args)
    errors = [e.message for e in PARTIAL[skill].iter_errors(args)]
    assert not errors, (skill, text, args, errors)
    if skill == "evaluate_resource_condition" and "condition" in args:
        condition_props = schema["properties"]["condition"]["properties"]
        assert args["condition"], (text, args)
        assert set(args["condition"]) <= set(condition_props), (text, args)
    if skill == "check_link_capacity":
        assert not ("link_id" in args and ("a_device" in args or "b_device" in args)), args
        assert ("a_device" in args) == ("b_device" in args), args
        if "a_device" in args:
            assert args["a_device"] != args["b_device"], args
    if is_complete(skill, args):
        errors = [e.message for e in FULL[skill].iter_errors(args)]
        assert not errors, (skill, text, args, errors)


# ---------------------------------------------------------------------------------------------
# Parsers

BANDWIDTH = [
    ("10 more gigabits", 10 * G),
    ("3 extra Gbit/s", 3 * G),
    ("10 gigabits", 10 * G),
    ("1 Gbps", 1 * G),
    ("10G", 10 * G),
    ("10g", 10 * G),
    ("10 Gbps", 10 * G),
    ("10 gbps", 10 * G),
    ("10 gbit/s", 10 * G),
    ("10 Gbit/sec", 10 * G),
    ("10 Gb/s", 10 * G),
    ("10 gig", 10 * G),
    ("10 gigs", 10 * G),
    ("10GE", 10 * G),
    ("100GbE", 100 * G),
    ("10GigE", 10 * G),
    ("10 gigabits per second", 10 * G),
    ("10 GBPS", 10 * G),
    ("a 10GB link", 10 * G),
    ("500M", 500 * M),
    ("500 Mbps", 500 * M),
    ("500 mbps", 500 * M),
    ("500 Mbit/s", 500 * M),
    ("500 megabits", 500 * M),
    ("1.5 Gb/s", 1_500 * M),
    ("1,000 Mbps", 1 * G),
    ("2x100G", 200 * G),
    ("2 x 100G", 200 * G),
    ("2\u00d7100G", 200 * G),
    ("4X10GE", 40 * G),
    ("400G", 400 * G),
    ("1T", 1_000 * G),
    ("1 Tbps", 1_000 * G),
    ("5 kbps", 5_000),
    ("500000 bps", 500_000),
    ("64 bit/s", 64),
    ("10 GB/s", 80 * G),
    ("10 GBps", 80 * G),
    ("10 gigabytes per second", 80 * G),
    ("8 megabytes per second", 64 * M),
    ("100 MB/s", 800 * M),
    ("does a 20 Gbit/s flow fit?", 20 * G),
    ("need (10G) more", 10 * G),
    ("first 10G then 40G", 10 * G),
    # not a rate
    ("", None),
    ("500m", None),
    ("30 minutes", None),
    ("5 ms", None),
    ("80%", None),
    ("1k", None),
    ("500K", None),
    ("1 t", None),
    ("0 Gbps", None),
    ("nyc1-core-01", None),
    ("acme-lnk-00001", None),
    ("network-resource-1001:et-0/0/2", None),
    ("G", None),
    ("10 Gibps", None),
]


@pytest.mark.parametrize(("text", "expected"), BANDWIDTH)
def test_bandwidth_bps(text: str, expected: int | None) -> None:
    assert t.bandwidth_bps(text) == expected


DURATION = [
    ("last 15 minutes", 900),
    ("past 2 hours", 7200),
    ("over the last day", 86400),
    ("this week", 604800),
    ("last week", 604800),
    ("past 7 days", 604800),
    ("24h", 86400),
    ("24 H", 86400),
    ("30m", 1800),
    ("90 s", 90),
    ("90 secs", 90),
    ("an hour", 3600),
    ("a day", 86400),
    ("last hour", 3600),
    ("the previous hour", 3600),
    ("half an hour", 1800),
    ("1.5 hours", 5400),
    ("2 hrs", 7200),
    ("10 mins", 600),
    ("3 wks", 3 * 604800),
    ("a 15-minute window", 900),
    ("a couple of days", 2 * 86400),
    ("two weeks", 2 * 604800),
    ("last month", 2592000),
    ("past 30 days", 2592000),
    ("a fortnight", 1209600),
    ("1h30m", 5400),
    ("2h 15m", 8100),
    ("1 hour and 30 minutes", 5400),
    ("1d12h", 129600),
    ("PT15M", 900),
    ("P1D", 86400),
    ("PT1H30M", 5400),
    ("over the last 5 min", 300),
    # not a duration
    ("", None),
    ("30M", None),
    ("5ms", None),
    ("today", None),
    ("yesterday", None),
    ("a few hours", None),
    ("a m", None),
    ("Please", None),
    ("10G", None),
    ("nyc1-core-01", None),
    ("0 minutes", None),
]


@pytest.mark.parametrize(("text", "expected"), DURATION)
def test_duration_seconds(text: str, expected: int | None) -> None:
    assert t.duration_seconds(text) == expected


PERCENT = [
    ("80%", 80.0),
    ("80 %", 80.0),
    ("80 percent", 80.0),
    ("80 Percent", 80.0),
    ("80 per cent", 80.0),
    ("80 pct", 80.0),
    ("90.5%", 90.5),
    ("cpu above 90% or 95%", 90.0),
    ("100%", 100.0),
    ("", None),
    ("80", None),
    ("percent", None),
    ("nyc1-core-01 at 80", None),
]


@pytest.mark.parametrize(("text", "expected"), PERCENT)
def test_percent(text: str, expected: float | None) -> None:
    assert t.percent(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("acme-lnk-00001", ["acme-lnk-00001"]),
        ("link ACME-LNK-00002, then acme-lnk-00001.", ["acme-lnk-00002", "acme-lnk-00001"]),
        ("acme_lnk_00003", ["acme-lnk-00003"]),
        ("globex-lnk-00012 and acme-lnk-000123", ["globex-lnk-00012", "acme-lnk-000123"]),
        ("acme-lnk-00001 acme-lnk-00001", ["acme-lnk-00001"]),
        # any number: the skill then says whether the inventory has it
        ("acme-lnk-1", ["acme-lnk-1"]),
        ("globex-lnk-3301 or umbrella_lnk_77?", ["globex-lnk-3301", "umbrella-lnk-77"]),
        ("acme-lnk-", []),
        ("acme-lnk-12a", []),
        ("xacme-lnk-00001x", []),
        ("lnk-00001", []),
        ("", []),
    ],
)
def test_link_ids(text: str, expected: list[str]) -> None:
    assert t.link_ids(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nyc1-core-01", ["nyc1-core-01"]),
        ("lon1-agg-02 and sin1-edge-01", ["lon1-agg-02", "sin1-edge-01"]),
        ("FRA1-ACCESS-03?", ["fra1-access-03"]),
        ("nyc1-core-1", ["nyc1-core-01"]),
        ("nyc1-access-100", ["nyc1-access-100"]),
        ("nyc1-core-01:et-0/0/1", ["nyc1-core-01"]),
        ("nyc1-core-01's ports", ["nyc1-core-01"]),
        # the aggregation role in the words the inventory's extractor reads it by
        ("tok1-dist-04 and ams1-aggr-02", ["tok1-dist-04", "ams1-aggr-02"]),
        # any role, as operators name theirs: one the inventory lacks is then not found
        (
            "nyc1-spine-01 and ham1-p-02, mil2-border-1",
            ["nyc1-spine-01", "ham1-p-02", "mil2-border-01"],
        ),
        # a joining word or a link id's kind is no role
        ("vlan100-to-200 on sw1-or-2", []),
        ("acme1-lnk-00001", []),
        ("nyc1-core-01-old", []),
        ("", []),
    ],
)
def test_device_names(text: str, expected: list[str]) -> None:
    assert t.device_names(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("network-resource-123", ["network-resource-123"]),
        ("on network-resource-1001:et-0/0/2.", ["network-resource-1001:et-0/0/2"]),
        ("Network-Resource-1001:Ethernet1/1?", ["network-resource-1001:Ethernet1/1"]),
        ("network-resource-1002:Port-Channel1,", ["network-resource-1002:Port-Channel1"]),
        ("network-resource-1:", ["network-resource-1"]),
        ("network-resource-5 network-resource-5", ["network-resource-5"]),
        ("resource 123", []),
        ("xnetwork-resource-1", []),
        ("", []),
    ],
)
def test_resource_ids(text: str, expected: list[str]) -> None:
    assert t.resource_ids(text) == expected


def test_device_refs_keep_text_order_and_reduce_ports_to_devices() -> None:
    text = "network-resource-1001:et-0/0/2 to nyc1-core-01 and network-resource-1001"
    assert t.device_refs(text) == ["network-resource-1001", "nyc1-core-01"]


COMPARISON = [
    ("has gone past 85%", "gt"),
    ("went past 90", "gt"),
    ("crossed 70 percent", "gt"),
    ("stays under 5 ms", "lt"),
    ("in the past hour", None),
    # gte
    ("at or above 90", "gte"),
    ("at least 90", "gte"),
    (">= 90", "gte"),
    ("=> 90", "gte"),
    ("\u2265 90", "gte"),
    ("no less than 90", "gte"),
    ("not below 90", "gte"),
    ("greater than or equal to 90", "gte"),
    ("90% or more", "gte"),
    ("90 or higher", "gte"),
    ("has it reached 90", "gte"),
    ("operator gte", "gte"),
    # gt
    ("above 90", "gt"),
    ("over 90", "gt"),
    ("more than 90", "gt"),
    ("exceeds 90", "gt"),
    ("exceeding 90", "gt"),
    ("greater than 90", "gt"),
    ("higher than 90", "gt"),
    ("in excess of 90", "gt"),
    ("> 90", "gt"),
    ("cpu>90", "gt"),
    # lt
    ("below 90", "lt"),
    ("under 90", "lt"),
    ("less than 90", "lt"),
    ("fewer than 9 errors", "lt"),
    ("< 90", "lt"),
    # lte
    ("at or below 90", "lte"),
    ("at most 90", "lte"),
    ("<= 90", "lte"),
    ("\u2264 90", "lte"),
    ("no more than 90", "lte"),
    ("not more than 90", "lte"),
    ("not above 90", "lte"),
    ("90 or less", "lte"),
    ("less than or equal to 90", "lte"),
    # case, typos, punctuation
    ("AT LEAST 90", "gte"),
    ("At-least 90", None),
    ("cpu exeeds 90", "gt"),
    ("cpu excedes 90", "gt"),
    ("cpu abvoe 90", "gt"),
    ("grater than 90", "gt"),
    ("greather than 90", "gt"),
    ("at lesat 90", "gte"),
    ("belwo 90", "lt"),
    ("(above) 90!", "gt"),
    # the leftmost phrase wins, the longest there
    ("over the last hour at least 80%", "gte"),
    ("over an hour, below 5", "lt"),
    ("over 2 hours above 5", "gt"),
    ("above 80 or below 10", "gt"),
    # not an operator
    ("", None),
    ("equals 5", None),
    ("== 5", None),
    ("a->b", None),
    ("nyc1-core-01 <> nyc1-edge-01", None),
    ("over the last hour", None),
    ("moreover", None),
    ("hover", None),
]


@pytest.mark.parametrize(("text", "expected"), COMPARISON)
def test_comparison(text: str, expected: str | None) -> None:
    assert t.comparison(text) == expected


METRIC = [
    ("utilization", "utilization"),
    ("utilisation", "utilization"),
    ("utlization", "utilization"),
    ("utilzation", "utilization"),
    ("utilziation", "utilization"),
    ("util", "utilization"),
    ("usage", "utilization"),
    ("load", "utilization"),
    ("how busy is it", "utilization"),
    ("bw", "utilization"),
    ("cpu", "cpu"),
    ("CPU%", "cpu"),
    ("cpu0", "cpu"),
    ("processor", "cpu"),
    ("cpu utilization", "cpu"),
    ("utilization of the cpu", "cpu"),
    ("memory", "memory"),
    ("mem", "memory"),
    ("ram", "memory"),
    ("memroy", "memory"),
    ("memory usage", "memory"),
    ("errors", "errors"),
    ("crc", "errors"),
    ("input errs", "errors"),
    ("fcs", "errors"),
    ("crc errors and cpu", "errors"),
    ("drops", None),
    ("discards", None),
    ("packet loss", None),
    ("temperature", "temperature"),
    ("chassis temp", "temperature"),
    ("latency", "latency"),
    ("rtt", "latency"),
    ("jitter", "jitter"),
    ("light levels", "optical_power"),
    ("rx power", "optical_power"),
    ("nyc1-core-01", None),
    ("", None),
]


@pytest.mark.parametrize(("text", "expected"), METRIC)
def test_metric(text: str, expected: str | None) -> None:
    assert t.metric(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("utlization", "utilization"),
        ("Devcies", "devices"),
        ("interfcaes", "interfaces"),
        ("abvoe", "above"),
        ("routes", "routes"),
        ("planner", "planner"),
        ("utilization", "utilization"),
        ("nyc1-devcies-01", "nyc1-devcies-01"),
        ("putilization", "putilization"),
    ],
)
def test_fold_corrects_cheap_typos_of_keywords_only(text: str, expected: str) -> None:
    assert t.fold(text) == expected


def test_clean_normalises_unicode_and_refuses_non_text() -> None:
    assert t.clean("nyc1\u2013core\u201301 \uff11\uff10G") == "nyc1-core-01 10G"
    assert t.clean(None) == ""
    assert t.clean(b"10G") == ""
    assert len(t.clean("x" * (t.MAX_TEXT + 50))) == t.MAX_TEXT


def test_mask_ids_keeps_length() -> None:
    text = "cpu of nyc1-core-01 on acme-lnk-00001 network-resource-1:et-0/0/1 above 9"
    masked = t.mask_ids(text)
    assert len(masked) == len(text)
    assert masked.split() == ["cpu", "of", "on", "above", "9"]


@pytest.mark.parametrize(
    "parser",
    [
        t.bandwidth_bps,
        t.duration_seconds,
        t.percent,
        t.comparison,
        t.metric,
        t.link_ids,
        t.device_names,
        t.resource_ids,
        t.device_refs,
    ],
)
@pytest.mark.parametrize("junk", [None, 42, b"10G over 90%", ["acme-lnk-00001"], ""])
def test_parsers_find_nothing_in_non_text(parser: Callable[[Any], Any], junk: Any) -> None:
    assert parser(junk) in (None, [])


# ---------------------------------------------------------------------------------------------
# Extractors

EXTRACT: list[tuple[str, str, dict[str, Any]]] = [
    # describe_skill
    (
        "describe_skill",
        "Describe the interface of evaluate_resource_condition.",
        {"skill_id": "evaluate_resource_condition"},
    ),
    (
        "describe_skill",
        "what args does check-link-capacity take",
        {"skill_id": "check_link_capacity"},
    ),
    ("describe_skill", "show me checkLinkCapacity", {"skill_id": "check_link_capacity"}),
    ("describe_skill", "schema for the link capacity skill", {"skill_id": "check_link_capacity"}),
    ("describe_skill", "input schema of the upgrade planner", {"skill_id": "plan_link_upgrade"}),
    ("describe_skill", "what does the headroom skill need", {"skill_id": "link_headroom"}),
    ("describe_skill", "inventory lookup schema", {"skill_id": "lookup_inventory"}),
    (
        "describe_skill",
        "describe the threshold check skill",
        {"skill_id": "evaluate_resource_condition"},
    ),
    ("describe_skill", "describe port_report", {"skill_id": "port_report"}),
    ("describe_skill", "describe_skill", {"skill_id": "describe_skill"}),
    (
        "describe_skill",
        "the headroom one? no: describe plan_link_upgrade",
        {"skill_id": "plan_link_upgrade"},
    ),
    (
        "describe_skill",
        "plan_link_upgrade vs check_link_capacity: describe the first",
        {"skill_id": "plan_link_upgrade"},
    ),
    ("describe_skill", "describe the skill", {}),
    ("describe_skill", "describe skill foo_bar", {}),
    # lookup_inventory
    ("lookup_inventory", "List the devices at site nyc1.", {"kind": "devices", "site": "nyc1"}),
    (
        "lookup_inventory",
        "Which links does nyc1-core-01 have?",
        {"kind": "links", "device": "nyc1-core-01"},
    ),
    ("lookup_inventory", "Show all sites.", {"kind": "sites"}),
    (
        "lookup_inventory",
        "what interfaces are on the switch nyc1-agg-01",
        {"kind": "interfaces", "device": "nyc1-agg-01"},
    ),
    (
        "lookup_inventory",
        "ports on network-resource-1001:et-0/0/2",
        {"kind": "interfaces", "device": "network-resource-1001"},
    ),
    (
        "lookup_inventory",
        "show router nyc1-core-01",
        {"kind": "devices", "device": "nyc1-core-01"},
    ),
    (
        "lookup_inventory",
        "core routers in lon1",
        {"kind": "devices", "site": "lon1", "role": "core"},
    ),
    (
        "lookup_inventory",
        "agg switches that are offline",
        {"kind": "devices", "role": "aggregation", "status": "offline"},
    ),
    ("lookup_inventory", "show me the edge boxes", {"kind": "devices", "role": "edge"}),
    ("lookup_inventory", "links that are down", {"kind": "links", "status": "down"}),
    ("lookup_inventory", "links that are up", {"kind": "links", "status": "connected"}),
    (
        "lookup_inventory",
        "down devices at fra1",
        {"kind": "devices", "site": "fra1", "status": "offline"},
    ),
    (
        "lookup_inventory",
        "broken boxes in sfo1",
        {"kind": "devices", "site": "sfo1", "status": "failed"},
    ),
    ("lookup_inventory", "active routers", {"kind": "devices", "status": "active"}),
    ("lookup_inventory", "planned circuits", {"kind": "links", "status": "planned"}),
    (
        "lookup_inventory",
        "decommissioned links",
        {"kind": "links", "status": "decommissioning"},
    ),
    ("lookup_inventory", "list sites that are planned", {"kind": "sites"}),
    ("lookup_inventory", "planned stuff", {"status": "planned"}),
    (
        "lookup_inventory",
        "list first 10 devices in sin1",
        {"kind": "devices", "site": "sin1", "limit": 10},
    ),
    ("lookup_inventory", "show 5 switches", {"kind": "devices", "limit": 5}),
    ("lookup_inventory", "top 1000 links", {"kind": "links", "limit": 500}),
    (
        "lookup_inventory",
        "what is connected to nyc1-edge-01",
        {"kind": "links", "device": "nyc1-edge-01"},
    ),
    ("lookup_inventory", "show the topology", {"kind": "links"}),
    ("lookup_inventory", "cables in nyc1", {"kind": "links", "site": "nyc1"}),
    ("lookup_inventory", "which devices do I have access to", {"kind": "devices"}),
    ("lookup_inventory", "list devcies at lon1", {"kind": "devices", "site": "lon1"}),
    ("lookup_inventory", "show routes", {}),
    # one named thing, its kind unsaid (1.1): that one record, whatever its status
    (
        "lookup_inventory",
        "acme-lnk-00002 total capacity?",
        {"kind": "links", "link": "acme-lnk-00002"},
    ),
    (
        "lookup_inventory",
        "is globex-lnk-3301 down?",
        {"kind": "links", "link": "globex-lnk-3301"},
    ),
    (
        "lookup_inventory",
        "show link acme-lnk-00002 on nyc1-core-01",
        {"kind": "links", "link": "acme-lnk-00002"},
    ),
    (
        "lookup_inventory",
        "links at nyc1 that are down, like acme-lnk-00007",
        {"kind": "links", "link": "acme-lnk-00007", "site": "nyc1"},
    ),
    ("lookup_inventory", "vendor of nyc1-core-01?", {"kind": "devices", "device": "nyc1-core-01"}),
    ("lookup_inventory", "is lon1-edge-02 offline?", {"kind": "devices", "device": "lon1-edge-02"}),
    (
        "lookup_inventory",
        "oper status of xe-0/0/1 on nyc1-core-01",
        {"kind": "interfaces", "device": "nyc1-core-01"},
    ),
    (
        "lookup_inventory",
        "Gi1/0/24 on network-resource-1001?",
        {"kind": "interfaces", "device": "network-resource-1001"},
    ),
    # the devices at the other ends of a device's links are its links
    (
        "lookup_inventory",
        "devices connected to nyc1-core-01",
        {"kind": "links", "device": "nyc1-core-01"},
    ),
    (
        "lookup_inventory",
        "which routers are attached to the switch lon1-agg-02?",
        {"kind": "links", "device": "lon1-agg-02"},
    ),
    ("lookup_inventory", "devices connected to the internet", {"kind": "devices"}),
    # a kind said still filters by what else is said
    (
        "lookup_inventory",
        "offline routers like lon1-edge-02",
        {"kind": "devices", "device": "lon1-edge-02", "status": "offline"},
    ),
    ("lookup_inventory", "drill down into the data", {}),
    # evaluate_resource_condition
    (
        "evaluate_resource_condition",
        "is acme-lnk-00010 above 80 percent utilization?",
        {
            "resource_id": "acme-lnk-00010",
            "condition": {
                "metric": "utilization",
                "operator": "gt",
                "threshold": 80,
                "unit": "percent",
            },
        },
    ),
    (
        "evaluate_resource_condition",
        "how busy is acme-lnk-00002?",
        {"resource_id": "acme-lnk-00002", "condition": {"metric": "utilization"}},
    ),
    # a link past a percent, its metric unsaid: its utilization (a device's is not guessed)
    (
        "evaluate_resource_condition",
        "is acme-lnk-00002 running over 85%?",
        {
            "resource_id": "acme-lnk-00002",
            "condition": {
                "metric": "utilization",
                "operator": "gt",
                "threshold": 85,
                "unit": "percent",
            },
        },
    ),
    (
        "evaluate_resource_condition",
        "is nyc1-core-01 running over 85%?",
        {
            "resource_id": "nyc1-core-01",
            "condition": {"operator": "gt", "threshold": 85, "unit": "percent"},
        },
    ),
    (
        "evaluate_resource_condition",
        "is latency from nyc1-core-01 over acme-lnk-00004 over 20 ms",
        {
            "resource_id": "nyc1-core-01",
            "condition": {"metric": "latency", "operator": "gt", "threshold": 20, "unit": "ms"},
        },
    ),
    (
        "check_link_capacity",
        "is there room for 10 more gigabits on acme-lnk-00005 over the last 30 minutes?",
        {"link_id": "acme-lnk-00005", "requested_bps": 10 * 10**9, "window_seconds": 1800},
    ),
    (
        "check_link_capacity",
        "can acme-lnk-00007 take another 3 Gbit/s in the past hour",
        {"link_id": "acme-lnk-00007", "requested_bps": 3 * 10**9, "window_seconds": 3600},
    ),
    (
        "evaluate_resource_condition",
        "is nyc1-core-01 cpu above 90%?",
        {
            "resource_id": "nyc1-core-01",
            "condition": {"metric": "cpu", "operator": "gt", "threshold": 90, "unit": "percent"},
        },
    ),
    (
        "evaluate_resource_condition",
        "Is the utilization of network-resource-123 at least 80 percent?",
        {
            "resource_id": "network-resource-123",
            "condition": {
                "metric": "utilization",
                "operator": "gte",
                "threshold": 80,
                "unit": "percent",
            },
        },
    ),
    (
        "evaluate_resource_condition",
        "more than 100 crc errors on network-resource-1001:et-0/0/2",
        {
            "resource_id": "network-resource-1001:et-0/0/2",
            "condition": {"metric": "errors", "operator": "gt", "threshold": 100, "unit": "count"},
        },
    ),
    (
        "evaluate_resource_condition",
        "memory 90% or more on lon1-agg-02",
        {
            "resource_id": "lon1-agg-02",
            "condition": {
                "metric": "memory",
                "operator": "gte",
                "threshold": 90,
                "unit": "percent",
            },
        },
    ),
    (
        "evaluate_resource_condition",
        "cpu exceeds a threshold of 95 on sin1-edge-01",
        {
            "resource_id": "sin1-edge-01",
            "condition": {"metric": "cpu", "operator": "gt", "threshold": 95, "unit": "percent"},
        },
    ),
    (
        "evaluate_resource_condition",
        "errors > 0 on nyc1-core-01 over the last 5 minutes",
        {
            "resource_id": "nyc1-core-01",
            "condition": {"metric": "errors", "operator": "gt", "threshold": 0, "unit": "count"},
        },
    ),
    (
        "evaluate_resource_condition",
        "util over the last hour at least 80% for network-resource-1001",
        {
            "resource_id": "network-resource-1001",
            "condition": {
                "metric": "utilization",
                "operator": "gte",
                "threshold": 80,
                "unit": "percent",
            },
        },
    ),
    (
        "evaluate_resource_condition",
        "is mem at most 60 on lon1-edge-02",
        {
            "resource_id": "lon1-edge-02",
            "condition": {
                "metric": "memory",
                "operator": "lte",
                "threshold": 60,
                "unit": "percent",
            },
        },
    ),
    (
        "evaluate_resource_condition",
        "cpu utlization abvoe 85% on NYC1-CORE-01?",
        {
            "resource_id": "nyc1-core-01",
            "condition": {"metric": "cpu", "operator": "gt", "threshold": 85, "unit": "percent"},
        },
    ),
    (
        "evaluate_resource_condition",
        "is the cpu on nyc1-core-01 \u2265 90 %",
        {
            "resource_id": "nyc1-core-01",
            "condition": {"metric": "cpu", "operator": "gte", "threshold": 90, "unit": "percent"},
        },
    ),
    (
        "evaluate_resource_condition",
        "fra1-edge-02 cpu no less than 75.5 pct",
        {
            "resource_id": "fra1-edge-02",
            "condition": {
                "metric": "cpu",
                "operator": "gte",
                "threshold": 75.5,
                "unit": "percent",
            },
        },
    ),
    (
        "evaluate_resource_condition",
        "crc errs over 1k on lon1-core-01",
        {
            "resource_id": "lon1-core-01",
            "condition": {"metric": "errors", "operator": "gt", "threshold": 1000, "unit": "count"},
        },
    ),
    (
        "evaluate_resource_condition",
        "errors more than 2% on nyc1-core-01",
        {
            "resource_id": "nyc1-core-01",
            "condition": {"metric": "errors", "operator": "gt", "threshold": 2, "unit": "percent"},
        },
    ),
    (
        "evaluate_resource_condition",
        "cpu threshold 90 nyc1-core-01",
        {
            "resource_id": "nyc1-core-01",
            "condition": {"metric": "cpu", "threshold": 90, "unit": "percent"},
        },
    ),
    (
        "evaluate_resource_condition",
        "cpu on nyc1-core-01 >= 0.9",
        {
            "resource_id": "nyc1-core-01",
            "condition": {"metric": "cpu", "operator": "gte", "threshold": 0.9},
        },
    ),
    (
        "evaluate_resource_condition",
        "check 80% on nyc1-core-01",
        {"resource_id": "nyc1-core-01", "condition": {"threshold": 80, "unit": "percent"}},
    ),
    (
        "evaluate_resource_condition",
        "check lon1-agg-02 drops above 10",
        {"resource_id": "lon1-agg-02", "condition": {"operator": "gt", "threshold": 10}},
    ),
    (
        "evaluate_resource_condition",
        "is cpu high on nyc1-core-01",
        {"resource_id": "nyc1-core-01", "condition": {"metric": "cpu"}},
    ),
    (
        "evaluate_resource_condition",
        "is the ram below 50%",
        {"condition": {"metric": "memory", "operator": "lt", "threshold": 50, "unit": "percent"}},
    ),
    (
        "evaluate_resource_condition",
        "cpu of nyc1-core-01 (network-resource-1001)",
        {"resource_id": "network-resource-1001", "condition": {"metric": "cpu"}},
    ),
    ("evaluate_resource_condition", "how are things", {}),
    # check_link_capacity
    (
        "check_link_capacity",
        "Does a 20 Gbit/s flow fit on link acme-lnk-00003?",
        {"link_id": "acme-lnk-00003", "requested_bps": 20 * G},
    ),
    (
        "check_link_capacity",
        "How much bandwidth is free between nyc1-core-01 and nyc1-agg-01 over the last hour?",
        {"a_device": "nyc1-core-01", "b_device": "nyc1-agg-01", "window_seconds": 3600},
    ),
    (
        "check_link_capacity",
        "can the 2x100G LAG acme-lnk-00001 take another 40G",
        {"link_id": "acme-lnk-00001", "requested_bps": 40 * G},
    ),
    (
        "check_link_capacity",
        "free cap on acme-lnk-00002 past 30m, samples no older than 10 minutes",
        {"link_id": "acme-lnk-00002", "window_seconds": 1800, "max_sample_age_seconds": 600},
    ),
    (
        "check_link_capacity",
        "fit 500 Mbps on acme-lnk-00007 with data at most 5 minutes old",
        {"link_id": "acme-lnk-00007", "requested_bps": 500 * M, "max_sample_age_seconds": 300},
    ),
    (
        "check_link_capacity",
        "max sample age 30 s for acme-lnk-00010",
        {"link_id": "acme-lnk-00010", "max_sample_age_seconds": 60},
    ),
    (
        "check_link_capacity",
        "bw a to b on acme-lnk-00004 last 2 days",
        {"link_id": "acme-lnk-00004", "window_seconds": 172800, "direction": "a_to_b"},
    ),
    (
        "check_link_capacity",
        "available b->a on acme-lnk-00004",
        {"link_id": "acme-lnk-00004", "direction": "b_to_a"},
    ),
    (
        "check_link_capacity",
        "free bw in both directions on acme-lnk-00005",
        {"link_id": "acme-lnk-00005", "direction": "both"},
    ),
    (
        "check_link_capacity",
        "does 10 GB/s fit on acme-lnk-00008 over the last 1 minute",
        {"link_id": "acme-lnk-00008", "requested_bps": 80 * G, "window_seconds": 300},
    ),
    (
        "check_link_capacity",
        "check the 100G link between network-resource-1001 and network-resource-1002 "
        "over the last month",
        {
            "a_device": "network-resource-1001",
            "b_device": "network-resource-1002",
            "window_seconds": 604800,
        },
    ),
    (
        "check_link_capacity",
        "will 2 x 10G fit between NYC1-EDGE-01 and lon1-edge-01 this week",
        {
            "a_device": "nyc1-edge-01",
            "b_device": "lon1-edge-01",
            "requested_bps": 20 * G,
            "window_seconds": 604800,
        },
    ),
    (
        "check_link_capacity",
        "nyc1-core-01 to nyc1-edge-01, i.e. acme-lnk-00009",
        {"link_id": "acme-lnk-00009"},
    ),
    ("check_link_capacity", "avail bw on nyc1-core-01 uplink", {}),
    ("check_link_capacity", "between nyc1-core-01 and nyc1-core-01", {}),
    ("check_link_capacity", "is there room for 0 Gbps", {}),
    # link_headroom
    (
        "link_headroom",
        "What is the headroom of link acme-lnk-00001?",
        {"link_id": "acme-lnk-00001"},
    ),
    ("link_headroom", "headroom ACME-LNK-00002 and acme-lnk-00003", {"link_id": "acme-lnk-00002"}),
    ("link_headroom", "headroom of globex-lnk-00012", {"link_id": "globex-lnk-00012"}),
    ("link_headroom", "headroom of the link", {}),
    # plan_link_upgrade: only the link id; the rest of a capacity result cannot come from text
    (
        "plan_link_upgrade",
        "Should acme-lnk-00002 be upgraded, given this check_link_capacity result?",
        {"link_id": "acme-lnk-00002"},
    ),
    (
        "plan_link_upgrade",
        "plan an upgrade for ACME_LNK_00010 and acme-lnk-00036",
        {"link_id": "acme-lnk-00010"},
    ),
    (
        "plan_link_upgrade",
        "acme-lnk-00003 does not fit 20G, capacity 100G, status connected, recommend an upgrade",
        {"link_id": "acme-lnk-00003"},
    ),
    (
        "plan_link_upgrade",
        "Which links should be upgraded because they ran above 80 percent this week?",
        {},
    ),
    ("plan_link_upgrade", "upgrade the link between nyc1-core-01 and nyc1-edge-01", {}),
    ("plan_link_upgrade", "what should we upgrade", {}),
]


@pytest.mark.parametrize(
    ("skill", "text", "expected"), EXTRACT, ids=[f"{s}:{x[:40]}" for s, x, _ in EXTRACT]
)
def test_extract(skill: str, text: str, expected: dict[str, Any]) -> None:
    args = extractor(skill)(text)
    assert args == expected
    assert_conforms(skill, text, args)


def test_every_routable_skill_has_a_table() -> None:
    assert {skill for skill, _, _ in EXTRACT} == set(EXTRACTING)


@pytest.mark.parametrize("skill", WITH_HANDLER)
def test_handlers_expose_the_extractor(skill: str) -> None:
    handler = importlib.import_module(f"skills.{skill}.handler")
    assert handler.extract is extractor(skill)


# ---------------------------------------------------------------------------------------------
# Junk and fuzz: never raise, never break the schema

_RNG = random.Random(20240601)
JUNK: dict[str, Any] = {
    "empty": "",
    "spaces": " \t\n " * 50,
    "punctuation": string.punctuation * 40,
    "printable-10k": "".join(_RNG.choice(string.printable) for _ in range(10_000)),
    "unicode-10k": "".join(chr(_RNG.randrange(0x20, 0x2FFFF)) for _ in range(10_000)),
    "emoji": "\U0001f525\U0001f4c8 \u26a0\ufe0f \U0001f680" * 20,
    "rtl-and-combining": "\u05e9\u05dc\u05d5\u05dd e\u0301\u0301\u0301 "
    "\u0627\u0644\u0633\u0644\u0627\u0645",
    "nul": "\x00" * 500,
    "surrogate": "\ud800 cpu above 90%",
    "long-digits": "9" * 10_000,
    "repeated-ops": "over above at least " * 500,
    "repeated-ids": "acme-lnk-00001 nyc1-core-01 network-resource-1:et-0/0/1 " * 150,
    "dashes": "-1" * 5_000,
    "long-port": "network-resource-1:" + "a/" * 5_000,
    "huge-numbers": "cpu above 1"
    + "0" * 400
    + "% top 9"
    + "9" * 40
    + " links "
    + "9" * 30
    + "G over the last "
    + "9" * 30
    + " days",
    "none": None,
    "int": 12345,
    "bytes": b"cpu above 90%",
    "list": ["acme-lnk-00001"],
}
# "punctuation" holds "<=" and ">": an operator may be read from it, nothing else.
EMPTY_FOR_ALL = {
    "empty",
    "spaces",
    "emoji",
    "rtl-and-combining",
    "nul",
    "none",
    "int",
    "bytes",
    "list",
    "long-digits",
}


@pytest.mark.parametrize("skill", EXTRACTING)
@pytest.mark.parametrize("name", sorted(JUNK))
def test_junk_never_raises_and_conforms(skill: str, name: str) -> None:
    text = JUNK[name]
    args = extractor(skill)(text)
    assert_conforms(skill, text, args)
    if name in EMPTY_FOR_ALL:
        assert args == {}
    assert extractor(skill)(text) == args  # deterministic


_FUZZ_WORDS = (
    "acme-lnk-00001 ACME-LNK-00002 nyc1-core-01 lon1-agg-02 sin1-edge-01 fra1-access-03 "
    "network-resource-123 network-resource-1001:et-0/0/2 nyc1 lon1 sfo1 site device devices "
    "routers switch ports interfaces links circuits cables topology core agg edge access tor "
    "down up planned offline failed active decommissioned connected to from between and or "
    "cpu memory mem ram errors crc util utilization utlization load busy drops bandwidth bw "
    "above over under below at least most more less than no not or more or less exceeds "
    "> >= < <= = => \u2265 \u2264 % percent pct 0 0.5 0.8 1 5 10 80 90 100 150 1k 1e9 -5 "
    "10G 2x100G 500M 500m 1.5 Gb/s 10 GB/s 0G 30m 30M 24h 90 s an hour this week last month "
    "PT15M samples no older than old max sample age a to b b->a both directions top first "
    "limit worst hottest upgrade headroom capacity describe schema check_link_capacity "
    "link_headroom describe_skill port_report , . ? ! ( ) : ; ' \" / - _"
)
FUZZ_TOKENS = tuple(_FUZZ_WORDS.split())


def _fuzz_texts(count: int) -> list[str]:
    rng = random.Random(7)
    texts = []
    for _ in range(count):
        words = [rng.choice(FUZZ_TOKENS) for _ in range(rng.randrange(1, 14))]
        glue = rng.choice([" ", " ", "", "-", ", "])
        texts.append(glue.join(words))
    return texts


FUZZ = _fuzz_texts(400)


@pytest.mark.parametrize("skill", EXTRACTING)
def test_fuzzed_text_never_breaks_the_schema(skill: str) -> None:
    extract = extractor(skill)
    for text in FUZZ:
        assert_conforms(skill, text, extract(text))


@pytest.mark.parametrize("skill", EXTRACTING)
def test_every_table_text_conforms_for_every_extractor(skill: str) -> None:
    texts = [text for _, text, _ in EXTRACT] + [text for text, _ in BANDWIDTH + DURATION]
    extract = extractor(skill)
    for text in texts + [text for text, _ in COMPARISON]:
        assert_conforms(skill, text, extract(text))


# ---------------------------------------------------------------------------------------------
# Routing utterances


def manifests() -> dict[str, dict[str, Any]]:
    return {
        skill: json.loads((folder(skill) / "manifest.json").read_text(encoding="utf-8"))
        for skill in EXTRACTING
    }


def test_routing_utterances_are_plentiful_and_distinct() -> None:
    seen: dict[str, str] = {}
    for skill, manifest in manifests().items():
        utterances = manifest["routing"]["utterances"]
        assert 30 <= len(utterances) <= 45, skill
        for utterance in utterances:
            assert isinstance(utterance, str) and utterance.strip(), skill
            key = utterance.strip().lower()
            assert key not in seen, (skill, seen.get(key), utterance)
            seen[key] = skill


def test_a_tfidf_classifier_on_the_utterances_routes_each_skills_examples_home() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union

    data = manifests()
    texts = [u for m in data.values() for u in m["routing"]["utterances"]]
    labels = [s for s, m in data.items() for _ in m["routing"]["utterances"]]
    model = make_pipeline(
        make_union(
            TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True),
            TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True),
        ),
        LogisticRegression(max_iter=2000, C=10.0),
    ).fit(texts, labels)
    examples = [(s, e) for s, m in data.items() for e in m["skill"].get("examples", [])]
    assert examples
    predicted = model.predict([e for _, e in examples])
    wrong = [(s, e, p) for (s, e), p in zip(examples, predicted, strict=True) if p != s]
    assert not wrong


_OPERATOR = re.compile(
    r"(?=[a-z<>=+\u2265\u2264])(?:"  # (+: "95+", a phrase since round 23)
    + "|".join(f"(?P<p{i}>{t._phrase_pattern(p)})" for i, p in enumerate(t._PHRASES_LONGEST_FIRST))
    + ")"
)
"""The operator phrases as one pattern, as find_comparison searched them before Alternation."""


def _search_from_every_letter(text: str) -> t.Comparison | None:
    """find_comparison as it was: the whole operator pattern searched across the text."""
    found = _OPERATOR.search(text)
    if found is None or found.lastgroup is None:
        return None
    phrase = t._OPERATOR_NAMES[found.lastgroup]
    op = t._OPERATOR_PHRASES[phrase]
    return t.Comparison(op, found.start(), found.end(), phrase in t._POSTFIX)


_ATOMS = [*t._PHRASES_LONGEST_FIRST, "<", ">", "=", "-", "/", "x", "90%", "at"]
_ATOMS += ["the last hour", "over the past", "10", "gbps", "<=>", "=<>", "-->", "no", "cpu", "+"]


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_ATOMS), st.sampled_from(["", " ", "  ", "-", "/", "\t"])),
        min_size=1,
        max_size=7,
    )
)
def test_find_comparison_tries_the_pattern_only_where_a_phrase_can_start(
    pieces: list[tuple[str, str]],
) -> None:
    text = "".join(atom + glue for atom, glue in pieces)
    assert t.find_comparison(text) == _search_from_every_letter(text)
