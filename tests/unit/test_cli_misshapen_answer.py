"""The network agent's command line (``netagent describe``) prints an agent's misshapen answer
in one line, never a traceback (the governed client's side: tests/core/client/test_calls.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.client.scripted import Scripted, governed_card, scripted_agent

ROOT = Path(__file__).resolve().parents[2]
NULL_RESULT = {"jsonrpc": "2.0", "id": "x", "result": None}


@pytest.fixture
def scripted() -> Iterator[tuple[Scripted, str]]:
    with scripted_agent() as served:
        yield served


def test_the_command_line_prints_a_misshapen_answer_in_a_line(
    scripted: tuple[Scripted, str], tmp_path: Path
) -> None:
    script, url = scripted
    script.card = governed_card(url)
    script.answer(NULL_RESULT)
    code = "import sys\nfrom netops.cli import main\nsys.argv = ['netagent', *sys.argv[1:]]\nmain()"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env["NETAGENT_HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", code, "describe", url.removesuffix("/rpc"), "x"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "no A2A response" in done.stderr
