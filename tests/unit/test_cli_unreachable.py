"""The client commands when nothing answers: exit 4 (unreachable, not a usage error) on every
binding, and ``chain`` makes no database for a link it never got. ``usage`` labels each skill
with the state its manifest gives it. Each command runs in a fresh interpreter."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.cli_process import run_netagent
from tests.unit.test_cli_reads import migrate

CLIENT_COMMANDS = {
    "describe": ["describe", "{url}", "lookup_inventory"],
    "invoke": ["invoke", "{url}", "lookup_inventory", "--args", "{{}}"],
    "check": ["check", "{url}"],
}


@pytest.fixture(scope="module")
def url() -> str:
    """A local address nothing listens on (its port bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize("command", sorted(CLIENT_COMMANDS))
@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
def test_a_client_command_on_nothing_listening_exits_4(
    tmp_path: Path, url: str, command: str, binding: str
) -> None:
    args = [a.format(url=url) for a in CLIENT_COMMANDS[command]]
    ran = run_netagent(tmp_path, *args, "--binding", binding)
    assert ran.code == 4, ran.stdout


def test_chain_on_nothing_listening_exits_4_and_makes_no_database(tmp_path: Path, url: str) -> None:
    ran = run_netagent(tmp_path, "chain", url, "--from", "a", "--args", "{}", "--to", "b")
    assert ran.code == 4, ran.stdout
    assert not (tmp_path / "netagent.db").exists()


def test_usage_labels_a_skill_with_its_manifest_s_state(tmp_path: Path) -> None:
    migrate(tmp_path)
    ran = run_netagent(tmp_path, "usage")
    assert ran.code == 0, ran.stdout
    assert "deprecated" in ran.stdout  # link_headroom's state
