"""The text stages: the model, the description layer, and the decision they lead to.

The model (``classifier``) learned from the manifests and the deployment's routing data; it
gives each candidate a probability among all classes, the deployment's reasons nothing fits
included. The description layer (``descriptions``) scores the candidates by what their
manifests say, so a skill with no utterances still routes. Their noisy-or is a candidate's
score. The decision is plain arithmetic on those scores, with no word list of any language:

* a text naming skills and saying nothing else ("lookup_vendor?") is asked back: describe
  it, or run it?
* a text the model puts in a nothing-fits class, surely (``NOTHING_FITS_SURE``), is asked back
  with that reason's note and everything the caller can do;
* the best candidate runs when its score reaches the threshold and leads the next by
  ``MARGIN``; a text naming one skill while the model leads with another is asked between
  the two;
* otherwise the caller is asked between the candidates close to the best (never about one
  alone: below the threshold, a lone candidate is no fit), or, when none fits at all,
  offered everything it can do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent.interfaces import DESCRIBE_SKILL_ID
from agent.registry.loader import Capability
from agent.routing.classifier import Prediction, SkillClassifier
from agent.routing.decision import Score, Stage
from agent.routing.descriptions import DescriptionIndex
from agent.routing.names import named, names_only, spelled_out, without_names

MAX_ROUTE_TEXT = 2000
"""Characters of a text message the text stages read (the extractor reads more)."""
DESCRIPTION_WEIGHT = 0.8
"""How much the description layer's confidence counts beside the model's."""
MARGIN = 0.4
"""How far the best score must lead the second for the best to run."""
CLOSE = 0.2
"""A candidate within this of the best score is close to it: offered when the router asks."""
FITS = 0.3
"""The least score at which a candidate is said to fit the text at all."""
MAX_OFFERED = 3
"""At most this many close candidates are offered in a clarification."""
NOTHING_FITS_SURE = 0.75
"""The model's probability of a nothing-fits class at which the router says so."""


@dataclass(frozen=True)
class Verdict:
    """What the text stages concluded: a skill to run (``chosen``), or candidates to offer
    (``offered``; empty: everything the caller can do, since nothing fits)."""

    stage: Stage
    scores: tuple[Score, ...]
    chosen: Capability | None = None
    offered: tuple[Capability, ...] = ()
    reason: str | None = None

    @property
    def confidence(self) -> float:
        """The best candidate's score."""
        return self.scores[0].score if self.scores else 0.0


class TextStages:
    """The model, the description layer and the decision, over a caller's candidates."""

    def __init__(
        self,
        classifier: SkillClassifier,
        descriptions: DescriptionIndex,
        ids: frozenset[str],
        threshold: float,
    ) -> None:
        self.classifier = classifier
        self.descriptions = descriptions
        self._ids = ids
        self.threshold = threshold

    def decide(self, text: str, fitting: Sequence[Capability]) -> Verdict:
        """The verdict for ``text`` among the ``fitting`` candidates."""
        read = spelled_out(text[:MAX_ROUTE_TEXT], self._ids)
        by_id = {c.id: c for c in fitting}
        mentioned = named(read, fitting)
        prediction = self.classifier.predict(read, list(by_id))
        # an id the text names is the named-skill rule's to weigh, not the description
        # layer's: read as words, it lifts that skill a second time ("the input schema of
        # reconcile_invoice", a request for describe_skill, would then be asked back)
        scores = self.scores(without_names(read, mentioned), prediction, list(by_id))
        if names_only(read, mentioned) and by_id.get(DESCRIBE_SKILL_ID) not in mentioned:
            return self._offer(scores, by_id, _with_description(mentioned, by_id))
        if prediction.reason is not None and prediction.confidence >= NOTHING_FITS_SURE:
            return Verdict(Stage.CLARIFICATION, scores, reason=prediction.reason)
        best = scores[0] if scores else None
        own = [c for c in mentioned if c.id != DESCRIBE_SKILL_ID]
        if best is not None and len(own) == 1:
            return self._named(own[0], best, scores, by_id)
        if best is None or best.score < FITS:
            return Verdict(Stage.CLARIFICATION, scores, reason=prediction.reason)
        return self._by_score(scores, by_id, prediction.reason)

    def _by_score(
        self, scores: tuple[Score, ...], by_id: Mapping[str, Capability], reason: str | None = None
    ) -> Verdict:
        """The best candidate when it is sure and clear of the second; else the close ones.

        One candidate alone is no choice to offer: it runs when it reaches the threshold (the
        router then asks for any missing argument); below it, nothing fits, and the caller is
        told everything it can do (``reason``: the model's nothing-fits class, if any)."""
        best = scores[0]
        second = scores[1].score if len(scores) > 1 else 0.0
        if best.score >= self.threshold and best.score - second >= MARGIN:
            return Verdict(_stage_of(best, self.threshold), scores, by_id[best.skill_id])
        close = [s for s in scores if s.score >= max(best.score - CLOSE, FITS)]
        if len(close) < 2:
            close = [s for s in scores if s.score > 0][:MAX_OFFERED]
        if len(close) < 2 and best.score >= self.threshold:
            return Verdict(_stage_of(best, self.threshold), scores, by_id[best.skill_id])
        if len(close) < 2:
            return Verdict(Stage.CLARIFICATION, scores, reason=reason)
        return self._offer(scores, by_id, [by_id[s.skill_id] for s in close[:MAX_OFFERED]])

    def _named(
        self,
        skill: Capability,
        best: Score,
        scores: tuple[Score, ...],
        by_id: Mapping[str, Capability],
    ) -> Verdict:
        """A text saying one skill's id: that skill, unless the model surely reads the text
        as its description's request (``describe_skill``) or as another skill's, when the
        caller is asked between the two."""
        if best.skill_id != skill.id and best.score >= self.threshold:
            if best.skill_id == DESCRIBE_SKILL_ID:
                return self._by_score(scores, by_id)
            return self._offer(scores, by_id, [by_id[best.skill_id], skill])
        return Verdict(Stage.NAMED, scores, skill)

    def scores(
        self, read: str, prediction: Prediction, candidates: Sequence[str]
    ) -> tuple[Score, ...]:
        """Every candidate's score, best first: ``1 - (1 - model)(1 - w x description)``."""
        probabilities = dict(prediction.ranking)
        descriptions = self.descriptions.scores(read, candidates)
        scores = []
        for skill_id in candidates:
            p = probabilities.get(skill_id, 0.0)
            d = descriptions.get(skill_id, 0.0)
            scores.append(Score(skill_id, 1 - (1 - p) * (1 - DESCRIPTION_WEIGHT * d), p, d))
        return tuple(sorted(scores, key=lambda s: (-s.score, s.skill_id)))

    @staticmethod
    def _offer(
        scores: tuple[Score, ...],
        by_id: Mapping[str, Capability],
        offered: Sequence[Capability],
    ) -> Verdict:
        # in the registry's order, so that their numbers do not shift between questions
        ids = {c.id for c in offered}
        ordered = tuple(c for c in by_id.values() if c.id in ids)
        return Verdict(Stage.CLARIFICATION, scores, offered=ordered)


def _with_description(
    mentioned: Sequence[Capability], by_id: Mapping[str, Capability]
) -> list[Capability]:
    """The named skills, and ``describe_skill`` beside one alone: describe it, or run it?"""
    describe = by_id.get(DESCRIBE_SKILL_ID)
    if len(mentioned) == 1 and describe is not None and mentioned[0] is not describe:
        return [*mentioned, describe]
    return list(mentioned)


def _stage_of(best: Score, threshold: float) -> Stage:
    """The model when it alone was sure, else the description layer that tipped it."""
    return Stage.MODEL if best.model >= threshold else Stage.DESCRIPTION
