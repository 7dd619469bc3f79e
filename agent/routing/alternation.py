"""A large alternation of phrases, searched as ``re`` searches it, without scanning every letter.

``re`` tries every alternative at every position of the text. For a hundred phrases, each
behind its own lookbehind, that was most of what an extractor spent on a text that names none
of them (the operator phrases: 106 us of the worked example's routing; the describe
extractor's skill names: 110-130 us). Every alternative here begins with one of a few known
characters at a position a cheap ``starts`` pattern finds, so only those positions are tried,
and at each only the alternatives that can begin with its character, in their order. The
answer is ``re``'s: the leftmost match, and there the first alternative that matches (tests
hold the two equal, tests/unit/test_alternation.py and the extractors' tests).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

_UNSEEN: re.Pattern[str] = re.compile(r"(?!x)x")
"""A first character no text has offered yet (a pattern that never matches, told apart by
identity)."""


@dataclass(frozen=True, slots=True)
class Alternative:
    """One alternative: its pattern (a named group, usually) and the characters it can begin
    with; the caller vouches that every match of it begins with one of them."""

    pattern: str
    first: str


class Alternation:
    """``re.compile("|".join(alternatives))``'s ``search`` and ``finditer``, dispatched by the
    character at each candidate start.

    ``guard`` is a lookbehind every alternative's match satisfies at its start (or ""); the
    candidates are the positions where it holds and the text has one of the first characters.
    ``starts``, when given, is the candidates' pattern instead (one character each, a superset
    of every alternative's starts): for alternatives that do not share one guard. No
    alternative may match the empty string (each begins with a character).

    Each character's pattern is compiled when a text first needs it: compiling them all took
    45 ms of every start of every command that imports an extractor, mostly for characters
    that a given process never meets.
    """

    def __init__(
        self, alternatives: Sequence[Alternative], guard: str = "", starts: str | None = None
    ) -> None:
        self.alternatives = tuple(alternatives)
        by_first: dict[str, list[str]] = {}
        for alternative in self.alternatives:
            for char in dict.fromkeys(alternative.first):
                by_first.setdefault(char, []).append(alternative.pattern)
        self._sources = {char: "|".join(ps) for char, ps in by_first.items()}
        self._by_first: dict[str, re.Pattern[str] | None] = {}
        chars = "".join(re.escape(c) for c in sorted(by_first))
        if starts is None:
            starts = f"{guard}[{chars}]" if chars else r"(?!x)x"
        self._starts = re.compile(starts)

    def search(self, text: str, position: int = 0) -> re.Match[str] | None:
        """The leftmost match at or after ``position`` (the first alternative there)."""
        by_first = self._by_first
        for start in self._starts.finditer(text, position):
            at = start.start()
            pattern = by_first.get(text[at], _UNSEEN)
            if pattern is _UNSEEN:
                pattern = self._compiled(text[at])
            found = pattern.match(text, at) if pattern is not None else None
            if found is not None:
                return found
        return None

    def _compiled(self, char: str) -> re.Pattern[str] | None:
        """The pattern of the alternatives that begin with ``char``, compiled on first need
        (None, kept too, for a character that begins none: ``starts`` may offer it)."""
        source = self._sources.get(char)
        pattern = self._by_first[char] = None if source is None else re.compile(source)
        return pattern

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Successive non-overlapping matches, as ``re.finditer`` gives them."""
        position = 0
        while (found := self.search(text, position)) is not None:
            yield found
            position = found.end()
