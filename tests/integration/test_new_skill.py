"""`new-skill` end to end in both deployments, in a temporary copy of the repository (never in it).

The generated handler is imported by module name (`skills.<id>.handler`,
`examples.invoices.skills.<id>.handler`), so the new skill must live in an importable package:
every step runs in a subprocess whose working directory is the copy and whose PYTHONPATH puts
the copy first. There `netagent new-skill` scaffolds `site_report` from the network's own
template and `python -m examples.invoices new-skill` scaffolds `text_stats` from the core's
domain-free one; in each deployment the architecture test holds the generated handler to
`agent.sdk` and the generated test passes against a real agent of that deployment. The
extended card lists the network skill for an entitled caller, `validate` is clean, and
refusals exit 2 without writing anything.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.backend_free  # every step is a subprocess without NETAGENT_* settings

ROOT = Path(__file__).resolve().parents[2]
COPIED = ("agent", "netops", "skills", "schemas", "db", "tests", "examples")
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
INVOICES = ("-m", "examples.invoices")
TEXT_SKILL = "text_stats"
INVOICE_SKILLS = "examples/invoices/skills"
TEXT_TEST_FILE = f"examples/invoices/tests/test_skill_{TEXT_SKILL}.py"
ARCHITECTURE = "tests/test_architecture.py"
IMPORT_RULE = "test_the_core_imports_no_domain_and_the_domain_only_the_public_surface"


@dataclass(frozen=True)
class Generated:
    """A skill scaffolded in one deployment of the copy: its folder, test and handler module."""

    folder: str
    test: str
    module: str

    @property
    def handler(self) -> str:
        return f"{self.folder}/handler.py"


GENERATED = {
    "network": Generated(f"skills/{SKILL}", TEST_FILE, f"skills.{SKILL}.handler"),
    "invoices": Generated(
        f"{INVOICE_SKILLS}/{TEXT_SKILL}",
        TEXT_TEST_FILE,
        f"examples.invoices.skills.{TEXT_SKILL}.handler",
    ),
}


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

    def invoices(self, *args: str) -> subprocess.CompletedProcess[str]:
        run = self.python(*INVOICES, *args)
        assert "Traceback" not in run.stderr, run.stderr
        return run

    def files(self) -> dict[str, bytes]:
        """skills/ and tests/ of the copy, without bytecode."""
        found: dict[str, bytes] = {}
        for top in ("skills", "tests", "examples"):
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
    invoices: subprocess.CompletedProcess[str]


def _real_files() -> dict[str, bytes]:
    paths = [
        ROOT / "skills" / "interfaces.lock.json",
        ROOT / INVOICE_SKILLS / "interfaces.lock.json",
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
    yield Scaffold(copy, run, lock_before, copy.invoices("new-skill", TEXT_SKILL))
    for generated in GENERATED.values():
        assert not (ROOT / generated.folder).exists()
        assert not (ROOT / generated.test).exists()
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


def test_the_invoice_agent_scaffolds_from_the_core_template(scaffold: Scaffold) -> None:
    out = _ok(scaffold.invoices)
    generated = GENERATED["invoices"]
    for name in ("manifest.json", "text-count.schema.json", "handler.py", "extract.py"):
        assert f"created {generated.folder}/{name}\n" in out
    assert f"created {TEXT_TEST_FILE}\n" in out
    assert f"updated {INVOICE_SKILLS}/interfaces.lock.json\n" in out
    assert "python -m examples.invoices validate --update-lock" in out
    manifest = json.loads((scaffold.copy.root / generated.folder / "manifest.json").read_text())
    assert manifest["handler"] == generated.module
    assert manifest["requires_scopes"] == [f"{TEXT_SKILL}.run"]
    assert manifest["interface"]["input"]["schema_uri"].startswith("urn:invoice-agent:schema:")


@pytest.mark.parametrize("deployment", GENERATED)
def test_the_architecture_test_and_the_generated_test_pass(
    scaffold: Scaffold, deployment: str
) -> None:
    generated = GENERATED[deployment]
    run = scaffold.copy.python(
        "-m", "pytest", "-v", "-p", "no:cacheprovider", ARCHITECTURE, generated.test, timeout=300
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"{ARCHITECTURE}::{IMPORT_RULE} PASSED" in run.stdout
    ran = re.findall(rf"^{re.escape(generated.test)}::\S+ (\w+)", run.stdout, re.MULTILINE)
    assert len(ran) >= 5 and set(ran) == {"PASSED"}, run.stdout


@pytest.mark.parametrize("deployment", GENERATED)
def test_the_architecture_test_refuses_the_generated_handler_importing_the_core(
    scaffold: Scaffold, deployment: str
) -> None:
    generated = GENERATED[deployment]
    handler = scaffold.copy.root / generated.handler
    original = handler.read_text()
    inner = "from agent.interfaces import SkillError as SkillError\nfrom agent.sdk import "
    handler.write_text(original.replace("from agent.sdk import ", inner, 1))
    try:
        run = scaffold.copy.python(
            "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{ARCHITECTURE}::{IMPORT_RULE}"
        )
    finally:
        handler.write_text(original)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{generated.module}:" in run.stdout and "imports agent.interfaces" in run.stdout


def test_the_core_template_imports_nothing_of_the_network(scaffold: Scaffold) -> None:
    generated = GENERATED["invoices"]
    paths = [
        *(scaffold.copy.root / generated.folder).glob("*.py"),
        scaffold.copy.root / generated.test,
    ]
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not {n.split(".")[0] for n in names} & {"db", "netops", "skills", "tests"}, (
                path.name,
                names,
            )
        assert re.search(r"\b(inventory|network|netops|device|site)\b", path.read_text()) is None


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
    builtin = len(list((ROOT / "agent" / "builtin").glob("*/manifest.json")))  # describe_skill
    for validate, folder in (
        (scaffold.copy.netagent, "skills"),
        (scaffold.copy.invoices, INVOICE_SKILLS),
    ):
        out = _ok(validate("validate"))
        skills = len(list((ROOT / folder).glob("*/manifest.json"))) + builtin + 1  # and the new one
        assert f"registry valid: {skills} skills" in out


def test_the_lock_only_gained_the_new_entry(scaffold: Scaffold) -> None:
    before = json.loads(scaffold.lock_before)
    after = json.loads((scaffold.copy.root / "skills" / "interfaces.lock.json").read_text())
    assert set(after) == {*before, SKILL}
    assert {k: v for k, v in after.items() if k != SKILL} == before
    assert after[SKILL]["record_kinds"] == ["site-summary"]


def test_generated_and_edited_code_is_lint_clean(scaffold: Scaffold) -> None:
    generated = GENERATED["invoices"]
    python = [
        *CHANGED,
        generated.test,
        *(f"{generated.folder}/{n}" for n in ("handler.py", "extract.py")),
    ]
    for command in (("check",), ("format", "--check")):
        run = scaffold.copy.python("-m", "ruff", *command, *python)
        assert run.returncode == 0, run.stdout + run.stderr
    run = scaffold.copy.python("-m", "mypy", generated.folder, CHANGED[0], CHANGED[1])
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
    ("deployment", "args", "message"),
    [
        ("network", (SKILL,), "exists already"),
        ("network", ("describe_skill",), "reserved"),
        ("network", ("Site-Report",), "is not valid"),
        ("network", ("weekly_report", "--visibility", "internal"), "visibility"),
        ("invoices", (TEXT_SKILL,), "exists already"),
        ("invoices", ("invoice_status",), "exists already"),
        ("invoices", ("weekly_report", "--scope", "a b"), "scope 'a b' is not valid"),
    ],
)
def test_refusals_exit_2_and_write_nothing(
    scaffold: Scaffold, deployment: str, args: tuple[str, ...], message: str
) -> None:
    copy = scaffold.copy
    before = copy.files()
    command = copy.netagent if deployment == "network" else copy.invoices
    run = command("new-skill", *args)
    assert run.returncode == 2, run.stdout + run.stderr
    assert run.stderr.startswith("error: ") and message in run.stderr
    assert run.stdout == ""
    assert copy.files() == before
