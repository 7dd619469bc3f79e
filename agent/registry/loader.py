"""Load every ``skills/<id>/manifest.json`` once, check it, and freeze it into a Registry.

The registry is the only way ``agent/`` learns about skills: cards, router, executor and
``describe_skill`` all read it. Anything wrong stops start-up with the file and the field.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from agent.errors import ConfigurationError
from agent.interfaces import SCHEMAS_DIR, InterfaceBuildError, SkillInterface, build_interface
from agent.registry.fixed_result import FixedResult
from agent.registry.manifest import Manifest, State, thawed

BUILTIN_SKILLS_DIR = Path(__file__).resolve().parents[1] / "builtin"
"""The core's own skills (describe_skill), loaded beside every deployment's."""
MANIFEST_FILE = "manifest.json"

Handle = Callable[[dict[str, Any], Any], Awaitable[dict[str, Any] | FixedResult]]
Authorize = Callable[[dict[str, Any], Any], Awaitable[None]]
CheckConstraints = Callable[[dict[str, Any], Mapping[str, Any]], None]
Extract = Callable[[str], dict[str, Any]]
Summarize = Callable[[dict[str, Any]], str]
Bind = Callable[[Sequence[Manifest]], Extract]


class RegistryError(ConfigurationError):
    """A manifest, schema or handler is wrong; the message names the file and the field."""


@dataclass(frozen=True)
class HandlerSpec:
    """The callables a skill's handler module provides.

    ``handle`` is required; it returns the result, or a FixedResult for an answer that is the
    same on every call (converted once, agent/registry/fixed_result.py). ``authorize``
    (resource-level authorization) and ``check_constraints`` (limits the arguments may not
    exceed) run before the task is accepted, so their refusals end the task REJECTED rather
    than FAILED. ``extract`` fills arguments from free text for the router; ``summarize``
    renders a result as plain text for callers that accept only ``text/plain``.
    """

    handle: Handle
    authorize: Authorize | None = None
    check_constraints: CheckConstraints | None = None
    extract: Extract | None = None
    summarize: Summarize | None = None
    bind: Bind | None = None
    """An extractor that depends on the whole registry (describe_skill's knows every skill id):
    called once with every manifest when the registry is loaded; its result becomes ``extract``."""


@dataclass(frozen=True)
class Capability:
    """One registry entry: the manifest with its handler and its interface resolved."""

    manifest: Manifest
    handler: HandlerSpec | None
    interface: SkillInterface | None

    @property
    def id(self) -> str:
        """The skill id (the card's and the request's key)."""
        return self.manifest.id


class Registry:
    """Immutable after construction; iteration is in skill-id order."""

    def __init__(self, capabilities: list[Capability]) -> None:
        self._by_id: Mapping[str, Capability] = MappingProxyType(
            {c.id: c for c in sorted(capabilities, key=lambda c: c.id)}
        )

    def __iter__(self) -> Iterator[Capability]:
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def get(self, skill_id: str) -> Capability | None:
        """The capability with this id, or None (removed ones are still here)."""
        return self._by_id.get(skill_id)

    @property
    def manifests(self) -> tuple[Manifest, ...]:
        """Every manifest, removed ones included."""
        return tuple(c.manifest for c in self)


def _manifest_validator() -> Draft202012Validator:
    schema = json.loads((SCHEMAS_DIR / "capability-manifest.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


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


def _read_json(path: Path, label: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RegistryError(f"{label}: file not found") from exc
    except json.JSONDecodeError as exc:
        raise RegistryError(f"{label}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc


def _import(path: str, label: str, pointer: str) -> ModuleType:
    try:
        return importlib.import_module(path)
    except Exception as exc:  # a module that fails while importing is a registry defect too
        reason = f"{type(exc).__name__}: {exc}"
        raise RegistryError(f"{label}: {pointer}: cannot import {path!r}: {reason}") from exc


def _load_handler(manifest: Manifest, label: str) -> HandlerSpec:
    module = _import(str(manifest.handler), label, "/handler")
    handle = getattr(module, "handle", None)
    if not callable(handle):
        raise RegistryError(f"{label}: /handler: {manifest.handler!r} has no callable 'handle'")
    extract = getattr(module, "extract", None)
    bind = None
    if manifest.extractor is not None:
        extractor = _import(manifest.extractor, label, "/extractor")
        extract = getattr(extractor, "extract", None)
        bind = getattr(extractor, "bind", None)
        if not callable(extract) and not callable(bind):
            raise RegistryError(
                f"{label}: /extractor: {manifest.extractor!r} has no callable 'extract' or 'bind'"
            )
    return HandlerSpec(
        handle=handle,
        authorize=getattr(module, "authorize", None),
        check_constraints=getattr(module, "check_constraints", None),
        extract=extract,
        summarize=getattr(module, "summarize", None),
        bind=bind,
    )


def _load_interface(manifest: Manifest, label: str) -> SkillInterface:
    spec = thawed(manifest.interface)

    def schema_of(role: str, entry: dict[str, Any]) -> tuple[str, str, Any]:
        file_label = f"{manifest.folder / entry['file']}"
        return (
            entry["schema_uri"],
            entry["version"],
            _read_json(manifest.folder / entry["file"], f"{file_label} (/interface/{role})"),
        )

    try:
        return build_interface(
            skill_id=manifest.id,
            skill_version=spec["skill_version"],
            input_schema=schema_of("input", spec["input"]),
            output_schema=schema_of("output", spec["output"]),
            record_schemas={
                kind: schema_of(f"records/{kind}", entry) for kind, entry in spec["records"].items()
            },
            interaction=spec["interaction"],
            authority=spec["authority"],
            constraints=thawed(manifest.limits),
        )
    except InterfaceBuildError as exc:
        raise RegistryError(f"{label}: /interface: {exc}") from exc


def _manifest_problems(path: Path, data: Any, validator: Draft202012Validator) -> list[str]:
    """Every schema violation of one manifest, each with its file and JSON Pointer."""
    label = str(path)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    problems = [f"{label}: {_pointer(e)}: {e.message}" for e in errors]
    if not problems and data["id"] != path.parent.name:
        problems.append(
            f"{label}: /id: {data['id']!r} must equal its folder name {path.parent.name!r}"
        )
    return problems


def _load_capability(path: Path, data: Any) -> Capability:
    """A schema-valid manifest with its handler imported and its interface built."""
    label = str(path)
    manifest = Manifest.from_json(data, path.parent)
    if manifest.state is State.REMOVED:
        return Capability(manifest, None, None)
    return Capability(manifest, _load_handler(manifest, label), _load_interface(manifest, label))


def _manifest_paths(skills_dir: Path, builtin: bool) -> tuple[Path, list[Path]]:
    root = skills_dir.resolve()
    if not root.is_dir():
        raise RegistryError(f"{root}: skills directory not found")
    found = sorted(root.glob(f"*/{MANIFEST_FILE}"))
    if builtin:
        found = sorted(BUILTIN_SKILLS_DIR.glob(f"*/{MANIFEST_FILE}")) + found
    return root, found


def _bound(capabilities: list[Capability]) -> list[Capability]:
    """Give registry-dependent extractors the registry they are part of."""
    manifests = [c.manifest for c in capabilities]
    bound = []
    for capability in capabilities:
        handler = capability.handler
        if handler is not None and handler.bind is not None:
            handler = replace(handler, extract=handler.bind(manifests))
            capability = replace(capability, handler=handler)
        bound.append(capability)
    return bound


def load_registry(skills_dir: Path, *, builtin: bool = True) -> Registry:
    """Read, validate and freeze every manifest below ``skills_dir`` and the core's built-in
    skills (``agent/builtin``: describe_skill); the first problem stops it."""
    root, paths = _manifest_paths(skills_dir, builtin)
    validator = _manifest_validator()
    capabilities: list[Capability] = []
    for path in paths:
        data = _read_json(path, str(path))
        problems = _manifest_problems(path, data, validator)
        if problems:
            raise RegistryError(problems[0])
        capabilities.append(_load_capability(path, data))
    problems = _cross_reference_problems(capabilities, root)
    if problems:
        raise RegistryError(problems[0])
    return Registry(_bound(capabilities))


def validate_registry(
    skills_dir: Path, *, builtin: bool = True
) -> tuple[Registry | None, list[str]]:
    """Every problem of the registry, not just the first (``netagent validate``).

    Returns the registry as well when there is none, so callers can go on to check it.
    """
    try:
        root, paths = _manifest_paths(skills_dir, builtin)
    except RegistryError as exc:
        return None, [str(exc)]
    validator = _manifest_validator()
    capabilities: list[Capability] = []
    problems: list[str] = []
    for path in paths:
        try:
            data = _read_json(path, str(path))
        except RegistryError as exc:
            problems.append(str(exc))
            continue
        found = _manifest_problems(path, data, validator)
        if found:
            problems += found
            continue
        try:
            capabilities.append(_load_capability(path, data))
        except RegistryError as exc:
            problems.append(str(exc))
    problems += _cross_reference_problems(capabilities, root)
    return (Registry(_bound(capabilities)) if not problems else None), problems


def _cross_reference_problems(capabilities: list[Capability], root: Path) -> list[str]:
    """Lifecycle pointers: a replacement must exist and be ga."""
    by_id: dict[str, Capability] = {}
    problems: list[str] = []
    for cap in capabilities:
        first = by_id.setdefault(cap.id, cap)
        if first is not cap:
            problems.append(
                f"{cap.manifest.folder / MANIFEST_FILE}: /id: {cap.id!r} is taken by "
                f"{first.manifest.folder / MANIFEST_FILE}"
            )
    for cap in capabilities:
        label = str(cap.manifest.folder / MANIFEST_FILE)
        target = cap.manifest.replacement
        if target is None:
            continue
        replacement = by_id.get(target)
        if replacement is None:
            problems.append(f"{label}: /replacement: no skill {target!r} in {root}")
        elif replacement.manifest.state is not State.GA:
            problems.append(
                f"{label}: /replacement: {target!r} is {replacement.manifest.state.value}, not ga"
            )
    if not any(c.manifest.folder.parent == root for c in capabilities) and not problems:
        problems.append(f"{root}: no skills found (expected */{MANIFEST_FILE})")
    return problems
