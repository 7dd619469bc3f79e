"""The network agent's command line converts plain values with ours (agent/cli_coercion.py):
every plain parameter of ``netagent``'s commands gets it, the rest keep Typer's, and the point of
it, a command with plain values imports no pydantic. The conversion itself is compared with
Typer's in tests/core/test_cli_coercion.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import typer.main

from agent import cli
from agent.cli_coercion import PlainCoercionGroup, use_plain_coercion
from tests.unit.test_cli_reads import migrate

ROOT = Path(__file__).resolve().parents[2]


def command_tree() -> Any:
    import netops.cli  # noqa: F401  (adds seed, demo, new-skill)

    group = typer.main.get_command(cli.app)
    assert isinstance(group, PlainCoercionGroup)
    use_plain_coercion(group)
    return group


def every_param(command: Any) -> list[Any]:
    found = list(command.params)
    for sub in (getattr(command, "commands", None) or {}).values():
        found += every_param(sub)
    return found


def test_plain_parameters_get_ours_and_the_rest_keep_typers() -> None:
    kinds = Counter()
    for param in every_param(command_tree()):
        annotation = param.type_descriptor.annotation
        ours = type(param._runtime_param).__name__ == "_PlainRuntimeParam"
        info = param.type_descriptor.parameter_info
        plain = annotation in (str, bool, list[str], Path) or (
            annotation is int and info.min is None and info.max is None
        )
        assert ours == plain, (param.name, annotation)
        kinds[(repr(annotation), ours)] += 1
    assert kinds[("<class 'str'>", True)] >= 40  # the commands' many strings
    assert kinds[("<class 'pathlib.Path'>", True)] >= 2  # click's path checks, then ours
    assert kinds[("<class 'datetime.datetime'>", False)] >= 1


def run(args: list[str], home: Path) -> tuple[int, str, list[str]]:
    """``netagent ARGS`` in a fresh interpreter: exit code, output, the modules it imported."""
    code = (
        "import json, sys, contextlib\n"
        "from netops.cli import main\n"
        f"sys.argv = ['netagent', *{args!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "else:\n"
        "    code = 0\n"
        "print('\\n' + json.dumps([code, sorted(sys.modules)]))\n"
    )
    env = {**os.environ, "NETAGENT_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    *output, last = done.stdout.rstrip("\n").split("\n")
    exit_code, modules = json.loads(last)
    return int(exit_code or 0), "\n".join(output) + done.stderr, modules


@pytest.mark.parametrize(
    "args",
    [
        ["token", "--subject", "alice", "--tenant", "acme", "--scope", "a.b", "--ttl", "60"],
        ["token", "--help"],
        ["--help"],
        ["card", "--help"],
        ["usage"],
        ["check", "http://127.0.0.1:9", "--json", "{tmp}/report.json"],
    ],
    ids=["token", "token-help", "help", "card-help", "usage", "check-json-path"],
)
def test_a_command_with_plain_values_imports_no_pydantic(args: list[str], tmp_path: Path) -> None:
    if args[0] == "token":
        assert run([*args, "--create-key"], tmp_path)[0] == 0  # a key to sign with
    if args[0] == "usage":
        migrate(tmp_path)  # a database to read: usage makes none
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    exit_code, output, modules = run(args, tmp_path)
    assert exit_code == (4 if args[0] == "check" else 0), output  # check: nothing listens
    assert "pydantic" not in modules, output
