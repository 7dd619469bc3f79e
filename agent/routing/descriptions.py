"""The layer that reads descriptions: candidates scored by what their manifests say.

One document per skill, from its manifest alone (name, description, tags, examples, aliases,
and the input schema's titles, descriptions and property names), never from
``routing.utterances``: a skill with no utterances (a fresh ``new-skill``, a fork's) routes
from its manifest. Scored with Okapi BM25 over stemmed words; the index (document frequencies,
lengths) is computed at start-up from what the registry ships, and a query costs a few dict
look-ups (pure Python, tens of microseconds).

``scores`` turns BM25 into a confidence in ``[0, 1)`` per candidate: the candidate's share of
the candidates' total (of squares, which sharpens it), times how strong the best match is
(``1 - exp(-best / STRENGTH)``), so a text sharing one common word with every skill scores low
everywhere.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agent.registry.manifest import Manifest, thawed

K1 = 1.2
B = 0.75
STRENGTH = 6.0
"""BM25 mass at which a match is about 63 % convincing."""

_TOKEN = re.compile(r"[^\W\d_]{2,}")
_STOP = frozenset(
    re.findall(
        r"\S+",
        "a an and any are as at be by can could do does for from get give has have how i if in "
        "is it its me my of on one or our please show tell that the their them there these this "
        "to us was we what when where which who why will with would you your all also than then "
        "so not no just only about into over per via each every ",
    )
)


def stem(word: str) -> str:
    """A light English stem: enough that ``upgrades``/``upgrading``/``upgraded`` meet."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix == "ies" else base
    return word


def tokens(text: str) -> list[str]:
    """Stemmed content words of ``text`` (ids and figures dropped; ``_`` splits words)."""
    return [stem(w) for w in _TOKEN.findall(text.lower().replace("_", " ")) if w not in _STOP]


def _schema_texts(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        for key in ("title", "description"):
            if isinstance(node.get(key), str):
                yield node[key]
        properties = node.get("properties")
        if isinstance(properties, dict):
            yield " ".join(str(name) for name in properties)
        for value in node.values():
            if isinstance(value, dict | list):
                yield from _schema_texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _schema_texts(item)


def manifest_text(manifest: Manifest, input_schema: Any = None) -> str:
    """Everything a manifest says about what a skill does (utterances excluded)."""
    skill = thawed(manifest.skill)
    parts = [manifest.id, skill.get("name", ""), skill.get("description", "")]
    parts += list(skill.get("tags", [])) + list(skill.get("examples", []))
    parts += list(manifest.aliases)
    parts += list(_schema_texts(input_schema))
    return "\n".join(p for p in parts if isinstance(p, str))


class DescriptionIndex:
    """BM25 over one document per skill, built once."""

    def __init__(self, documents: Mapping[str, str]) -> None:
        self._tf = {skill: Counter(tokens(text)) for skill, text in documents.items()}
        self._length = {skill: sum(tf.values()) for skill, tf in self._tf.items()}
        count = len(self._tf) or 1
        self._average = (sum(self._length.values()) / count) or 1.0
        frequency: Counter[str] = Counter()
        for tf in self._tf.values():
            frequency.update(tf.keys())
        self._idf = {
            term: math.log(1 + (count - n + 0.5) / (n + 0.5)) for term, n in frequency.items()
        }

    @property
    def known(self) -> frozenset[str]:
        """Skill ids with a document."""
        return frozenset(self._tf)

    def bm25(self, text: str, candidates: Sequence[str]) -> dict[str, float]:
        """Raw BM25 of ``text`` for each known candidate."""
        query = set(tokens(text))
        scores = {}
        for skill in candidates:
            tf = self._tf.get(skill)
            if tf is None:
                continue
            norm = K1 * (1 - B + B * self._length[skill] / self._average)
            total = 0.0
            for term in query:
                f = tf.get(term)
                if f:
                    total += self._idf[term] * f * (K1 + 1) / (f + norm)
            scores[skill] = total
        return scores

    def scores(self, text: str, candidates: Sequence[str]) -> dict[str, float]:
        """Confidence per candidate in ``[0, 1)`` (see the module notes)."""
        raw = self.bm25(text, candidates)
        best = max(raw.values(), default=0.0)
        if best <= 0:
            return dict.fromkeys(raw, 0.0)
        strength = 1 - math.exp(-best / STRENGTH)
        total = sum(value * value for value in raw.values())
        return {skill: strength * value * value / total for skill, value in raw.items()}
