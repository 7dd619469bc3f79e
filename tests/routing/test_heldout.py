"""The held-out routing sets: their shape, and that none leaks into the agent or a later set.

``heldout.json`` and ``heldout_vN.json`` (N = 2, 3, ...) are spent: each was written after the
one before it, by writers who saw that set's description and first entries, and measured once
(``python -m bench.routing --set heldout`` / ``--set heldout_vN``). They report regression
figures, not how strangers fare (``tests/routing/strangers/`` does). These tests hold their
shape, that a later set shares no text with the sets before it, and that nothing the agent runs
reads them; ``copies`` is the text-overlap check the strangers' sets use too. Accuracy is not
asserted here: a set reports a figure, it is not a gate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.registry.loader import load_registry
from agent.registry.manifest import State
from netops.deployment import SKILLS_DIR
from tests.registry_view import DEMO_SKILLS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HELDOUT_FILE = HERE / "heldout.json"
HELDOUT_V2_FILE = HERE / "heldout_v2.json"
HELDOUT_V3_FILE = HERE / "heldout_v3.json"
HELDOUT_V4_FILE = HERE / "heldout_v4.json"
HELDOUT_V5_FILE = HERE / "heldout_v5.json"
HELDOUT_V6_FILE = HERE / "heldout_v6.json"
HELDOUT_V7_FILE = HERE / "heldout_v7.json"
HELDOUT_V8_FILE = HERE / "heldout_v8.json"
HELDOUT_V9_FILE = HERE / "heldout_v9.json"
HELDOUT_V10_FILE = HERE / "heldout_v10.json"
HELDOUT_V11_FILE = HERE / "heldout_v11.json"
HELDOUT_V12_FILE = HERE / "heldout_v12.json"
HELDOUT_V13_FILE = HERE / "heldout_v13.json"
HELDOUT_V14_FILE = HERE / "heldout_v14.json"
HELDOUT_V15_FILE = HERE / "heldout_v15.json"
HELDOUT_V16_FILE = HERE / "heldout_v16.json"
HELDOUT_V17_FILE = HERE / "heldout_v17.json"
HELDOUT_V18_FILE = HERE / "heldout_v18.json"
HELDOUT_V19_FILE = HERE / "heldout_v19.json"
HELDOUT_V20_FILE = HERE / "heldout_v20.json"
HELDOUT_V21_FILE = HERE / "heldout_v21.json"
HELDOUT_V22_FILE = HERE / "heldout_v22.json"
HELDOUT_V23_FILE = HERE / "heldout_v23.json"
HELDOUT_V24_FILE = HERE / "heldout_v24.json"
HELDOUT_V25_FILE = HERE / "heldout_v25.json"
HELDOUT_V26_FILE = HERE / "heldout_v26.json"
HELDOUT_V27_FILE = HERE / "heldout_v27.json"
HELDOUT_V28_FILE = HERE / "heldout_v28.json"
HELDOUT_V29_FILE = HERE / "heldout_v29.json"
HELDOUT_V30_FILE = HERE / "heldout_v30.json"
HELDOUT_V31_FILE = HERE / "heldout_v31.json"
SOURCES = {"chat", "ticket", "runbook", "vendor-doc"}
SOURCES_V2 = SOURCES | {"change-request", "email", "handover"}


@dataclass(frozen=True)
class HeldOut:
    """One held-out file and what its shape must be."""

    file: Path
    sources: frozenset[str]
    min_clear: int
    min_ambiguous: int
    min_out_of_scope: int
    min_total: int

    @property
    def data(self) -> dict[str, Any]:
        return _load(self.file)


SETS = {
    "heldout": HeldOut(HELDOUT_FILE, frozenset(SOURCES), 160, 30, 20, 200),
    "heldout_v2": HeldOut(HELDOUT_V2_FILE, frozenset(SOURCES_V2), 170, 35, 25, 230),
    "heldout_v3": HeldOut(HELDOUT_V3_FILE, frozenset(SOURCES_V2), 200, 40, 30, 270),
    "heldout_v4": HeldOut(HELDOUT_V4_FILE, frozenset(SOURCES_V2), 230, 50, 40, 320),
    "heldout_v5": HeldOut(HELDOUT_V5_FILE, frozenset(SOURCES_V2), 230, 50, 40, 320),
    "heldout_v6": HeldOut(HELDOUT_V6_FILE, frozenset(SOURCES_V2), 250, 90, 50, 390),
    "heldout_v7": HeldOut(HELDOUT_V7_FILE, frozenset(SOURCES_V2), 250, 100, 50, 400),
    "heldout_v8": HeldOut(HELDOUT_V8_FILE, frozenset(SOURCES_V2), 260, 110, 55, 425),
    "heldout_v9": HeldOut(HELDOUT_V9_FILE, frozenset(SOURCES_V2), 260, 120, 55, 435),
    "heldout_v10": HeldOut(HELDOUT_V10_FILE, frozenset(SOURCES_V2), 260, 120, 55, 435),
    "heldout_v11": HeldOut(HELDOUT_V11_FILE, frozenset(SOURCES_V2), 260, 120, 55, 435),
    "heldout_v12": HeldOut(HELDOUT_V12_FILE, frozenset(SOURCES_V2), 260, 120, 55, 435),
    "heldout_v13": HeldOut(HELDOUT_V13_FILE, frozenset(SOURCES_V2), 270, 130, 60, 470),
    "heldout_v14": HeldOut(HELDOUT_V14_FILE, frozenset(SOURCES_V2), 280, 135, 60, 480),
    "heldout_v15": HeldOut(HELDOUT_V15_FILE, frozenset(SOURCES_V2), 285, 130, 65, 490),
    "heldout_v16": HeldOut(HELDOUT_V16_FILE, frozenset(SOURCES_V2), 290, 140, 75, 520),
    "heldout_v17": HeldOut(HELDOUT_V17_FILE, frozenset(SOURCES_V2), 290, 160, 80, 540),
    "heldout_v18": HeldOut(HELDOUT_V18_FILE, frozenset(SOURCES_V2), 290, 180, 85, 560),
    "heldout_v19": HeldOut(HELDOUT_V19_FILE, frozenset(SOURCES_V2), 300, 220, 90, 610),
    "heldout_v20": HeldOut(HELDOUT_V20_FILE, frozenset(SOURCES_V2), 300, 220, 95, 620),
    "heldout_v21": HeldOut(HELDOUT_V21_FILE, frozenset(SOURCES_V2), 295, 210, 90, 600),
    "heldout_v22": HeldOut(HELDOUT_V22_FILE, frozenset(SOURCES_V2), 300, 205, 95, 610),
    "heldout_v23": HeldOut(HELDOUT_V23_FILE, frozenset(SOURCES_V2), 300, 205, 95, 610),
    "heldout_v24": HeldOut(HELDOUT_V24_FILE, frozenset(SOURCES_V2), 310, 210, 100, 630),
    "heldout_v25": HeldOut(HELDOUT_V25_FILE, frozenset(SOURCES_V2), 310, 200, 100, 620),
    "heldout_v26": HeldOut(HELDOUT_V26_FILE, frozenset(SOURCES_V2), 310, 195, 95, 610),
    "heldout_v27": HeldOut(HELDOUT_V27_FILE, frozenset(SOURCES_V2), 310, 200, 95, 610),
    "heldout_v28": HeldOut(HELDOUT_V28_FILE, frozenset(SOURCES_V2), 310, 200, 95, 610),
    "heldout_v29": HeldOut(HELDOUT_V29_FILE, frozenset(SOURCES_V2), 310, 200, 95, 610),
    "heldout_v30": HeldOut(HELDOUT_V30_FILE, frozenset(SOURCES_V2), 310, 200, 95, 620),
    "heldout_v31": HeldOut(HELDOUT_V31_FILE, frozenset(SOURCES_V2), 310, 200, 95, 620),
}
EARLIER_SETS = {
    later: (*(SETS[name].file.name for name in list(SETS)[:index]), "dev_set.json", "eval_set.json")
    for index, later in enumerate(SETS)
    if index > 0
}
"""Sets a later held-out set must share no text with (the router was tuned or looked at on them)."""
each_set = pytest.mark.parametrize("held", list(SETS.values()), ids=list(SETS))


@cache
def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


MIN_CONTAINED_WORDS = 5
"""A text this long (or longer) found inside another counts as copied from it."""

_PUNCTUATION = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")


def normalized(text: str) -> str:
    """Casefolded, punctuation stripped, whitespace collapsed."""
    return _SPACE.sub(" ", _PUNCTUATION.sub(" ", text.casefold())).strip()


def strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def entries(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for section in ("clear", "ambiguous", "out_of_scope") for e in data[section]]


def copies(texts: list[str], known_texts: frozenset[str]) -> list[tuple[str, str]]:
    """(text, how) for each of ``texts`` equal to, inside, or containing a known text.

    One text is inside another when its words are a run of the other's words. Both ways are
    looked up through the runs of MIN_CONTAINED_WORDS words that start each known text (see
    ``_openings``) instead of trying every pair: the answers are the same, and the suite's
    twenty-odd sets against each other take a second instead of minutes.
    """
    by_run, by_opening = _openings(known_texts)
    copied = []
    for original in texts:
        text = normalized(original)
        if text in known_texts:
            copied.append((original, "equal"))
            continue
        padded = f" {text} "
        words = text.split()
        starts = range(len(words) - MIN_CONTAINED_WORDS + 1)  # (none for a shorter text)
        runs = [" ".join(words[i : i + MIN_CONTAINED_WORDS]) for i in starts]
        found = set()
        if runs:  # inside a known text: the known text holds this text's first run
            found |= {(k, "inside") for k in by_run.get(runs[0], ()) if padded in f" {k} "}
        for run in set(runs):  # a known text inside: one of this text's runs opens it
            found |= {(k, "contains") for k in by_opening.get(run, ()) if f" {k} " in padded}
        copied += [(original, f"{how} {known!r}") for known, how in sorted(found)]
    return copied


@cache
def _openings(known_texts: frozenset[str]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Every run of MIN_CONTAINED_WORDS words -> the known texts holding it, and the run that
    opens a known text -> the known texts it opens (texts shorter than a run have none)."""
    by_run: dict[str, set[str]] = {}
    by_opening: dict[str, set[str]] = {}
    for known in known_texts:
        words = known.split()
        if len(words) < MIN_CONTAINED_WORDS:
            continue
        for i in range(len(words) - MIN_CONTAINED_WORDS + 1):
            by_run.setdefault(" ".join(words[i : i + MIN_CONTAINED_WORDS]), set()).add(known)
        by_opening.setdefault(" ".join(words[:MIN_CONTAINED_WORDS]), set()).add(known)
    return by_run, by_opening


@each_set
def test_the_shape_and_the_counts(held: HeldOut) -> None:
    data = held.data
    assert data["version"] == 1
    assert len(data["clear"]) >= held.min_clear
    assert len(data["ambiguous"]) >= held.min_ambiguous
    assert len(data["out_of_scope"]) >= held.min_out_of_scope
    assert len(entries(data)) >= held.min_total
    for entry in entries(data):
        assert isinstance(entry["text"], str) and entry["text"].strip(), entry
        assert entry["source"] in held.sources, entry
    assert all(isinstance(e["skill"], str) for e in data["clear"])
    assert not any("skill" in e for e in data["ambiguous"] + data["out_of_scope"])


@each_set
def test_no_request_is_there_twice(held: HeldOut) -> None:
    texts = [normalized(e["text"]) for e in entries(held.data)]
    repeated = sorted({t for t in texts if texts.count(t) > 1})
    assert not repeated, repeated


@each_set
def test_every_label_is_a_routable_skill_and_every_demo_skill_has_items(held: HeldOut) -> None:
    data = held.data
    registry = load_registry(SKILLS_DIR)
    routable = {
        c.id
        for c in registry
        if c.interface is not None
        and c.handler is not None
        and c.manifest.state is not State.REMOVED
    }
    labels = {e["skill"] for e in data["clear"]}
    labels |= {s for e in data["ambiguous"] for s in e.get("could_be", [])}
    assert labels <= routable, labels - routable
    covered = {e["skill"] for e in data["clear"]}
    assert routable & DEMO_SKILLS <= covered, (routable & DEMO_SKILLS) - covered


@pytest.mark.parametrize("later, earlier", [(k, v) for k, vs in EARLIER_SETS.items() for v in vs])
def test_a_later_held_out_set_shares_no_text_with_the_sets_before_it(
    later: str, earlier: str
) -> None:
    before = _load(HERE / earlier)
    known = frozenset(
        n
        for section in before.values()
        if isinstance(section, list)
        for e in section
        if isinstance(e, dict) and (n := normalized(e.get("text", "")))
    )
    assert known  # the earlier set was read
    copied = copies([e["text"] for e in entries(SETS[later].data)], known)
    assert not copied, copied


@each_set
def test_nothing_the_agent_runs_reads_the_held_out_set(held: HeldOut) -> None:
    name = held.file.name
    readers = []
    for top in ("agent", "skills", "netops"):
        for path in sorted((ROOT / top).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            try:
                content = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            if name in content:
                readers.append(str(path.relative_to(ROOT)))
    assert not readers, readers


def _copies_pair_by_pair(texts: list[str], known_texts: frozenset[str]) -> list[tuple[str, str]]:
    """What ``copies`` must find, by trying every pair (the reference it is held to)."""
    copied = []
    for original in texts:
        text = normalized(original)
        if text in known_texts:
            copied.append((original, "equal"))
            continue
        found = []
        for known in known_texts:
            if len(text.split()) >= MIN_CONTAINED_WORDS and f" {text} " in f" {known} ":
                found.append((known, "inside"))
            elif len(known.split()) >= MIN_CONTAINED_WORDS and f" {known} " in f" {text} ":
                found.append((known, "contains"))
        copied += [(original, f"{how} {known!r}") for known, how in sorted(found)]
    return copied


_WORDS = st.lists(st.sampled_from(["a", "b", "cc", "a b", "B!", " "]), max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_WORDS, max_size=6), known=st.lists(_WORDS, max_size=8))
def test_copies_finds_what_comparing_every_pair_finds(texts: list[str], known: list[str]) -> None:
    known_texts = frozenset(n for n in map(normalized, known) if n)
    assert copies(texts, known_texts) == _copies_pair_by_pair(texts, known_texts)
