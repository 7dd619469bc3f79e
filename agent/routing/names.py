"""Skills a text names by id (``link_headroom``, ``link-headroom``, or shortened,
``eval_resource_condition``).

Ids come from the manifests, so this knows every deployment's skills and no language: a text
that names a skill and says nothing else ("lookup_vendor?") is asked back (describe it, or run
it?); a skill named where the model is unsure is the one meant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from agent.registry.loader import Capability

MIN_PREFIX = 3
"""Letters of a word an id's word may be shortened to (``eval`` for ``evaluate``)."""
# An id is an ASCII identifier and ends where its characters do: a letter of a script
# written without spaces ends it too ("plan_link_upgradeの入力"), which \w would not.
_NOT_AFTER = r"(?<![A-Za-z0-9_-])"
_NOT_BEFORE = r"(?![A-Za-z0-9_-])"
_SNAKE = re.compile(rf"{_NOT_AFTER}[A-Za-z]+(?:_[A-Za-z]+)+{_NOT_BEFORE}")
_WORDS = re.compile(r"[^\W_]+")


def spelled_out(text: str, ids: frozenset[str]) -> str:
    """``text`` with every shortened skill id written in full: an identifier in an id's shape,
    each word the start of the id's word, is that id when it is the only one it can be."""
    if "_" not in text:
        return text
    return _SNAKE.sub(lambda m: _full_id(m[0], ids), text)


@lru_cache(maxsize=256)
def _full_id(word: str, ids: frozenset[str]) -> str:
    parts = word.lower().split("_")
    if word.lower() in ids:
        return word
    found = [
        skill_id
        for skill_id in ids
        if len(id_parts := skill_id.split("_")) == len(parts)
        and all(
            p == q or (len(p) >= MIN_PREFIX and q.startswith(p))
            for p, q in zip(parts, id_parts, strict=True)
        )
    ]
    return found[0] if len(found) == 1 else word


def named(text: str, capabilities: Iterable[Capability]) -> list[Capability]:
    """The capabilities whose id ``text`` says, as an identifier (``link_headroom``,
    ``Link-Headroom``): a skill's name or alias in plain words is an ordinary phrase of the
    trade ("a capacity check"), not a reference to the skill."""
    lowered = text.lower()
    return [c for c in capabilities if _id_pattern(c.id).search(lowered)]


@lru_cache(maxsize=1024)
def _id_pattern(skill_id: str) -> re.Pattern[str]:
    joined = "[_-]".join(re.escape(part) for part in skill_id.split("_"))
    return re.compile(rf"{_NOT_AFTER}{joined}{_NOT_BEFORE}")


def without_names(text: str, capabilities: Iterable[Capability]) -> str:
    """``text``, lower-cased, with these skills' ids taken out."""
    rest = text.lower()
    for capability in capabilities:
        rest = _id_pattern(capability.id).sub(" ", rest)
    return rest


def names_only(text: str, capabilities: Sequence[Capability]) -> bool:
    """Whether ``text`` says these skills' ids and nothing else (``lookup_vendor?``)."""
    return bool(capabilities) and not _WORDS.search(without_names(text, capabilities))
