"""What ``netagent serve`` prints, read from a real process: the tokens and addresses once it
listens, no start-up plumbing, a short line per request on a terminal (``--log-format text``,
what ``auto`` picks on a TTY), JSON lines anywhere else; ``netagent tokens`` prints them again."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"
START_TIMEOUT_S = 180
JSONRPC = "/a2a/jsonrpc"

pytestmark = pytest.mark.backend_free


@dataclass(frozen=True)
class Run:
    """One ``netagent serve`` run, stopped: its stdout and stderr, and its home."""

    stdout: str
    stderr: str
    home: Path
    listening_when_announced: bool


def environment(home: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    return env | {
        "NETAGENT_HOME": str(home),
        "NETAGENT_PORT": str(port),
        "NETAGENT_GRPC_PORT": "off",
        "NETAGENT_LIVE_TELEMETRY": "0",
    }


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def serve(home: Path, *args: str) -> Run:
    """Start serve, wait for its console line, check it listens then, make a few requests
    (one skill run with alice's printed token), stop it."""
    port = free_port()
    out, err = home.parent / f"{home.name}-{port}.out", home.parent / f"{home.name}-{port}.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        process = subprocess.Popen(
            [str(BIN / "netagent"), "serve", *args],
            env=environment(home, port),
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while "Console:" not in out.read_text():
                assert process.poll() is None, out.read_text() + err.read_text()
                assert time.monotonic() < deadline, out.read_text() + err.read_text()
                time.sleep(0.05)
            announced_listening = listening(port)
            requests(f"http://127.0.0.1:{port}", out.read_text())
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
    return Run(out.read_text(), err.read_text(), home, announced_listening)


def alice_token(stdout: str) -> str:
    (line,) = [s for s in stdout.splitlines() if s.startswith("export ALICE_TOKEN=")]
    return line.split("=", 1)[1]


def requests(url: str, stdout: str) -> None:
    assert httpx.get(f"{url}/.well-known/agent-card.json", timeout=10).status_code == 200
    message = {
        "messageId": "m-1",
        "role": "ROLE_USER",
        "parts": [
            {
                "mediaType": "application/json",
                "data": {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}},
            }
        ],
    }
    answer = httpx.post(
        f"{url}{JSONRPC}",
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {alice_token(stdout)}"},
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
        timeout=30,
    )
    assert answer.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Run, Run]]:
    """A first start as on a terminal (migrations, seeding), then a restart into a file."""
    home = tmp_path_factory.mktemp("serve-terminal") / "home"
    yield serve(home, "--log-format", "text"), serve(home)


def test_the_tokens_and_addresses_come_once_it_listens(runs: tuple[Run, Run]) -> None:
    for run in runs:
        assert run.listening_when_announced, run.stdout + run.stderr
        lines = run.stdout.splitlines()
        exports = [i for i, line in enumerate(lines) if line.startswith("export ")]
        assert len(exports) == 5, run.stdout  # alice, paula, gary, vic, nora
        console = next(i for i, line in enumerate(lines) if line.startswith("Console:"))
        assert exports[-1] < console
        assert lines[console + 1] == "Again later: netagent tokens"


def test_a_terminal_hears_one_short_line_per_request_and_no_plumbing(
    runs: tuple[Run, Run],
) -> None:
    first = runs[0]
    logged = first.stderr.splitlines()
    for plumbing in ("alembic", "setup plugin", "Running upgrade", "netagent.audit", "mcp."):
        assert plumbing not in first.stderr, first.stderr
    assert "SeedReport(" not in first.stderr  # no Python repr: a sentence
    assert any("seeded the demo inventory (small scale): 2 tenants" in s for s in logged)
    assert any(s.endswith(" GET /.well-known/agent-card.json 200") for s in logged), logged
    assert any(s.endswith(" POST /a2a/jsonrpc 200") for s in logged), logged
    (run,) = [s for s in logged if "describe_skill completed in" in s]
    assert " alice@acme describe_skill completed in " in run
    assert all(len(line) <= 120 for line in logged), logged
    assert not any(line.lstrip().startswith("{") for line in logged)


def test_json_lines_when_not_a_terminal(runs: tuple[Run, Run]) -> None:
    restart = runs[1]
    entries = [json.loads(line) for line in restart.stderr.splitlines()]
    assert {"ts", "level", "logger", "message"} <= set(entries[0])
    audited = [e for e in entries if e["logger"] == "netagent.audit"]
    assert audited, "the audit rows are in the JSON log"
    assert not [e for e in entries if e["logger"].startswith("alembic")]


def test_netagent_tokens_prints_them_again_valid_for_this_agent(runs: tuple[Run, Run]) -> None:
    home = runs[0].home
    env = environment(home, free_port())
    again = subprocess.run(
        [str(BIN / "netagent"), "tokens"], env=env, capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0, again.stderr
    assert [s.split("=")[0] for s in again.stdout.splitlines() if s.startswith("export ")] == [
        "export ALICE_TOKEN",
        "export PAULA_TOKEN",
        "export GARY_TOKEN",
        "export VIC_TOKEN",
        "export NORA_TOKEN",
    ]
    assert "Console:" in again.stdout and "Again later" not in again.stdout
    nowhere = subprocess.run(
        [str(BIN / "netagent"), "tokens"],
        env=environment(home.parent / "elsewhere", free_port()),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert nowhere.returncode == 2
    assert "no signing key in" in nowhere.stderr and "export" not in nowhere.stdout
    assert not (home.parent / "elsewhere").exists()  # nothing made where it looked
