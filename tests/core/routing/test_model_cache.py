"""The classifier is trained once per training set and kept on disk (agent/routing/model_cache.py):
a second process with the same skills reads it back, a changed skill trains anew, a damaged or
unwritable cache costs a training and nothing else. And one model weighs every skill, so a
request for a skill the caller may not use does not land on the nearest one it may."""

from __future__ import annotations

import logging
import os
import pickle
import threading
import time
from pathlib import Path

import pytest

from agent.routing.classifier import SkillClassifier
from agent.routing.model_cache import IDLE, KEEP, ModelCache

EXAMPLES = {
    "match_order": [
        "does this invoice match its purchase order",
        "compare the invoice with the order line by line",
        "reconcile the bill against the PO",
        "are the quantities on the invoice the ones we ordered",
    ],
    "order_status": [
        "what is the status of this invoice",
        "has the invoice been paid yet",
        "when is the invoice due",
        "is the invoice on hold",
    ],
}
OTHER = ["hello there", "what's the weather tomorrow", "book a meeting room", "tell me a joke"]


def classifier(cache: ModelCache, examples: dict[str, list[str]] = EXAMPLES) -> SkillClassifier:
    return SkillClassifier(examples, OTHER, cache=cache)


def models(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.pickle"))


def test_a_second_classifier_reads_the_model_the_first_kept(tmp_path: Path) -> None:
    first = classifier(ModelCache(tmp_path))
    first.model()
    [kept] = models(tmp_path)
    # what the file holds is what the second one uses: swap in a model trained on other labels
    other = SkillClassifier({"a": ["x y"], "b": ["z w"]}, OTHER)
    kept.write_bytes(pickle.dumps(other.model().pipeline))
    second = classifier(ModelCache(tmp_path))
    assert set(second.model().labels) == {"a", "b", "__out_of_scope__"}


def test_a_training_is_said_in_the_log_and_a_cached_model_is_not(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With no cached model the agent is silent until it is trained: the log says why."""
    with caplog.at_level(logging.INFO, logger="agent.routing.classifier"):
        classifier(ModelCache(tmp_path)).model()
    said = [r.getMessage() for r in caplog.records if r.name == "agent.routing.classifier"]
    assert said[0] == "routing: training the text model on 12 texts (no cached model)"
    assert said[1].startswith("routing: text model trained in ")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="agent.routing.classifier"):
        classifier(ModelCache(tmp_path)).model()
    assert not [r for r in caplog.records if r.name == "agent.routing.classifier"]


def test_the_same_skills_give_the_same_model_and_one_file(tmp_path: Path) -> None:
    text = "is INV-1 paid"
    first = classifier(ModelCache(tmp_path)).predict(text, EXAMPLES)
    second = classifier(ModelCache(tmp_path)).predict(text, EXAMPLES)
    assert first == second
    assert len(models(tmp_path)) == 1


def test_a_changed_training_text_trains_a_model_of_its_own(tmp_path: Path) -> None:
    classifier(ModelCache(tmp_path)).model()
    changed = {**EXAMPLES, "order_status": [*EXAMPLES["order_status"], "invoice paid?"]}
    classifier(ModelCache(tmp_path), changed).model()
    assert len(models(tmp_path)) == 2


def test_a_damaged_file_is_trained_again_and_replaced(tmp_path: Path) -> None:
    classifier(ModelCache(tmp_path)).model()
    [kept] = models(tmp_path)
    for damage in (b"", b"not a pickle", kept.read_bytes()[:100]):
        kept.write_bytes(damage)
        prediction = classifier(ModelCache(tmp_path)).predict("has the invoice been paid", EXAMPLES)
        assert prediction.skill_id == "order_status"
        assert pickle.loads(kept.read_bytes()) is not None  # whole again


def test_an_unwritable_cache_costs_a_training_and_nothing_else(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    prediction = classifier(ModelCache(blocked / "models")).predict("is it paid", EXAMPLES)
    assert prediction.skill_id == "order_status"
    assert blocked.read_text() == "not a directory"


def test_a_request_for_a_skill_the_caller_may_not_use_is_not_given_another(
    tmp_path: Path,
) -> None:
    model = classifier(ModelCache(tmp_path))
    text = "reconcile the invoice against its purchase order"
    assert model.predict(text, {"match_order", "order_status"}).skill_id == "match_order"
    mine = model.predict(text, {"order_status"})
    assert mine.skill_id is None
    assert [skill for skill, _ in mine.ranking] == ["order_status"]
    assert mine.ranking[0][1] < 0.5  # its own probability among all skills, not renormalised


def test_a_process_waiting_for_anothers_training_reads_its_model(tmp_path: Path) -> None:
    """While one process trains a key (holding its lock), another waits, then reads the model
    the first stored instead of training its own (what it reads proves it: other labels)."""
    cache = ModelCache(tmp_path)
    waiting = classifier(ModelCache(tmp_path))
    key = waiting.cache_key()
    loaded: list[frozenset[str]] = []
    with cache.training(key):
        thread = threading.Thread(target=lambda: loaded.append(frozenset(waiting.model().labels)))
        thread.start()
        thread.join(timeout=1.0)
        assert thread.is_alive() and not loaded  # it waits for the lock
        other = SkillClassifier({"a": ["x y"], "b": ["z w"]}, OTHER)
        cache.store(key, other.model().pipeline)
    thread.join(timeout=60)
    assert loaded == [frozenset({"a", "b", "__out_of_scope__"})]
    assert len(models(tmp_path)) == 1


def test_a_cache_where_no_lock_can_be_made_still_trains(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert classifier(ModelCache(blocked / "models")).predict("is it paid", EXAMPLES).ranking


def test_the_cache_removes_models_unused_for_a_day_beyond_the_last_used(tmp_path: Path) -> None:
    """Every change of the routing data names a new model: the directory keeps the ``KEEP``
    used last (stored or read) and every model used within ``IDLE``; an old one goes with its
    lock file."""
    cache = ModelCache(tmp_path)
    with cache.training("k0"):
        pass
    for i in range(KEEP + 2):
        cache.store(f"k{i}", {"model": i})
        old = time.time() - IDLE - 1_000 + i  # stored one after another, days ago
        os.utime(cache.path(f"k{i}"), (old, old))
    assert {p.stem for p in models(tmp_path)} == {f"k{i}" for i in range(2, KEEP + 2)}
    assert not (tmp_path / ".k0.lock").exists()

    assert cache.load("k2") == {"model": 2}  # read now: used last
    cache.store("new", {"model": "new"})
    kept = {p.stem for p in models(tmp_path)}
    assert "k2" in kept and "k3" not in kept and "new" in kept
    assert len(kept) == KEEP

    recent = [f"r{i}" for i in range(KEEP + 2)]  # more than KEEP, all in use today
    for key in recent:
        cache.store(key, {"model": key})
    assert {p.stem for p in models(tmp_path)} == {*recent, "new", "k2"}  # the old ones went
