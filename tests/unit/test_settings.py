"""Settings a deployment gets wrong: one line naming the variable, exit 2, never a traceback
(``netagent``, the network agent's command line; reading the variables is tested in
tests/core/test_settings.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NETAGENT = str(Path(sys.executable).with_name("netagent"))
WORDS = "1, 0, true, false, yes, no, on or off"


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("NETAGENT_PORT", "eighty", "NETAGENT_PORT must be an integer"),
        ("NETAGENT_ROUTE_THRESHOLD", "high", "NETAGENT_ROUTE_THRESHOLD must be a number"),
        ("NETAGENT_MAX_PARTS", "many", "NETAGENT_MAX_PARTS must be a positive integer"),
        ("NETAGENT_MAX_BODY_BYTES", "1e6", "NETAGENT_MAX_BODY_BYTES must be a positive integer"),
    ],
)
def test_serve_refuses_a_malformed_number_in_one_line(
    tmp_path: Path, variable: str, value: str, message: str
) -> None:
    assert netagent(tmp_path, ["serve"], {variable: value}) == (2, f"error: settings: {message}")


def test_every_command_reads_settings_the_same_way(tmp_path: Path) -> None:
    bad = {"NETAGENT_PORT": "eighty"}
    expected = (2, "error: settings: NETAGENT_PORT must be an integer")
    assert netagent(tmp_path, ["card"], bad) == expected


def netagent(home: Path, command: list[str], variables: dict[str, str]) -> tuple[int, str]:
    env = {**os.environ, "NETAGENT_HOME": str(home), **variables}
    run = subprocess.run(
        [NETAGENT, *command], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    return run.returncode, run.stderr.strip()


def test_a_flag_that_is_no_word_stops_the_command_in_one_line(tmp_path: Path) -> None:
    command = ["token", "--subject", "alice", "--tenant", "acme", "--create-key"]
    expected = f"error: settings: NETAGENT_SEED must be one of {WORDS}"
    assert netagent(tmp_path, command, {"NETAGENT_SEED": "maybe"}) == (2, expected)
    assert netagent(tmp_path, command, {"NETAGENT_SEED": "Off"})[0] == 0
