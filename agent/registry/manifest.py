"""The capability manifest: one skill's advertisement plus what the server routes and enforces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any


class State(Enum):
    """Lifecycle of a capability; drives cards, routing and refusals."""

    PREVIEW = "preview"
    GA = "ga"
    DEPRECATED = "deprecated"
    REMOVED = "removed"


class Visibility(Enum):
    """Which card may list a capability."""

    PUBLIC = "public"
    EXTENDED = "extended"
    INTERNAL = "internal"


def _frozen(value: Any) -> Any:
    """Deep read-only copy, so the registry cannot be changed after start-up."""
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


def thawed(value: Any) -> Any:
    """A plain JSON-shaped copy of a frozen value (for cards and documents)."""
    if isinstance(value, Mapping):
        return {k: thawed(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thawed(v) for v in value]
    return value


@dataclass(frozen=True)
class Manifest:
    """A validated manifest; fields mirror ``schemas/capability-manifest.schema.json``."""

    id: str
    state: State
    visibility: Visibility
    skill: Mapping[str, Any]
    requires_scopes: frozenset[str]
    tenants: frozenset[str] | None  # None means every tenant ("*")
    handler: str | None
    extractor: str | None
    limits: Mapping[str, Any]
    owner: str
    replacement: str | None
    utterances: tuple[str, ...]
    aliases: tuple[str, ...]
    tools: Mapping[str, frozenset[str]]
    interface: Mapping[str, Any]
    folder: Path = field(compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], folder: Path) -> Manifest:
        """Build from a manifest that already passed schema validation."""
        tenants = data.get("tenants", "*")
        return cls(
            id=data["id"],
            state=State(data["state"]),
            visibility=Visibility(data.get("visibility", "internal")),
            skill=_frozen(data["skill"]),
            requires_scopes=frozenset(data.get("requires_scopes", ())),
            tenants=None if tenants == "*" else frozenset(tenants),
            handler=data.get("handler"),
            extractor=data.get("extractor"),
            limits=_frozen(data.get("limits", {})),
            owner=data["owner"],
            replacement=data.get("replacement"),
            utterances=tuple(data.get("routing", {}).get("utterances", ())),
            aliases=tuple(data.get("routing", {}).get("aliases", ())),
            tools=MappingProxyType(
                {name: frozenset(spec["scopes"]) for name, spec in data.get("tools", {}).items()}
            ),
            interface=_frozen(data.get("interface", {})),
            folder=folder,
        )

    @property
    def input_modes(self) -> tuple[str, ...]:
        """Media types the skill accepts (the card's default when it declares none)."""
        return tuple(self.skill.get("inputModes", ("application/json",)))

    @property
    def output_modes(self) -> tuple[str, ...]:
        """Media types the skill produces."""
        return tuple(self.skill.get("outputModes", ("application/json",)))
