"""The client-side CLI (`netagent describe | invoke | chain`) against a real agent on loopback.

Every command runs as a subprocess of the installed console script, over both bindings; JSON
output is parsed and asserted. Exit codes: 0 success, 1 remote refusal or failure, 2 usage
error, 3 local validation failure; an expected error never shows a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.base.settings import Settings
from agent.interfaces import canonical_json, digest_of, schema_reference, trusted_schema
from agent.registry.loader import Registry, load_registry
from agent.security.auth import TokenVerifier, issue_token, load_or_create_signing_key
from tests.a2a_helpers import BINDINGS
from tests.conftest import RunningAgent, free_port, start_agent

ROOT = Path(__file__).resolve().parents[2]
NETAGENT = ROOT / ".venv" / "bin" / "netagent"
CONDITION = {
    "resource_id": "nyc1-core-01",
    "condition": {"metric": "cpu", "operator": "gte", "threshold": 90, "unit": "percent"},
}
HOT_LINK = {"link_id": "acme-lnk-00001"}
INTERFACE_PATH = {"JSONRPC": "/a2a/jsonrpc", "HTTP+JSON": "/a2a/rest"}


def netagent(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the console script with its own NETAGENT_HOME (never the developer's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env.update({"NETAGENT_HOME": str(home), "COLUMNS": "200"})
    run = subprocess.run(
        [str(NETAGENT), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert "Traceback" not in run.stderr, run.stderr
    return run


def ok_json(run: subprocess.CompletedProcess[str]) -> Any:
    assert run.returncode == 0, run.stdout + run.stderr
    return json.loads(run.stdout)


def error_json(run: subprocess.CompletedProcess[str], code: int) -> dict[str, Any]:
    assert run.returncode == code, run.stdout + run.stderr
    assert run.stderr.startswith("error: ")
    return json.loads(run.stdout)["error"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "cli-home"


@pytest.fixture(scope="module")
def overpromising_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAgent]:
    """lookup_inventory's document promises an output member the skill never produces.

    The document is internally consistent (reference and interface digests recomputed), and
    the agent still checks its output against the real schema, so only the client's step 10
    can notice.
    """
    capabilities = []
    for capability in load_registry(ROOT / "skills"):
        interface = capability.interface
        if capability.id == "lookup_inventory" and interface is not None:
            document = interface.document
            output = document["output_schema"]
            schema = output["resolution"]["schema"]
            schema["required"] = [*schema.get("required", []), "never_present"]
            document["output_schema"] = schema_reference(
                output["schema_uri"], output["version"], schema
            )
            interface = dataclasses.replace(
                interface,
                canonical_document=canonical_json(document),
                interface_digest=digest_of(document),
            )
        capabilities.append(dataclasses.replace(capability, interface=interface))
    home = tmp_path_factory.mktemp("overpromising-home")
    running = start_agent(home, registry=Registry(capabilities))
    yield running
    running.stop()


# -- describe ---------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_describe_json_reports_the_checks_and_the_document(agent, home, binding) -> None:
    described = ok_json(
        netagent(
            home,
            "describe",
            agent.base_url,
            "evaluate_resource_condition",
            "--token",
            agent.token("alice"),
            "--binding",
            binding,
            "--json",
        )
    )
    assert described["binding"] == binding
    assert described["interface_url"] == agent.base_url + INTERFACE_PATH[binding]
    assert described["skill_id"] == "evaluate_resource_condition"
    assert described["skill_version"] == "1.0"
    assert [c["check"] for c in described["checks"]] == [
        "card fetched",
        "card signature",
        "advertised",
        "describe_skill",
        "three-way digest",
        "trusted schema",
        "embedded digests",
    ]
    assert {c["status"] for c in described["checks"]} == {"pass"}
    assert described["checks"][1]["detail"].startswith("signature verified (kid ")
    document = described["skill_interface"]
    assert digest_of(document) == described["interface_digest"]
    assert list(document["supporting_record_schemas"]) == ["resource-observation"]


def test_describe_prints_checks_schemas_and_interaction(agent, home) -> None:
    run = netagent(
        home, "describe", agent.base_url, "check_link_capacity", "--token", agent.token("alice")
    )
    assert run.returncode == 0, run.stderr
    for expected in (
        "card fetched",
        "three-way digest",
        "trusted schema",
        "urn:schema-governed-agent:schemas:skill-interface:1.0",
        "embedded digests",
        "urn:netops-agent:schema:check-link-capacity:input",
        "record link-utilization-sample",
        "record kinds: link-utilization-sample",
        "interaction.response_modes",
        "authority.default_mode",
        "constraints.max_window_seconds",
    ):
        assert expected in run.stdout, expected


def test_describe_anonymous_sees_only_public_skills(agent, home) -> None:
    public = ok_json(netagent(home, "describe", agent.base_url, "lookup_inventory", "--json"))
    assert public["skill_id"] == "lookup_inventory"
    refused = netagent(home, "describe", agent.base_url, "check_link_capacity", "--json")
    error = error_json(refused, 3)
    assert error == {
        "where": "local",
        "code": "skill_not_advertised",
        "message": "the card does not advertise 'check_link_capacity'",
        "details": [],
    }


@pytest.mark.backend_free
@pytest.mark.parametrize(
    "command",
    [["describe", "lookup_inventory"], ["invoke", "lookup_inventory", "--args", "{}"]],
    ids=lambda c: c[0],
)
def test_an_unreachable_agent_is_unreachable_not_invalid(home, command: list[str]) -> None:
    """Nothing answering is not an interface that fails verification: exit 4, its own words."""
    url = f"http://127.0.0.1:{free_port()}"
    run = netagent(home, command[0], url, *command[1:], "--json")
    error = error_json(run, 4)
    assert (error["where"], error["code"]) == ("remote", "unreachable")
    assert run.stderr.startswith(f"error: unreachable: nothing answered at {url}/")
    assert "interface_invalid" not in run.stderr + run.stdout
    assert not home.exists() or not any(home.iterdir())  # and nothing was made here


def test_a_bad_token_is_a_remote_refusal(agent, home) -> None:
    run = netagent(
        home, "describe", agent.base_url, "lookup_inventory", "--token", "not-a-jwt", "--json"
    )
    error = error_json(run, 5)
    assert error["where"] == "remote"
    assert (error["code"], error["status"], error["reason"]) == (
        "credential_refused",
        401,
        "UNAUTHENTICATED",
    )
    assert error["message"] == "token is malformed"  # the agent's own words
    assert error["mint"] == "netagent token --subject NAME --tenant TENANT --scope SCOPE"


def _foreign_token(agent: RunningAgent, tmp_path: Path) -> str:
    """A token minted in another folder: another signing key, which the agent does not know."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    key = load_or_create_signing_key(other)
    return issue_token(
        key, agent.settings, subject="alice", tenant="acme", scopes=["inventory.read"]
    )


REASONS = {"expired": "token has expired", "foreign": "token signature or claims are invalid"}


@pytest.mark.parametrize(
    ("command", "kind", "binding"),
    [
        ("describe", "expired", "JSONRPC"),
        ("describe", "foreign", "HTTP+JSON"),
        ("invoke", "foreign", "JSONRPC"),
        ("invoke", "expired", "HTTP+JSON"),
        ("chain", "expired", "JSONRPC"),
        ("check", "foreign", "HTTP+JSON"),
    ],
)
def test_a_refused_token_shows_the_agent_reason_and_how_to_mint_one(
    agent, home, tmp_path, command, kind, binding
) -> None:
    """An expired token, or one minted with another folder's key: every command that calls
    the agent says what the agent said, and prints the command that mints one it accepts."""
    reason = REASONS[kind]
    bearer = agent.token("alice", ttl=-60) if kind == "expired" else _foreign_token(agent, tmp_path)
    args = {
        "describe": ["describe", agent.base_url, "lookup_inventory"],
        "invoke": ["invoke", agent.base_url, "lookup_inventory", "--args", '{"kind": "sites"}'],
        "chain": [
            "chain",
            agent.base_url,
            "--from",
            "check_link_capacity",
            "--args",
            json.dumps(HOT_LINK),
            "--to",
            "plan_link_upgrade",
        ],
        "check": ["check", agent.base_url],
    }[command]
    run = netagent(home, *args, "--token", bearer, "--binding", binding)
    assert run.returncode == 5, run.stdout + run.stderr  # a refused token, whichever command
    shown = run.stderr if command != "check" else run.stdout
    assert f"the agent refused the token (HTTP 401 UNAUTHENTICATED): {reason}" in shown
    assert "401 Unauthorized" not in shown  # not httpx's words: the agent's
    scopes = (
        "--scope inventory.read --scope assurance.read --scope capacity.read"
        if kind == "expired"
        else "--scope inventory.read"
    )
    assert f"  netagent token --subject alice --tenant acme {scopes}\n" in shown


# -- token ------------------------------------------------------------------------------------

MINT = ["token", "--subject", "alice", "--tenant", "acme", "--scope", "inventory.read"]


@pytest.mark.backend_free
def test_token_without_a_signing_key_says_so_and_creates_none(home) -> None:
    run = netagent(home, *MINT)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stdout == ""
    assert f"error: no signing key in {home} (NETAGENT_HOME)" in run.stderr
    assert "--create-key" in run.stderr
    assert not (home / "signing-key.pem").exists()
    credential = netagent(home, "token", "--agent-credential", "--subject", "agent:peer")
    assert credential.returncode == 2 and "no signing key" in credential.stderr


@pytest.mark.backend_free
def test_token_create_key_makes_one_and_later_tokens_use_it(home) -> None:
    created = netagent(home, *MINT, "--create-key")
    assert created.returncode == 0, created.stderr
    key = load_or_create_signing_key(home)  # the file exists now: this only reads it
    settings = Settings(home=home)
    assert TokenVerifier(settings, key).verify(created.stdout.strip()).subject == "alice"
    again = netagent(home, *MINT)
    assert again.returncode == 0, again.stderr
    assert TokenVerifier(settings, key).verify(again.stdout.strip()).tenant == "acme"


@pytest.mark.backend_free
def test_token_help_marks_the_tenant_required_for_a_caller(home) -> None:
    run = netagent(home, "token", "--help")
    assert "Required for a caller's token" in " ".join(run.stdout.split())


# -- invoke -----------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_invoke_json_returns_validated_output_and_records(agent, home, binding) -> None:
    result = ok_json(
        netagent(
            home,
            "invoke",
            agent.base_url,
            "evaluate_resource_condition",
            "--args",
            json.dumps(CONDITION),
            "--token",
            agent.token("alice"),
            "--binding",
            binding,
            "--json",
        )
    )
    assert result["skill"] == "evaluate_resource_condition"
    assert result["endpoint"] == agent.base_url + INTERFACE_PATH[binding]
    assert result["task_id"] and result["context_id"]
    assert (
        result["output_schema_uri"] == "urn:netops-agent:schema:evaluate-resource-condition:output"
    )
    assert result["output"]["result"] in ("condition_met", "condition_not_met")
    (record,) = result["records"]
    assert record["kind"] == "resource-observation"
    assert result["output"]["supporting_record_refs"] == [record["artifact_id"]]
    assert record["data"]["record_id"] == record["artifact_id"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_invoke_stream_json_prints_each_record_then_the_result(agent, home, binding) -> None:
    run = netagent(
        home,
        "invoke",
        agent.base_url,
        "evaluate_resource_condition",
        "--args",
        json.dumps(CONDITION),
        "--token",
        agent.token("alice"),
        "--binding",
        binding,
        "--stream",
        "--json",
    )
    assert run.returncode == 0, run.stderr
    events = [json.loads(line) for line in run.stdout.splitlines()]
    assert [e["event"] for e in events] == ["record", "result"]
    record, result = events
    assert record["kind"] == "resource-observation"
    assert result["records"] == [{k: v for k, v in record.items() if k != "event"}]
    assert result["output"]["supporting_record_refs"] == [record["artifact_id"]]


def test_invoke_prints_the_result_first_and_counts_the_records(agent, home) -> None:
    """The default text: the result (rates in Gbit/s), one line of record counts, the checks."""
    run = netagent(
        home,
        "invoke",
        agent.base_url,
        "check_link_capacity",
        "--args",
        json.dumps({"link_id": "acme-lnk-00002", "requested_bps": 20_000_000_000}),
        "--token",
        agent.token("alice"),
        "--stream",
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "record arrived:" not in out  # no line per record
    assert "streaming: first record arrived (link-utilization-sample)" in out
    lines = out.splitlines()
    verdict = next(i for i, line in enumerate(lines) if "verdict:" in line)
    assert verdict < next(i for i, line in enumerate(lines) if "arguments valid" in line)
    assert verdict < next(i for i, line in enumerate(lines) if "link_id:" in line)
    assert "verdict: 20 Gbit/s does not fit: 6 Gbit/s available at worst in the window" in out
    assert "capacity_bps: 100 Gbit/s" in out
    assert "20000000000" not in out and " bit/s available" not in out
    (counted,) = [line for line in lines if line.startswith("supporting records")]
    assert re.fullmatch(
        r"supporting records, each schema-valid: \d+ link-utilization-sample "
        r"\(--records or --json for each one\)",
        counted,
    )
    assert len(lines) < 60, out


def test_invoke_records_prints_each_record(agent, home) -> None:
    run = netagent(
        home,
        "invoke",
        agent.base_url,
        "check_link_capacity",
        "--args",
        json.dumps(HOT_LINK),
        "--token",
        agent.token("alice"),
        "--stream",
        "--records",
    )
    assert run.returncode == 0, run.stderr
    assert "record arrived: link-utilization-sample" in run.stdout
    for expected in (
        "arguments valid against input_schema",
        "COMPLETED",
        "urn:netops-agent:schema:check-link-capacity:output",
        "link_id: acme-lnk-00001",
        "supporting records (",
        "check-link-capacity:link-utilization-sample",
    ):
        assert expected in run.stdout, expected


def test_invoke_reads_arguments_from_a_file(agent, home, tmp_path) -> None:
    arguments = tmp_path / "args.json"
    arguments.write_text(json.dumps({"kind": "sites"}))
    result = ok_json(
        netagent(
            home,
            "invoke",
            agent.base_url,
            "lookup_inventory",
            "--args",
            f"@{arguments}",
            "--token",
            agent.token("alice"),
            "--json",
        )
    )
    assert result["skill"] == "lookup_inventory"
    assert result["records"] == []


def test_invalid_input_is_refused_locally_with_details(agent, home) -> None:
    arguments = {**CONDITION, "condition": {**CONDITION["condition"], "threshold": "90"}}
    run = netagent(
        home,
        "invoke",
        agent.base_url,
        "evaluate_resource_condition",
        "--args",
        json.dumps(arguments),
        "--token",
        agent.token("alice"),
        "--json",
    )
    error = error_json(run, 3)
    assert error["where"] == "local"
    assert error["code"] == "input_invalid"
    assert error["details"] == [
        {
            "instance_path": "/condition/threshold",
            "schema_path": "/properties/condition/properties/threshold/type",
            "keyword": "type",
            "expected": "number",
            "actual": "string",
        }
    ]
    assert "/condition/threshold" in run.stderr


@pytest.mark.parametrize("stream", [False, True])
def test_output_outside_the_schema_is_refused_locally(overpromising_agent, home, stream) -> None:
    run = netagent(
        home,
        "invoke",
        overpromising_agent.base_url,
        "lookup_inventory",
        "--args",
        json.dumps({"kind": "sites"}),
        "--token",
        overpromising_agent.token("alice"),
        "--json",
        *(["--stream"] if stream else []),
    )
    assert run.returncode == 3, run.stdout + run.stderr
    error = json.loads(run.stdout.splitlines()[-1])["error"]
    assert (error["where"], error["code"]) == ("local", "output_invalid")
    assert error["message"] == "result does not match output_schema"
    assert [d["instance_path"] for d in error["details"]] == ["/never_present"]


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_remote_refusal_exits_1_with_the_task_state(agent, home, binding) -> None:
    run = netagent(
        home,
        "invoke",
        agent.base_url,
        "check_link_capacity",
        "--args",
        json.dumps({**HOT_LINK, "window_seconds": 600000}),
        "--token",
        agent.token("alice"),
        "--binding",
        binding,
        "--json",
    )
    error = error_json(run, 1)
    assert error["where"] == "remote"
    assert error["state"] == "TASK_STATE_REJECTED"
    assert error["code"] == "constraint_rejected"
    assert error["task_id"]
    assert "constraint_rejected" in run.stderr


@pytest.mark.backend_free
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["invoke", "{url}", "lookup_inventory", "--args", "{nope"], "--args is not JSON"),
        (["invoke", "{url}", "lookup_inventory", "--args", "[1]"], "must be a JSON object"),
        (["invoke", "{url}", "lookup_inventory", "--args", "@/no/such/file"], "cannot read"),
        (["describe", "{url}", "lookup_inventory", "--binding", "SOAP"], "--binding must be"),
        (["chain", "{url}", "--from", "lookup_inventory", "--args", "{}"], "chain needs"),
        (["chain", "list", "--from", "lookup_inventory"], "`chain list` takes"),
        (["chain", "{url}", "--task", "t-1"], "--task only filters"),
    ],
)
def test_usage_errors_exit_2(agent, home, args, message) -> None:
    run = netagent(home, *(a.replace("{url}", agent.base_url) for a in args))
    assert run.returncode == 2, run.stdout + run.stderr
    assert message in run.stderr


# -- chain ------------------------------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_chain_composes_records_the_correlation_and_lists_it(agent, home, binding) -> None:
    """check_link_capacity's output is plan_link_upgrade's input (same reference)."""
    chained = ok_json(
        netagent(
            home,
            "chain",
            agent.base_url,
            "--from",
            "check_link_capacity",
            "--args",
            json.dumps(HOT_LINK),
            "--to",
            "plan_link_upgrade",
            "--token",
            agent.token("paula"),
            "--binding",
            binding,
            "--json",
        )
    )
    up, down = chained["upstream"], chained["downstream"]
    assert (up["skill"], down["skill"]) == ("check_link_capacity", "plan_link_upgrade")
    assert up["task_id"] != down["task_id"]
    assert down["endpoint"] == agent.base_url + INTERFACE_PATH[binding]
    workflow = chained["workflow_id"]

    rows = [
        json.loads(line)
        for line in netagent(home, "chain", "list", "--workflow", workflow, "--json")
        .stdout.strip()
        .splitlines()
    ]
    assert len(rows) == 1
    (row,) = rows
    assert (row["upstream_task_id"], row["downstream_task_id"]) == (up["task_id"], down["task_id"])
    assert (row["upstream_skill"], row["downstream_skill"]) == (up["skill"], down["skill"])
    assert row["upstream_agent"] == row["downstream_agent"] == agent.base_url
    by_task = netagent(home, "chain", "list", "--task", down["task_id"], "--json")
    assert [json.loads(line)["workflow_id"] for line in by_task.stdout.splitlines()] == [workflow]

    listed = netagent(home, "chain", "list")
    assert listed.returncode == 0
    assert workflow in listed.stdout and "plan_link_upgrade" in listed.stdout


def test_chain_human_output_names_both_tasks_and_the_workflow(agent, home) -> None:
    run = netagent(
        home,
        "chain",
        agent.base_url,
        "--from",
        "check_link_capacity",
        "--args",
        json.dumps(HOT_LINK),
        "--to",
        "plan_link_upgrade",
        "--token",
        agent.token("paula"),
        "--workflow",
        "wf-cli-test",
    )
    assert run.returncode == 0, run.stderr
    assert "workflow id: wf-cli-test" in run.stdout
    assert "upstream" in run.stdout and "downstream" in run.stdout
    stored = netagent(home, "chain", "list", "--workflow", "wf-cli-test", "--json")
    (row,) = [json.loads(line) for line in stored.stdout.splitlines()]
    assert row["upstream_task_id"] in run.stdout
    assert row["downstream_task_id"] in run.stdout


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_composition_refusal_names_the_fields_and_exits_3(agent, home, binding) -> None:
    run = netagent(
        home,
        "chain",
        agent.base_url,
        "--from",
        "evaluate_resource_condition",
        "--args",
        json.dumps(CONDITION),
        "--to",
        "check_link_capacity",
        "--token",
        agent.token("alice"),
        "--binding",
        binding,
        "--json",
    )
    error = error_json(run, 3)
    assert error["code"] == "composition_refused"
    assert error["fields"] == ["schema_uri", "digest"]
    assert "schema_uri: 'urn:netops-agent:schema:evaluate-resource-condition:output'" in run.stderr
    assert "digest: 'sha256:" in run.stderr
    assert netagent(home, "chain", "list", "--json").stdout == ""  # nothing was invoked


def test_results_and_documents_print_in_their_schemas_order(agent, home) -> None:
    """A result crosses the wire as a protobuf Struct (a map, in a new order in every process):
    the client prints it in its schema's order, and a document from ``$schema`` down."""
    token = agent.token("alice")
    arguments = {"link_id": "acme-lnk-00002", "requested_bps": 5_000_000_000}
    invoked = ok_json(
        netagent(
            home, "invoke", agent.base_url, "check_link_capacity",
            "--args", json.dumps(arguments), "--token", token, "--json",
        )
    )  # fmt: skip
    folder = ROOT / "skills" / "check_link_capacity"
    output = json.loads((folder / "output.schema.json").read_text(encoding="utf-8"))
    optional = sorted(set(output["properties"]) - set(output["required"]))
    assert list(invoked["output"]) == output["required"] + optional  # requested_bps is optional
    direction = output["properties"]["directions"]["items"]["required"]
    assert all(list(d) == direction for d in invoked["output"]["directions"])
    sample = json.loads((folder / "link-utilization-sample.schema.json").read_text("utf-8"))
    assert all(list(r["data"]) == sample["required"] for r in invoked["records"])
    described = ok_json(
        netagent(
            home, "describe", agent.base_url, "check_link_capacity", "--token", token, "--json"
        )
    )
    document = described["skill_interface"]
    assert list(document) == list(trusted_schema()["properties"])
    embedded = document["output_schema"]["resolution"]["schema"]
    assert list(embedded)[:2] == ["$schema", "type"]
    assert list(embedded["properties"]) == output["required"] + optional
    text = netagent(
        home, "invoke", agent.base_url, "check_link_capacity",
        "--args", json.dumps(arguments), "--token", token,
    ).stdout  # fmt: skip
    members = [line.split(":")[0].strip() for line in text.splitlines() if line.startswith("  ")]
    top = [m for m in members if m in output["properties"]]
    assert top == ["verdict", *(n for n in output["required"] + optional if n != "verdict")]


# -- audit, card ------------------------------------------------------------------------------


def assert_fits(text: str, columns: int, identifiers: set[str]) -> None:
    """Every line within the terminal, and every identifier shown whole on one line."""
    assert all(len(line) <= columns for line in text.splitlines()), text
    broken = sorted(i for i in identifiers if i not in text)
    assert not broken, f"cut or broken at {columns} columns: {broken}\n{text}"


@pytest.mark.parametrize("columns", [80, 120])
def test_audit_usage_and_describe_fit_the_terminal_with_every_id_whole(
    agent, home, columns: int
) -> None:
    token = agent.token("alice")
    tasks = [
        ok_json(
            netagent(
                home, "invoke", agent.base_url, skill, "--args", json.dumps(arguments),
                "--token", token, "--json",
            )
        )["task_id"]
        for skill, arguments in (
            ("check_link_capacity", HOT_LINK),
            ("evaluate_resource_condition", CONDITION),
        )
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env |= {"NETAGENT_HOME": str(home), "COLUMNS": str(columns)}
    url = agent.settings.resolved_database_url

    def shown(*args: str) -> str:
        run = subprocess.run(
            [str(NETAGENT), *args], env=env, capture_output=True, text=True, timeout=60, check=False
        )
        assert run.returncode == 0, run.stdout + run.stderr
        return run.stdout

    skills = {"check_link_capacity", "evaluate_resource_condition"}
    audit = shown("audit", "--database-url", url, "--limit", "20")
    ids = {*skills, "alice@acme", "agent:netops-agent", "inventory.utilization_samples"}
    assert_fits(audit, columns, ids | {task[:8] for task in tasks})
    assert "1 row, newest first" in shown("audit", "--database-url", url, "--limit", "1")
    usage = shown("usage", "--database-url", url)
    every_skill = {"plan_link_upgrade", "lookup_inventory", "link_headroom", "deprecated"}
    assert_fits(usage, columns, skills | every_skill)
    described = shown("describe", agent.base_url, "evaluate_resource_condition", "--token", token)
    document = ok_json(
        netagent(
            home, "describe", agent.base_url, "evaluate_resource_condition",
            "--token", token, "--json",
        )
    )["skill_interface"]  # fmt: skip
    references = [document["input_schema"], document["output_schema"]]
    references += list(document["supporting_record_schemas"].values())
    assert_fits(described, columns, {r[m] for r in references for m in ("schema_uri", "digest")})


@pytest.mark.backend_free
def test_card_public_url_has_help(home) -> None:
    run = netagent(home, "card", "--help")
    assert "Base URL the card advertises" in " ".join(run.stdout.split())


@pytest.mark.parametrize("command", ["invoke", "describe"])
def test_a_removed_skill_shows_the_agent_answer_naming_its_replacement(
    agent, home, command
) -> None:
    args = ["--args", "{}"] if command == "invoke" else []
    run = netagent(
        home,
        command,
        agent.base_url,
        "port_report",
        *args,
        "--token",
        agent.token("alice"),
        "--json",
    )
    error = error_json(run, 3)
    assert error["code"] == "skill_not_advertised"
    said = "the agent says: skill 'port_report' was removed; use 'lookup_inventory'"
    assert error["details"] == [said]
    assert said in run.stderr
