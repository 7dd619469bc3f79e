"""Which capability a message is for: a pipeline of small stages, cheapest signal first.

1. **task binding**: a follow-up goes where its task is bound (a skill, or the candidates a
   clarification offered);
2. **explicit request**: a skill request Data Part names its skill;
3. **metadata hint**: ``metadata.skill_id``, for callers entitled to it;
4. **entitlement**: only the skills this caller may use are candidates;
5. **media types**: only those accepting every part's media type;
6. **single candidate**: one left is the one;
7. **the text stages** (``text_stages``): the model, the description layer and the decision.

``Decision.stage`` names the stage that decided (``metadata.routing.stage``). The router only
decides; the executor enforces entitlement again before anything runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from a2a.types import ContentTypeNotSupportedError, Message

from agent.base.settings import DEFAULT_ROUTE_THRESHOLD
from agent.interfaces import ErrorCode, SkillError
from agent.registry.loader import Capability, Registry
from agent.registry.manifest import State
from agent.registry.policy import entitled, visible
from agent.routing.classifier import SkillClassifier
from agent.routing.data import RoutingData
from agent.routing.decision import Action, Decision, Stage, refuse
from agent.routing.descriptions import DescriptionIndex, manifest_text
from agent.routing.messages import (
    argument_parts,
    data_as_text,
    merge,
    part_media_types,
    read_text,
    text_length,
)
from agent.routing.model_cache import ModelCache
from agent.routing.names import named
from agent.routing.questions import missing_fields
from agent.routing.skill_request import SkillRequest, data_parts, explicit_request
from agent.routing.text_stages import MAX_ROUTE_TEXT, TextStages, Verdict
from agent.security.principal import Principal
from agent.storage.bindings import Binding, Phase

HINT_KEY = "skill_id"
NOT_ADVERTISED = "no such skill is advertised to you"
OFF_LOOP_TEXT = 1000
"""A message with more text than this is routed in a worker thread: reading it may take more
than a few milliseconds, which on the event loop would stall every other request."""


class Router:
    """Decides, per message, which capability runs, or what to ask the caller."""

    def __init__(
        self,
        registry: Registry,
        classifier: SkillClassifier | None = None,
        threshold: float = DEFAULT_ROUTE_THRESHOLD,
        cache: ModelCache | None = None,
        data: RoutingData | None = None,
    ) -> None:
        self._registry = registry
        routable = [c for c in registry if c.interface is not None]
        data = data or RoutingData()
        classifier = classifier or SkillClassifier.from_manifests(
            [c.manifest for c in routable], cache, data
        )
        self._notes = {reason: entry.note for reason, entry in data.nothing_fits.items()}
        descriptions = DescriptionIndex(
            {c.id: manifest_text(c.manifest, _input_schema(c)) for c in routable}
        )
        ids = frozenset(c.id for c in registry)
        self.text_stages = TextStages(classifier, descriptions, ids, threshold)

    @property
    def classifier(self) -> SkillClassifier:
        """The model of the text stages (exposed for benchmarks)."""
        return self.text_stages.classifier

    def warm(self) -> None:
        """Train the model (or read it from its cache) now, before the agent serves."""
        if self.classifier.known:
            self.classifier.model()

    def candidates(self, principal: Principal) -> list[Capability]:
        """What this caller may use (removed never; preview only when opted in)."""
        return [
            c
            for c in self._registry
            if c.interface is not None and c.handler is not None and entitled(c.manifest, principal)
        ]

    async def route_async(
        self, message: Message | None, principal: Principal, binding: Binding | None = None
    ) -> Decision:
        """As ``route``; a long text is routed in a worker thread (``OFF_LOOP_TEXT``), so that
        reading it never holds the event loop."""
        if text_length(message) > OFF_LOOP_TEXT:
            return await asyncio.to_thread(self.route, message, principal, binding)
        return self.route(message, principal, binding)

    def route(
        self, message: Message | None, principal: Principal, binding: Binding | None = None
    ) -> Decision:
        """The decision for one message; raises ContentTypeNotSupportedError when no skill the
        caller may use accepts its parts."""
        if message is None:
            return refuse(Stage.EXPLICIT, SkillError(ErrorCode.INPUT_INVALID, "empty message"))
        try:
            if binding is not None:
                return self._bound(message, principal, binding)
            return self._unbound(message, principal)
        except SkillError as error:  # a malformed Data Part beside text: the client's error
            return refuse(Stage.TASK_BINDING if binding is not None else Stage.EXPLICIT, error)

    def _unbound(self, message: Message, principal: Principal) -> Decision:
        """Stages 2-7, for a message that starts a task."""
        request = explicit_request(message)
        if request is not None:
            return self._explicit(request, principal)
        text = read_text(message)
        hinted = self._hint(message, principal)
        if hinted is not None:
            return self._resolve(hinted, message, text, Stage.METADATA_HINT)
        allowed = self.candidates(principal)
        if not allowed:
            error = SkillError(ErrorCode.AUTHORIZATION_FAILED, "no skill is available to you")
            return refuse(Stage.ENTITLEMENT, error)
        fitting = _accepting(allowed, message)
        if len(fitting) == 1:
            return self._resolve(fitting[0], message, text, Stage.SINGLE_CANDIDATE)
        verdict = self.text_stages.decide(text or data_as_text(message), fitting)
        return self._decision(verdict, message, text, fitting)

    def _explicit(self, request: SkillRequest, principal: Principal) -> Decision:
        """Stage 2: the skill a request names, if this caller may see and use it."""
        capability = self._registry.get(request.skill)
        if capability is not None and capability.manifest.state is State.REMOVED:
            replacement = capability.manifest.replacement
            removed = f"skill {request.skill!r} was removed; use {replacement!r}"
            return refuse(Stage.EXPLICIT, SkillError(ErrorCode.SKILL_NOT_ADVERTISED, removed))
        if capability is None or not visible(capability.manifest, principal):
            return refuse(
                Stage.EXPLICIT, SkillError(ErrorCode.SKILL_NOT_ADVERTISED, NOT_ADVERTISED)
            )
        if not entitled(capability.manifest, principal):
            scopes = " ".join(sorted(capability.manifest.requires_scopes))
            needs = f"skill {capability.id!r} needs scopes: {scopes}"
            return refuse(Stage.EXPLICIT, SkillError(ErrorCode.AUTHORIZATION_FAILED, needs))
        arguments = dict(request.arguments)
        return Decision(Action.RUN, Stage.EXPLICIT, capability, arguments, request=request)

    def _hint(self, message: Message, principal: Principal) -> Capability | None:
        """Stage 3: the skill ``metadata.skill_id`` names, for a caller entitled to it."""
        hint = dict(message.metadata).get(HINT_KEY) if message.metadata else None
        capability = self._registry.get(hint) if isinstance(hint, str) else None
        if capability is None or capability.interface is None:
            return None
        return capability if entitled(capability.manifest, principal) else None

    def _decision(
        self, verdict: Verdict, message: Message, text: str, fitting: Sequence[Capability]
    ) -> Decision:
        """The text stages' verdict as a decision: run (or ask for arguments), or clarify."""
        if verdict.chosen is not None:
            decision = self._resolve(verdict.chosen, message, text, verdict.stage)
            return replace(decision, confidence=verdict.confidence, scores=verdict.scores)
        matched = bool(verdict.offered)
        return Decision(
            Action.CLARIFY,
            Stage.CLARIFICATION,
            candidates=verdict.offered if matched else tuple(fitting),
            confidence=verdict.confidence,
            text=text,
            arguments=argument_parts(message),
            scores=verdict.scores,
            note=self._notes.get(verdict.reason or "", "") if not matched else "",
            reason=None if matched else verdict.reason,
            matched=matched,
        )

    def _resolve(
        self,
        capability: Capability,
        message: Message | None,
        text: str,
        stage: Stage,
        base: dict[str, Any] | None = None,
    ) -> Decision:
        """Arguments for a chosen skill: what the text yields, overlaid by Data Part arguments;
        asked for when some required one is missing."""
        arguments = dict(base or {})
        extract = capability.handler.extract if capability.handler else None
        if extract is not None and text:
            arguments = merge(arguments, extract(text))
        arguments = merge(arguments, argument_parts(message))
        missing = tuple(missing_fields(capability, arguments))
        action = Action.ASK if missing else Action.RUN
        return Decision(action, stage, capability, arguments, missing=missing, text=text)

    def _bound(self, message: Message, principal: Principal, binding: Binding) -> Decision:
        """Stage 1: a follow-up goes where its task is bound."""
        text = read_text(message)
        if binding.phase is Phase.CLARIFY:
            return self._chosen(message, text, principal, binding)
        capability = self._registry.get(binding.skill_id or "")
        if capability is None or capability.interface is None:
            return refuse(
                Stage.TASK_BINDING, SkillError(ErrorCode.SKILL_NOT_ADVERTISED, NOT_ADVERTISED)
            )
        request = explicit_request(message)
        if request is None:
            return self._resolve(capability, message, text, Stage.TASK_BINDING, binding.arguments)
        if request.skill != capability.id:
            bound = f"this task is bound to {capability.id!r}"
            return refuse(Stage.TASK_BINDING, SkillError(ErrorCode.INPUT_INVALID, bound))
        base = merge(binding.arguments, request.arguments)
        return self._resolve(capability, None, text, Stage.TASK_BINDING, base)

    def _chosen(
        self, message: Message, text: str, principal: Principal, binding: Binding
    ) -> Decision:
        """The reply to a clarification: the offered skill it picks, or the question again."""
        offered = [c for c in self.candidates(principal) if c.id in binding.candidates]
        chosen = self._pick(message, text, offered)
        if chosen is None:
            return Decision(
                Action.CLARIFY,
                Stage.CLARIFICATION,
                candidates=tuple(offered),
                text=binding.text,
                arguments=binding.arguments,
            )
        return self._resolve(chosen, message, binding.text, Stage.TASK_BINDING, binding.arguments)

    def _pick(
        self, message: Message, text: str, offered: Sequence[Capability]
    ) -> Capability | None:
        """Which offered candidate a reply chose: by id, number or name, by an id it names as
        an identifier (not inside a longer one: ``not_x_y`` is not ``x_y``), else by the model."""
        answer = text[:MAX_ROUTE_TEXT].strip().lower().rstrip(".")
        for data in data_parts(message):
            if isinstance(data, dict) and isinstance(data.get("skill"), str):
                answer = data["skill"].lower()
        for index, capability in enumerate(offered, start=1):
            name = str(capability.manifest.skill["name"]).lower()
            if answer in (capability.id, str(index), name):
                return capability
        mentioned = named(answer, offered)
        if len(mentioned) == 1:
            return mentioned[0]
        if not answer:
            return None
        prediction = self.classifier.predict(answer, [c.id for c in offered])
        if prediction.skill_id is not None and prediction.confidence >= self.text_stages.threshold:
            return next(c for c in offered if c.id == prediction.skill_id)
        return None


def _input_schema(capability: Capability) -> Any:
    interface = capability.interface
    return interface.document["input_schema"]["resolution"]["schema"] if interface else None


def _accepting(allowed: Sequence[Capability], message: Message) -> list[Capability]:
    """Stage 5: the candidates accepting every media type of the message's parts."""
    kinds = part_media_types(message)
    fitting = [c for c in allowed if kinds <= set(c.manifest.input_modes)]
    if not fitting:
        raise ContentTypeNotSupportedError(
            message="no skill you may use accepts " + ", ".join(sorted(kinds))
        )
    return fitting
