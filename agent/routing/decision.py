"""What the router decided for one message, and which stage decided it."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from agent.interfaces import SkillError
from agent.registry.loader import Capability
from agent.routing.skill_request import SkillRequest

MAX_SCORES_SHOWN = 3
"""Candidates whose scores the task's routing metadata shows."""


class Stage(Enum):
    """The stage of the pipeline that decided; recorded as ``metadata.routing.stage``."""

    TASK_BINDING = "task_binding"
    EXPLICIT = "explicit_request"
    METADATA_HINT = "metadata_hint"
    ENTITLEMENT = "entitlement_filter"
    SINGLE_CANDIDATE = "single_candidate"
    NAMED = "named_skill"
    MODEL = "model"
    DESCRIPTION = "description"
    CLARIFICATION = "clarification"


class Action(Enum):
    """What the executor does with a decision."""

    RUN = "run"
    CLARIFY = "clarify"  # input-required: which skill?
    ASK = "ask"  # input-required: which arguments?
    REFUSE = "refuse"


@dataclass(frozen=True)
class Score:
    """One candidate's standing for a text: the combined score and what it came from."""

    skill_id: str
    score: float
    model: float
    description: float

    def as_json(self) -> dict[str, Any]:
        """For ``metadata.routing.scores``."""
        return {
            "skill_id": self.skill_id,
            "score": round(self.score, 4),
            "model": round(self.model, 4),
            "description": round(self.description, 4),
        }


@dataclass(frozen=True)
class Decision:
    """The router's answer for one message."""

    action: Action
    stage: Stage
    capability: Capability | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    request: SkillRequest | None = None
    confidence: float | None = None
    candidates: tuple[Capability, ...] = ()
    missing: tuple[dict[str, str], ...] = ()
    error: SkillError | None = None
    text: str = ""
    scores: tuple[Score, ...] = ()
    """The text stages' candidates, best first (text routing only)."""
    note: str = ""
    """Why no skill fits, in the deployment's words, said before the question."""
    reason: str | None = None
    """The deployment's reason no skill fits the text (``RoutingData.nothing_fits``)."""
    matched: bool = True
    """False for a clarification of a text no skill fits: the candidates are then everything
    the caller can ask for, not the ones close to a best."""

    def routing_metadata(self) -> dict[str, Any]:
        """Why the message went where it went (task metadata under ``routing``)."""
        routing: dict[str, Any] = {"stage": self.stage.value}
        if self.capability is not None:
            routing["skill_id"] = self.capability.id
        if self.action is Action.CLARIFY:
            routing["candidates"] = [c.id for c in self.candidates]
            if not self.matched:
                routing["matched"] = False
        if self.reason is not None:
            routing["nothing_fits"] = self.reason
        if self.confidence is not None:
            routing["confidence"] = round(self.confidence, 4)
        if self.scores:
            routing["scores"] = [s.as_json() for s in self.scores[:MAX_SCORES_SHOWN]]
        if self.missing:
            routing["missing"] = [m["pointer"] for m in self.missing]
        return {"routing": routing}


def refuse(stage: Stage, error: SkillError) -> Decision:
    """A decision to answer with ``error`` (the caller's mistake, said as such)."""
    return Decision(Action.REFUSE, stage, error=error)
