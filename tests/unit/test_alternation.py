"""An Alternation finds what ``re`` finds: the leftmost match, then the first alternative there.

Held over generated alternatives and texts made of their own pieces (so matches, near misses,
overlaps and prefixes of one another are common), and over the two real users: the describe
extractor against its plain-regex form as it was, and the operator phrases (tests in
test_extractors.py).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.registry.loader import load_registry
from agent.routing.alternation import Alternation, Alternative
from agent.routing.extractors import plain
from netops.deployment import SKILLS_DIR

GUARD = "(?<![a-z0-9_-])"
WORDS = ["at", "a", "at least", "least", "ab", "b", "cd", "c", "abc", "x-y", "x y", "_"]
GLUE = ["", " ", "-", "_", "  ", "9", "a"]


def _alternatives(phrases: list[str], guarded: list[bool]) -> list[Alternative]:
    return [
        Alternative(
            f"(?P<g{i}>{GUARD if guard else ''}"
            + r"[\s_-]+".join(map(re.escape, phrase.split()))
            + ("(?![a-z0-9_-]))" if guard else ")"),
            phrase[0],
        )
        for i, (phrase, guard) in enumerate(zip(phrases, guarded, strict=False))
    ]


def _plain(alternatives: list[Alternative]) -> re.Pattern[str]:
    return re.compile("|".join(a.pattern for a in alternatives))


def _spans(matches: Any) -> list[tuple[int, int, str | None]]:
    return [(m.start(), m.end(), m.lastgroup) for m in matches]


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8, unique=True),
    st.data(),
)
def test_it_searches_as_re_does(phrases: list[str], data: st.DataObject) -> None:
    # all guarded (one guard for all), or none guarded with no guard given
    guarded = data.draw(st.booleans())
    alternatives = _alternatives(phrases, [guarded] * len(phrases))
    alternation = Alternation(alternatives, guard=GUARD if guarded else "")
    pieces = data.draw(
        st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(GLUE)), max_size=7)
    )
    text = "".join(word + glue for word, glue in pieces)
    reference = _plain(alternatives)
    found, expected = alternation.search(text), reference.search(text)
    assert _spans([found] if found else []) == _spans([expected] if expected else [])
    assert _spans(alternation.finditer(text)) == _spans(reference.finditer(text))


def test_no_alternatives_match_nothing() -> None:
    assert Alternation([]).search("anything") is None
    assert list(Alternation([]).finditer("anything")) == []


def _describe_as_it_was(manifests: list[Any]) -> Any:
    """agent/builtin/describe_skill/extract.py's patterns as plain ``re`` alternations (a word
    of a name of several words in any inflection, as ``_inflected`` has it)."""
    listed = sorted(manifests, key=lambda m: m.id)
    ids = [m.id for m in listed]
    forms = {i: [i, i.replace("_", "-"), i.replace("_", "")] for i in ids}
    id_pattern = re.compile(
        "|".join(
            f"(?P<s{n}>(?<![a-z0-9])(?:"
            + "|".join(re.escape(f) for f in forms[i])
            + ")(?![a-z0-9]))"
            for n, i in enumerate(ids)
        )
    )
    phrases = sorted(
        ((plain(a), m.id) for m in listed for a in m.aliases if m.id != "describe_skill"),
        key=lambda item: len(item[0]),
        reverse=True,
    )
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
    alias_pattern = re.compile(
        "|".join(
            f"(?P<a{n}>(?<![a-z0-9_-])"
            + r"[\s_-]+".join(
                [re.escape(w) + "(?:s|es|ed|ing|er|ers)?" for w in phrase.split()]
                if " " in phrase
                else [re.escape(phrase)]
            )
            + "(?![a-z0-9_-]))"
            for n, (phrase, _) in enumerate(phrases)
        )
    )

    def extract(text: str) -> dict[str, Any]:
        folded = plain(text)
        by_group = {f"s{n}": i for n, i in enumerate(ids)}
        found = next(
            (
                m
                for m in id_pattern.finditer(folded)
                if by_group[m.lastgroup or ""] != "describe_skill"
            ),
            None,
        ) or id_pattern.search(folded)
        if found is not None and found.lastgroup is not None:
            return {"skill_id": by_group[found.lastgroup]}
        alias = alias_pattern.search(folded)
        if alias is not None and alias.lastgroup is not None:
            return {"skill_id": phrases[int(alias.lastgroup[1:])][1]}
        return {}

    return extract, [p for p, _ in phrases], [f for i in ids for f in forms[i]]


_REGISTRY = load_registry(SKILLS_DIR)
_MANIFESTS = [c.manifest for c in _REGISTRY]
_DESCRIBE = _REGISTRY.get("describe_skill")
_OLD, _PHRASES, _FORMS = _describe_as_it_was(_MANIFESTS)
_ATOMS = [*_PHRASES, *_FORMS, "skill", "the", "x", "9", "-", "_", "Check", "LINK", "of", "ing"]
_ATOMS += ["checking", "checks", "es", "planner", "threshold-checking"]


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_ATOMS), st.sampled_from(["", " ", "-", "_", ", ", "9", "x"])),
        max_size=6,
    )
)
def test_the_describe_extractor_finds_what_it_found(pieces: list[tuple[str, str]]) -> None:
    assert _DESCRIBE is not None and _DESCRIBE.handler is not None
    text = "".join(atom + glue for atom, glue in pieces)
    assert _DESCRIBE.handler.extract(text) == _OLD(text)


@pytest.mark.parametrize(
    "text", ["", "describe the evaluate skill", "what does check_link_capacity take"]
)
def test_the_describe_extractor_examples(text: str) -> None:
    assert _DESCRIBE is not None and _DESCRIBE.handler is not None
    assert _DESCRIBE.handler.extract(text) == _OLD(text)


class _Named:
    def __init__(self, skill_id: str, aliases: tuple[str, ...]) -> None:
        self.id = skill_id
        self.aliases = aliases


@pytest.mark.parametrize("alias", ["a.b", "c++", "(x)", "x|y", "q?", "[r]"])
def test_an_alias_is_words_never_a_pattern(alias: str) -> None:
    """An alias with regular-expression characters names itself only (one word or several)."""
    from agent.builtin.describe_skill.extract import bind

    for phrase in (alias, f"the {alias}"):
        extract = bind([_Named("some_skill", (phrase,)), _Named("describe_skill", ())])
        assert extract(f"describe {phrase} please") == {"skill_id": "some_skill"}
        assert extract("describe axb, c, x, y, q, r please") == {}


def test_each_first_characters_pattern_is_compiled_on_first_need_only() -> None:
    alternation = Alternation(
        [Alternative("(?P<a>ab)", "a"), Alternative("(?P<c>cd)", "c")], starts="[a-z]"
    )
    assert alternation._by_first == {}  # nothing compiled at construction (every start pays it)
    found = alternation.search("xx ab")
    assert found is not None and found.lastgroup == "a"
    assert set(alternation._by_first) == {"x", "a"}
    assert alternation._by_first["x"] is None  # offered by starts, begins no alternative
    compiled = alternation._by_first["a"]
    assert alternation.search("ab") is not None and alternation._by_first["a"] is compiled
    assert [m.lastgroup for m in alternation.finditer("cd ab x cd")] == ["c", "a", "c"]
