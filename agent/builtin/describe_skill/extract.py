"""Arguments of ``describe_skill`` from plain text: which skill the caller wants described.

The skill is named by its id (``check_link_capacity``, also ``check-link-capacity`` or
``checkLinkCapacity``), by a plain name its manifest lists in ``routing.aliases`` (``link
capacity``, ``headroom``), or by a word of its id that no other skill's id or aliases has,
called a skill (``the evaluate skill``). An id anywhere in the text beats a name; among ids,
and then among names, the first mentioned wins (the aliases before the words of ids), except
``describe_skill``'s own, which another id beats (``call describe_skill with the name
lookup_item``: it is called to describe the other). The ids
and names are the registry's, bound at start-up (:func:`bind`), removed skills included:
describing them explains why they are gone. So a new skill is describable by text the moment
its folder exists, and no other skill's file changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

from agent.routing.alternation import Alternation, Alternative
from agent.routing.extractors import Extract, plain, total


class Named(Protocol):
    """What the extractor reads of a manifest."""

    @property
    def id(self) -> str: ...

    @property
    def aliases(self) -> tuple[str, ...]: ...


SELF = "describe_skill"


def _id_forms(skill_id: str) -> list[str]:
    return [skill_id, skill_id.replace("_", "-"), skill_id.replace("_", "")]


def _inflected(word: str) -> str:
    """A word of a name of more than one word, in any inflection ("the threshold-checking
    skill" names the "threshold check"); a one-word name is the word itself ("condition", not
    "conditions")."""
    return re.escape(word) + r"(?:s|es|ed|ing|er|ers)?"


def bind(manifests: Iterable[Named]) -> Extract:
    """The extractor for exactly these skills (called once, when the registry is loaded)."""
    listed = sorted(manifests, key=lambda m: m.id)
    ids = [m.id for m in listed]
    by_group = {f"s{i}": skill_id for i, skill_id in enumerate(ids)}
    id_pattern = Alternation(
        [
            Alternative(
                f"(?P<s{i}>(?<![a-z0-9])(?:"
                + "|".join(re.escape(form) for form in _id_forms(skill_id))
                + ")(?![a-z0-9]))",
                "".join(form[0] for form in _id_forms(skill_id)),
            )
            for i, skill_id in enumerate(ids)
            if skill_id
        ],
        guard="(?<![a-z0-9])",
    )
    phrases = sorted(
        ((plain(alias), m.id) for m in listed for alias in m.aliases if m.id != "describe_skill"),
        key=lambda item: len(item[0]),
        reverse=True,
    )
    # "the evaluate skill": a word of one skill's id (of no other's id nor alias), called a skill
    owners: dict[str, set[str]] = {}
    for m in listed:
        for word in set(m.id.split("_")) | {w for a in m.aliases for w in plain(a).split()}:
            owners.setdefault(word, set()).add(m.id)
    phrases += sorted(
        (
            (f"{word} skill", m.id)
            for m in listed
            if m.id != "describe_skill"
            for word in dict.fromkeys(m.id.split("_"))
            if word != "skill" and owners.get(word) == {m.id}
        ),
        key=lambda item: len(item[0]),
        reverse=True,
    )
    alias_pattern = Alternation(
        [
            Alternative(
                f"(?P<a{i}>(?<![a-z0-9_-])"
                + r"[\s_-]+".join(
                    map(_inflected, phrase.split()) if " " in phrase else [re.escape(phrase)]
                )
                + "(?![a-z0-9_-]))",
                phrase.split()[0][0],
            )
            for i, (phrase, _) in enumerate(phrases)
            if phrase.split()
        ],
        guard="(?<![a-z0-9_-])",
    )

    @total
    def extract(text: str) -> dict[str, Any]:
        """``{"skill_id": ...}`` for the skill ``text`` asks about, else ``{}``."""
        folded = plain(text)
        # describe_skill's own id beside another's is the skill called, not the one described
        # ("call describe_skill with the name lookup_item"): the other is described
        found = next(
            (m for m in id_pattern.finditer(folded) if by_group.get(m.lastgroup or "") != SELF),
            None,
        ) or id_pattern.search(folded)
        if found is not None and found.lastgroup is not None:
            return {"skill_id": by_group[found.lastgroup]}
        alias = alias_pattern.search(folded)
        if alias is not None and alias.lastgroup is not None:
            return {"skill_id": phrases[int(alias.lastgroup[1:])][1]}
        return {}

    return extract
