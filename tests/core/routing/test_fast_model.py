"""The classifier's ``FastModel`` computes what scikit-learn's fitted pipeline computes.

``FastModel`` is the one bypass of a library in the router (it reads the fitted vocabularies,
idf weights and coefficients once, and scores a text without scikit-learn's per-call
machinery): these tests hold it equal to ``Pipeline.predict_proba``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

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
