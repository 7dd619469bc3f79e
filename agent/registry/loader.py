"""Load every ``skills/<id>/manifest.json`` once, check it, and freeze it into a Registry.

The registry is the only way ``agent/`` learns about skills: cards, router, executor and
``describe_skill`` all read it. Anything wrong stops start-up with the file and the field.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType, ModuleType
from typing import Any

from agent.interfaces import InterfaceBuildError, SkillInterface, build_interface
from agent.registry.fixed_result import FixedResult
from agent.registry.manifest import Manifest, State, thawed
from agent.registry.manifests import (
    BUILTIN_SKILLS_DIR,
    MANIFEST_FILE,
    ManifestCheck,
    RegistryError,
    builtin_words,
    checked_json,
    cross_reference_problems,
    manifest_paths,
    read_json,
    read_manifest,
)

__all__ = [
    "BUILTIN_SKILLS_DIR",
    "MANIFEST_FILE",
    "Capability",
    "HandlerSpec",
    "Registry",
    "RegistryError",
    "load_registry",
    "validate_registry",
]

Handle = Callable[[dict[str, Any], Any], Awaitable[dict[str, Any] | FixedResult]]
Authorize = Callable[[dict[str, Any], Any], Awaitable[None]]
CheckConstraints = Callable[[dict[str, Any], Mapping[str, Any]], None]
Extract = Callable[[str], dict[str, Any]]
Summarize = Callable[[dict[str, Any]], str]
Bind = Callable[[Sequence[Manifest]], Extract]


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
            read_json(manifest.folder / entry["file"], f"{file_label} (/interface/{role})"),
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


def _load_capability(path: Path, data: Any) -> Capability:
    """A schema-valid manifest with its handler imported and its interface built."""
    label = str(path)
    manifest = Manifest.from_json(data, path.parent)
    if manifest.state is State.REMOVED:
        return Capability(manifest, None, None)
    return Capability(manifest, _load_handler(manifest, label), _load_interface(manifest, label))


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


def load_registry(
    skills_dir: Path, *, builtin: bool = True, words_from: Path | None = None
) -> Registry:
    """Read, validate and freeze every manifest below ``skills_dir`` and the core's built-in
    skills (``agent/builtin``: describe_skill); the first problem stops it. The core's skills
    are in the words of the deployment whose skills folder is ``words_from`` (default:
    ``skills_dir``; ``agent/registry/builtin_words.py``)."""
    root, paths = manifest_paths(skills_dir, builtin)
    words = builtin_words(words_from or root)
    # a generator: each manifest's handler is imported before the next file is read
    capabilities = [_load_capability(path, data) for path, data in checked_json(paths, words)]
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
        root, paths = manifest_paths(skills_dir, builtin)
        words = builtin_words(root)
    except RegistryError as exc:
        return None, [str(exc)]
    capabilities: list[Capability] = []
    problems: list[str] = []
    check = ManifestCheck()
    for path in paths:
        try:
            data = read_manifest(path, words)
        except RegistryError as exc:
            problems.append(str(exc))
            continue
        found = check.problems(path, data)
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
    return cross_reference_problems((c.manifest for c in capabilities), root)
