"""The core's skills name no domain until a deployment words them (``builtin.json`` beside its
skills: its brand, and per core skill the card's examples and the router's utterances); a words
file that is wrong stops the registry with its file and JSON Pointer, as a manifest does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent.registry.builtin_words import (
    CORE_SKILLS_DIR,
    DEFAULT_BRAND,
    PLACEHOLDER,
    WORDS_FILE,
    BuiltinWords,
    core_skill_ids,
)
from agent.registry.loader import RegistryError, load_registry, validate_registry
from agent.registry.manifests import builtin_words, read_manifest

FORK_SKILLS = Path(__file__).resolve().parents[3] / "examples" / "invoices" / "skills"
DESCRIBE = CORE_SKILLS_DIR / "describe_skill" / "manifest.json"


def skills_with(tmp_path: Path, words: Any) -> Path:
    """A copy of a fork's skills folder with ``words`` as its builtin.json (None: without)."""
    folder = tmp_path / "skills"
    shutil.copytree(FORK_SKILLS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / WORDS_FILE).unlink(missing_ok=True)
    if words is not None:
        text = words if isinstance(words, str) else json.dumps(words)
        (folder / WORDS_FILE).write_text(text, "utf-8")
    return folder


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def test_every_core_manifest_names_its_brand_only_by_the_placeholder() -> None:
    for path in CORE_SKILLS_DIR.rglob("manifest.json"):
        data = json.loads(path.read_text("utf-8"))
        assert PLACEHOLDER in data["owner"], path
        uris = [
            entry["schema_uri"]
            for entry in (data["interface"]["input"], data["interface"]["output"])
        ]
        assert all(uri.startswith(f"urn:{PLACEHOLDER}:") for uri in uris), path
        worded = read_manifest(path, BuiltinWords("acme-agent"))
        assert not [s for s in strings(worded) if PLACEHOLDER in s], path
        assert worded["owner"] == "acme-agent maintainers"


def test_without_words_the_core_skills_carry_the_cores_own_brand(tmp_path: Path) -> None:
    registry = load_registry(skills_with(tmp_path, None))
    manifest = registry.get("describe_skill").manifest  # type: ignore[union-attr]
    uris = [manifest.interface[role]["schema_uri"] for role in ("input", "output")]
    assert uris == [
        f"urn:{DEFAULT_BRAND}:schema:describe-skill:{role}" for role in ("input", "output")
    ]
    assert manifest.owner == f"{DEFAULT_BRAND} maintainers"
    assert manifest.utterances == tuple(json.loads(DESCRIBE.read_text())["routing"]["utterances"])


def test_a_deployments_words_take_the_cores_places(tmp_path: Path) -> None:
    words = {
        "brand": "shop-agent",
        "skills": {
            "describe_skill": {"examples": ["Describe sell_item."], "utterances": ["a", "b"]}
        },
    }
    registry = load_registry(skills_with(tmp_path, words))
    manifest = registry.get("describe_skill").manifest  # type: ignore[union-attr]
    assert manifest.interface["input"]["schema_uri"] == "urn:shop-agent:schema:describe-skill:input"
    assert manifest.skill["examples"] == ("Describe sell_item.",)
    assert manifest.utterances == ("a", "b")
    core = json.loads(DESCRIBE.read_text())
    worded = read_manifest(DESCRIBE, BuiltinWords.from_json(words))
    assert list(worded) == list(core) and list(worded["skill"]) == list(core["skill"])
    assert worded["routing"]["utterances"] == ["a", "b"]
    assert builtin_words(skills_with(tmp_path / "x", None)) == BuiltinWords()


def test_the_conformance_skills_take_the_words_of_the_deployment_they_serve(tmp_path: Path) -> None:
    folder = skills_with(tmp_path, {"brand": "shop-agent"})
    registry = load_registry(CORE_SKILLS_DIR / "conformance", builtin=False, words_from=folder)
    manifest = registry.get("tck_conformance").manifest  # type: ignore[union-attr]
    assert (
        manifest.interface["output"]["schema_uri"] == "urn:shop-agent:schema:tck-conformance:output"
    )


@pytest.mark.parametrize(
    ("words", "pointer"),
    [
        ("not json", "not valid JSON"),
        ([], ": must be an object"),
        ("null", ": must be an object"),
        ({"brand": "x", "owner": "y"}, "/owner: unknown member"),
        ({"brand": ""}, "/brand: must be a slug"),
        ({"brand": "Shop"}, "/brand: must be a slug"),
        ({"brand": "a b"}, "/brand: must be a slug"),
        ({"brand": PLACEHOLDER}, "/brand: must be a slug"),
        ({"brand": "../x"}, "/brand: must be a slug"),
        ({"brand": "x" * 64}, "/brand: must be a slug"),
        ({"brand": "shop\x00"}, "/brand: must be a slug"),
        ({"brand": "shop\n"}, "/brand: must be a slug"),
        ({"brand": 7}, "/brand: must be a slug"),
        ({"skills": []}, "/skills: must be an object"),
        ({"skills": {"lookup_x": {}}}, "/skills/lookup_x: no such core skill"),
        ({"skills": {"describe_skill": []}}, "/skills/describe_skill: must be an object"),
        (
            {"skills": {"describe_skill": {"owner": "x"}}},
            "/skills/describe_skill/owner: not a word",
        ),
        ({"skills": {"describe_skill": {"utterances": "hi"}}}, "/utterances: must be a list"),
        ({"skills": {"describe_skill": {"utterances": [1]}}}, "/utterances: must be a list"),
        ({"skills": {"describe_skill": {"examples": [" "]}}}, "/examples: must be a list"),
        ({"skills": {"describe_skill": {"examples": None}}}, "/examples: must be a list"),
    ],
)
def test_a_words_file_that_is_wrong_stops_the_registry_naming_where(
    tmp_path: Path, words: Any, pointer: str
) -> None:
    folder = skills_with(tmp_path, words if not isinstance(words, list) else json.dumps(words))
    label = str(folder.resolve() / WORDS_FILE)
    with pytest.raises(RegistryError) as refused:
        load_registry(folder)
    assert str(refused.value).startswith(label) and pointer in str(refused.value)
    registry, problems = validate_registry(folder)
    assert registry is None and len(problems) == 1 and problems[0].startswith(label)


def test_the_core_skills_are_the_folders_below_builtin() -> None:
    assert core_skill_ids() == {"describe_skill", "tck_conformance"}
