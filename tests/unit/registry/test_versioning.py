"""The interface lock: a contract never changes without the right version bump."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.registry.loader import load_registry, validate_registry
from agent.registry.versioning import (
    LOCK_FILE,
    breaking_changes,
    is_next_version,
    lock_entries,
    lock_problems,
)
from netops.deployment import SKILLS_DIR

ROOT = Path(__file__).resolve().parents[3]
NETAGENT = [sys.executable, "-c", "from netops.cli import main; main()"]


def test_the_committed_lock_matches_the_registry() -> None:
    assert lock_problems(load_registry(SKILLS_DIR), SKILLS_DIR / LOCK_FILE) == []


@pytest.fixture
def locked(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / LOCK_FILE
    entries = lock_entries(load_registry(SKILLS_DIR))
    path.write_text(json.dumps(entries))
    return path, entries


def rewrite(path: Path, entries: dict) -> None:
    path.write_text(json.dumps(entries))


def test_a_digest_change_without_a_bump_is_refused(locked) -> None:
    path, entries = locked
    entries["lookup_inventory"]["interface_digest"] = "sha256:" + "0" * 64
    rewrite(path, entries)
    (problem,) = lock_problems(load_registry(SKILLS_DIR), path)
    assert "/lookup_inventory/interface_digest" in problem and "bump" in problem


@pytest.mark.parametrize(
    ("old", "new", "ok"),
    [
        ("1.0", "1.1", True),
        ("1.4", "2.0", True),
        ("0.1", "1.0", True),
        ("1.0", "1.2", False),
        ("1.0", "2.1", False),
        ("1.1", "1.0", False),
        ("1.0", "1.0", False),
        ("2.0", "1.0", False),
    ],
)
def test_the_next_version_is_the_next_minor_or_major(old: str, new: str, ok: bool) -> None:
    assert is_next_version(old, new) is ok


@pytest.mark.parametrize(("old", "accepted"), [("0.9", True), ("1.0", False), ("2.0", False)])
def test_a_changed_interface_needs_a_proper_bump(locked, old: str, accepted: bool) -> None:
    path, entries = locked
    entries["evaluate_resource_condition"].update(skill_version=old, interface_digest="sha256:1")
    rewrite(path, entries)
    problems = lock_problems(load_registry(SKILLS_DIR), path)
    if accepted:  # a proper bump only waits to be recorded
        (problem,) = problems
        assert "is not recorded yet" in problem
    else:
        assert problems and not any("is not recorded yet" in p for p in problems), problems


def test_a_locked_skill_that_disappeared_is_reported(locked) -> None:
    path, entries = locked
    entries["retired_skill"] = dict(entries["lookup_inventory"])
    rewrite(path, entries)
    (problem,) = lock_problems(load_registry(SKILLS_DIR), path)
    assert "/retired_skill" in problem and "no longer in the registry" in problem


def test_a_breaking_change_needs_a_major_bump(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(SKILLS_DIR, skills, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = skills / "evaluate_resource_condition" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["interface"]["skill_version"] = "1.1"  # a minor bump...
    manifest.write_text(json.dumps(data))
    registry = load_registry(skills)
    entries = lock_entries(registry)
    entry = entries["evaluate_resource_condition"]
    # ...over a 1.0 that did not require `condition`: requiring it breaks old clients.
    entry.update(skill_version="1.0", interface_digest="sha256:1")
    entry["input"]["required"] = ["resource_id"]
    path = tmp_path / LOCK_FILE
    rewrite(path, entries)
    (problem,) = lock_problems(registry, path)
    assert "needs 2.0" in problem and "'condition' became required" in problem


def test_breaking_changes_are_recognised() -> None:
    old = lock_entries(load_registry(SKILLS_DIR))["check_link_capacity"]
    new = copy.deepcopy(old)
    new["output"]["properties"].remove("verdict")
    new["record_kinds"] = []
    assert breaking_changes(old, new) == [
        "output member 'verdict' was removed",
        "record kind 'link-utilization-sample' was removed",
    ]
    compatible = copy.deepcopy(old)
    compatible["input"]["properties"].append("new_optional")
    assert breaking_changes(old, compatible) == []


def test_validate_reports_every_problem_with_file_and_pointer(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(SKILLS_DIR, skills, ignore=shutil.ignore_patterns("__pycache__"))
    lookup = skills / "lookup_inventory" / "manifest.json"
    data = json.loads(lookup.read_text())
    data["state"] = "gaa"
    lookup.write_text(json.dumps(data))
    headroom = skills / "link_headroom" / "manifest.json"
    data = json.loads(headroom.read_text())
    data["replacement"] = "no_such_skill"
    headroom.write_text(json.dumps(data))
    registry, problems = validate_registry(skills)
    assert registry is None
    assert any(str(lookup) in p and "/state" in p for p in problems)
    assert any(str(headroom) in p and "/replacement" in p for p in problems)
    assert len(problems) >= 2


def test_netagent_validate_passes_on_the_repository() -> None:
    run = subprocess.run(
        [*NETAGENT, "validate"], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "registry valid" in run.stdout


def test_netagent_validate_fails_on_a_broken_registry(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(SKILLS_DIR, skills, ignore=shutil.ignore_patterns("__pycache__"))
    (skills / "lookup_inventory" / "manifest.json").write_text("{ not json")
    run = subprocess.run(
        [*NETAGENT, "validate"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "NETAGENT_SKILLS_DIR": str(skills)},
        timeout=120,
    )
    assert run.returncode == 1
    assert "lookup_inventory/manifest.json: not valid JSON" in run.stdout
