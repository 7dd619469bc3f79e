"""Read and check every ``skills/<id>/manifest.json``: what the loader does before it imports a
handler or builds an interface.

``load_registry`` (``agent/registry/loader.py``) runs these checks manifest by manifest, each
followed by its handler and interface; ``read_manifests`` runs only these, for a command that
needs a skill's id and state and nothing it runs (``netagent usage`` labels its rows with
them). Neither the handlers nor the interface machinery (digests, the 2020-12 metaschema
checks) are imported here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.base.errors import ConfigurationError
from agent.registry.builtin_words import CORE_SKILLS_DIR, WORDS_FILE, BuiltinWords, is_core_manifest
from agent.registry.manifest import Manifest, State

BUILTIN_SKILLS_DIR = CORE_SKILLS_DIR
"""The core's own skills (describe_skill), loaded beside every deployment's."""
MANIFEST_FILE = "manifest.json"
MANIFEST_SCHEMA = (
    Path(__file__).resolve().parents[1] / "_schemas" / "capability-manifest.schema.json"
)
"""The capability manifest's schema, in the trusted schemas' folder (``agent.interfaces``'s
``SCHEMAS_DIR``, named here without importing the interface machinery)."""


if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError


class RegistryError(ConfigurationError):
    """A manifest, schema or handler is wrong; the message names the file and the field."""


def manifest_validator() -> Draft202012Validator:
    """The manifest schema's validator (the schema itself checked against 2020-12 first)."""
    from jsonschema import Draft202012Validator

    schema = json.loads(MANIFEST_SCHEMA.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


class ManifestCheck:
    """The manifest schema's check of each manifest (its validator built on first use)."""

    def __init__(self) -> None:
        self._validator: Draft202012Validator | None = None

    def validator(self) -> Draft202012Validator:
        """The compiled validator, built on the first manifest checked."""
        if self._validator is None:
            self._validator = manifest_validator()
        return self._validator

    def problems(self, path: Path, data: Any) -> list[str]:
        """Every problem of one manifest: its schema violations, then its folder name."""
        problems = manifest_problems(path, data, self.validator())
        return problems or _folder_problems(path, data)


def builtin_words(skills_dir: Path) -> BuiltinWords:
    """The words ``skills_dir``'s deployment gives the core's skills (``builtin.json``, if it
    has one: ``agent/registry/builtin_words.py``); a file that is wrong is a RegistryError."""
    path = skills_dir / WORDS_FILE
    if not path.is_file():
        return BuiltinWords()
    try:
        return BuiltinWords.from_json(read_json(path, str(path)))
    except ValueError as exc:
        raise RegistryError(f"{path}: {exc}") from None


def read_manifest(path: Path, words: BuiltinWords) -> Any:
    """One manifest's JSON; a core skill's in the deployment's ``words``."""
    data = read_json(path, str(path))
    return words.word(data) if is_core_manifest(path) else data


def _pointer(error: ValidationError) -> str:
    """RFC 6901 pointer to the field at fault: the missing or unexpected member itself."""
    parts = [str(p) for p in error.absolute_path]
    instance = error.instance if isinstance(error.instance, dict) else {}
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    required = error.validator_value
    if error.validator == "required" and isinstance(required, list):
        parts += [p for p in required if p not in instance][:1]
    elif error.validator == "additionalProperties" and error.validator_value is False:
        allowed = schema.get("properties", {})
        parts += sorted(k for k in instance if k not in allowed)[:1]
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def read_json(path: Path, label: str) -> Any:
    """The file's JSON; a missing or unreadable file is a RegistryError naming ``label``."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RegistryError(f"{label}: file not found") from exc
    except json.JSONDecodeError as exc:
        raise RegistryError(f"{label}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc


def manifest_problems(path: Path, data: Any, validator: Draft202012Validator) -> list[str]:
    """Every schema violation of one manifest, each with its file and JSON Pointer."""
    label = str(path)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    problems = [f"{label}: {_pointer(e)}: {e.message}" for e in errors]
    return problems or _folder_problems(path, data)


def _folder_problems(path: Path, data: Any) -> list[str]:
    """A schema-valid manifest's id must name its folder."""
    if data["id"] != path.parent.name:
        return [f"{path}: /id: {data['id']!r} must equal its folder name {path.parent.name!r}"]
    return []


def manifest_paths(skills_dir: Path, builtin: bool) -> tuple[Path, list[Path]]:
    """The skills folder, resolved, and every manifest in it (the built-in ones first)."""
    root = skills_dir.resolve()
    if not root.is_dir():
        raise RegistryError(f"{root}: skills directory not found")
    found = sorted(root.glob(f"*/{MANIFEST_FILE}"))
    if builtin:
        found = sorted(BUILTIN_SKILLS_DIR.glob(f"*/{MANIFEST_FILE}")) + found
    return root, found


def cross_reference_problems(manifests: Iterable[Manifest], root: Path) -> list[str]:
    """Lifecycle pointers: a replacement must exist and be ga."""
    manifests = list(manifests)
    by_id: dict[str, Manifest] = {}
    problems: list[str] = []
    for manifest in manifests:
        first = by_id.setdefault(manifest.id, manifest)
        if first is not manifest:
            problems.append(
                f"{manifest.folder / MANIFEST_FILE}: /id: {manifest.id!r} is taken by "
                f"{first.folder / MANIFEST_FILE}"
            )
    for manifest in manifests:
        label = str(manifest.folder / MANIFEST_FILE)
        target = manifest.replacement
        if target is None:
            continue
        replacement = by_id.get(target)
        if replacement is None:
            problems.append(f"{label}: /replacement: no skill {target!r} in {root}")
        elif replacement.state is not State.GA:
            problems.append(
                f"{label}: /replacement: {target!r} is {replacement.state.value}, not ga"
            )
    if not any(m.folder.parent == root for m in manifests) and not problems:
        problems.append(f"{root}: no skills found (expected */{MANIFEST_FILE})")
    return problems


def checked_json(paths: Iterable[Path], words: BuiltinWords) -> Iterator[tuple[Path, Any]]:
    """Each manifest file's JSON (a core skill's in ``words``) once it passed the manifest
    schema and its folder's checks, in ``paths``' order; the first problem raises, before the
    next file is read."""
    check = ManifestCheck()
    for path in paths:
        data = read_manifest(path, words)
        problems = check.problems(path, data)
        if problems:
            raise RegistryError(problems[0])
        yield path, data


def read_manifests(skills_dir: Path, *, builtin: bool = True) -> dict[str, Manifest]:
    """Every manifest below ``skills_dir`` and the core's built-in ones, by skill id in id
    order (removed ones included), checked as ``load_registry`` checks them before it imports
    anything: the manifest schema, the folder name, the lifecycle pointers; the first problem
    stops it. A handler that cannot be imported, or a schema that is not one, is not found
    here: ``load_registry`` (and ``netagent validate``) find those."""
    root, paths = manifest_paths(skills_dir, builtin)
    words = builtin_words(root)
    manifests = [Manifest.from_json(data, path.parent) for path, data in checked_json(paths, words)]
    problems = cross_reference_problems(manifests, root)
    if problems:
        raise RegistryError(problems[0])
    return {m.id: m for m in sorted(manifests, key=lambda m: m.id)}
