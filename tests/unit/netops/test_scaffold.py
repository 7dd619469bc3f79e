"""`netagent new-skill` with the network's template (netops/scaffold.py), in a temporary copy
of skills/ and tests/.

The copy's skills/ is appended to the `skills` package path for the duration of a test, so the
generated `skills.<id>.handler` imports the way it would in the repository. Nothing is ever
written to the repository itself.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import skills
from agent.devtools.scaffold import ScaffoldError, next_steps
from agent.interfaces import ErrorCode, SkillError
from agent.interfaces.validation import error_details
from agent.registry.loader import load_registry, validate_registry
from agent.registry.versioning import LOCK_FILE, lock_problems
from agent.security.principal import Principal
from agent.server.skill_context import SkillContext
from netops.scaffold import OTHER_RECORD_KIND, RECORD_KIND, new_skill

ROOT = Path(__file__).resolve().parents[3]
IGNORE = shutil.ignore_patterns("__pycache__", ".pytest_cache")
SKILL = "site_report"
LONGEST = "s" + "x" * 62  # the longest id the manifest schema allows


@dataclass
class Workspace:
    root: Path
    skills: Path
    tests: Path

    @property
    def lock(self) -> Path:
        return self.skills / LOCK_FILE

    def files(self) -> dict[str, bytes]:
        """Every file of the copy's skills/ and tests/ (no bytecode), with its content."""
        found: dict[str, bytes] = {}
        for top in (self.skills, self.tests):
            for path in sorted(top.rglob("*")):
                if "__pycache__" in path.parts:
                    continue
                key = str(path.relative_to(self.root))
                found[key] = path.read_bytes() if path.is_file() else b"<dir>"
        return found


def _forget_modules(before: set[str]) -> None:
    for name in sorted(set(sys.modules) - before, reverse=True):
        if name.startswith("skills."):
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            if parent in sys.modules and hasattr(sys.modules[parent], child):
                delattr(sys.modules[parent], child)
    importlib.invalidate_caches()


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "skills", root / "skills", ignore=IGNORE)
    shutil.copytree(ROOT / "tests", root / "tests", ignore=IGNORE)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    for package in ("agent", "db"):  # so ruff sorts imports here as it does in the repository
        (root / package).symlink_to(ROOT / package, target_is_directory=True)
    monkeypatch.setattr(skills, "__path__", [*skills.__path__, str(root / "skills")])
    before = set(sys.modules)
    yield Workspace(root, root / "skills", root / "tests")
    _forget_modules(before)


def _load_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- what a scaffolded skill is -------------------------------------------------------------------


def test_the_generated_skill_loads_validates_and_is_locked(workspace: Workspace) -> None:
    result = new_skill(SKILL, workspace.skills, workspace.tests)

    folder = workspace.skills / SKILL
    assert set(result.created) == {
        folder / "__init__.py",
        folder / "manifest.json",
        folder / "input.schema.json",
        folder / "output.schema.json",
        folder / f"{RECORD_KIND}.schema.json",
        folder / "handler.py",
        folder / "extract.py",
        workspace.tests / f"test_skill_{SKILL}.py",
    }
    assert all(path.is_file() for path in result.created)
    assert set(result.updated) == {workspace.lock}  # no other skill's file is edited
    assert result.notes == ()

    registry = load_registry(workspace.skills)
    capability = registry.get(SKILL)
    assert capability is not None and capability.interface is not None
    assert capability.handler is not None
    assert capability.handler.authorize is not None
    assert capability.handler.extract is not None
    assert capability.handler.extract("site report for nyc1") == {"site": "nyc1"}
    assert capability.interface.record_kinds == (RECORD_KIND,)
    assert capability.interface.skill_version == "1.0"
    assert validate_registry(workspace.skills)[1] == []
    assert lock_problems(registry, workspace.lock) == []


def test_the_manifest_says_what_the_brief_says(workspace: Workspace) -> None:
    new_skill(SKILL, workspace.skills, workspace.tests)
    manifest = json.loads((workspace.skills / SKILL / "manifest.json").read_text())

    assert manifest["state"] == "ga"
    assert manifest["visibility"] == "extended"
    assert manifest["requires_scopes"] == ["inventory.read"]
    assert manifest["tools"] == {"inventory": {"scopes": ["inventory.read"]}}
    assert manifest["tenants"] == "*"
    assert manifest["handler"] == f"skills.{SKILL}.handler"
    assert set(manifest["limits"]) == {"max_concurrent", "timeout_seconds"}
    assert manifest["skill"]["name"] == "Site report"
    utterances = manifest["routing"]["utterances"]
    assert len(set(utterances)) == 8
    assert all("site report" in u and not set("<>{}[]") & set(u) for u in utterances)
    interface = manifest["interface"]
    assert interface["skill_version"] == "1.0"
    assert interface["input"]["schema_uri"] == "urn:netops-agent:schema:site-report:input"
    assert interface["output"]["schema_uri"] == "urn:netops-agent:schema:site-report:output"
    assert interface["records"][RECORD_KIND]["schema_uri"] == (
        f"urn:netops-agent:schema:site-report:{RECORD_KIND}"
    )
    assert interface["interaction"] == {
        "response_modes": ["sync", "stream", "poll"],
        "cancelable": False,
    }
    assert interface["authority"]["default_mode"] == "observe_only"

    schema = json.loads((workspace.skills / SKILL / "input.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["site"]
    assert list(schema["properties"]) == ["site"]
    output = json.loads((workspace.skills / SKILL / "output.schema.json").read_text())
    assert output["properties"]["supporting_record_refs"]["minItems"] == 1
    record = json.loads((workspace.skills / SKILL / f"{RECORD_KIND}.schema.json").read_text())
    assert record["required"] == ["record_id", "site", "device_count", "observed_at"]
    assert record["properties"]["observed_at"]["format"] == "date-time"


def test_the_lock_gains_one_entry_and_keeps_every_other_byte(workspace: Workspace) -> None:
    before = workspace.lock.read_text()
    new_skill(SKILL, workspace.skills, workspace.tests)
    after = workspace.lock.read_text()

    old, new = json.loads(before), json.loads(after)
    assert set(new) == {*old, SKILL}
    assert {k: v for k, v in new.items() if k != SKILL} == old
    changed = [
        line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "-?"
    ]
    assert changed == []  # only added lines
    assert list(new) == sorted(new)


def test_describe_from_text_knows_the_new_id(workspace: Workspace) -> None:
    """describe_skill's extractor takes its ids and names from the registry, not from a list."""
    new_skill(SKILL, workspace.skills, workspace.tests)
    describe = load_registry(workspace.skills).get("describe_skill")
    assert describe is not None and describe.handler is not None
    extract = describe.handler.extract
    assert extract is not None
    assert extract(f"describe {SKILL}") == {"skill_id": SKILL}
    assert extract("describe site-report") == {"skill_id": SKILL}  # its name, dashed
    assert extract("describe the site report skill") == {"skill_id": SKILL}


class FakeInventory:
    """The two reads the example handler makes, for tenant acme."""

    async def sites(self) -> list[dict[str, Any]]:
        return [{"slug": "lon1"}, {"slug": "nyc1"}]

    async def devices(self, site: str | None = None) -> list[dict[str, Any]]:
        return [{"name": f"{site}-core-01"}, {"name": f"{site}-edge-01"}]


async def test_the_example_handler_works_and_emits_valid_evidence(workspace: Workspace) -> None:
    new_skill(SKILL, workspace.skills, workspace.tests)
    capability = load_registry(workspace.skills).get(SKILL)
    assert capability is not None and capability.handler and capability.interface
    emitted: list[tuple[str, str, dict[str, Any]]] = []

    async def emit(kind: str, artifact_id: str, record: dict[str, Any]) -> None:
        emitted.append((kind, artifact_id, record))

    ctx = SkillContext(
        principal=Principal("alice", "acme", frozenset({"inventory.read"})),
        skill_id=SKILL,
        task_id="task-1",
        context_id="context-1",
        limits={},
        declared_tools=capability.manifest.tools,
        _tool_factory=lambda name, grant: FakeInventory(),
        emit=emit,
        clock=lambda: datetime(2026, 11, 29, 12, 0, tzinfo=UTC),
    )

    authorize = capability.handler.authorize
    assert authorize is not None
    await authorize({"site": "nyc1"}, ctx)
    with pytest.raises(SkillError) as refused:
        await authorize({"site": "fra1"}, ctx)  # another tenant's site looks absent
    assert refused.value.code is ErrorCode.AUTHORIZATION_FAILED
    assert refused.value.message == "resource not found or not accessible"

    output = await capability.handler.handle({"site": "nyc1"}, ctx)
    assert output == {
        "site": "nyc1",
        "device_count": 2,
        "supporting_record_refs": [f"{RECORD_KIND}-nyc1"],
    }
    assert error_details(capability.interface.output_validator, output) == []
    [(kind, artifact_id, record)] = emitted
    assert (kind, artifact_id) == (RECORD_KIND, f"{RECORD_KIND}-nyc1")
    assert record["observed_at"] == "2026-11-29T12:00:00Z"
    assert error_details(capability.interface.record_validators[kind], record) == []
    assert capability.handler.summarize is not None
    assert capability.handler.summarize(output) == "Site nyc1: 2 devices."


def test_options_shape_the_manifest_and_the_generated_test(workspace: Workspace) -> None:
    result = new_skill(
        "capacity_digest",
        workspace.skills,
        workspace.tests,
        name="Weekly capacity digest",
        visibility="public",
        scopes=("capacity.read", "assurance.read", "capacity.read"),
        owner="capacity team",
    )
    manifest = json.loads((workspace.skills / "capacity_digest" / "manifest.json").read_text())
    assert manifest["visibility"] == "public"
    assert manifest["requires_scopes"] == ["capacity.read", "assurance.read"]
    assert manifest["tools"]["inventory"]["scopes"] == ["capacity.read", "assurance.read"]
    assert manifest["owner"] == "capacity team"
    assert manifest["skill"]["name"] == "Weekly capacity digest"
    assert all("weekly capacity digest" in u for u in manifest["routing"]["utterances"])
    generated = (workspace.tests / "test_skill_capacity_digest.py").read_text()
    assert 'SCOPES = ["capacity.read", "assurance.read"]' in generated
    assert 'WITHOUT_SCOPE = "authorization_failed"' in generated  # public: listed, refused
    assert result.notes == ()
    steps = next_steps(
        result, command="netagent", visibility="public", owner="capacity team", root=workspace.root
    )
    assert any("card diff" in step for step in steps)
    assert not any("--owner" in step for step in steps)


def test_the_extended_default_expects_skill_not_advertised_without_the_scope(
    workspace: Workspace,
) -> None:
    new_skill(SKILL, workspace.skills, workspace.tests)
    generated = (workspace.tests / f"test_skill_{SKILL}.py").read_text()
    assert 'WITHOUT_SCOPE = "skill_not_advertised"' in generated
    assert f'SKILL_ID = "{SKILL}"' in generated
    assert "start_agent(" in generated and 'scope="module"' in generated


def test_a_scope_the_inventory_does_not_honour_is_noted(workspace: Workspace) -> None:
    result = new_skill("audit_digest", workspace.skills, workspace.tests, scopes=["audit.read"])
    assert len(result.notes) == 1
    assert "audit.read" not in result.notes[0] and "inventory.read" in result.notes[0]


def test_generated_code_is_lint_clean_even_for_the_longest_id(workspace: Workspace) -> None:
    scopes = [f"scope{i}.{'r' * 50}" for i in range(3)]
    result = new_skill(LONGEST, workspace.skills, workspace.tests, scopes=scopes)
    new_skill(SKILL, workspace.skills, workspace.tests)
    load_registry(workspace.skills)  # the long import form still imports
    python = [str(p) for p in result.created if p.suffix == ".py"]
    python += [str(workspace.skills / SKILL / "handler.py")]
    for command in (["check"], ["format", "--check"]):
        run = subprocess.run(
            [sys.executable, "-m", "ruff", *command, *python],
            cwd=workspace.root,
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, run.stdout + run.stderr


# -- refusals: a clear message and nothing written ------------------------------------------------


def _refused(workspace: Workspace, skill_id: str, **options: Any) -> str:
    before = workspace.files()
    with pytest.raises(ScaffoldError) as refused:
        new_skill(skill_id, workspace.skills, workspace.tests, **options)
    assert workspace.files() == before
    return str(refused.value)


@pytest.mark.parametrize("skill_id", ["lookup_inventory", "port_report", "common"])
def test_an_existing_id_is_refused(workspace: Workspace, skill_id: str) -> None:
    assert "exists already" in _refused(workspace, skill_id)


@pytest.mark.parametrize(
    "skill_id",
    [
        "",
        "s",
        "Site_report",
        "site-report",
        "1site",
        "_site",
        "site report",
        "site_report\n",
        "sïte",
        "s" * 64,
        "../site_report",
    ],
)
def test_a_malformed_id_is_refused(workspace: Workspace, skill_id: str) -> None:
    assert "is not valid" in _refused(workspace, skill_id)


def test_reserved_ids_are_refused(workspace: Workspace) -> None:
    assert "reserved" in _refused(workspace, "describe_skill")
    assert "Python keyword" in _refused(workspace, "import")


def test_an_id_that_reads_as_the_template_record_kind_gets_another_kind(
    workspace: Workspace,
) -> None:
    """``site_summary`` is a natural id: the template's record kind steps aside for it."""
    new_skill("site_summary", workspace.skills, workspace.tests)
    capability = load_registry(workspace.skills).get("site_summary")
    assert capability is not None and capability.interface is not None
    assert capability.interface.record_kinds == (OTHER_RECORD_KIND,)
    folder = workspace.skills / "site_summary"
    assert (folder / f"{OTHER_RECORD_KIND}.schema.json").is_file()
    assert not (folder / f"{RECORD_KIND}.schema.json").exists()
    for generated in (folder / "handler.py", workspace.tests / "test_skill_site_summary.py"):
        assert f'RECORD_KIND = "{OTHER_RECORD_KIND}"' in generated.read_text()
    assert validate_registry(workspace.skills)[1] == []


def test_a_released_id_is_refused(workspace: Workspace) -> None:
    locked = json.loads(workspace.lock.read_text())
    locked["ghost_skill"] = locked["lookup_inventory"]
    workspace.lock.write_text(json.dumps(locked, indent=2, sort_keys=True) + "\n")
    assert "interface lock" in _refused(workspace, "ghost_skill")


def test_an_existing_test_file_is_refused(workspace: Workspace) -> None:
    (workspace.tests / f"test_skill_{SKILL}.py").write_text("")
    assert "exists already" in _refused(workspace, SKILL)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"visibility": "internal"}, "visibility"),
        ({"scopes": []}, "at least one scope"),
        ({"scopes": ["inventory read"]}, "scope 'inventory read'"),
        ({"scopes": ["x" * 65]}, "at most 64"),
        ({"name": "two\nlines"}, "--name"),
        ({"name": "n" * 121}, "--name"),
        ({"owner": "  "}, "--owner"),
    ],
)
def test_bad_options_are_refused(workspace: Workspace, options: dict, message: str) -> None:
    assert message in _refused(workspace, SKILL, **options)


def test_a_broken_registry_is_refused_before_writing(workspace: Workspace) -> None:
    manifest = workspace.skills / "lookup_inventory" / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"state": "ga"', '"state": "gone"'))
    assert "fix the registry first" in _refused(workspace, SKILL)


def test_a_skill_that_does_not_load_is_taken_back(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A skills folder that is not the importable `skills` package: the handler cannot import.
    monkeypatch.setattr(skills, "__path__", [str(ROOT / "skills")])
    message = _refused(workspace, SKILL)
    assert "nothing was kept" in message and f"skills.{SKILL}.handler" in message
