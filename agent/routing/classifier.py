"""Pick a skill from free text, among the candidates a caller may use, or admit uncertainty.

TF-IDF over words and character n-grams (robust to typos and abbreviations) feeding a
logistic regression, trained before the agent serves from the manifests (name, description,
tags, examples, routing utterances) plus an out-of-scope class of generic text. One model for
the whole registry, kept on disk by the digest of its training set (``model_cache``); a
prediction ranks only the caller's candidates, so it can never return a skill outside them.

Prediction does not go through scikit-learn's ``predict_proba`` (about 1.4 ms of input checks
and sparse-matrix building per message): :class:`FastModel` reads the fitted vocabularies, idf
weights and coefficients once and computes the same probabilities from the rows of the terms a
text holds (about 0.2 ms).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.registry.manifest import Manifest, thawed
from agent.routing.data import RoutingData
from agent.routing.model_cache import ModelCache, training_key

if TYPE_CHECKING:
    from sklearn.pipeline import Pipeline

log = logging.getLogger(__name__)

OUT_OF_SCOPE = "__out_of_scope__"
OUT_OF_SCOPE_FILE = Path(__file__).resolve().parent / "data" / "out_of_scope.txt"
_WITH_DIGIT = re.compile(r"(?<!\S)[^\s\d]*+\d\S*+")
"""A whitespace-separated token holding a digit, whole. Tried at token starts only and without
backtracking: linear in the text (unanchored, a search would retry every position of a long
token holding no digit: quadratic)."""


def normalize(text: str) -> str:
    """Lower-case, and fold every token holding a digit (ids, figures) into one placeholder.

    An identifier says which resource, not what the caller wants: without the fold, a bare id
    such as a link name pulls confidently towards whichever skill's examples used such ids.
    """
    return _WITH_DIGIT.sub(" 0 ", text.lower())


def training_texts(manifest: Manifest) -> list[str]:
    """What a manifest says about the requests it serves."""
    skill = thawed(manifest.skill)
    texts = [skill["name"], skill["description"], " ".join(skill["tags"])]
    texts += skill.get("examples", [])
    texts += list(manifest.utterances)
    return [t for t in texts if t.strip()]


def out_of_scope_texts(path: Path = OUT_OF_SCOPE_FILE) -> list[str]:
    """Text that asks none of the skills, one per line; comments start with '#'."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@dataclass(frozen=True)
class Prediction:
    """The best candidate and how sure the model is; ``skill_id`` None means out of scope
    (then ``reason`` names the deployment's reason why nothing fits, when one was learned)."""

    skill_id: str | None
    confidence: float
    ranking: tuple[tuple[str, float], ...]
    reason: str | None = None


def nothing_fits_label(reason: str) -> str:
    """The class of the requests no skill fits for ``reason`` (``RoutingData.nothing_fits``)."""
    return f"{OUT_OF_SCOPE}:{reason}"


BETWEEN = "__between__:"
"""The prefix of a class of requests several skills fit equally (``RoutingData.ambiguous``)."""


def between_label(skills: Iterable[str]) -> str:
    """The class of the requests that each of ``skills`` fits equally."""
    return BETWEEN + "|".join(sorted(skills))


def members_of(label: str) -> tuple[str, ...]:
    """The skills a between-class counts for (none: ``label`` is another class)."""
    return tuple(label[len(BETWEEN) :].split("|")) if label.startswith(BETWEEN) else ()


def _reason_of(label: str) -> str | None:
    prefix = f"{OUT_OF_SCOPE}:"
    return label[len(prefix) :] if label.startswith(prefix) else None


def _pipeline() -> Pipeline:
    # scikit-learn (about a second to import) is imported on the first training, which the
    # app runs in the background after start-up (agent/app/tasks.py), not on the way to its card.
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import FeatureUnion, Pipeline

    features = FeatureUnion(
        [
            ("words", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1)),
            (
                "chars",
                TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True),
            ),
        ]
    )
    # C = 100: probabilities sharp enough that a clear request clears the threshold, soft
    # enough that a request two skills fit leaves both in reach of the margin (chosen on the
    # spent stranger sets: 300 routed 2 % more clear requests, asked back 4 % fewer ambiguous
    # ones). Balanced weights keep the large out-of-scope class from drowning the skills.
    model = LogisticRegression(C=100.0, max_iter=5000, random_state=0, class_weight="balanced")
    return Pipeline([("features", features), ("model", model)])


def _signature(pipeline: Pipeline) -> str:
    """How ``pipeline`` trains, for the cache's key: its parameters and the library's release."""
    import sklearn

    return f"{sklearn.__version__} {pipeline!r}"


class FastModel:
    """A fitted pipeline's ``predict_proba`` for one text, without scikit-learn's overhead.

    The pipeline's arithmetic: per vectorizer, its analyzer, (sublinear) term counts times
    idf, L2 norm; the union's blocks side by side; then the logistic regression's softmax (or
    sigmoid, for two classes). Only the terms a text holds are read: a block's logits are
    ``sum_t tf_t idf_t coef_t / ||tf idf||``. ``tests/core/routing/test_fast_model.py`` holds
    it to the pipeline.
    """

    def __init__(self, pipeline: Pipeline) -> None:
        import numpy  # with scikit-learn, off the way to the first card

        np = self._np = numpy
        self.pipeline = pipeline  # what it reads, as fitted (the cache keeps this)
        union = pipeline.named_steps["features"]
        model = pipeline.named_steps["model"]
        self.classes_ = model.classes_
        self.labels: tuple[str, ...] = tuple(str(label) for label in model.classes_)
        coef = np.asarray(model.coef_, dtype=float).T  # features x classes
        self._blocks: list[_Block] = []
        offset = 0
        for _, vectorizer in union.transformer_list:
            size = len(vectorizer.vocabulary_)
            self._blocks.append(_Block(vectorizer, coef[offset : offset + size]))
            offset += size
        self._intercept = np.asarray(model.intercept_, dtype=float)

    def predict_proba(self, texts: Sequence[str]) -> Any:
        """Probabilities per class for each text (rows), as the pipeline gives them."""
        return self._np.array([self.probabilities(text) for text in texts])

    def probabilities(self, text: str) -> list[float]:
        """One text's probabilities, in the order of :attr:`labels`."""
        np = self._np
        logits = self._intercept.copy()
        for block in self._blocks:
            logits += block.logits(text)
        if len(logits) == 1:  # binary: one column, the second class's logit
            p = 1.0 / (1.0 + math.exp(-float(logits[0])))
            return [1.0 - p, p]
        exps = np.exp(logits - logits.max())
        result: list[float] = (exps / exps.sum()).tolist()
        return result


class _Block:
    """One vectorizer of the union: its analyzer, vocabulary, idf, and ``idf x coef`` rows."""

    def __init__(self, vectorizer: Any, coef: Any) -> None:
        import numpy

        self._np = numpy
        self._analyzer: Callable[[str], list[str]] = vectorizer.build_analyzer()
        self._vocabulary = {str(k): int(v) for k, v in vectorizer.vocabulary_.items()}
        self._idf = numpy.asarray(vectorizer.idf_, dtype=float)
        self._weighted = numpy.ascontiguousarray(coef * self._idf[:, None])
        self._sublinear = bool(vectorizer.sublinear_tf)

    def logits(self, text: str) -> Any:
        """This block's part of the decision for ``text`` (zeros when it knows no term)."""
        np = self._np
        get = self._vocabulary.get
        counts = Counter(i for i in map(get, self._analyzer(text)) if i is not None)
        if not counts:
            return np.zeros(self._weighted.shape[1])
        terms = np.fromiter(counts.keys(), dtype=np.intp, count=len(counts))
        tf = np.fromiter(counts.values(), dtype=float, count=len(counts))
        if self._sublinear:
            tf = 1.0 + np.log(tf)
        weights = tf * self._idf[terms]
        return (tf @ self._weighted[terms]) / math.sqrt(float(weights @ weights))


def _by_probability(pair: tuple[str, float]) -> tuple[float, str]:
    return -pair[1], pair[0]


class SkillClassifier:
    """One model over every routable skill and the out-of-scope class, trained once.

    A caller's candidates are a subset of the skills; the model still weighs them all, so a
    request for a skill the caller may not use gives its mass to that skill, not to the
    nearest one the caller may use: the router then asks back instead of running the wrong
    skill. Trained (or read from :class:`ModelCache`) once, before the agent serves.
    """

    def __init__(
        self,
        examples: Mapping[str, Sequence[str]],
        out_of_scope: Sequence[str],
        cache: ModelCache | None = None,
        nothing_fits: Mapping[str, Sequence[str]] | None = None,
        ambiguous: Mapping[tuple[str, ...], Sequence[str]] | None = None,
    ) -> None:
        self._examples = {k: [normalize(t) for t in v] for k, v in examples.items()}
        self._between = {
            between_label(skills): [normalize(t) for t in texts]
            for skills, texts in sorted((ambiguous or {}).items())
        }
        self._out_of_scope = [normalize(t) for t in out_of_scope]
        self._nothing_fits = {
            nothing_fits_label(reason): [normalize(t) for t in texts]
            for reason, texts in sorted((nothing_fits or {}).items())
        }
        self._cache = cache
        self._model: FastModel | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_manifests(
        cls,
        manifests: Iterable[Manifest],
        cache: ModelCache | None = None,
        data: RoutingData | None = None,
    ) -> SkillClassifier:
        """Train data from the registry's routable manifests and the deployment's data."""
        data = data or RoutingData()
        examples = {
            m.id: training_texts(m) + list(data.utterances.get(m.id, ())) for m in manifests
        }
        nothing_fits = {reason: entry.texts for reason, entry in data.nothing_fits.items()}
        out_of_scope = [*out_of_scope_texts(), *data.out_of_scope]
        return cls(examples, out_of_scope, cache, nothing_fits, _groups(data, examples))

    @property
    def known(self) -> frozenset[str]:
        """Skill ids the classifier has training data for."""
        return frozenset(self._examples)

    @property
    def ready(self) -> bool:
        """Whether the model is trained (or loaded): predicting needs no training first."""
        return self._model is not None

    def training_set(self) -> tuple[list[str], list[str]]:
        """Texts and their labels, in a fixed order (the cache's key is computed over them)."""
        texts, labels = list(self._out_of_scope), [OUT_OF_SCOPE] * len(self._out_of_scope)
        for label, reason_texts in [*self._nothing_fits.items(), *self._between.items()]:
            texts += reason_texts
            labels += [label] * len(reason_texts)
        for skill_id in sorted(self._examples):
            texts += self._examples[skill_id]
            labels += [skill_id] * len(self._examples[skill_id])
        return texts, labels

    def model(self) -> FastModel:
        """The model: trained, or read from the cache, on first use (then kept)."""
        model = self._model
        if model is None:
            with self._lock:
                model = self._model
                if model is None:
                    model = self._model = self._load_or_fit()
        return model

    def cache_key(self, pipeline: Pipeline | None = None) -> str:
        """The key the model cache keeps this classifier's model under."""
        texts, labels = self.training_set()
        return training_key(texts, labels, _signature(pipeline or _pipeline()))

    def _load_or_fit(self) -> FastModel:
        texts, labels = self.training_set()
        if len(set(labels)) < 2:  # one skill and no out-of-scope text: nothing to tell apart
            raise ValueError("the classifier needs at least two classes to train")
        pipeline = _pipeline()
        key = self.cache_key(pipeline)
        if self._cache is None:
            return FastModel(_fitted(pipeline, texts, labels))
        cached = self._cache.load(key)
        if cached is None:
            with self._cache.training(key):
                # another process may have trained it while this one waited for the lock
                cached = self._cache.load(key)
                if cached is None:
                    cached = _fitted(pipeline, texts, labels)
                    self._cache.store(key, cached)
        return FastModel(cached)

    def predict(self, text: str, candidates: Iterable[str]) -> Prediction:
        """Rank the candidates for ``text``; unknown candidates are ignored.

        A skill's probability is its class's plus that of every between-class it belongs to:
        a request two skills fit equally gives both the same high probability. ``skill_id``
        is the most probable skill when it is a candidate and outweighs every other class,
        else None (out of scope, or a skill the caller may not use); ``ranking`` holds the
        candidates only.
        """
        allowed = frozenset(candidates) & self.known
        if not allowed or not text.strip():
            return Prediction(None, 0.0, ())
        model = self.model()
        classes = dict(zip(model.labels, model.probabilities(normalize(text)), strict=True))
        skills = _folded(classes, self.known)
        ranking = tuple(
            sorted(((s, p) for s, p in skills.items() if s in allowed), key=_by_probability)
        )
        best_class = min(classes.items(), key=_by_probability)
        best_skill = min(skills.items(), key=_by_probability)
        if best_class[0] in self._between or best_class[0] in self.known:
            if best_skill[0] in allowed:
                return Prediction(best_skill[0], best_skill[1], ranking)
            return Prediction(None, best_skill[1], ranking)
        return Prediction(None, best_class[1], ranking, _reason_of(best_class[0]))


def _fitted(pipeline: Pipeline, texts: list[str], labels: list[str]) -> Pipeline:
    """``pipeline`` trained, said in the log: with no cached model, the agent listens only
    when this is done (about a minute for a few thousand texts), and an operator should know
    why it is silent."""
    # One BLAS thread: the solver's products are small, and threads that wait for work
    # spin, taking the other cores from the requests (six times the CPU of one thread).
    from threadpoolctl import threadpool_limits

    log.info("routing: training the text model on %d texts (no cached model)", len(texts))
    started = time.perf_counter()
    with threadpool_limits(limits=1):
        pipeline.fit(texts, labels)
    log.info("routing: text model trained in %.0f s", time.perf_counter() - started)
    return pipeline


def _folded(classes: Mapping[str, float], known: frozenset[str]) -> dict[str, float]:
    """Each skill's probability plus its between-classes' (at most 1)."""
    skills = {label: p for label, p in classes.items() if label in known}
    for label, p in classes.items():
        for skill in members_of(label):
            if skill in skills:
                skills[skill] = min(1.0, skills[skill] + p)
    return skills


def _groups(data: RoutingData, examples: dict[str, list[str]]) -> dict[tuple[str, ...], list[str]]:
    """The deployment's between-classes over the skills it runs; a group left with one skill
    is that skill's requests (added to ``examples``)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for group in data.ambiguous:
        skills = tuple(s for s in group.skills if s in examples)
        if len(skills) == 1:
            examples[skills[0]] += group.texts
        elif skills:
            groups.setdefault(skills, []).extend(group.texts)
    return groups
