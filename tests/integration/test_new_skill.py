"""`netagent new-skill` end to end, in a temporary copy of the repository (never in it).

The generated handler is imported as `skills.<id>.handler`, so the new skill must live in an
importable `skills` package: every step runs in a subprocess whose working directory is the
copy and whose PYTHONPATH puts the copy first. There the command scaffolds `site_report`, the
test it generated passes against a real agent, the extended card lists the skill for an
entitled caller, `netagent validate` is clean, and refusals exit 2 without writing anything.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
COPIED = ("agent", "netops", "skills", "schemas", "db", "tests")
IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache")
SKILL = "site_report"
TEST_FILE = f"tests/test_skill_{SKILL}.py"
CHANGED = (
    f"skills/{SKILL}/handler.py",
    f"skills/{SKILL}/extract.py",
    f"skills/{SKILL}/__init__.py",
    TEST_FILE,
)
NETAGENT = ("-c", "from netops.cli import main; main()")


@dataclass
class RepoCopy:
    root: Path
    home: Path

    def python(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("NETAGENT_", "PYTEST_")) and k != "PYTHONPATH"
        }
        env.update(
            PYTHONPATH=str(self.root),
            NETAGENT_HOME=str(self.home),
            PYTHONDONTWRITEBYTECODE="1",
            COLUMNS="200",
        )
        return subprocess.run(
            [sys.executable, *args],
            cwd=self.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def netagent(self, *args: str) -> subprocess.CompletedProcess[str]:
        run = self.python(*NETAGENT, *args)
        assert "Traceback" not in run.stderr, run.stderr
        return run

    def files(self) -> dict[str, bytes]:
        """skills/ and tests/ of the copy, without bytecode."""
        found: dict[str, bytes] = {}
        for top in ("skills", "tests"):
            for path in sorted((self.root / top).rglob("*")):
                if "__pycache__" not in path.parts:
                    key = str(path.relative_to(self.root))
                    found[key] = path.read_bytes() if path.is_file() else b"<dir>"
        return found


@dataclass
class Scaffold:
    copy: RepoCopy
    run: subprocess.CompletedProcess[str]
    lock_before: str


def _real_files() -> dict[str, bytes]:
    paths = [
        ROOT / "skills" / "interfaces.lock.json",
        ROOT / "agent/builtin/describe_skill/extract.py",
    ]
    return {str(p): p.read_bytes() for p in paths}


@pytest.fixture(scope="module")
def scaffold(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scaffold]:
    real_before = _real_files()
    root = tmp_path_factory.mktemp("repo-copy")
    for name in COPIED:
        shutil.copytree(ROOT / name, root / name, ignore=IGNORE)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    copy = RepoCopy(root, tmp_path_factory.mktemp("new-skill-home"))
    lock_before = (root / "skills" / "interfaces.lock.json").read_text()
    run = copy.netagent("new-skill", SKILL)
    yield Scaffold(copy, run, lock_before)
    assert not (ROOT / "skills" / SKILL).exists()
    assert not (ROOT / TEST_FILE).exists()
    assert _real_files() == real_before


def _ok(run: subprocess.CompletedProcess[str]) -> str:
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def _token(copy: RepoCopy, subject: str, *scopes: str) -> str:
    args = ["token", "--subject", subject, "--tenant", "acme", "--create-key"]
    for scope in scopes:
        args += ["--scope", scope]
    return _ok(copy.netagent(*args)).strip()


def _listed(card: dict[str, Any]) -> set[str]:
    return {skill["id"] for skill in card["skills"]}


def test_new_skill_prints_what_it_wrote_and_what_comes_next(scaffold: Scaffold) -> None:
    out = _ok(scaffold.run)
    for path in (
        f"skills/{SKILL}/manifest.json",
        f"skills/{SKILL}/input.schema.json",
        f"skills/{SKILL}/output.schema.json",
        f"skills/{SKILL}/site-summary.schema.json",
        f"skills/{SKILL}/handler.py",
        f"skills/{SKILL}/extract.py",
        f"skills/{SKILL}/__init__.py",
        TEST_FILE,
    ):
        assert f"created {path}\n" in out
        assert (scaffold.copy.root / path).is_file()
    assert "updated skills/interfaces.lock.json\n" in out
    assert "describe_skill" not in out  # its extractor knows the new id from the registry
    assert "next steps:" in out and f"pytest -q {TEST_FILE}" in out


def test_the_generated_test_passes_in_the_copy(scaffold: Scaffold) -> None:
    run = scaffold.copy.python(
        "-m", "pytest", "-q", "-p", "no:cacheprovider", TEST_FILE, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "5 passed" in run.stdout


def test_the_extended_card_lists_it_for_an_entitled_caller_only(scaffold: Scaffold) -> None:
    copy = scaffold.copy
    entitled = json.loads(
        _ok(copy.netagent("card", "--extended", "--token", _token(copy, "alice", "inventory.read")))
    )
    assert SKILL in _listed(entitled)
    [binding] = [
        s
        for s in entitled["capabilities"]["extensions"][0]["params"]["skills"]
        if s["skill_id"] == SKILL
    ]
    locked = json.loads((copy.root / "skills" / "interfaces.lock.json").read_text())[SKILL]
    assert binding["interface_digest"] == locked["interface_digest"]
    assert binding["skill_version"] == "1.0"

    unentitled = json.loads(
        _ok(copy.netagent("card", "--extended", "--token", _token(copy, "nobody")))
    )
    assert SKILL not in _listed(unentitled)
    assert SKILL not in _listed(json.loads(_ok(copy.netagent("card"))))


def test_validate_passes_in_the_copy(scaffold: Scaffold) -> None:
    out = _ok(scaffold.copy.netagent("validate"))
    builtin = len(list((ROOT / "agent" / "builtin").glob("*/manifest.json")))  # describe_skill
    skills = len(list((ROOT / "skills").glob("*/manifest.json"))) + builtin + 1  # and the new one
    assert f"registry valid: {skills} skills" in out


def test_the_lock_only_gained_the_new_entry(scaffold: Scaffold) -> None:
    before = json.loads(scaffold.lock_before)
    after = json.loads((scaffold.copy.root / "skills" / "interfaces.lock.json").read_text())
    assert set(after) == {*before, SKILL}
    assert {k: v for k, v in after.items() if k != SKILL} == before
    assert after[SKILL]["record_kinds"] == ["site-summary"]


def test_generated_and_edited_code_is_lint_clean(scaffold: Scaffold) -> None:
    for command in (("check",), ("format", "--check")):
        run = scaffold.copy.python("-m", "ruff", *command, *CHANGED)
        assert run.returncode == 0, run.stdout + run.stderr


def test_describe_from_text_knows_the_new_id(scaffold: Scaffold) -> None:
    run = scaffold.copy.python(
        "-c",
        "import json; from agent.registry.loader import load_registry; "
        "extract = load_registry(__import__('pathlib').Path('skills')).get('describe_skill')"
        ".handler.extract; "
        f"print(json.dumps([extract('describe {SKILL}'), extract('schema of site-report')]))",
    )
    assert json.loads(_ok(run)) == [{"skill_id": SKILL}, {"skill_id": SKILL}]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((SKILL,), "exists already"),
        (("describe_skill",), "reserved"),
        (("Site-Report",), "is not valid"),
        (("weekly_report", "--visibility", "internal"), "visibility"),
    ],
)
def test_refusals_exit_2_and_write_nothing(
    scaffold: Scaffold, args: tuple[str, ...], message: str
) -> None:
    copy = scaffold.copy
    before = copy.files()
    run = copy.netagent("new-skill", *args)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.startswith("error: ") and message in run.stderr
    assert run.stdout == ""
    assert copy.files() == before
