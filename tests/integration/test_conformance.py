"""`netagent check`: the schema-interface conformance checker, against honest and lying agents.

Our own agent must conform for every caller (anonymous, alice, paula) over both bindings;
the strict agent's required extension must be enforced; an agent built from our own app but
advertising digests its documents do not have must fail exactly the checks that catch it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.devtools import conformance
from agent.devtools.conformance import (
    AGENT,
    FAIL,
    NOT_APPLICABLE,
    PASS,
    SKIP,
    check_agent,
    invalid_argument,
    is_json_pointer,
)
from agent.registry.loader import Registry, load_registry
from tests.a2a_helpers import BINDINGS
from tests.conftest import RunningAgent, free_port, start_agent
from tests.integration.conftest import TEST_REQUIRED_EXTENSION
from tests.registry_view import card_ids, demo_only
from tests.serving import json_server

ROOT = Path(__file__).resolve().parents[2]
NETAGENT = ROOT / ".venv" / "bin" / "netagent"
SKILL_CHECKS = (
    "listed in card.skills",
    "describe_skill",
    "three-way digest",
    "trusted schema",
    "embedded digests",
    "probe: interface_mismatch",
    "probe: input_invalid",
)
DOCUMENT_SWAPPED = "lookup_inventory"  # serves another skill's document under its own digest
DIGEST_SWAPPED = "link_headroom"  # advertises (and describes with) another skill's digest
DONOR = "evaluate_resource_condition"


def check(home: Path, url: str, *args: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    """Run `netagent check URL ... --json FILE`; return the run and the parsed report."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env.update({"NETAGENT_HOME": str(home), "COLUMNS": "200"})
    home.mkdir(parents=True, exist_ok=True)
    report = home / f"report-{len(list(home.iterdir()))}.json"
    run = subprocess.run(
        [str(NETAGENT), "check", url, *args, "--json", str(report)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in run.stderr, run.stderr
    return run, json.loads(report.read_text()) if report.exists() else None


def by_key(report: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(c["subject"], c["name"]): c for c in report["checks"]}


@pytest.fixture(scope="module")
def lying_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAgent]:
    """Our own app, with two capabilities whose interfaces lie about their documents."""
    real = load_registry(ROOT / "skills")
    donor = real.get(DONOR)
    assert donor is not None and donor.interface is not None
    capabilities = []
    for capability in real:
        interface = capability.interface
        if capability.id == DOCUMENT_SWAPPED and interface is not None:
            interface = dataclasses.replace(
                interface, canonical_document=donor.interface.canonical_document
            )
        elif capability.id == DIGEST_SWAPPED and interface is not None:
            interface = dataclasses.replace(
                interface, interface_digest=donor.interface.interface_digest
            )
        capabilities.append(dataclasses.replace(capability, interface=interface))
    running = start_agent(tmp_path_factory.mktemp("liar-home"), registry=Registry(capabilities))
    yield running
    running.stop()


# -- our own agent conforms -------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("who", [None, "alice", "paula"])
def test_our_agent_conforms_for_every_caller(agent, tmp_path, binding, who) -> None:
    token = ["--token", agent.token(who)] if who else []
    run, report = check(tmp_path, agent.base_url, *token, "--binding", binding)
    assert run.returncode == 0, run.stdout
    assert "conforms" in run.stdout and "does not conform" not in run.stdout
    assert report["ok"] is True
    assert report["binding"] == binding
    assert report["counts"][FAIL] == 0
    checks = by_key(report)
    skills = {c["subject"] for c in report["checks"]} - {AGENT}
    expected = {"describe_skill", "lookup_inventory"}
    if who:
        expected |= {"check_link_capacity", "evaluate_resource_condition", "link_headroom"}
    if who == "paula":
        expected.add("plan_link_upgrade")
    assert set(demo_only(skills)) == expected
    assert skills == set(card_ids(who))  # every skill the card lists, a fork's own too
    for skill in skills:
        assert [c["name"] for c in report["checks"] if c["subject"] == skill] == list(SKILL_CHECKS)
        for name in SKILL_CHECKS[:5]:
            assert checks[(skill, name)]["status"] == PASS, checks[(skill, name)]
    assert checks[(AGENT, "required extension enforced")]["status"] == NOT_APPLICABLE
    assert (
        checks[(AGENT, "card signature")]["status"] == PASS
    )  # tests/integration/test_signed_cards.py
    assert checks[("describe_skill", "probe: interface_mismatch")]["status"] == NOT_APPLICABLE
    assert checks[("describe_skill", "probe: input_invalid")]["status"] == PASS
    probes = [checks[("lookup_inventory", p)] for p in SKILL_CHECKS[5:]]
    if who is None:  # anonymous callers may describe lookup_inventory, not invoke it
        assert {p["status"] for p in probes} == {SKIP}
        assert all("HTTP 401" in p["reason"] for p in probes)
        skipped = [c for c in report["checks"] if c["status"] == SKIP]
        assert len(demo_only(c["subject"] for c in skipped)) == 2  # a fork's public skills add
        assert all("HTTP 401" in c["reason"] for c in skipped)
    else:
        assert {p["status"] for p in probes} == {PASS}
        assert report["counts"][SKIP] == 0
        assert checks[(AGENT, "extended card")]["status"] == PASS
        assert checks[(AGENT, "extended card signature")]["status"] == PASS


@pytest.mark.parametrize("columns", [80, 120])
def test_check_leads_with_its_verdict_is_short_and_fits_the_terminal(
    agent, tmp_path, columns: int
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env |= {"NETAGENT_HOME": str(tmp_path), "COLUMNS": str(columns)}
    command = [str(NETAGENT), "check", agent.base_url, "--token", agent.token("alice")]
    report_file = tmp_path / "report.json"
    short, detailed = (
        subprocess.run(
            [*command, *more, "--json", str(report_file)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        for more in ([], ["--details"])
    )
    assert short.returncode == detailed.returncode == 0, short.stdout + short.stderr
    report = json.loads(report_file.read_text())
    lines = short.stdout.splitlines()
    assert f"{agent.base_url} (JSONRPC, with --token) conforms" in " ".join(lines[:2]), lines
    assert len(lines) <= 15, short.stdout  # the verdict, a line per skill, how to see more
    assert "--details" in lines[-1]
    for subject in {c["subject"] for c in report["checks"]}:
        assert any(line.startswith(subject + " ") for line in lines), subject
    every = detailed.stdout
    assert all(len(line) <= columns for line in every.splitlines()), every
    assert all(f"{c['subject']}  {c['name']}  {c['status']}" in every for c in report["checks"])
    words = {word for c in report["checks"] for word in c["reason"].split()}
    broken = sorted(w for w in words if len(w) <= columns - 2 and w not in every.split())
    assert not broken, f"cut or broken: {broken}\n{every}"


async def test_probes_report_what_was_sent_and_what_came_back(agent) -> None:
    report = await check_agent(agent.base_url, token=agent.token("paula"))
    assert report.ok, report.failed()
    mismatch = report.find("check_link_capacity", "probe: interface_mismatch")
    assert mismatch is not None
    assert mismatch.reason == "sent a wrong interface_digest: REJECTED interface_mismatch"
    required = report.find("evaluate_resource_condition", "probe: input_invalid")
    assert required is not None
    assert required.reason.startswith("sent {} (required: resource_id, condition)")
    assert "'/resource_id'" in required.reason
    untyped = report.find("check_link_capacity", "probe: input_invalid")  # nothing required
    assert untyped is not None and untyped.status == PASS
    assert "'a_device' given an integer" in untyped.reason
    assert json.loads(json.dumps(report.to_json()))["ok"] is True


async def test_skills_are_checked_two_at_a_time_and_reported_in_the_cards_order(
    agent, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the agent answers one skill's request, the checker reads another's answer; the
    report still lists the skills in the card's binding order, each one's checks together."""
    in_flight = most = 0
    send = conformance._Checker._send

    async def counted(self: Any, data: dict[str, Any], extensions: list[str]) -> Any:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        try:
            return await send(self, data, extensions)
        finally:
            in_flight -= 1

    monkeypatch.setattr(conformance._Checker, "_send", counted)
    report = await check_agent(agent.base_url, token=agent.token("paula"))
    assert report.ok, report.failed()
    assert most == conformance.SKILLS_AT_ONCE == 2
    card = await check_agent(agent.base_url)  # anonymous: fewer skills, same rule
    assert card.ok
    bound = [c.subject for c in report.checks if c.name == "listed in card.skills"]
    assert len(bound) >= 6
    subjects = [c.subject for c in report.checks if c.subject != AGENT]
    assert subjects == [skill for skill in bound for _ in SKILL_CHECKS]
    assert [c.name for c in report.checks if c.subject != AGENT] == list(SKILL_CHECKS) * len(bound)
    assert all(c.subject == AGENT for c in report.checks[: len(report.checks) - len(subjects)])


# -- a required extension ---------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_required_extension_probe_passes_against_the_strict_agent(
    strict_agent, tmp_path, binding
) -> None:
    # Its own identity: test_extensions expects alice to have no tasks on this shared agent.
    token = strict_agent.token("checker", scopes=["inventory.read", "assurance.read"])
    run, report = check(tmp_path, strict_agent.base_url, "--token", token, "--binding", binding)
    probe = by_key(report)[(AGENT, "required extension enforced")]
    assert probe["status"] == PASS
    assert probe["reason"] == f"without {TEST_REQUIRED_EXTENSION}: ExtensionSupportRequiredError"
    assert report["notes"] == [
        f"activated the card's required extension(s) {TEST_REQUIRED_EXTENSION} on every other "
        "request, so the schema-interface checks can run"
    ]
    assert run.returncode == 0, run.stdout
    assert report["ok"] is True


# -- a lying agent ----------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_lying_agent_fails_exactly_the_checks_that_catch_the_lies(
    lying_agent, tmp_path, binding
) -> None:
    run, report = check(
        tmp_path, lying_agent.base_url, "--token", lying_agent.token("alice"), "--binding", binding
    )
    assert run.returncode == 1, run.stdout
    assert "does not conform" in run.stdout
    assert report["ok"] is False
    failed = {(c["subject"], c["name"]) for c in report["checks"] if c["status"] == FAIL}
    assert failed == {
        (DOCUMENT_SWAPPED, "three-way digest"),
        (DOCUMENT_SWAPPED, "trusted schema"),
        (DIGEST_SWAPPED, "three-way digest"),
    }
    checks = by_key(report)
    swapped = checks[(DOCUMENT_SWAPPED, "trusted schema")]["reason"]
    assert f"/skill_id: '{DONOR}' is not the advertised" in swapped
    lie = checks[(DIGEST_SWAPPED, "three-way digest")]["reason"]
    advertised, returned, computed = (part.split()[-1] for part in lie.split(", "))
    assert advertised == returned != computed
    for name in ("card fetched", "extension advertised", "bindings well-formed"):
        assert checks[(AGENT, name)]["status"] == PASS


def test_describe_refuses_the_lying_interface_locally(lying_agent, tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env["NETAGENT_HOME"] = str(tmp_path)
    run = subprocess.run(
        [
            str(NETAGENT),
            "describe",
            lying_agent.base_url,
            DIGEST_SWAPPED,
            "--token",
            lying_agent.token("alice"),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 3, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    error = json.loads(run.stdout)["error"]
    assert error["code"] == "interface_invalid"
    assert error["message"] == "interface digests disagree (advertised, returned, computed)"


def test_an_unreachable_target_is_unreachable_not_non_conformant(tmp_path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    run, report = check(tmp_path, url)
    assert run.returncode == 4, run.stdout + run.stderr
    assert run.stderr.startswith(f"error: unreachable: nothing answered at {url} (")
    assert "nothing was checked" in run.stderr
    assert "conform" not in run.stdout + run.stderr
    assert [(c["name"], c["status"]) for c in report["checks"]] == [("card fetched", FAIL)]
    assert report["unreachable"] and report["ok"] is False


HOSTILE_TEXT = [
    "[/x]",
    "[/]",
    "[bold red]loud",
    ":smile: :x:",
    "[link=file:///etc/passwd]click[/link]",
    "\\[escaped]",
    "[",
]
"""Rich markup and emoji codes: printed as text, never read as tags (``[/x]`` stopped the
command with a traceback) nor as emoji."""


@pytest.mark.parametrize("text", HOSTILE_TEXT)
def test_an_agents_words_are_printed_as_text(tmp_path, text: str) -> None:
    card = {"name": f"agent {text} end", "version": text, "supportedInterfaces": []}
    with json_server(card) as url:
        run, report = check(tmp_path, url, "--details")  # every check, the card's with it
    assert run.returncode == 1, run.stdout + run.stderr
    fetched, signature, offered = report["checks"]
    assert (fetched["status"], signature["status"], offered["status"]) == (
        PASS,
        NOT_APPLICABLE,
        FAIL,
    )
    assert text in fetched["reason"]
    shown = " ".join(run.stdout.split())  # a long reason is wrapped over lines
    assert text.replace(" ", "") in shown.replace(" ", "")
    assert "does not conform" in run.stdout


def test_a_bad_binding_is_a_usage_error(tmp_path) -> None:
    run, report = check(tmp_path, "http://127.0.0.1:9", "--binding", "SOAP")
    assert run.returncode == 2
    assert report is None
    assert "--binding must be one of JSONRPC, HTTP+JSON, GRPC" in run.stderr


# -- the pieces -------------------------------------------------------------------------------


def test_an_invalid_argument_is_derived_from_the_input_schema() -> None:
    required = {"type": "object", "required": ["kind"], "properties": {"kind": {"enum": ["a"]}}}
    assert invalid_argument(required) == ({}, "{} (required: kind)")
    typed = {"type": "object", "properties": {"b": {"type": "integer"}, "a": {"type": "string"}}}
    assert invalid_argument(typed) == ({"a": 123456789}, "'a' given an integer")
    numeric = {"type": "object", "properties": {"ratio": {"type": "number"}}}
    assert invalid_argument(numeric) == ({"ratio": "conformance-probe"}, "'ratio' given a string")
    enum_only = {"type": "object", "properties": {"mode": {"enum": ["x", "y"]}}}
    assert invalid_argument(enum_only) == ({"mode": 123456789}, "'mode' given an integer")


@pytest.mark.parametrize(
    "schema",
    [
        {},
        True,
        {"type": "object"},
        {"type": "object", "properties": {"anything": {}}},
        {"type": "object", "properties": {"x": True}},
    ],
)
def test_no_invalid_argument_means_the_probe_is_skipped(schema) -> None:
    assert invalid_argument(schema) is None


@pytest.mark.parametrize(
    ("value", "pointer"),
    [
        ("", True),
        ("/kind", True),
        ("/condition/unit", True),
        ("/a~1b/~0c", True),
        ("/items/0", True),
        ("kind", False),
        ("/a~2b", False),
        ("/trailing~", False),
        (None, False),
        (3, False),
    ],
)
def test_json_pointers_are_recognised(value, pointer) -> None:
    assert is_json_pointer(value) is pointer
