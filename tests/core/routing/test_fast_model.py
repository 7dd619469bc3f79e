"""The classifier's ``FastModel`` computes what scikit-learn's fitted pipeline computes.

``FastModel`` is the one bypass of a library in the router (it reads the fitted vocabularies,
idf weights and coefficients once, and scores a text without scikit-learn's per-call
machinery): these tests hold it equal to ``Pipeline.predict_proba``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.routing import classifier
from agent.routing.classifier import FastModel, _pipeline, normalize


def test_the_fast_model_is_the_pipeline() -> None:
    texts = ["free bandwidth on link", "cpu above 90", "list devices", "hello there", "a poem"]
    labels = ["cap", "eval", "inv", "oos", "oos"]
    pipeline = _pipeline().fit(texts, labels)
    fast = FastModel(pipeline)
    assert list(fast.classes_) == list(pipeline.classes_)
    for text in ["free bw on acme-lnk-00002", "cpu", "", "zzz", "\x00", "devices " * 500]:
        read = normalize(text)
        assert np.allclose(fast.predict_proba([read]), pipeline.predict_proba([read]))
    binary = _pipeline().fit(["free link bandwidth", "hello there friend"], ["cap", "oos"])
    for text in ["free link", "hello", ""]:
        assert np.allclose(FastModel(binary).predict_proba([text]), binary.predict_proba([text]))


_FITTED = _pipeline().fit(
    ["free bandwidth on link", "cpu above 90", "list devices", "hello there", "a poem", "ram"],
    ["cap", "eval", "inv", "oos", "oos", "eval"],
)
_FAST = FastModel(_FITTED)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["free", "bandwidth", "cpu", "90", "link", "a", "x", "devices", "é", " "])
        | st.text(max_size=6),
        max_size=12,
    )
)
def test_the_fast_model_is_the_pipeline_for_any_words(words: list[str]) -> None:
    """Repeated terms (sublinear counts), one-letter words (char n-grams shorter than 5),
    unknown terms and empty blocks: the same probabilities as scikit-learn's."""
    read = normalize(" ".join(words))
    assert np.allclose(_FAST.predict_proba([read]), _FITTED.predict_proba([read]))


def test_the_fast_models_word_cache_is_bounded_and_changes_no_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past its bound the per-word cache starts again; a word met before and after the reset,
    and words repeated in one text, score as scikit-learn scores them."""
    monkeypatch.setattr(classifier, "UNIT_CACHE_SIZE", 3)
    fast = FastModel(_FITTED)
    texts = [f"free bandwidth w{i} cpu cpu" for i in range(20)] + ["free bandwidth", "cpu"]
    for text in texts:
        read = normalize(text)
        assert np.allclose(fast.predict_proba([read]), _FITTED.predict_proba([read]))
        assert fast.probabilities(read) == pytest.approx(list(fast.predict_proba([read])[0]))
    assert all(len(block._shares) <= 3 and len(block._rows) <= 3 for block in fast._blocks)
