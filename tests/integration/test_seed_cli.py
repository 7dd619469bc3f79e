"""`netagent seed` in the command's own words: a refusal that names --reset, a report a person
reads, and a reset that gives the deleted rows' space back (SQLite: VACUUM)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.conftest import _database_for

ROOT = Path(__file__).resolve().parents[2]
NETAGENT = ROOT / ".venv" / "bin" / "netagent"
UNTIL = "2026-11-29T12:00:00"


def netagent(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETAGENT_")}
    env |= {"NETAGENT_HOME": str(home), "COLUMNS": "200"}
    run = subprocess.run(
        [str(NETAGENT), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert "Traceback" not in run.stderr, run.stderr
    return run


def test_seed_refuses_in_cli_words_then_resets_and_reclaims_the_file(
    tmp_path: Path, backend: str
) -> None:
    if backend != "sqlite":
        pytest.skip("VACUUM and the file's size are SQLite's")
    home = tmp_path / "home"
    home.mkdir()
    _database_for(home, True, "sqlite")  # the demo network, seeded: a copy of the template
    database = home / "netagent.db"
    seeded_size = database.stat().st_size

    refused = netagent(home, "seed")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "run `netagent seed --reset` to replace it" in refused.stderr
    assert "reset=True" not in refused.stderr

    reset = netagent(home, "seed", "--reset", "--links", "40", "--until", UNTIL)
    assert reset.returncode == 0, reset.stdout + reset.stderr
    out = " ".join(reset.stdout.split())
    assert "SeedReport(" not in out
    assert "seeded the small simulated network" in out
    assert "telemetry up to 2026-11-29 12:00 UTC" in out
    assert ", 40 links" in out and "link utilization samples" in out
    assert f"database: {database}" in out and "MB (was " in out
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA freelist_count").fetchone() == (0,)
    assert database.stat().st_size < seeded_size / 2  # the file shrank with the data


def test_seed_refuses_bad_arguments_in_one_line(tmp_path: Path, backend: str) -> None:
    if backend != "sqlite":
        pytest.skip("one backend is enough for an argument check")
    run = netagent(tmp_path / "home", "seed", "--links", "3")
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.startswith("error: links=3 is too few")
