"""A remembered schema check may skip work, never a problem.

``agent/schema_memo.py`` keeps schemas that passed by content across processes. What must hold:
a schema that changed in any way is checked again; a failure is never remembered; a file that
is missing, corrupt, forged in shape, unwritable or written by many processes at once costs a
check, never a wrong answer or a crash.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent import schema_memo
from agent.interfaces.validation import SchemaCheckError, check_schema
from agent.registry import manifests
from agent.registry.loader import RegistryError, load_registry, validate_registry
from netops.deployment import SKILLS_DIR

ROOT = Path(__file__).resolve().parents[2]
VALID = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0}}}


@pytest.fixture(autouse=True)
def fresh_memory() -> Iterator[None]:
    schema_memo.forget()
    yield
    schema_memo.forget()


@pytest.fixture
def metaschema_checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every schema jsonschema's own metaschema check really ran on (the real check runs)."""
    seen: list[Any] = []
    real = Draft202012Validator.check_schema

    def counting(schema: Any, *args: Any, **kwargs: Any) -> None:
        seen.append(schema)
        real(schema, *args, **kwargs)

    monkeypatch.setattr(Draft202012Validator, "check_schema", counting)
    return seen


def test_a_pass_is_checked_once(metaschema_checks: list[Any]) -> None:
    check_schema(VALID)
    check_schema(json.loads(json.dumps(VALID)))  # equal content, another object
    assert len(metaschema_checks) == 1


def test_key_order_does_not_matter_but_every_value_does(metaschema_checks: list[Any]) -> None:
    check_schema({"type": "string", "minLength": 1})
    check_schema({"minLength": 1, "type": "string"})
    assert len(metaschema_checks) == 1
    for changed in (
        {"type": "string", "minLength": 2},
        {"type": "string", "minLength": 1.0},  # 1.0 is another JSON text than 1
        {"type": "string", "minLength": 1, "": None},
    ):
        check_schema(changed)
    with pytest.raises(SchemaCheckError):
        check_schema({"type": "string", "minLength": True})  # true is not 1
    assert len(metaschema_checks) == 5


@pytest.mark.parametrize(
    "bad",
    [
        {"type": 5},
        {"properties": {"x": {"$ref": "https://example.com/s.json"}}},
        {"$ref": "#/$defs/missing"},
        {"minimum": "zero"},
    ],
)
def test_a_failure_is_never_remembered(bad: dict[str, Any], metaschema_checks: list[Any]) -> None:
    for _ in range(3):
        with pytest.raises(SchemaCheckError):
            check_schema(bad)
    assert len(metaschema_checks) == 3


def test_a_schema_with_no_canonical_text_is_checked_every_time(
    metaschema_checks: list[Any],
) -> None:
    circular: dict[str, Any] = {"type": "object"}
    circular["properties"] = {"self": circular}
    for hostile in ({"type": "number", "maximum": math.nan}, {1: "x", "type": "object"}):
        assert schema_memo.key(hostile, "c", schema_memo.__file__) is None
    assert schema_memo.key(circular, "c", schema_memo.__file__) is None
    for _ in range(2):
        with pytest.raises(SchemaCheckError):
            check_schema({"type": "number", "maximum": math.nan, "minimum": "x"})
    assert len(metaschema_checks) == 2


def test_the_key_names_the_check_and_its_code(tmp_path: Path) -> None:
    one, other = tmp_path / "one.py", tmp_path / "other.py"
    one.write_text("# a check\n")
    other.write_text("# another check\n")
    keys = {
        schema_memo.key(VALID, "a", str(one)),
        schema_memo.key(VALID, "b", str(one)),
        schema_memo.key(VALID, "a", str(other)),
        schema_memo.key({**VALID, "title": "t"}, "a", str(one)),
    }
    assert len(keys) == 4 and None not in keys


def test_passes_survive_a_process_through_the_file(
    tmp_path: Path, metaschema_checks: list[Any]
) -> None:
    memo = tmp_path / "__pycache__" / schema_memo.MEMO_FILE
    check_schema(VALID)
    schema_memo.save(memo)
    schema_memo.forget()  # as a new process starts
    schema_memo.load(memo)
    check_schema(VALID)
    assert len(metaschema_checks) == 1
    assert json.loads(memo.read_text())["passed"]


def test_a_folder_remembers_across_processes(tmp_path: Path, metaschema_checks: list[Any]) -> None:
    """``remembered(folder)``, which the registry loader and the client commands use: the
    passes of one process are read by the next, from ``folder/__pycache__``."""
    with schema_memo.remembered(tmp_path):
        check_schema(VALID)
    assert (tmp_path / "__pycache__" / schema_memo.MEMO_FILE).exists()
    schema_memo.forget()  # as a new process starts
    with schema_memo.remembered(tmp_path):
        check_schema(VALID)
    assert len(metaschema_checks) == 1
    assert Path(schema_memo.__file__).resolve().parent == schema_memo.CLIENT_FOLDER


@pytest.mark.parametrize(
    "content",
    [b"", b"{", b"[]", b'{"passed": 5}', b'{"passed": ["short", 7, null]}', b"\x00\xff" * 50],
)
def test_a_corrupt_file_costs_a_check_and_is_mended(
    tmp_path: Path, content: bytes, metaschema_checks: list[Any]
) -> None:
    memo = tmp_path / schema_memo.MEMO_FILE
    memo.write_bytes(content)
    schema_memo.load(memo)
    check_schema(VALID)
    assert len(metaschema_checks) == 1
    schema_memo.save(memo)
    assert len(json.loads(memo.read_text())["passed"]) == 1


def test_a_file_that_cannot_be_written_is_ignored(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the folder would be")
    check_schema(VALID)
    schema_memo.save(blocker / "__pycache__" / schema_memo.MEMO_FILE)  # no exception
    assert blocker.read_text() == "a file where the folder would be"


def test_the_file_never_grows_without_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(schema_memo, "MAX_KEYS", 3)
    memo = tmp_path / schema_memo.MEMO_FILE
    for n in range(5):
        check_schema({"type": "integer", "minimum": n})
        schema_memo.save(memo)
    assert len(json.loads(memo.read_text())["passed"]) <= 3


def _save_many(memo: str, start: int) -> None:
    schema_memo.forget()
    for n in range(start, start + 20):
        schema_memo.record(schema_memo.key({"minimum": n}, "race", schema_memo.__file__))
        schema_memo.save(Path(memo))


def test_many_processes_saving_at_once_leave_a_whole_file(tmp_path: Path) -> None:
    memo = tmp_path / "__pycache__" / schema_memo.MEMO_FILE
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_save_many, args=(str(memo), i * 100)) for i in range(6)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    kept = json.loads(memo.read_text())["passed"]
    assert kept and all(len(k) == 64 for k in kept)
    assert not [p for p in memo.parent.iterdir() if p.name != schema_memo.MEMO_FILE]


@pytest.fixture
def skills_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "skills"
    shutil.copytree(SKILLS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_the_registry_keeps_its_passes_and_still_sees_a_broken_schema(
    skills_copy: Path, metaschema_checks: list[Any]
) -> None:
    load_registry(skills_copy)
    first = len(metaschema_checks)
    assert (skills_copy / "__pycache__" / schema_memo.MEMO_FILE).is_file()
    schema_memo.forget()
    load_registry(skills_copy)
    assert len(metaschema_checks) == first  # a second start checks nothing again
    schema = skills_copy / "evaluate_resource_condition" / "input.schema.json"
    broken = json.loads(schema.read_text())
    broken["properties"]["resource_id"]["minLength"] = "one"
    schema.write_text(json.dumps(broken))
    schema_memo.forget()
    with pytest.raises(RegistryError, match="minLength"):
        load_registry(skills_copy)
    registry, problems = validate_registry(skills_copy)
    assert registry is None and any("minLength" in p for p in problems)


def test_checking_code_that_cannot_be_read_remembers_nothing(
    tmp_path: Path, metaschema_checks: list[Any]
) -> None:
    assert schema_memo.key(VALID, "c", str(tmp_path / "gone.py")) is None
    assert schema_memo.key(VALID, "c", str(tmp_path)) is None  # a folder, not a module
    schema_memo.record(None)
    assert not schema_memo.passed(None)


def test_a_file_too_large_to_be_ours_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metaschema_checks: list[Any]
) -> None:
    memo = tmp_path / schema_memo.MEMO_FILE
    check_schema(VALID)
    schema_memo.save(memo)
    schema_memo.forget()
    monkeypatch.setattr(schema_memo, "MAX_FILE_BYTES", memo.stat().st_size - 1)
    schema_memo.load(memo)
    check_schema(VALID)
    assert len(metaschema_checks) == 2  # checked again: the file was not trusted


# --- manifests: a remembered pass of the manifest schema -------------------------------------


@pytest.fixture
def manifest_checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every manifest the manifest schema's validator really ran on."""
    seen: list[Any] = []
    real = manifests.manifest_problems

    def counting(path: Path, data: Any, validator: Any) -> list[str]:
        seen.append(data)
        return real(path, data, validator)

    monkeypatch.setattr(manifests, "manifest_problems", counting)
    return seen


def evaluate_manifest(skills: Path) -> tuple[Path, dict[str, Any]]:
    path = skills / "evaluate_resource_condition" / manifests.MANIFEST_FILE
    return path, json.loads(path.read_text())


def test_a_manifest_that_passed_is_not_checked_again(
    skills_copy: Path, manifest_checks: list[Any]
) -> None:
    path, data = evaluate_manifest(skills_copy)
    assert manifests.ManifestCheck().problems(path, data) == []
    assert manifests.ManifestCheck().problems(path, json.loads(json.dumps(data))) == []
    assert len(manifest_checks) == 1


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.update(owner=m["owner"] + " "),  # one character
        lambda m: m.update(state="retired"),  # not a state
        lambda m: m.pop("owner"),  # a required member
        lambda m: m.update(unexpected=True),  # an unknown member
        lambda m: m["skill"].update(name=7),  # a nested type
    ],
    ids=["one-character", "bad-state", "missing-member", "extra-member", "nested-type"],
)
def test_any_change_to_a_manifest_is_checked_again(
    skills_copy: Path, manifest_checks: list[Any], change: Any
) -> None:
    path, data = evaluate_manifest(skills_copy)
    assert manifests.ManifestCheck().problems(path, data) == []
    changed = json.loads(json.dumps(data))
    change(changed)
    expected = manifests.manifest_problems(path, changed, manifests.manifest_validator())
    for _ in range(2):
        assert manifests.ManifestCheck().problems(path, changed) == expected
    # the pass, the expectation, the changed one: once if it passed, twice if it failed (a
    # failure is never remembered)
    assert len(manifest_checks) == (4 if expected else 3)


def test_a_remembered_manifest_still_names_its_folder(
    skills_copy: Path, manifest_checks: list[Any]
) -> None:
    path, data = evaluate_manifest(skills_copy)
    assert manifests.ManifestCheck().problems(path, data) == []
    moved = skills_copy / "elsewhere" / manifests.MANIFEST_FILE
    (problem,) = manifests.ManifestCheck().problems(moved, data)
    assert "/id" in problem and "elsewhere" in problem
    assert len(manifest_checks) == 1  # the schema check was remembered; the folder was not


def test_a_changed_manifest_schema_checks_every_manifest_again(
    skills_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, data = evaluate_manifest(skills_copy)
    assert manifests.ManifestCheck().problems(path, data) == []
    stricter = json.loads(manifests.MANIFEST_SCHEMA.read_text())
    stricter["properties"]["owner"]["maxLength"] = 1
    schema = tmp_path / "stricter.schema.json"
    schema.write_text(json.dumps(stricter))
    monkeypatch.setattr(manifests, "MANIFEST_SCHEMA", schema)
    (problem,) = manifests.ManifestCheck().problems(path, data)
    assert problem.endswith("is too long") and "/owner" in problem


def test_reading_manifests_a_second_time_imports_no_jsonschema(skills_copy: Path) -> None:
    """What the memo is for: `netagent usage` reads manifests without the schema machinery."""
    script = (
        "import sys; from pathlib import Path; "
        "from agent.registry.manifests import read_manifests; "
        f"found = read_manifests(Path({str(skills_copy)!r})); "
        "print(len(found), 'jsonschema' in sys.modules)"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0][1] == "True"  # the first reading checks every manifest
    assert runs[1] == [runs[0][0], "False"]  # the second remembers them
