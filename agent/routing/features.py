"""What a domain tells the router about a text: the core's interface, the domain's knowledge.

The core knows no domain. A deployment that does hands the router a
:class:`FeatureProvider` through ``Deployment.routing_features``; for each message text it
returns :class:`TextFeatures`:

* ``terms``: canonical words for what the text says in the domain's own synonyms (``busy`` ->
  ``load``, ``ram`` -> ``memory``) and for the kinds of resource it names (a link id ->
  ``link``). The router appends them to the text both the classifier and the description layer
  read, and to the training texts, so a synonym counts as its canonical word everywhere.
* ``votes``: evidence for skills, by id, each in ``(-1, 1)``: a threshold pattern (metric,
  comparison, number) for an evaluation skill, capacity phrasing for a capacity check. Positive
  votes raise a skill's score (noisy-or), negative ones lower it.
* ``signals``: the names of what was recognized, for the task's routing metadata.
* ``asks``: the skills of two requests joined in one text, by id, when the provider sees them
  apart (the evidence of one before the join, of the other after it: "<link> load and
  an upgrade recommendation"), or of one request that fits either alike (a bare "status of
  <link>": its record, or its health?). The router asks which is meant among those the caller
  may use.
* ``note``: a sentence for the caller when the router asks: what the domain knows no skill of
  it does for this text (a metric it does not observe, a change it does not make). It is said
  before the question and carried in the question's data as ``note``; it decides nothing.

A provider must be cheap (it runs on every text message) and total (never raise).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol


@dataclass(frozen=True)
class TextFeatures:
    """What a provider recognized in one text."""

    terms: tuple[str, ...] = ()
    votes: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    signals: tuple[str, ...] = ()
    asks: tuple[str, ...] = ()
    note: str = ""
    nothing_fits: str | None = None
    """Set by the router, not a provider: the deployment's reason nothing fits the text, when
    its classifier learned one from the routing data (``agent/routing/data.py``)."""


NO_FEATURES = TextFeatures()


class FeatureProvider(Protocol):
    """Domain knowledge the router reads as features (see the module notes)."""

    def features(self, text: str) -> TextFeatures:
        """What ``text`` says in the domain's terms; must not raise."""
        ...


class NoFeatures:
    """The provider of a deployment that gives none: the router reads the text alone."""

    def features(self, text: str) -> TextFeatures:
        """Nothing."""
        return NO_FEATURES


def expanded(text: str, features: TextFeatures) -> str:
    """``text`` with the provider's canonical terms appended."""
    return f"{text} {' '.join(features.terms)}" if features.terms else text
