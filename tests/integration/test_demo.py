"""The newcomer walkthrough (netops/demo.py) against a real agent, captured as text."""

from __future__ import annotations

import asyncio
import io
import os
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from rich.console import Console

import netops.demo as demo
from agent.base.settings import Settings
from agent.client import CompositionRefusedError
from netops.demo import STEPS, DemoReport, _failure, ensure_agent, run_demo
from tests.conftest import RunningAgent, free_port, start_agent

STEP_NAMES = [name for name, *_ in STEPS]
NETAGENT = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "netagent"


@pytest.fixture(scope="module")
def demo_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningAgent]:
    running = start_agent(tmp_path_factory.mktemp("demo-home"))
    yield running
    running.stop()


def console() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=120, force_terminal=False, color_system=None), buffer


async def walk(running: RunningAgent) -> tuple[DemoReport, str]:
    out, buffer = console()
    report = await run_demo(running.base_url, running.settings, out)
    return report, buffer.getvalue()


async def test_the_walkthrough_runs_every_step(demo_agent: RunningAgent) -> None:
    report, text = await walk(demo_agent)
    assert [s.name for s in report.steps] == STEP_NAMES
    assert [s.number for s in report.steps] == list(range(1, len(STEPS) + 1))
    for step in report.steps:
        allowed = ("ok", "refused") if step.name == "chain" else ("ok",)
        assert step.status in allowed, (step, text)
        assert step.summary
    assert report.ok
    # 1 and 2: the public card, then what each caller sees
    assert "describe_skill" in text and "lookup_inventory" in text
    assert "paula vs alice: +plan_link_upgrade" in text
    # 3: the client-side verification
    assert "all three agree" in text and "document is valid" in text
    assert "3/3 embedded schemas verified" in text
    # 4: the worked example and its record, linked by artifactId
    assert "condition_not_met" in text and "observed 42 percent" in text
    assert "supporting_record_refs names this artifactId" in text
    # 5: records streamed, then the verdict
    assert "record   1 link-utilization-sample" in text and "verdict:" in text
    # 6: refused locally (nothing sent) and by the agent
    assert "input_invalid" in text and "/condition/unit" in text
    assert "requests sent to the agent: 0" in text
    assert "authorization_failed" in text
    # 7: text routing, a clarification answered in the same task
    assert "TASK_STATE_INPUT_REQUIRED" in text and "metadata.routing: stage=clarification" in text
    assert "metadata.routing: stage=task_binding; skill_id=" in text and "(the same task)" in text
    # 8: composed, or refused with the reason; composed, it shows the recommendation
    if report.status("chain") == "ok":
        assert "task_correlation, workflow" in text
        assert re.search(r"recommendation: (upgrade|no_change) \(.*bit/s.*\): \S", text), text
    else:
        assert "composition refused" in text
    # 9: the audit table of these tasks
    assert "principal audit (" in text and "agent.invoke" in text
    assert "deny: authorization_failed" in text
    # the lookups that found nothing inside completed tasks are labelled, and not denials
    audit = report.steps[-1]
    checks = text.count("checked: not there") - 1  # the rows, and the line explaining them
    assert checks >= 1, text
    assert f"{checks} existence check(s) that found nothing" in audit.summary
    # no Python repr anywhere (a dict, a list, a quoted string, a bool): JSON or words
    assert not re.search(r"[{\[(]'|': |\bTrue\b|\bFalse\b|\bNone\b", text), text
    assert '"result": "condition_not_met"' in text  # the worked example's result, as JSON
    denied = int(re.search(r"\((\d+) denied", audit.summary).group(1))  # type: ignore[union-attr]
    assert denied == text.count("deny: ") - 1, text  # the explaining line names it once


async def test_the_walkthrough_fits_80_columns_and_cuts_no_id(demo_agent: RunningAgent) -> None:
    """At 80 columns its audit table read `ti… princ… 03…`: now a row that does not fit is a
    block, and only digests and key ids are shortened, on purpose (`sha256:d247462855b6…`)."""
    buffer = io.StringIO()
    out = Console(file=buffer, width=80, force_terminal=False, color_system=None)
    report = await run_demo(demo_agent.base_url, demo_agent.settings, out)
    text = buffer.getvalue()
    assert report.ok, text
    assert all(len(line) <= 80 for line in text.splitlines()), text
    shortened = re.findall(r"\S*…\S*", text)
    deliberate = re.compile(r"^\(?(sha256:[0-9a-f]{12}|[A-Za-z0-9_-]{12})…[):]*$")
    assert all(deliberate.match(token) for token in shortened), shortened
    for whole in ("evaluate_resource_condition", "inventory.utilization_samples", "paula@acme"):
        assert whole in text, whole


async def test_usage_labels_the_clarification_turns(demo_agent: RunningAgent) -> None:
    report, _ = await walk(demo_agent)  # step 7 asks which skill: a turn with no skill yet
    assert report.status("text_routing") == "ok"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env |= {
        "NETAGENT_HOME": str(demo_agent.settings.home),
        "NETAGENT_DATABASE_URL": demo_agent.settings.resolved_database_url,
        "COLUMNS": "160",
    }
    run = await asyncio.to_thread(
        subprocess.run,
        [str(NETAGENT), "usage"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    (row,) = [line for line in run.stdout.splitlines() if "(no skill chosen)  " in line]
    assert "clarification" in row
    assert "(none)" not in run.stdout and "unknown" not in run.stdout
    assert "(no skill chosen): plain-text turns the agent answered by asking" in " ".join(
        run.stdout.split()
    )


async def test_a_refused_composition_is_shown_not_raised(
    demo_agent: RunningAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(*args: object, **kwargs: object) -> None:
        raise CompositionRefusedError(["schema_uri: 'urn:a' != 'urn:b'"])

    monkeypatch.setattr(demo, "chain", refuse)
    report, text = await walk(demo_agent)
    assert report.status("chain") == "refused"
    assert "composition refused" in text and "schema_uri: 'urn:a' != 'urn:b'" in text
    assert "fields only in plan_link_upgrade's input" in text
    assert all(s.status == "ok" for s in report.steps if s.name != "chain")


@pytest.mark.backend_free
async def test_every_step_fails_cleanly_when_no_agent_answers(tmp_path) -> None:
    settings = Settings(home=tmp_path / "home", port=free_port(), seed_on_start=False)
    out, buffer = console()
    prompts: list[str] = []
    out.input = lambda prompt="", **_: prompts.append(prompt) or ""  # pause=True waits here
    report = await run_demo(settings.resolved_public_url, settings, out, pause=True)
    assert len(prompts) == len(STEPS) - 1
    assert [s.name for s in report.steps] == STEP_NAMES
    assert all(s.status == "failed" for s in report.steps), report.summary_lines()
    # each says why: nothing listening, not only "agent card unavailable"
    unavailable = [s.summary for s in report.steps if "agent card unavailable" in s.summary]
    assert unavailable and all("(ConnectError: " in s for s in unavailable), unavailable
    assert not report.ok
    assert "walkthrough summary" in buffer.getvalue()


def test_ensure_agent_leaves_a_running_agent_alone(demo_agent: RunningAgent) -> None:
    assert ensure_agent(demo_agent.settings, demo_agent.base_url) is None


@pytest.mark.backend_free
def test_ensure_agent_starts_netagent_serve_when_nothing_answers(tmp_path) -> None:
    settings = Settings(home=tmp_path / "home", port=free_port(), seed_on_start=False)
    url = settings.resolved_public_url
    process = ensure_agent(settings, url)
    assert process is not None
    try:
        assert process.poll() is None
        assert httpx.get(f"{url}/healthz", timeout=5).json()["status"] == "ok"
        assert ensure_agent(settings, url) is None  # now one answers
        assert (settings.home / "signing-key.pem").exists()
        served = (settings.home / "serve.log").read_text()
        lines = served.splitlines()  # one line each, however narrow the log's console
        assert f"Agent card: {url}/.well-known/agent-card.json" in lines
        assert f"Console:    {url}/console/ (sign in with one of the tokens above)" in lines
        assert served.index("_TOKEN=") < served.index("Console:")
    finally:
        process.terminate()
        process.wait(timeout=15)


def _held_port() -> socket.socket:
    """A port something else listens on (not an agent: it never answers)."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder


@pytest.mark.backend_free
def test_ensure_agent_on_a_busy_port_says_so_and_shows_no_token(tmp_path) -> None:
    with _held_port() as holder:
        port = holder.getsockname()[1]
        settings = Settings(home=tmp_path / "home", port=port, seed_on_start=False)
        with pytest.raises(RuntimeError, match=f"127.0.0.1:{port} is taken") as raised:
            ensure_agent(settings, settings.resolved_public_url)
    assert "TOKEN" not in str(raised.value)
    assert not (settings.home / "serve.log").exists()  # nothing was started


def _refused(tmp_path, command: str, **settings: int) -> subprocess.CompletedProcess[str]:
    """``netagent <command>`` with ``settings`` (NETAGENT_<NAME>), which must refuse to start:
    exit 2, no traceback, no token printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env |= {"NETAGENT_HOME": str(tmp_path / "home")}
    env |= {f"NETAGENT_{name.upper()}": str(value) for name, value in settings.items()}
    run = subprocess.run(
        [str(NETAGENT), command], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert "TOKEN" not in run.stdout + run.stderr and "eyJ" not in run.stdout + run.stderr
    return run


@pytest.mark.backend_free
@pytest.mark.parametrize("command", ["serve", "demo"])
def test_serve_and_demo_on_a_busy_port_fail_before_printing_tokens(tmp_path, command) -> None:
    with _held_port() as holder:
        port = holder.getsockname()[1]
        run = _refused(tmp_path, command, port=port)
    assert f"127.0.0.1:{port}" in run.stderr


@pytest.mark.backend_free
@pytest.mark.parametrize("command", ["serve", "demo"])
def test_serve_and_demo_on_a_busy_grpc_port_fail_before_printing_tokens(tmp_path, command) -> None:
    """The gRPC binding's port too: start-up stopped on it after the tokens were printed."""
    with _held_port() as http, _held_port() as grpc:
        free = http.getsockname()[1]
        http.close()  # a free HTTP port (the busy-port check of HTTP comes first)
        port = grpc.getsockname()[1]
        run = _refused(tmp_path, command, port=free, grpc_port=port)
    assert f"127.0.0.1:{port}" in run.stderr and "gRPC" in run.stderr


@pytest.mark.backend_free
def test_a_failed_steps_line_names_a_cause_that_says_nothing_by_its_kind() -> None:
    """A read timeout has no words; its kind is the line's only clue."""
    try:
        try:
            raise httpx.ReadTimeout("")
        except httpx.ReadTimeout as timeout:
            raise RuntimeError("agent card unavailable at http://x") from timeout
    except RuntimeError as exc:
        assert _failure(exc) == "RuntimeError: agent card unavailable at http://x (ReadTimeout)"
