"""The core's `new-skill` (agent/devtools/scaffold.py) and its domain-free template, in a
temporary copy of the invoice deployment's skills folder.

The copy is appended to the `examples.invoices.skills` package path for the duration of a test,
so a generated `examples.invoices.skills.<id>.handler` imports as it would in the repository.
Nothing is written to the repository itself. The generated test running against a real agent
is in tests/integration/test_new_skill.py.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import examples.invoices.skills as invoice_skills
from agent.devtools.scaffold import (
    ScaffoldError,
    new_skill,
    schema_prefix,
    skills_package,
)
from agent.devtools.text_skill import TextSkillTemplate
from agent.registry.loader import load_registry

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "examples.invoices.skills"
FACTORY = "examples.invoices.deployment:invoice_deployment"
LONGEST = "s" + "x" * 62  # the longest id the manifest schema allows


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """A copy of the invoice skills and an empty tests folder, the copy importable as PACKAGE."""
    skills = tmp_path / "repo" / "examples" / "invoices" / "skills"
    shutil.copytree(
        ROOT / "examples/invoices/skills", skills, ignore=shutil.ignore_patterns("__pycache__")
    )
    (skills.parent / "tests").mkdir()
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "repo" / "pyproject.toml")
    # so that ruff sorts imports here as it does in the repository
    (tmp_path / "repo" / "agent").symlink_to(ROOT / "agent", target_is_directory=True)
    (tmp_path / "repo" / "examples" / "__init__.py").touch()
    monkeypatch.setattr(invoice_skills, "__path__", [*invoice_skills.__path__, str(skills)])
    before = set(sys.modules)
    yield skills, skills.parent / "tests"
    for name in set(sys.modules) - before:
        if name.startswith(PACKAGE + "."):
            del sys.modules[name]
    importlib.invalidate_caches()


def _scaffold(folders: tuple[Path, Path], skill_id: str, **options: object) -> None:
    skills, tests = folders
    new_skill(
        skill_id,
        skills,
        tests,
        TextSkillTemplate(),
        package=PACKAGE,
        agent_name="Invoice Agent",
        factory=FACTORY,
        **options,  # type: ignore[arg-type]
    )


def test_the_skills_package_is_found_by_what_python_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert skills_package(ROOT / "examples" / "invoices" / "skills") == PACKAGE
    top = tmp_path / "my_skills"
    top.mkdir()
    (top / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert skills_package(top) == "my_skills"


def test_a_folder_python_cannot_import_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match="not an importable package"):
        skills_package(tmp_path)


def test_the_schema_prefix_comes_from_the_agents_name() -> None:
    assert schema_prefix("Invoice Agent") == "urn:invoice-agent"
    assert schema_prefix("  ") == "urn:agent"


def test_the_generated_skill_loads_with_only_the_public_surface(
    folders: tuple[Path, Path],
) -> None:
    _scaffold(folders, "text_stats")
    skills, _ = folders
    capability = load_registry(skills).get("text_stats")
    assert capability is not None and capability.handler is not None
    assert capability.handler.extract is not None
    assert capability.handler.extract('count "one two"') == {"text": "one two"}
    assert capability.handler.extract(None) == {}  # type: ignore[arg-type]
    assert capability.handler.check_constraints is not None
    with pytest.raises(Exception, match="more than 2 words"):
        capability.handler.check_constraints({"text": "a b c"}, {"max_words": 2})
    handler = (skills / "text_stats" / "handler.py").read_text()
    core = [line for line in handler.splitlines() if line.startswith("from agent")]
    assert core == ["from agent.sdk import ErrorCode, SkillContext, SkillError, rfc3339"]


@pytest.mark.parametrize("visibility", ["public", "extended"])
def test_generated_code_is_lint_clean_for_the_longest_id_and_scopes(
    folders: tuple[Path, Path], visibility: str
) -> None:
    scopes = [f"scope{i}.{'r' * 50}" for i in range(3)]
    _scaffold(folders, LONGEST, visibility=visibility, scopes=scopes)
    skills, tests = folders
    python = [str(p) for p in (skills / LONGEST).glob("*.py")] + [
        str(tests / f"test_skill_{LONGEST}.py")
    ]
    for command in (["check"], ["format", "--check"]):
        run = subprocess.run(
            [sys.executable, "-m", "ruff", *command, *python],
            cwd=skills.parents[2],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, run.stdout + run.stderr


def test_an_id_that_reads_as_the_record_kind_gets_another_kind(
    folders: tuple[Path, Path],
) -> None:
    _scaffold(folders, "text_count")
    capability = load_registry(folders[0]).get("text_count")
    assert capability is not None and capability.interface is not None
    assert capability.interface.record_kinds == ("text-tally",)


def test_without_the_deployments_factory_nothing_is_written(folders: tuple[Path, Path]) -> None:
    skills, tests = folders
    with pytest.raises(ScaffoldError, match="module:function"):
        new_skill("text_stats", skills, tests, TextSkillTemplate(), package=PACKAGE)
    assert not (skills / "text_stats").exists()
    assert list(tests.iterdir()) == []


def test_a_missing_folder_is_named_before_anything_else(folders: tuple[Path, Path]) -> None:
    skills, tests = folders
    template = TextSkillTemplate()
    with pytest.raises(ScaffoldError, match="nowhere: skills directory not found"):
        new_skill("text_stats", skills.parent / "nowhere", tests, template, factory=FACTORY)
    with pytest.raises(ScaffoldError, match="nowhere: tests directory not found"):
        new_skill("text_stats", skills, tests.parent / "nowhere", template, factory=FACTORY)
