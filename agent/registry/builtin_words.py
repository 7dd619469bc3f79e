"""The core's own skills in a deployment's words.

The core ships ``describe_skill`` (and, for ``--conformance``, ``tck_conformance``) with manifests
that name no domain: their owner and schema URIs carry a ``{brand}`` placeholder, and their card
examples and routing utterances speak of skills in general. A deployment words them in a
``builtin.json`` beside its skills' folders: its brand (its identity's slug: ``urn:<brand>:...``,
``<brand> maintainers``) and, per built-in skill, the examples its card shows and the utterances
the router learns it from, naming the deployment's own skills (a request such as "what does
check_x take" should reach describe_skill). The file is read with the manifests, so everything
that reads a skills folder (the app, ``netagent validate``, a test) sees the same registry.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agent.registry.identity import AgentIdentity

WORDS_FILE = "builtin.json"
PLACEHOLDER = "{brand}"
DEFAULT_BRAND = AgentIdentity().slug
"""The brand of a deployment that words nothing (the core's own identity's slug)."""
CORE_SKILLS_DIR = Path(__file__).resolve().parents[1] / "builtin"
"""The folder of the core's skills: ``describe_skill``, and ``conformance/`` below it."""
_BRAND = re.compile(r"[a-z0-9][a-z0-9.-]{0,62}", re.ASCII)
_LISTS = ("examples", "utterances")


def core_skill_ids() -> frozenset[str]:
    """The ids of the core's skills (each folder's name is its manifest's id)."""
    return frozenset(path.parent.name for path in CORE_SKILLS_DIR.rglob("*/manifest.json"))


def is_core_manifest(path: Path) -> bool:
    """True for a manifest of the core's own skills (which a deployment words)."""
    return path.resolve().is_relative_to(CORE_SKILLS_DIR)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where}: must be a list of non-blank strings")
    return tuple(value)


def _skill_words(value: Any, where: str) -> Mapping[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: must be an object")
    unknown = sorted(set(value) - set(_LISTS))
    if unknown:
        raise ValueError(
            f"{where}/{unknown[0]}: not a word a deployment gives (examples, utterances)"
        )
    return MappingProxyType({key: _strings(value[key], f"{where}/{key}") for key in value})


@dataclass(frozen=True)
class BuiltinWords:
    """A deployment's words for the core's skills (``builtin.json``); the default words none."""

    brand: str = DEFAULT_BRAND
    skills: Mapping[str, Mapping[str, tuple[str, ...]]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @classmethod
    def from_json(cls, data: Any) -> BuiltinWords:
        """Checked words; a ValueError names the JSON Pointer of what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(": must be an object with brand and skills")
        unknown = sorted(set(data) - {"brand", "skills"})
        if unknown:
            raise ValueError(f"/{unknown[0]}: unknown member (brand, skills)")
        brand = data.get("brand", DEFAULT_BRAND)
        if not isinstance(brand, str) or not _BRAND.fullmatch(brand):
            raise ValueError("/brand: must be a slug (lower-case letters, digits, '.', '-')")
        skills = data.get("skills", {})
        if not isinstance(skills, dict):
            raise ValueError("/skills: must be an object of skill ids")
        known = core_skill_ids()
        for skill_id in skills:
            if skill_id not in known:
                raise ValueError(
                    f"/skills/{skill_id}: no such core skill ({', '.join(sorted(known))})"
                )
        worded = {key: _skill_words(value, f"/skills/{key}") for key, value in skills.items()}
        return cls(brand, MappingProxyType(worded))

    def word(self, manifest: Any) -> Any:
        """A core skill's manifest in these words: the brand in every ``{brand}``, and the
        examples and utterances given for it in place of the core's (their places kept)."""
        worded = _branded(copy.deepcopy(manifest), self.brand)
        if not isinstance(worded, dict):
            return worded  # not a manifest: the manifest check refuses it
        given = self.skills.get(worded.get("id", ""), {})
        if "examples" in given and isinstance(worded.get("skill"), dict):
            worded["skill"]["examples"] = list(given["examples"])
        if "utterances" in given:
            routing = worded.setdefault("routing", {})
            if isinstance(routing, dict):
                routing["utterances"] = list(given["utterances"])
        return worded


def _branded(value: Any, brand: str) -> Any:
    if isinstance(value, str):
        return value.replace(PLACEHOLDER, brand)
    if isinstance(value, list):
        return [_branded(item, brand) for item in value]
    if isinstance(value, dict):
        return {key: _branded(item, brand) for key, item in value.items()}
    return value
