"""Run in the wrong folder, no command makes state it was not asked to make.

Every command of ``netagent`` is listed here: either it makes state by design (serve, seed,
demo, new-skill), or it is run in an empty folder with no NETAGENT_HOME (so the default home,
./.netagent, is the one looked in) and must leave the folder empty, exit with the code of the
CLI's table (agent/cli/exit_codes.py) and, when it needs the home, name the home it looked in. A
command added without an entry fails ``test_every_command_is_classified``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command_name

from agent.cli.exit_codes import ExitCode
from netops.cli import app

ROOT = Path(__file__).resolve().parents[2]
NETAGENT = [sys.executable, "-c", "from netops.cli import main; main()"]
NOWHERE = "http://127.0.0.1:9"
"""The discard port: nothing answers there."""

MAKES_STATE = {"serve", "seed", "demo", "new-skill"}
"""Commands whose job is to make state: the agent's home and database, a skill's files."""

NO_KEY = "no signing key in"
NO_DATABASE = "no database (netagent.db) in"
UNREACHABLE = "error: unreachable: nothing answered"
RUNS: dict[str, tuple[list[str], dict[str, str], ExitCode, str]] = {
    # command line, extra environment, exit code, what stderr must say
    "mcp": (["mcp"], {"NETAGENT_TOKEN": "x"}, ExitCode.USAGE, NO_KEY),
    "token": (["token", "--subject", "a", "--tenant", "acme"], {}, ExitCode.USAGE, NO_KEY),
    "tokens": (["tokens"], {}, ExitCode.USAGE, NO_KEY),
    "card": (["card"], {}, ExitCode.OK, ""),
    "card --extended": (["card", "--extended", "--token", "x"], {}, ExitCode.USAGE, NO_KEY),
    "card diff": (["card", "diff", "--snapshot", "missing.json"], {}, ExitCode.FAILED, ""),
    "audit": (["audit"], {}, ExitCode.USAGE, NO_DATABASE),
    "usage": (["usage"], {}, ExitCode.USAGE, NO_DATABASE),
    "chain list": (["chain", "list"], {}, ExitCode.USAGE, NO_DATABASE),
    "chain": (
        ["chain", NOWHERE, "--from", "a", "--args", "{}", "--to", "b"],
        {},
        ExitCode.UNREACHABLE,
        UNREACHABLE,
    ),
    "describe": (["describe", NOWHERE, "lookup_inventory"], {}, ExitCode.UNREACHABLE, UNREACHABLE),
    "invoke": (
        ["invoke", NOWHERE, "lookup_inventory", "--args", "{}"],
        {},
        ExitCode.UNREACHABLE,
        UNREACHABLE,
    ),
    "check": (["check", NOWHERE], {}, ExitCode.UNREACHABLE, UNREACHABLE),
    "validate": (["validate"], {}, ExitCode.OK, ""),
    "listen": (["listen", NOWHERE], {}, ExitCode.UNREACHABLE, UNREACHABLE),
}


def test_every_command_is_classified() -> None:
    commands = {
        c.name or get_command_name(c.callback.__name__)
        for c in app.registered_commands
        if c.callback
    }
    commands |= {g.name for g in app.registered_groups if g.name}
    classified = MAKES_STATE | {run.split()[0] for run in RUNS}
    assert commands == classified


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_command_in_an_empty_folder_makes_nothing(tmp_path: Path, name: str) -> None:
    args, extra, code, says = RUNS[name]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env |= {"COLUMNS": "200", "PYTHONPATH": str(ROOT), **extra}
    run = subprocess.run(
        [*NETAGENT, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == code, run.stdout + run.stderr
    assert says in run.stderr
    if code == ExitCode.USAGE:
        assert "(NETAGENT_HOME)" in run.stderr and run.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_the_exit_codes_are_documented_in_help_and_docs() -> None:
    from typer.testing import CliRunner

    from agent.cli.exit_codes import MEANINGS

    shown = " ".join(CliRunner().invoke(app, ["--help"]).output.replace("│", " ").split())
    table = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8").replace("`", "")
    for code, meaning in MEANINGS.items():
        assert f"{int(code)} {meaning}." in shown
        assert f"| {int(code)} | {code.name} | {meaning} |" in table
