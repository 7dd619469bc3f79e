"""The held-out routing set stays held out: none of its text is in what the router trains on.

``heldout.json`` measures the router on phrasing it has never seen (``python -m bench.routing
--set heldout``). That only means something while (a) no held-out request is, up to case,
spacing and punctuation, a training text or a piece of one, and (b) nothing the agent runs
reads the file. The training texts are collected through the same code the classifier uses
(``training_texts`` per manifest, ``out_of_scope_texts``), plus each manifest's whole routing
section, every file under ``agent/routing/data`` and ``tests/routing/eval_set.json``, so a new
source of training text is covered without editing this test. Accuracy is not asserted here:
the set reports a figure, it is not a gate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent.registry.loader import load_registry
from agent.registry.manifest import State
from agent.routing import classifier
from netops.deployment import SKILLS_DIR
from tests.registry_view import DEMO_SKILLS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HELDOUT_FILE = HERE / "heldout.json"
HELDOUT = json.loads(HELDOUT_FILE.read_text(encoding="utf-8"))
SOURCES = {"chat", "ticket", "runbook", "vendor-doc"}
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


def training_texts() -> set[str]:
    """Normalized text of every source the router learns from, or could."""
    registry = load_registry(SKILLS_DIR)
    texts: list[str] = []
    for manifest in registry.manifests:
        texts += classifier.training_texts(manifest)
        texts += manifest.aliases
        raw = json.loads((manifest.folder / "manifest.json").read_text(encoding="utf-8"))
        texts += strings(raw.get("routing", {}))
        texts += strings(raw.get("skill", {}).get("examples", []))
    texts += classifier.out_of_scope_texts()
    for path in sorted(classifier.OUT_OF_SCOPE_FILE.parent.rglob("*")):
        if path.is_file():
            texts += path.read_text(encoding="utf-8").splitlines()
    evaluation = json.loads((HERE / "eval_set.json").read_text(encoding="utf-8"))
    texts += [
        e["text"] for section in evaluation.values() if isinstance(section, list) for e in section
    ]
    return {n for n in (normalized(t) for t in texts) if n}


def entries() -> list[dict[str, Any]]:
    return [e for section in ("clear", "ambiguous", "out_of_scope") for e in HELDOUT[section]]


def test_the_shape_and_the_counts() -> None:
    assert HELDOUT["version"] == 1
    assert len(HELDOUT["clear"]) >= 160
    assert len(HELDOUT["ambiguous"]) >= 30
    assert len(HELDOUT["out_of_scope"]) >= 20
    assert len(entries()) >= 200
    for entry in entries():
        assert isinstance(entry["text"], str) and entry["text"].strip(), entry
        assert entry["source"] in SOURCES, entry
    assert all(isinstance(e["skill"], str) for e in HELDOUT["clear"])
    assert not any("skill" in e for e in HELDOUT["ambiguous"] + HELDOUT["out_of_scope"])


def test_no_request_is_there_twice() -> None:
    texts = [normalized(e["text"]) for e in entries()]
    repeated = sorted({t for t in texts if texts.count(t) > 1})
    assert not repeated, repeated


def test_every_label_is_a_routable_skill_and_every_demo_skill_has_items() -> None:
    registry = load_registry(SKILLS_DIR)
    routable = {
        c.id
        for c in registry
        if c.interface is not None
        and c.handler is not None
        and c.manifest.state is not State.REMOVED
    }
    labels = {e["skill"] for e in HELDOUT["clear"]}
    labels |= {s for e in HELDOUT["ambiguous"] for s in e.get("could_be", [])}
    assert labels <= routable, labels - routable
    covered = {e["skill"] for e in HELDOUT["clear"]}
    assert routable & DEMO_SKILLS <= covered, (routable & DEMO_SKILLS) - covered


def test_no_held_out_text_is_training_text() -> None:
    training = training_texts()
    assert training  # the sources were found
    copied = []
    for entry in entries():
        text = normalized(entry["text"])
        padded = f" {text} "
        if text in training:
            copied.append((entry["text"], "equal"))
            continue
        for known in training:
            if len(text.split()) >= MIN_CONTAINED_WORDS and padded in f" {known} ":
                copied.append((entry["text"], f"inside {known!r}"))
            elif len(known.split()) >= MIN_CONTAINED_WORDS and f" {known} " in padded:
                copied.append((entry["text"], f"contains {known!r}"))
    assert not copied, copied


def test_nothing_the_agent_runs_reads_the_held_out_set() -> None:
    name = HELDOUT_FILE.name
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
