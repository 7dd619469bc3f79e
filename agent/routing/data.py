"""What a deployment teaches its router, as data: example requests per skill, and requests no
skill fits, grouped by why.

A deployment ships one JSON file (``Deployment.routing_data``)::

    {"utterances": {"<skill id>": ["a request for that skill", ...], ...},
     "nothing_fits": {"<reason>": {"note": "<said to the caller>", "texts": ["...", ...]}, ...},
     "out_of_scope": ["a text that asks none of the skills, for no reason worth saying", ...],
     "ambiguous": [{"between": ["<skill id>", "<skill id>", ...], "texts": ["...", ...]}, ...]}

``utterances`` add to the manifests' own ``routing.utterances``: text written by people who
know the domain, in the ways its users write (styles, typos, other languages, naming
conventions), which the classifier learns from. Each ``nothing_fits`` reason is a class of its
own (changes the agent does not make, measurements no skill gives, other domains, small talk):
when a request lands there, the router asks back with what the caller can do, and says the
reason's ``note`` first ("No skill here makes changes: each one only reads."). ``out_of_scope``
adds to the core's generic out-of-scope class (greetings, the weather): texts of the domain
that ask nothing, such as a bare identifier. Each ``ambiguous`` group holds requests that
several skills fit equally ("the spare capacity of link 17" when two skills report it): a
class of its own whose probability counts for each of its skills, so such a request scores
them alike and the router asks between them. A skill id the registry does not hold is ignored
(a deployment may run a subset of its skills).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from agent.base.errors import ConfigurationError


@dataclass(frozen=True)
class NothingFits:
    """Requests no skill fits for one reason, and what to tell the caller about them."""

    note: str
    texts: tuple[str, ...]


@dataclass(frozen=True)
class Between:
    """Requests that each of several skills fits equally."""

    skills: tuple[str, ...]
    texts: tuple[str, ...]


@dataclass(frozen=True)
class RoutingData:
    """A deployment's routing data (see the module notes)."""

    utterances: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    nothing_fits: Mapping[str, NothingFits] = field(default_factory=lambda: MappingProxyType({}))
    out_of_scope: tuple[str, ...] = ()
    ambiguous: tuple[Between, ...] = ()

    @classmethod
    def load(cls, path: Path | None) -> RoutingData:
        """The data in ``path`` (none: empty); a malformed file fails the start, naming it."""
        if path is None:
            return cls()
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            return cls.from_json(document)
        except (OSError, ValueError, TypeError, KeyError) as error:
            raise ConfigurationError(f"routing data {path}: {error}") from error

    @classmethod
    def from_json(cls, document: Any) -> RoutingData:
        """From the file's parsed JSON; raises TypeError or ValueError on a wrong shape."""
        if not isinstance(document, dict):
            raise TypeError("the document must be an object")
        utterances = {
            str(skill): _texts(texts, f"utterances/{skill}")
            for skill, texts in _object(document.get("utterances", {}), "utterances").items()
        }
        reasons = _object(document.get("nothing_fits", {}), "nothing_fits")
        nothing_fits = {
            str(reason): NothingFits(
                str(_object(entry, f"nothing_fits/{reason}").get("note", "")),
                _texts(entry["texts"], f"nothing_fits/{reason}/texts"),
            )
            for reason, entry in reasons.items()
        }
        out_of_scope = _texts(document.get("out_of_scope", []), "out_of_scope")
        ambiguous = _groups(document.get("ambiguous", []))
        return cls(
            MappingProxyType(utterances), MappingProxyType(nothing_fits), out_of_scope, ambiguous
        )


def _groups(value: Any) -> tuple[Between, ...]:
    if not isinstance(value, list):
        raise TypeError("ambiguous must be a list")
    groups = []
    for i, entry in enumerate(value):
        skills = _texts(_object(entry, f"ambiguous/{i}").get("between"), f"ambiguous/{i}/between")
        if len(set(skills)) < 2:
            raise ValueError(f"ambiguous/{i}/between must name at least two skills")
        groups.append(
            Between(tuple(sorted(set(skills))), _texts(entry["texts"], f"ambiguous/{i}/texts"))
        )
    return tuple(groups)


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"{where} must be an object")
    return value


def _texts(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise TypeError(f"{where} must be a list of strings")
    return tuple(t for t in value if t.strip())
