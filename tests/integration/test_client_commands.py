"""The client commands against our agent: ``chain`` stores its link where ``chain list`` reads
it, and a client validates with the fast check, leaving the details to jsonschema."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_process import run_netagent
from tests.conftest import RunningAgent


def test_chain_writes_its_link_and_chain_list_reads_it(agent: RunningAgent, tmp_path: Path) -> None:
    """The first ``chain`` makes and migrates the home's database, the second finds it
    current; the link reads back through ``chain list``."""
    token = agent.token("paula")
    args = ["--from", "check_link_capacity", "--args", '{"link_id": "acme-lnk-00001"}']
    args += ["--to", "plan_link_upgrade", "--token", token, "--json"]
    first = run_netagent(tmp_path, "chain", agent.base_url, *args)  # makes and migrates the file
    assert first.code in (0, None), first.stdout
    ran = run_netagent(tmp_path, "chain", agent.base_url, *args)
    assert ran.code in (0, None), ran.stdout
    workflow = json.loads(ran.stdout)["workflow_id"]
    rows = run_netagent(tmp_path, "chain", "list", "--workflow", workflow, "--json").stdout
    (row,) = [json.loads(line) for line in rows.splitlines() if line.strip()]
    assert row["upstream_skill"] == "check_link_capacity"
    assert row["downstream_skill"] == "plan_link_upgrade"
    assert row["upstream_agent"] == row["downstream_agent"] == agent.base_url
    assert row["ts"].endswith("+00:00")


def test_a_client_validates_with_the_fast_check_and_details_with_jsonschema(
    agent: RunningAgent, tmp_path: Path
) -> None:
    """agent/interfaces/fast_check.py answers every valid instance of describing, invoking,
    chaining and checking; arguments it refuses get the draft's error details from jsonschema
    (agent/interfaces/draft2020.py)."""
    token = agent.token("paula")
    bearer = ["--token", token]
    sites = ["lookup_inventory", "--args", '{"kind": "sites"}', *bearer]
    link = ["--args", '{"link_id": "acme-lnk-00001"}', "--to", "plan_link_upgrade", *bearer]
    runs = {
        "describe": ["describe", agent.base_url, "lookup_inventory", *bearer],
        "invoke": ["invoke", agent.base_url, *sites],
        "chain": ["chain", agent.base_url, "--from", "check_link_capacity", *link],
        "check": ["check", agent.base_url, *bearer],
    }
    for name, args in runs.items():
        ran = run_netagent(tmp_path, *args)
        assert ran.code in (0, None), (name, ran.stdout)
        assert "agent.interfaces.fast_check" in ran.modules, name

    wrong = ["invoke", agent.base_url, "lookup_inventory", "--args", '{"kind": 7}', *bearer]
    ran = run_netagent(tmp_path, *wrong, "--json")
    assert ran.code == 3, ran.stdout  # refused before sending
    error = json.loads(ran.stdout)["error"]
    assert (error["where"], error["code"]) == ("local", "input_invalid")
    assert [d["instance_path"] for d in error["details"]] == ["/kind"]
    assert ran.imported(("jsonschema",)) == ["jsonschema"]
