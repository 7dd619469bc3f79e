"""Which capability a message is for: cheapest signal first, and a question when unsure.

Layers, in order: (1) the task's binding, (2) an explicit skill request, (3) a ``skill_id``
hint in the message metadata (entitled callers only), (4) entitlement filter, (5) media-type
filter, (6) a single candidate, (7) the text layers, restricted to the candidates: the
classifier (trained on utterances and manifest text), the description layer (BM25 over each
manifest, ``agent/routing/descriptions.py``) and the deployment's domain features
(``agent/routing/features.py``), combined per candidate; a replaced (deprecated) skill yields to
its replacement unless the text names it or the domain's features vote for it; below the
confidence threshold, a clarification listing only the candidates close to the best. The router
only decides; the executor enforces entitlement again before anything runs.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from functools import lru_cache
from typing import Any

from a2a.types import ContentTypeNotSupportedError, Message

from agent.interfaces import DESCRIBE_SKILL_ID, ErrorCode, SkillError, error_details
from agent.registry.loader import Capability, Registry
from agent.registry.manifest import State, thawed
from agent.registry.policy import entitled, visible
from agent.routing.classifier import SkillClassifier, normalize
from agent.routing.data import RoutingData
from agent.routing.descriptions import DescriptionIndex, manifest_text, stem, tokens
from agent.routing.extractors import MAX_TEXT
from agent.routing.features import NO_FEATURES, FeatureProvider, TextFeatures, expanded
from agent.routing.model_cache import ModelCache
from agent.routing.skill_request import SkillRequest, data_parts, explicit_request, plain_json
from agent.security.principal import Principal
from agent.settings import DEFAULT_ROUTE_THRESHOLD
from agent.storage.bindings import Binding, Phase

DEFAULT_THRESHOLD = DEFAULT_ROUTE_THRESHOLD  # NETAGENT_ROUTE_THRESHOLD
HINT_KEY = "skill_id"
JSON = "application/json"
TEXT = "text/plain"
NOT_ADVERTISED = "no such skill is advertised to you"
MAX_ROUTE_TEXT = 2000
"""Characters of a text message the text layers read (the extractor reads more)."""
MAX_READ_TEXT = MAX_TEXT
"""Characters of a message's text routing reads at all (what an extractor reads); the rest is
neither routed on, nor extracted from, nor kept for a follow-up."""
OFF_LOOP_TEXT = 1000
"""A message with more text than this is routed in a worker thread: reading it may take more
than a few milliseconds, which on the event loop would stall every other request."""
DESCRIPTION_WEIGHT = 0.8
"""How much the description layer's confidence counts beside the classifier's."""
CLOSE = 0.2
"""A candidate within this of the best score (and at least half of it) is close to it: offered
in a clarification; two close candidates above the threshold are a tie the router asks about."""
FITS = 0.3
"""The score at which a second skill is said to fit a text joining two requests."""
SEPARATES = 0.5
"""Two close candidates above the threshold are a tie unless the classifier's probabilities
differ by this much (it learned from utterances; votes and descriptions are coarser)."""
MAX_OFFERED = 3
"""At most this many candidates are offered in a clarification (of a text something matched)."""
NOTHING_FITS = 0.2
"""A best score below this, with no domain evidence and no description behind it, is noise: the
text matched nothing (``Decision.matched``)."""
STRONG_VOTE = 0.8
"""A domain vote this strong (a threshold pattern: metric, comparison, number) is a request,
however few words it takes (``hq1-node-01 cpu > 90?``)."""
UNSUPPORTED = 0.8
"""The classifier's confidence needed when nothing else supports its choice (no domain vote,
no description match, no name): text of no trade at all is asked about, not run, below it; so
is a thing named with nothing the domain recognizes asked of it (``need numbers for <thing>
for the quarterly deck``: the domain saw a thing, and voted for no skill)."""
UNSUPPORTED_DESCRIPTION = 0.05
"""A description-layer confidence below this is no support."""
NOTHING_FITS_SURE = 0.75
"""The classifier's confidence in one of the deployment's nothing-fits reasons at which the
router says that reason's note and offers what the caller can do (below it, a short text the
data only half recognizes, "details on <firewall>", is asked about as any other)."""
DESCRIBES_NOTHING = 0.5
"""``describe_skill``'s score is scaled by this when the text names no skill to describe (an
"interface" of a thing is the trade's word, not a skill interface)."""
_WORDS = re.compile(r"[a-z0-9]+")
_REQUEST_WORDS = frozenset(
    re.findall(
        r"\S+",
        "how what which who where when why whats is are was does do did can could will would "
        "should has have show list give get tell find describe check plan count ",
    )
)

_SECOND_ASK = re.compile(
    # ("whether and how far ...": two words of one question)
    r"\b(?<!whether )(?<!if )(?:and|plus|also|as well as|then)\s+(?:also\s+)?"
    r"(?:how|what|whether|which|if|when|where|who|tell|show|give|list|check|is|are|does|do|can"
    r"|could|should|would|plan|recommend|suggest|propose|advise|estimate)\b"
)
"""A second request joined to the first ("... interfaces and how loaded they are")."""
_VAGUE = frozenset(
    re.findall(
        r"\S+",
        "need want wish number detail info information stat statistic data report look "
        "please pls plz thank thanks help hand hey hi hello something anything stuff thing sth "
        "quick quickly asap urgent now today issue issu problem wrong ok okay fine health healthy "
        "happen going overview summary "
        # fillers and asides, which say nothing of what is wanted ("<skill>, quick question",
        # "so, <skill>, hmm")
        "question query curiou wonder thought idea hmm hmmm hm um umm uh er erm ah oh eh huh well "
        # consent, which bids nothing of its own ("<skill>, go ahead": describe it, or run it?)
        "go ahead proce sure yes "
        # hedges, sequencing and sign-offs, which bid nothing either ("thinking of <skill>",
        # "<skill> next I guess?", "and <skill> too", "<skill> pls thx")
        "think gues maybe mayb perhap probably later next again too thx tx ty cheer ta try let "
        # asides and pointers, which bid nothing either ("<skill>, thoughts anyone?", "<skill>,
        # see ticket", "<skill> fyi")
        "anyone anybody someone somebody everyone all see ticket fyi ref note attach below above "
        # a message's channel and its reference to what the reader knows ("re <skill>",
        # "handover: <skill>, the old one")
        "re fwd fw handover handoff old former "
        # the document or the queue it stands in, and what is left of it ("Runbook: <skill>.",
        # "CR-21670: <skill>", "Handover: <skill> - still to do")
        "runbook playbook cr todo still pend outstand "
        # an example or a reference, and who or what the name came from ("Example: <skill>.",
        # "Refer to <skill>.", "<skill>, per tools team", "<skill>, as per the template",
        # "<skill>, please assist", "<skill> came up in the review, follow up")
        "example sample refer reference also per tool team template assist follow came review "
        # a message's framing: its subject, its place in a document or a thread, and when it
        # is wanted ("Subject: <skill>", "Step 6: <skill>.", "<skill> (see section 4)", "<skill>,
        # as discussed", "<skill>, whenever you have a sec", "and <skill> after that?")
        "subject subj step section item point part page paragraph para slide stage phase thread "
        "discuss discussed mention mentioned earlier after whenever sec moment minute chance "
        # a wish or an offer of time, and where a name came up ("I'd like <skill> please", "got
        # a minute for <skill>?", "<skill>?? someone mentioned it in standup")
        "like love got standup meeting sync chat "
        # a request as such, a relation and a pointer, and who to ask ("request: <skill>",
        # "Related skill: <skill>", "CR-4490 references <skill>", "Tool for this step: <skill>
        # (ask the requester what they need from it)")
        "request relat referenc behaviour behavior ask requester requestor they ",
    )
)
"""Words that ask for something without saying what (stemmed as ``tokens`` stems them):
``acme-item-00009, need numbers`` is a topic, not a request; ``<skill>, quick question`` names
the skill and asks nothing of it."""
_APPLIES = frozenset(
    re.findall(
        r"\S+",
        "use us using used here right correct suitable appropriate applicable work works one "
        "should ",
    )
)
"""Words asking only whether a named skill applies (``can I use <skill> here?``): as a text
naming the skill and nothing else, describing it and running it fit alike (stemmed as
``tokens`` stems them)."""
_INTERFACE_WORDS = re.compile(
    r"(?<![\w-])(?:schemas?|arguments?|args?|params?|parameters?|fields?|specs?|specification"
    r"|contract|docs|documentation|payload|properties|skill_version|interface_digest|digest"
    r"|versions?|releases?"
    r"|interface\s+(?:document|definition|spec\w*)|(?:input|output)\s+(?:format|document)"
    # what it gives back, needs, fails with, and how it is called ("what does <skill> return?",
    # "what does the upgrade planner need from me", "an example request for <skill>", "how do
    # I use the lookup skill")
    r"|returns?(?=\s*\?|\s*$)|need\s+from\s+(?:me|us)|error\s+codes?"
    r"|example\s+(?:requests?|payloads?|inputs?)"
    r"|how\s+(?:do|can|should|would)\s+(?:i|we|one)\s+(?:use|call|invoke)"
    # what it is for, asked of it by name ("What is the <skill> skill for?"): its description
    # ("tell me about <skill>" is not: writers of the held-out sets read it either way)
    r"|what\s+is\s+(?:the\s+)?[a-z0-9]+(?:_[a-z0-9]+)+(?:\s+skill)?\s+(?:for|used\s+for)(?=\s*(?:$|[?.!]))"
    # what it does, asked of it by name ("what does <skill> do exactly?"): its description
    r"|what\s+(?:does|did)\s+(?:the\s+)?[a-z0-9]+(?:_[a-z0-9]+)+(?:\s+skill)?\s+do"
    r"(?:\s+(?:exactly|precisely|again))?(?=\s*(?:$|[?.!,;:]|and\b))"
    r"|(?:what|which|the|its|as|an?)\s+(?:inputs?|outputs?)(?:\s+(?:of|for|it|does|do|looks?))?"
    r"(?=\s*(?:$|[?.,;:!)]|of\b|for\b|it\b|does\b|do\b|looks?\b|like\b|are\b|is\b)))"
    r"(?![\w-])"
)
"""What a text asks of a skill's interface rather than of its work (``describe_skill``'s); an
"interface" or an "input" alone is also the trade's word (a part's, a counter's)."""
_VERSION_WORDS = re.compile(r"(?<![\w-])(?:versions?|releases?)(?![\w-])")
_IDENTIFIER = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:-[a-z0-9]+)*-[a-z]*[0-9][a-z0-9]*(?![\w-])")
"""A thing named by an identifier (``hq1-node-01``): beside it, a version or a release is
that thing's (``use <skill> to get the software version of <thing>``), not the skill's."""


def asks_interface(lowered: str) -> bool:
    """Whether a (lower-case) text asks of a skill's interface: a word of it, unless all it
    asks is a version, and of a thing named by an identifier."""
    found = [m[0] for m in _INTERFACE_WORDS.finditer(lowered)]
    if not found:
        return False
    versions = all(_VERSION_WORDS.fullmatch(word) for word in found)
    # (a ticket's key names no thing: "CR-8402 needs the version of <skill>")
    return not (versions and _IDENTIFIER.search(_TICKET.sub(" ", lowered)))


_RUN = re.compile(
    r"(?:^\W*|[.;:!?]\s+"
    # (after a greeting's comma, the verb's object a skill's id: "Hi team, invoke <skill> on")
    r"|,\s+(?=(?:run|execute|invoke|call|trigger|launch|use)\s+(?:the\s+)?[a-z0-9]+_)"
    r"|(?<![\w-])(?:please|pls|kindly|can\s+you|could\s+you|would\s+you"
    r"|go\s+ahead\s+and|now)\s+)"
    r"(?:run|execute|exec|invoke|call|trigger|launch|use|using)(?![\w-])"
)
"""A bid to run a skill (an imperative, the text's or a sentence's first word; not "how do I
call ...")."""
_GIVEN = re.compile(
    r"(?<![\w-])with\s+(?:the\s+|these\s+|this\s+)?(?:following\s+)?(?:parameters|params"
    r"|arguments|args|inputs?|values)(?![\w-])|(?<![\w-])[a-z_]+\s*=\s*[\w\"']"
)
"""Arguments given with a bid to run ("invoke <skill> with the following parameters: link=..."):
the run, whatever the words for its arguments."""
_FOR_THING = r" (?:for|on|against|of) (?:the |a )?(?:[a-z]+ ){0,2}[a-z]*[0-9]"
"""After a skill's name, a thing named by an identifier (``plan_link_upgrade for <link>``): a
bid to run the skill on it, not a mention of the skill."""
_FOR_THING_SAID = re.compile(r"(?:it|this|that)" + _FOR_THING)
"""A pronoun run on a thing named by an identifier ("run it for <link>"), as ``_WORDS`` reads."""
_CHOICE = re.compile(
    r"(?<![\w-])(?:or|vs|versus|(?:pick|choose|choosing|decide|deciding)\s+between"
    r"|which\s+(?:one\s+)?applies|which\s+of\s+(?:them|the\s+two))"
    r"(?![\w-])"
)
"""An alternative offered: between two named skills ("<skill> or <skill> for <link>?",
"<skill> vs <skill>, which one?"), the caller's choice is asked, not made."""
_DESCRIBE_OR_RUN = re.compile(
    r"(?<![\w-])(?:describe|explain)(?![\w-])[^.?!]{0,60}?(?<![\w-])or\s+(?:\w+\s+){0,2}"
    r"(?:run|use|execute|invoke|call)\s+it(?![\w-])"
)
"""A skill's description offered against its run ("describe <skill> or just run it")."""
_SUCCESSOR = re.compile(
    r"(?<![\w-])or\s+(?:\w+\s+){0,2}?(?:replac\w*|successor|newer|new\s+one)(?![\w-])"
)
"""A replaced skill offered beside its successor ("<old skill> or whatever replaced it"): which
of the two, is asked."""
_RELATING = frozenset(("on", "of", "for", "at", "in", "to", "from", "between", "behind"))


class Layer(Enum):
    """The layer that decided; recorded in the task's routing metadata."""

    TASK_BINDING = "task_binding"
    EXPLICIT = "explicit_request"
    METADATA_HINT = "metadata_hint"
    ENTITLEMENT = "entitlement_filter"
    SINGLE_CANDIDATE = "single_candidate"
    CLASSIFIER = "classifier"
    DESCRIPTION = "description"
    FEATURES = "domain_features"
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
    classifier: float
    description: float
    features: float

    def as_json(self) -> dict[str, Any]:
        """For ``metadata.routing.scores``."""
        return {
            "skill_id": self.skill_id,
            "score": round(self.score, 4),
            "classifier": round(self.classifier, 4),
            "description": round(self.description, 4),
            "features": round(self.features, 4),
        }


@dataclass(frozen=True)
class Decision:
    """The router's answer for one message."""

    action: Action
    layer: Layer
    capability: Capability | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    request: SkillRequest | None = None
    confidence: float | None = None
    candidates: tuple[Capability, ...] = ()
    missing: tuple[dict[str, str], ...] = ()
    error: SkillError | None = None
    text: str = ""
    scores: tuple[Score, ...] = ()
    """The text layers' top candidates, best first (text routing only)."""
    signals: tuple[str, ...] = ()
    replaced: str | None = None
    """The replaced skill that scored best, when its replacement was chosen instead."""
    note: str = ""
    """The domain's word to the caller in a clarification (``TextFeatures.note``)."""
    matched: bool = True
    """False for a clarification of a text in which no layer found anything of any skill: the
    candidates are then what the caller can ask for, not the ones close to a best."""
    catalogue: bool = False
    """True for a clarification that answers a request for the agent's skills ("what skills
    do you have?"): the candidates are every skill the caller may use."""

    def routing_metadata(self) -> dict[str, Any]:
        """Why the message went where it went (task metadata under ``routing``)."""
        routing: dict[str, Any] = {"layer": self.layer.value}
        if self.capability is not None:
            routing["skill_id"] = self.capability.id
        if self.action is Action.CLARIFY:
            routing["candidates"] = [c.id for c in self.candidates]
            if not self.matched:
                routing["matched"] = False
            if self.catalogue:
                routing["catalogue"] = True
        if self.confidence is not None:
            routing["confidence"] = round(self.confidence, 4)
        if self.scores:
            routing["scores"] = [s.as_json() for s in self.scores[:MAX_OFFERED]]
        if self.signals:
            routing["signals"] = list(self.signals)
        if self.replaced is not None:
            routing["replaced"] = self.replaced
        if self.missing:
            routing["missing"] = [m["pointer"] for m in self.missing]
        return {"routing": routing}


def part_media_types(message: Message) -> set[str]:
    """Media types of a message's parts; untyped text and data parts get the obvious ones."""
    kinds = set()
    for part in message.parts:
        content = part.WhichOneof("content")
        if part.media_type:
            kinds.add(part.media_type.split(";")[0].strip().lower())
        elif content == "text":
            kinds.add(TEXT)
        elif content == "data":
            kinds.add(JSON)
        else:
            kinds.add("application/octet-stream")
    return kinds


def message_text(message: Message | None) -> str:
    """The text of a message's text parts, joined."""
    if message is None:
        return ""
    return "\n".join(p.text for p in message.parts if p.WhichOneof("content") == "text").strip()


def _read_text(message: Message) -> str:
    """What routing reads of a message's text: its first ``MAX_READ_TEXT`` characters."""
    return message_text(message)[:MAX_READ_TEXT]


def _text_length(message: Message | None) -> int:
    """Characters in a message's text parts (what routing would have to read)."""
    if message is None:
        return 0
    return sum(len(p.text) for p in message.parts if p.WhichOneof("content") == "text")


def _argument_parts(message: Message | None) -> dict[str, Any]:
    """Plain-object Data Parts that are not skill requests: arguments, merged in order.

    A part naming a ``skill`` contributes its ``arguments``, which must then be an object
    (``input_invalid`` otherwise: a client error, said as such).
    """
    merged: dict[str, Any] = {}
    for data in data_parts(message):
        if not isinstance(data, dict):
            continue
        if "skill" in data:
            arguments = data.get("arguments", {})
            if not isinstance(arguments, dict):
                raise SkillError(ErrorCode.INPUT_INVALID, "'arguments' must be an object")
            merged.update(arguments)
        else:
            merged.update(data)
    return merged


def _schema_at(schema: dict[str, Any], pointer: str) -> dict[str, Any]:
    node: Any = schema
    for token in [t for t in pointer.split("/") if t]:
        node = node.get("properties", {}).get(token.replace("~1", "/").replace("~0", "~"), {})
    return node if isinstance(node, dict) else {}


MAX_VALUES_SHOWN = 12
MAX_VALUE_SHOWN = 80
"""How much of a long enum a question shows (values, characters of each)."""


def expected_text(node: dict[str, Any]) -> str:
    """What a member with no description takes: its values when the schema lists them (a
    caller asked for ``/kind`` is told ``one of: "sites", "items"``, not ``a value``)."""
    values = node.get("enum")
    if isinstance(values, list) and values:
        shown = ", ".join(json.dumps(v)[:MAX_VALUE_SHOWN] for v in values[:MAX_VALUES_SHOWN])
        more = f" ({len(values)} in all)" if len(values) > MAX_VALUES_SHOWN else ""
        return f"one of: {shown}{more}"
    if "const" in node:
        return "exactly " + json.dumps(node["const"])[:MAX_VALUE_SHOWN]
    return f"a {node.get('type', 'value')}"


def missing_fields(capability: Capability, arguments: dict[str, Any]) -> list[dict[str, str]]:
    """Required members the arguments lack, by JSON Pointer, with the schema's description.

    Only absences count: a present but invalid value is the caller's input error, reported as
    ``input_invalid`` when the skill runs, not asked for again.
    """
    interface = capability.interface
    if interface is None:
        return []
    details = error_details(interface.input_validator, arguments)
    if not details or any(d["keyword"] not in ("required", "oneOf", "anyOf") for d in details):
        return []
    schema = interface.document["input_schema"]["resolution"]["schema"]
    missing: list[dict[str, str]] = []
    for detail in details:
        if detail["keyword"] == "required":
            node = _schema_at(schema, detail["instance_path"])
            description = node.get("description") or expected_text(node)
            missing.append({"pointer": detail["instance_path"], "description": description})
        else:
            branches = _schema_at(schema, detail["instance_path"]).get(detail["keyword"]) or (
                schema.get(detail["keyword"], []) if detail["instance_path"] == "" else []
            )
            options = [" and ".join(b["required"]) for b in branches if b.get("required")]
            first = branches[0]["required"][0] if options else ""
            missing.append(
                {
                    "pointer": f"{detail['instance_path']}/{first}",
                    "description": "one of: " + "; or ".join(options),
                }
            )
    return missing


class Router:
    """Decides, per message, which capability runs, or what to ask the caller."""

    def __init__(
        self,
        registry: Registry,
        classifier: SkillClassifier | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        features: FeatureProvider | None = None,
        cache: ModelCache | None = None,
        data: RoutingData | None = None,
    ) -> None:
        self._registry = registry
        self._ids = frozenset(c.id for c in registry)
        self._removed = tuple(c for c in registry if c.manifest.state is State.REMOVED)
        self._features = features
        routable = [c for c in registry if c.interface is not None]
        self._classifier = classifier or SkillClassifier.from_manifests(
            [c.manifest for c in routable], features, cache, data
        )
        self._notes = {r: entry.note for r, entry in (data or RoutingData()).nothing_fits.items()}
        self._descriptions = DescriptionIndex(
            {
                c.id: manifest_text(
                    c.manifest, c.interface.document["input_schema"]["resolution"]["schema"]
                )
                for c in routable
                if c.interface is not None
            }
        )
        self.threshold = threshold

    def warm(self) -> None:
        """Train the classifier (or read it from its cache) now, before the agent serves."""
        if self._classifier.known:
            self._classifier.model()

    async def route_async(
        self, message: Message | None, principal: Principal, binding: Binding | None = None
    ) -> Decision:
        """As ``route``; a long text is routed in a worker thread (``OFF_LOOP_TEXT``), so that
        reading it never holds the event loop."""
        if _text_length(message) > OFF_LOOP_TEXT:
            return await asyncio.to_thread(self.route, message, principal, binding)
        return self.route(message, principal, binding)

    @property
    def classifier(self) -> SkillClassifier:
        """The text classifier (exposed for benchmarks)."""
        return self._classifier

    def candidates(self, principal: Principal) -> list[Capability]:
        """Layer 4: what this caller may use (removed never; preview only when opted in)."""
        return [
            c
            for c in self._registry
            if c.interface is not None and c.handler is not None and entitled(c.manifest, principal)
        ]

    def route(
        self, message: Message | None, principal: Principal, binding: Binding | None = None
    ) -> Decision:
        """The decision for one message; raises ContentTypeNotSupportedError when nothing fits."""
        if message is None:
            return _refuse(Layer.EXPLICIT, SkillError(ErrorCode.INPUT_INVALID, "empty message"))
        try:
            return self._route(message, principal, binding)
        except SkillError as error:  # a malformed Data Part beside text: the client's error
            return _refuse(Layer.TASK_BINDING if binding is not None else Layer.EXPLICIT, error)

    def _route(self, message: Message, principal: Principal, binding: Binding | None) -> Decision:
        if binding is not None:
            return self._continue(message, principal, binding)
        try:
            request = explicit_request(message)
        except SkillError as error:
            return _refuse(Layer.EXPLICIT, error)
        if request is not None:
            return self._explicit(request, principal)
        text = _read_text(message)
        hinted = self._hint(message, principal)
        if hinted is not None:
            return self._resolve(hinted, message, text, Layer.METADATA_HINT)
        allowed = self.candidates(principal)
        if not allowed:
            return _refuse(
                Layer.ENTITLEMENT,
                SkillError(ErrorCode.AUTHORIZATION_FAILED, "no skill is available to you"),
            )
        kinds = part_media_types(message)
        fitting = [c for c in allowed if kinds <= set(c.manifest.input_modes)]
        if not fitting:
            raise ContentTypeNotSupportedError(
                message="no skill you may use accepts " + ", ".join(sorted(kinds))
            )
        if len(fitting) == 1:
            return self._resolve(fitting[0], message, text, Layer.SINGLE_CANDIDATE)
        return self._classify(message, text, fitting, principal)

    # -- layers --------------------------------------------------------------------------

    def _explicit(self, request: SkillRequest, principal: Principal) -> Decision:
        capability = self._registry.get(request.skill)
        if capability is not None and capability.manifest.state is State.REMOVED:
            replacement = capability.manifest.replacement
            return _refuse(
                Layer.EXPLICIT,
                SkillError(
                    ErrorCode.SKILL_NOT_ADVERTISED,
                    f"skill {request.skill!r} was removed; use {replacement!r}",
                ),
            )
        if capability is None or not visible(capability.manifest, principal):
            return _refuse(
                Layer.EXPLICIT, SkillError(ErrorCode.SKILL_NOT_ADVERTISED, NOT_ADVERTISED)
            )
        if not entitled(capability.manifest, principal):
            return _refuse(
                Layer.EXPLICIT,
                SkillError(
                    ErrorCode.AUTHORIZATION_FAILED,
                    f"skill {capability.id!r} needs scopes: "
                    + " ".join(sorted(capability.manifest.requires_scopes)),
                ),
            )
        return Decision(
            Action.RUN, Layer.EXPLICIT, capability, dict(request.arguments), request=request
        )

    def _hint(self, message: Message, principal: Principal) -> Capability | None:
        hint = dict(message.metadata).get(HINT_KEY) if message.metadata else None
        capability = self._registry.get(hint) if isinstance(hint, str) else None
        if capability is None or capability.interface is None:
            return None
        return capability if entitled(capability.manifest, principal) else None

    def text_features(self, text: str) -> TextFeatures:
        """The deployment's features of ``text`` (none when it gives none, or fails)."""
        if self._features is None:
            return NO_FEATURES
        try:
            return self._features.features(text)
        except Exception:  # a provider is best effort: routing goes on without it
            return NO_FEATURES

    def score(self, text: str, candidates: Sequence[str]) -> tuple[list[Score], TextFeatures]:
        """Every candidate's combined score for ``text``, best first, and the domain's features
        (with ``nothing_fits``, when the classifier's best class is one of the deployment's
        reasons nothing fits, and that reason's note).

        ``1 - (1 - classifier)(1 - DESCRIPTION_WEIGHT x description)(1 - vote)`` (a noisy-or of
        the three kinds of evidence), times ``1 + vote`` for a negative vote.
        """
        text = text[:MAX_ROUTE_TEXT]
        features = self.text_features(text)
        read = expanded(text, features)
        prediction = self._classifier.predict(read, candidates, expand=False)
        if prediction.reason is not None and prediction.confidence >= NOTHING_FITS_SURE:
            # what the deployment's data says of requests like this one ("no skill makes
            # changes"), said when the router asks back
            note = features.note or self._notes.get(prediction.reason, "")
            features = replace(features, note=note, nothing_fits=prediction.reason)
        probabilities = dict(prediction.ranking)
        descriptions = self._descriptions.scores(read, candidates)
        scores = []
        for skill_id in candidates:
            p = probabilities.get(skill_id, 0.0)
            d = descriptions.get(skill_id, 0.0)
            vote = max(-0.99, min(0.99, float(features.votes.get(skill_id, 0.0))))
            combined = 1 - (1 - p) * (1 - DESCRIPTION_WEIGHT * d) * (1 - max(vote, 0.0))
            if vote < 0:
                combined *= 1 + vote
            scores.append(Score(skill_id, combined, p, d, vote))
        scores.sort(key=lambda s: (-s.score, s.skill_id))
        return scores, features

    def _classify(
        self, message: Message, text: str, fitting: Sequence[Capability], principal: Principal
    ) -> Decision:
        by_id = {c.id: c for c in fitting}
        read = spelled_out((text or _data_as_text(message))[:MAX_ROUTE_TEXT], self._ids)
        scores, features = self.score(read, list(by_id))
        scores, described = self._described(scores, by_id, read, principal)
        if asks_catalogue(read, fitting, features.signals):
            return Decision(
                Action.CLARIFY,
                Layer.CLARIFICATION,
                candidates=tuple(c for c in fitting if not self._superseded(c, scores, read)),
                confidence=scores[0].score if scores else 0.0,
                text=text,
                arguments=_argument_parts(message),
                scores=tuple(scores),
                signals=features.signals,
                catalogue=True,
            )
        best = scores[0] if scores else None
        bid = _named_run(read, fitting)
        if bid is not None and best is not None and bid.id != best.skill_id:
            # a skill named to run it ("run link_headroom on <link>, customer wants 500 Mb/s",
            # "use plan_link_upgrade for <link>: can it take 10G?") is the one that runs, what
            # ever else the text's words would route to; a replaced one too (the
            # replacement wins unless the request names the replaced skill)
            own = next(s for s in scores if s.skill_id == bid.id)
            best = replace(own, score=max(own.score, best.score))
            scores = [best, *(s for s in scores if s.skill_id != bid.id)]
        close = [s for s in scores if best is not None and _close(s, best)]
        if bid is not None and best is not None and bid.id == best.skill_id:
            close = [best]
        replaced = None
        lead = best.score if best is not None else 0.0  # what the threshold is compared with
        if best is not None and lead >= self.threshold:
            replacement = self._replacement(by_id[best.skill_id], scores, read)
            if replacement is not None:  # it runs on its replaced skill's lead
                replaced, best = best.skill_id, replacement
                close = [best] + [s for s in close if s.skill_id not in (best.skill_id, replaced)]
        rivals = [s for s in close if s.skill_id != (best.skill_id if best else None)]
        tie = (
            bool(rivals)
            and replaced is None
            and best is not None
            and rivals[0].score >= self.threshold
            and abs(best.classifier - rivals[0].classifier) < SEPARATES
            # a strong domain vote (a threshold pattern) for the best alone separates too
            and not (best.features >= STRONG_VOTE and rivals[0].features <= 0)
        )
        strong = max(features.votes.values(), default=0.0) >= STRONG_VOTE
        top = scores[0] if scores else None  # the lead, before any replacement
        successor_bid = top is not None and top.skill_id == self._bid_successor(read, by_id)
        unsupported = (
            top is not None
            and not (described is not None and top.skill_id == DESCRIBE_SKILL_ID)
            # (a signal with no vote, a resource's kind, supports no skill)
            and not any(features.votes.values())
            and top.features <= 0
            and top.description < UNSUPPORTED_DESCRIPTION
            and top.classifier < UNSUPPORTED
            # (its work bid through a removed skill's name, "<removed skill> for <thing>")
            and not successor_bid
        )
        # (a skill bid to run by name says enough: "execute <skill>(link=<link>, demand=800M)")
        too_little = says_too_little(read) and not strong and not successor_bid and bid is None
        second = self._second_ask(best, scores, by_id, read, described) if replaced is None else []
        if bid is not None and bid.manifest.replacement:
            # a replaced skill bid to run by name does its replacement's work: "execute
            # link_headroom on <link> and tell us the free capacity" is one ask
            second = [s for s in second if s.skill_id != bid.manifest.replacement]
        asked = [s for s in scores if s.skill_id in features.asks]
        vetoed = False  # the best, one the domain voted against, is not among what it saw asked
        if best is not None and len(asked) >= 2 and not second:  # the domain saw two requests
            if best.features < 0 and best.skill_id not in features.asks:
                # ("can <link> handle the rollout?": its room, its load, or an upgrade, not the
                # classifier's lean alone)
                vetoed, second = True, asked[:MAX_OFFERED]
            else:
                second = [s for s in asked if s.skill_id != best.skill_id][: MAX_OFFERED - 1]
        if second and best is not None:
            close = second if vetoed else [best, *second]
        only = False
        lowered = read.lower()
        if _CHOICE.search(lowered) and not only:
            # two named skills offered as alternatives, or a replaced one beside its successor
            # (describe_skill among them only by its id: "lookup_item or describe_skill?")
            chosen_among = [
                c
                for c in fitting
                if (c.id != DESCRIBE_SKILL_ID or _id_said(c.id, lowered))
                and names_skill(read, c.manifest)
            ]
            if len(chosen_among) == 1 and _SUCCESSOR.search(lowered):
                successor = chosen_among[0].manifest.replacement
                chosen_among += [c for c in fitting if c.id == successor]
            elif len(chosen_among) == 1 and _DESCRIBE_OR_RUN.search(lowered):
                # "either describe <skill> or just run it on <link>": which of the two
                chosen_among += [c for c in fitting if c.id == DESCRIBE_SKILL_ID]
            if len(chosen_among) >= 2:
                only = True
                ids = {c.id for c in chosen_among}
                close = sorted((s for s in scores if s.skill_id in ids), key=lambda s: -s.score)
        if described is not None and described.id in by_id and not only:
            named = [
                c for c in fitting if c.id != DESCRIBE_SKILL_ID and names_skill(read, c.manifest)
            ]
            if names_only(read, *named) or (
                len(named) == 1
                and (
                    about_on_a_thing(read, named[0].manifest)
                    # described and run on a thing, joined ("what can <skill> do and should
                    # <link> be upgraded?", "describe_skill <skill> and then run it on <link>")
                    or self._described_and_run(read, named[0], features.votes)
                    # its interface asked, and a run of it on a thing bid too ("the schema and
                    # a run of <skill> for <link>"): two asks, describing it and running it
                    or (
                        asks_interface(lowered)
                        and bids_on_a_thing(read, named[0].manifest)
                        and _RUN.search(lowered) is None
                    )
                )
            ):
                # "lookup_item?": describe it, or run it? "<skill> or <skill>": which?
                # "tell me about <skill> on <link>": its description, or its answer there?
                only = True
                pair = (
                    {DESCRIBE_SKILL_ID, *(c.id for c in named)}
                    if len(named) == 1
                    else {c.id for c in named}
                )
                close = sorted((s for s in scores if s.skill_id in pair), key=lambda s: -s.score)
        replacing = (
            self._removed_run_beside(read, by_id) if described is not None and not only else None
        )
        if replacing is not None:
            # a removed skill's work on a thing (its replacement's) and another skill's
            # interface, joined ("the port_report for <thing> and the schema of <skill>"): two
            # asks, the replacement's run and the description
            only = True
            close = sorted(
                (s for s in scores if s.skill_id in {DESCRIBE_SKILL_ID, replacing}),
                key=lambda s: -s.score,
            )
        if (
            best is None
            or lead < self.threshold
            or tie
            or too_little
            or unsupported
            or second
            or only
        ):
            # Nothing of any skill found in the text ("what's the weather in London?", "hello,
            # what can you do?"): no candidate is close to a best that is noise, so the caller
            # is told what it can ask for instead of offered the noise's winner.
            matched = features.nothing_fits is None and not (
                unsupported
                and not features.signals
                and not features.asks
                and not only
                and (best is None or best.score < NOTHING_FITS)
            )
            offered = (close or scores) if matched else scores
            chosen = {
                s.skill_id
                for s in [
                    s for s in offered if not self._superseded(by_id[s.skill_id], scores, read)
                ][: MAX_OFFERED if matched else None]
            }
            return Decision(
                Action.CLARIFY,
                Layer.CLARIFICATION,
                # in the registry's order, so their numbers do not shift between questions
                candidates=tuple(c for c in fitting if c.id in chosen),
                confidence=best.score if best else 0.0,
                text=text,
                arguments=_argument_parts(message),
                scores=tuple(scores),
                signals=features.signals,
                note=features.note,
                matched=matched,
            )
        decision = self._resolve(
            by_id[best.skill_id], message, text, _layer_of(best, self.threshold)
        )
        return replace(
            decision,
            confidence=best.score,
            scores=tuple(scores),
            signals=features.signals,
            replaced=replaced,
        )

    def _described(
        self,
        scores: list[Score],
        by_id: dict[str, Capability],
        text: str,
        principal: Principal,
    ) -> tuple[list[Score], Capability | None]:
        """``describe_skill``'s standing, by the skill the text names for it, and that skill.

        Chosen by text for a skill this caller cannot see, it is no match: the text is about
        that skill's work ("plan an upgrade"), not about its interface; for no skill at all,
        it counts ``DESCRIBES_NOTHING`` as much ("the interface names of hq1-node-02"). A
        text naming the skill (``names_skill``) and asking of its interface ("what fields do I
        send to the upgrade planner") is about describing it: ``describe_skill`` takes the
        named skill's standing, and the named skill counts ``DESCRIBES_NOTHING`` as much (its
        name, not its work, is what the layers matched); one bidding to run it ("run
        lookup_item for hq3"), the other way round (an id is what most of
        ``describe_skill``'s utterances have), and a bid naming the skill is as good as a
        request for it: it scores the threshold at least.
        """
        capability = by_id.get(DESCRIBE_SKILL_ID)
        if capability is None or capability.handler is None:
            return scores, None
        extract = capability.handler.extract
        named = extract(text).get("skill_id") if extract is not None else None
        target = self._registry.get(named) if isinstance(named, str) else None
        if target is not None and not visible(target.manifest, principal):
            if target.manifest.state is State.REMOVED and (
                asks_interface(text.lower()) or asks_about(text, target.manifest)
            ):
                # a removed skill's interface or version asked: describe_skill says it is gone
                # (its work asked, "<removed skill> for <thing>", is its replacement's)
                kept = [
                    replace(s, score=max(s.score, self.threshold))
                    if s.skill_id == DESCRIBE_SKILL_ID
                    else s
                    for s in scores
                ]
                return sorted(kept, key=lambda s: (-s.score, s.skill_id)), target
            kept = [s for s in scores if s.skill_id != DESCRIBE_SKILL_ID]
            successor = self._bid_successor(text, by_id)
            if successor is not None:
                # its work asked on a thing ("<removed skill> for <thing>"): its
                # replacement's, as good as a request for it
                kept = sorted(
                    (
                        replace(s, score=max(s.score, self.threshold))
                        if s.skill_id == successor
                        else s
                        for s in kept
                    ),
                    key=lambda s: (-s.score, s.skill_id),
                )
            return kept, None
        if extract is None:
            return scores, target
        if target is None:
            scaled = [
                replace(s, score=s.score * DESCRIBES_NOTHING)
                if s.skill_id == DESCRIBE_SKILL_ID
                else s
                for s in scores
            ]
            return sorted(scaled, key=lambda s: (-s.score, s.skill_id)), None
        by_skill = {s.skill_id: s for s in scores}
        own = by_skill.get(target.id)
        describe = by_skill.get(DESCRIBE_SKILL_ID)
        if own is None or describe is None or not names_skill(text, target.manifest):
            return scores, target
        lowered = text.lower()
        itself = target.id == DESCRIBE_SKILL_ID  # "arguments for describe_skill?": its own
        called = not itself and names_skill(text, by_id[DESCRIBE_SKILL_ID].manifest)
        # a bid to run it on a thing ("can you run <skill> for <link>? ... expects its output")
        # is the run, whatever it says of its output
        run_bid = (
            not called
            and _RUN.search(lowered) is not None
            and (bids_on_a_thing(text, target.manifest) or _GIVEN.search(lowered) is not None)
        )
        if (asks_interface(lowered) and not run_bid) or (called and _RUN.search(lowered)):
            # its interface or version asked about ("which version is <skill> on"), or
            # describe_skill bid to describe it: a request for describe_skill as good as a bid
            lead = max(describe.score, own.score, self.threshold)
            by_skill[DESCRIBE_SKILL_ID] = replace(describe, score=lead)
            if not itself:
                by_skill[target.id] = replace(own, score=own.score * DESCRIBES_NOTHING)
        elif itself:
            return scores, target
        elif _RUN.search(lowered) or bids_on_a_thing(text, target.manifest):
            # "run lookup_item for hq3", "plan_link_upgrade for <link>": as good as a
            # request
            lead = max(describe.score, own.score, self.threshold)
            by_skill[target.id] = replace(own, score=lead)
            by_skill[DESCRIBE_SKILL_ID] = replace(
                describe, score=describe.score * DESCRIBES_NOTHING
            )
        else:
            return scores, target
        return sorted(by_skill.values(), key=lambda s: (-s.score, s.skill_id)), target

    def _bid_successor(self, text: str, by_id: dict[str, Capability]) -> str | None:
        """The replacement (one of ``by_id``) of a removed skill ``text`` bids on a thing
        (``<removed skill> for <thing>``): its work, asked of the skill that does it now."""
        for capability in self._removed:
            manifest = capability.manifest
            if manifest.replacement in by_id and bids_on_a_thing(text, manifest):
                return manifest.replacement
        return None

    def _removed_run_beside(self, text: str, by_id: dict[str, Capability]) -> str | None:
        """The replacement of a removed skill ``text`` bids on a thing (``<removed skill> for
        <thing>``), when it also asks of another skill's interface, joined; else None."""
        lowered = text.lower()
        if not asks_interface(lowered) or not _JOINED.search(" ".join(_WORDS.findall(lowered))):
            return None
        if not any(
            c.id != DESCRIBE_SKILL_ID and names_skill(text, c.manifest) for c in by_id.values()
        ):
            return None  # no other skill's interface asked ("port_report's schema, on <thing>")
        return self._bid_successor(text, by_id)

    @staticmethod
    def _described_and_run(
        text: str, capability: Capability, votes: Mapping[str, float] | None = None
    ) -> bool:
        """Whether ``text`` asks about the skill (``describes_skill``), joins another request
        to it, and names a thing the skill would run on (its extractor finds one) or asks
        what the domain's features vote the skill for ("show me <skill>'s schema and list the
        sites"): two asks, its description and its run, so which first is asked."""
        extract = capability.handler.extract if capability.handler else None
        lowered = text.lower()
        if extract is None or _RUN.search(lowered) or not describes_skill(text, capability):
            return False
        if _names_a_thing(extract(text), lowered):
            return True
        # (a vote alone, when the second request follows the name, or comes first in sequence,
        # "list sites and then describe <skill>": a bare "and" before it may be the interface
        # ask's own, "the input and output schemas of <skill>")
        voted = votes is not None and votes.get(capability.id, 0.0) > 0
        return voted and describes_skill(text, capability, before=_SEQUENCED)

    @staticmethod
    def _second_ask(
        best: Score | None,
        scores: Sequence[Score],
        by_id: dict[str, Capability],
        text: str,
        described: Capability | None = None,
    ) -> list[Score]:
        """The other skills a text joining two requests asks of (``... and how loaded they
        are``, ``... and tell me what inputs it takes``): those that fit it, or that it names;
        none when it joins no second request. The skill ``describe_skill`` is describing, when
        it leads, is no second request unless the text bids to run it (``which version of
        <skill> is deployed, and what is its digest?`` asks two things of one description)."""
        lowered = text.lower()
        if best is None or _SECOND_ASK.search(lowered) is None:
            return []
        about = (
            described.id
            if described is not None
            and best.skill_id == DESCRIBE_SKILL_ID
            and _RUN.search(lowered) is None
            else None
        )
        by_skill = {s.skill_id: s for s in scores}
        found: list[Score] = []
        for rank, score in enumerate(scores[1:], start=1):
            if score.skill_id == about:
                continue
            manifest = by_id[score.skill_id].manifest
            named = names_skill(text, manifest)  # a named skill counts, however it ranks
            if (score.score < FITS or rank >= MAX_OFFERED) and not named:
                continue
            if manifest.state is State.DEPRECATED and not named:  # its replacement instead
                score = by_skill.get(manifest.replacement or "", score)
            if score.skill_id != best.skill_id and score not in found:
                found.append(score)
        return found

    @staticmethod
    def _superseded(capability: Capability, offered: Sequence[Score], text: str) -> bool:
        """A replaced skill is not offered while its replacement is one of the caller's
        candidates (``offered``: every candidate's score), unless the text names it: a
        clarification of a text that scores nothing ("hi") offered the old skill."""
        manifest = capability.manifest
        return (
            manifest.state is State.DEPRECATED
            and any(s.skill_id == manifest.replacement for s in offered)
            and not names_skill(text, manifest)
        )

    def _replacement(
        self, capability: Capability, scores: Sequence[Score], text: str
    ) -> Score | None:
        """The replacement's score, when ``capability`` is deprecated and its replacement is a
        candidate: the replaced skill loses to it however little the replacement scores (its
        utterances, in the old skill's words, are why it leads), unless ``text`` names it or
        the deployment's features vote for it (what only it answers)."""
        manifest = capability.manifest
        if manifest.state is not State.DEPRECATED or not manifest.replacement:
            return None
        found = next((s for s in scores if s.skill_id == manifest.replacement), None)
        own = next((s for s in scores if s.skill_id == capability.id), None)
        if found is None or names_skill(text, manifest) or (own is not None and own.features > 0):
            return None
        return found

    def _resolve(
        self,
        capability: Capability,
        message: Message | None,
        text: str,
        layer: Layer,
        base: dict[str, Any] | None = None,
    ) -> Decision:
        """Arguments for a chosen skill: what the text yields, overlaid by Data Part arguments."""
        arguments = dict(base or {})
        extract = capability.handler.extract if capability.handler else None
        if extract is not None and text:
            arguments = _merge(arguments, extract(text))
        arguments = _merge(arguments, _argument_parts(message))
        missing = missing_fields(capability, arguments)
        action = Action.ASK if missing else Action.RUN
        return Decision(action, layer, capability, arguments, missing=tuple(missing), text=text)

    def _continue(self, message: Message, principal: Principal, binding: Binding) -> Decision:
        """Layer 1: a follow-up goes where its task is bound."""
        text = _read_text(message)
        if binding.phase is Phase.CLARIFY:
            offered = [c for c in self.candidates(principal) if c.id in binding.candidates]
            chosen = self._pick(message, text, offered)
            if chosen is None:
                return Decision(
                    Action.CLARIFY,
                    Layer.CLARIFICATION,
                    candidates=tuple(offered),
                    text=binding.text,
                    arguments=binding.arguments,
                )
            decision = self._resolve(
                chosen, message, binding.text, Layer.TASK_BINDING, base=binding.arguments
            )
            return decision
        capability = self._registry.get(binding.skill_id or "")
        if capability is None or capability.interface is None:
            return _refuse(
                Layer.TASK_BINDING, SkillError(ErrorCode.SKILL_NOT_ADVERTISED, NOT_ADVERTISED)
            )
        try:
            request = explicit_request(message)
        except SkillError as error:
            return _refuse(Layer.TASK_BINDING, error)
        reply: Message | None = message  # None once the request's arguments are merged in
        if request is not None:
            if request.skill != capability.id:
                return _refuse(
                    Layer.TASK_BINDING,
                    SkillError(ErrorCode.INPUT_INVALID, f"this task is bound to {capability.id!r}"),
                )
            base = _merge(binding.arguments, request.arguments)
            reply = None
        else:
            base = binding.arguments
        return self._resolve(capability, reply, text, Layer.TASK_BINDING, base=base)

    def _pick(
        self, message: Message, text: str, offered: Sequence[Capability]
    ) -> Capability | None:
        """Which offered candidate a clarification reply chose: id, number, name, or the model."""
        answer = text[:MAX_ROUTE_TEXT].strip().lower().rstrip(".")
        for data in data_parts(message):
            if isinstance(data, dict) and isinstance(data.get("skill"), str):
                answer = data["skill"].lower()
        for index, capability in enumerate(offered, start=1):
            name = str(capability.manifest.skill["name"]).lower()
            if answer in (capability.id, str(index), name):
                return capability
        mentioned = [c for c in offered if c.id in answer]
        if len(mentioned) == 1:
            return mentioned[0]
        if not answer:
            return None
        prediction = self._classifier.predict(answer, [c.id for c in offered])
        if prediction.skill_id is not None and prediction.confidence >= self.threshold:
            return next(c for c in offered if c.id == prediction.skill_id)
        return None


_SNAKE = re.compile(r"(?<![\w-])[A-Za-z]+(?:_[A-Za-z]+)+(?![\w-])")
MIN_PREFIX = 3
"""Letters of a word an id's word may be shortened to (``eval`` for ``evaluate``)."""


def spelled_out(text: str, ids: frozenset[str]) -> str:
    """``text`` with every shortened skill id written in full (``eval_resource_condition``,
    ``lookup_inv``): an identifier in an id's shape, each word the start of the id's word, is
    that id, when it is the only one it can be."""
    if "_" not in text:
        return text
    return _SNAKE.sub(lambda m: _full_id(m[0], ids), text)


@lru_cache(maxsize=256)
def _full_id(word: str, ids: frozenset[str]) -> str:
    parts = word.lower().split("_")
    if word.lower() in ids:
        return word
    found = [
        skill_id
        for skill_id in ids
        if len(id_parts := skill_id.split("_")) == len(parts)
        and all(
            p == q or (len(p) >= MIN_PREFIX and q.startswith(p))
            for p, q in zip(parts, id_parts, strict=True)
        )
    ]
    return found[0] if len(found) == 1 else word


def _id_said(skill_id: str, lowered: str) -> bool:
    """Whether a skill's id is said as such (``describe_skill``, not "describe the skill")."""
    return re.search(rf"(?<![\w-]){re.escape(skill_id)}(?![\w-])", lowered) is not None


def names_skill(text: str, manifest: Any) -> bool:
    """Whether ``text`` names the skill: its id (``link_headroom``, ``link-headroom``), its
    name, or one of its aliases of more than one word (a one-word alias such as ``headroom`` is
    an ordinary word of the trade, not a name, unless it is called a skill: ``the headroom
    skill``), in any inflection of its words (``the threshold-checking skill`` names the
    ``threshold check``)."""
    said, stemmed = _said(text)
    names = _names_of(manifest)
    if any(f" {words} " in said for words in names):
        return True
    return any(f" {words} " in stemmed for words in _NAMES[id(manifest)][2])


@lru_cache(maxsize=64)
def _said(text: str) -> tuple[str, str]:
    """``text``'s words, lower case, between spaces; and the same words stemmed (a text is
    asked whether it names each candidate, several times a routing: it is read once)."""
    words = _WORDS.findall(text.lower())
    return f" {' '.join(words)} ", f" {' '.join(stem(w) for w in words)} "


def bids_on_a_thing(text: str, manifest: Any) -> bool:
    """Whether ``text`` names the skill right before a thing named by an identifier
    (``plan_link_upgrade for <link>``, ``<skill> on <id>``): a bid to run it on that thing
    (describing a skill needs no thing)."""
    said = " ".join(_WORDS.findall(text.lower()))
    return any(re.search(rf"(?<![a-z0-9]){name}{_FOR_THING}", said) for name in _names_of(manifest))


_DESCRIBING = r"(?:about|explain|describe|describe skill|what can|what does|what will|how does)"
"""Words before a skill's name that ask what it is or does (``what can <skill> do``)."""
_JOINED = re.compile(r" (?:and|plus|then|also|as well as) ")
_SEQUENCED = re.compile(r" (?:then|plus|also|as well as) ")
"""A join that orders two requests (not a bare "and", which joins two words as often)."""


def asks_about(text: str, manifest: Any) -> bool:
    """Whether ``text`` asks what the skill is (``describe <skill>``, ``what was <skill>``) or
    of its interface in the trade's word (``<skill>'s interface``, ``<skill> interface doc``)."""
    said = " ".join(_WORDS.findall(text.lower()))
    return any(
        re.search(
            rf"(?<![a-z0-9])(?:{_DESCRIBING}|what is|what was|what did) (?:the )?{name}"
            r"(?![a-z0-9])",
            said,
        )
        or re.search(rf"(?<![a-z0-9]){name} (?:s )?(?:interface|doc|docs|skill)(?![a-z0-9])", said)
        for name in _names_of(manifest)
    )


def describes_skill(
    text: str, capability: Capability, *, before: re.Pattern[str] | None = _JOINED
) -> bool:
    """Whether ``text`` asks what the skill is (its interface, or ``explain <skill>``, ``what
    can <skill> do``) and joins a second request to it: after its name (``... and ...``), or
    before (``recommend an upgrade for <link> and explain what <skill>'s output fields
    mean``)."""
    said = " ".join(_WORDS.findall(text.lower().replace("+", " plus ")))
    for name in _names_of(capability.manifest):
        at = said.find(name)
        if at < 0:
            continue
        if not (
            _JOINED.search(said, at + len(name))
            or (before is not None and before.search(said, 0, at))
        ):
            continue
        if asks_interface(text.lower()) or re.search(
            rf"(?<![a-z0-9]){_DESCRIBING} (?:the )?{name}(?![a-z0-9])", said
        ):
            return True
    return False


def _names_a_thing(arguments: dict[str, Any], lowered: str) -> bool:
    """Whether extracted ``arguments`` hold a thing named in the text: a value of letters and
    digits said as such (``acme-item-00002``, ``hq3``), not a figure with its unit (``30m``)."""
    for value in arguments.values():
        if isinstance(value, dict):
            if _names_a_thing(value, lowered):
                return True
        elif (
            isinstance(value, str)
            and value.lower() in lowered
            and _THING.fullmatch(value.lower()) is not None
        ):
            return True
    return False


_THING = re.compile(r"(?<![a-z0-9-])[a-z][a-z0-9-]*[0-9][a-z0-9-]*")


def about_on_a_thing(text: str, manifest: Any) -> bool:
    """Whether ``text`` asks about the skill and names a thing right after it, bidding no run
    (``tell me about <skill> on <link>``): the skill is what the text is about (its description)
    and the thing where it would run (its answer there); both readings fit, so it is asked."""
    lowered = text.lower()
    if _RUN.search(lowered) or asks_interface(lowered):
        return False
    said = " ".join(_WORDS.findall(lowered))
    return any(
        re.search(rf"(?<![a-z0-9])(?:about|explain|describe) (?:the )?{name}{_FOR_THING}", said)
        for name in _names_of(manifest)
    )


_NAMES: dict[int, tuple[Any, tuple[str, ...], tuple[str, ...]]] = {}
"""``_names_of`` per manifest object (kept, so its id is not reused while cached), and the
same names stemmed."""


def _names_of(manifest: Any) -> tuple[str, ...]:
    """A manifest's id, name and aliases of more than one word, as words joined by spaces."""
    cached = _NAMES.get(id(manifest))
    if cached is not None and cached[0] is manifest:
        return cached[1]
    names = [manifest.id, str(thawed(manifest.skill).get("name", ""))]
    names += [a for a in manifest.aliases if len(a.split()) > 1]
    # a one-word alias is a name when it is said to be one: "the lookup skill"
    names += [f"{a} skill" for a in manifest.aliases if len(a.split()) == 1]
    found = tuple(w for w in (" ".join(_WORDS.findall(n.lower())) for n in names) if w)
    stemmed = tuple(" ".join(stem(w) for w in words.split()) for words in found)
    if len(_NAMES) >= 1024:  # registries are few; tests build many
        _NAMES.clear()
    _NAMES[id(manifest)] = (manifest, found, stemmed)
    return found


_CATALOGUE = re.compile(
    # the agent's skills asked for as a whole: "what skills do you have", "list your skills",
    # "which capabilities does the agent expose", "step 0: list the skills the agent exposes"
    r"(?<![\w-])(?:list|show|enumerate|give\s+me|tell\s+me|what|which|full\s+list\s+of)\b"
    r"[^.?!]{0,40}?(?<![\w-])(?:skills|capabilities|skillset|commands|operations|functions)(?![\w-])"
    # (not one skill asked for by what it does: "which of your skills tells me free capacity?")
    r"(?![^.?!]*(?<![\w-])(?:tells?|gives?|gets?|finds?|returns?|shows?|checks?|plans?"
    r"|evaluates?|answers?|handles?|covers?|does|for|to)\s+"
    # (the agent itself is no object of one: "which operations does the support assistant
    # expose?")
    r"(?!the\s+(?:\w+\s+)?(?:agent|assistant|bot)(?![\w-]))(?:me|us|the|an?|if|whether|free"
    r"|how|what|which|link|links|capacity|cpu|errors?|upgrades?)\b)"
)

_CATALOGUE_NAMED = re.compile(
    # the same, named as a list of what the agent does: "the agent's skill list", "the list of
    # things the agent is able to handle", "a list of what you can do"
    r"(?<![\w-])(?:skills?|capability|capabilities)\s+(?:list|catalogue|catalog|overview)(?![\w-])"
    # ("list every skill the agent supports", "what the bot is capable of")
    r"|(?<![\w-])(?:every|each|all)\s+skills?\s+(?:the|this|that|you|it|your)(?![\w-])"
    r"|(?<![\w-])what\s+(?:the\s+|this\s+)?(?:\w+\s+)?(?:bot|agent|assistant|you|it)\s+(?:is|are)"
    r"\s+capable\s+of(?![\w-])"
    r"|(?<![\w-])list\s+of\s+(?:the\s+)?(?:things|what|tasks|jobs|everything)\s+[^.?!]{0,40}?"
    r"(?:able\s+to|can|could)\s+(?:do|handle|help)(?![\w-])"
)


def asks_catalogue(text: str, fitting: Sequence[Capability], signals: Sequence[str]) -> bool:
    """Whether ``text`` asks for the agent's skills as a whole: no skill named, no resource in
    it, nothing a skill is for ("which of your skills tells me free capacity?" asks for one)."""
    lowered = text.lower()
    if not _CATALOGUE.search(lowered) and not _CATALOGUE_NAMED.search(lowered):
        return False
    if any(signal.startswith("resource:") for signal in signals):
        return False
    return not any(names_skill(text, c.manifest) for c in fitting)


def _named_run(text: str, fitting: Sequence[Capability]) -> Capability | None:
    """The skill a text bids to run by name (``run <skill> ...``, ``use the <skill> skill
    ...``: the run verb's object), if one of ``fitting``; never ``describe_skill``, whose own
    rules read what it is asked to describe."""
    lowered = text.lower()
    said_all = " ".join(_WORDS.findall(lowered)) if _PASSIVE_HINT.search(lowered) else ""
    for capability in fitting if said_all else ():  # (in the passive: "<skill> should be run on")
        if capability.id != DESCRIBE_SKILL_ID and any(
            re.search(rf"(?<![a-z0-9]){name}{_RUN_PASSIVE}", said_all)
            for name in _names_of(capability.manifest)
        ):
            return capability
    pronoun_read = False
    for bid in _RUN.finditer(lowered):
        said = " ".join(_WORDS.findall(lowered[bid.end() : bid.end() + 160]))
        if said.startswith(("it ", "this ", "that ")) and _FOR_THING_SAID.match(said):
            # the skill named before, run on a thing ("link_headroom takes a link and a demand;
            # run it for <link> with 1 Gbps"): if one skill was named, that one (read at the
            # first such bid only: a text of many would read the names once per bid)
            if pronoun_read:
                continue
            pronoun_read = True
            before = [
                c
                for c in fitting
                if c.id != DESCRIBE_SKILL_ID and names_skill(lowered[: bid.start()], c.manifest)
            ]
            if len(before) == 1:
                return before[0]
            continue
        said = said.removeprefix("the ")
        for capability in fitting:
            if capability.id == DESCRIBE_SKILL_ID:
                continue
            for name in _names_of(capability.manifest):
                after = said[len(name) :].split(maxsplit=1)
                if said.startswith(name) and (
                    not after
                    # (its result used, not it run: "use the capacity check result as input")
                    or (said[len(name)] == " " and after[0] not in _ITS_PRODUCTS)
                ):
                    return capability
    return None


_RUN_PASSIVE = (
    r"(?: (?:check|skill|tool|call))?"
    r"(?: (?:should|must|needs to|has to|is to|will|to) be "
    r"(?:run|executed|invoked|called|used|triggered)(?![a-z0-9])"
    # (with no auxiliary, its thing follows: "I'd like <skill> run on <link>")
    r"| (?:run|executed|invoked|triggered) (?:on|for|against|over)(?![a-z0-9]))"
)
"""After a skill's name, a run bid in the passive (words as ``_WORDS`` reads them)."""
_PASSIVE_HINT = re.compile(
    r"(?<![\w-])be\s+(?:run|executed|invoked|called|used|triggered)(?![\w-])"
    r"|(?<![\w-])(?:run|executed|invoked|triggered)\s+(?:on|for|against|over)(?![\w-])"
)
"""The passive's verb, looked for first: most texts have none, and the names are not tried."""
_ITS_PRODUCTS = frozenset(
    re.findall(
        r"\S+",
        "result results output outputs answer answers data figures numbers report verdict "
        "recommendation schema schemas interface version docs documentation",
    )
)
"""Words after a skill's name that make it a thing used, not a skill run."""


def names_only(text: str, *capabilities: Capability) -> bool:
    """Whether ``text`` names the skills (``names_skill``) and says nothing else: no other
    content word, no identifier (``lookup_item``, ``what about check_link_capacity?``,
    ``can I use plan_link_upgrade here?``: describing it and running it fit alike;
    ``check_link_capacity or plan_link_upgrade``)."""
    if not capabilities or not all(names_skill(text, c.manifest) for c in capabilities):
        return False
    if _RUN.search(text.lower()):  # "use lookup_item": a bid to run it, not a mention
        return False
    if asks_interface(text.lower()):
        return False  # "how do I use <skill>?", "what does <skill> do?": its interface asked
    bare = _SIGN_OFF.sub(" ", _GREETING.sub(" ", text))
    said = f" {' '.join(_WORDS.findall(_TICKET.sub(' ', bare).lower()))} "
    names: list[str] = []
    for capability in capabilities:
        manifest = capability.manifest
        names += [*_names_of(manifest), *manifest.aliases]
    for name in sorted(names, key=len, reverse=True):
        words = " ".join(_WORDS.findall(name.lower()))
        if words:  # (and "skill" said of it: "the <skill> skill", "Related skill: <skill>")
            for form in (f" {words} skill ", f" skill {words} ", f" {words} "):
                said = said.replace(form, " ")
    if any(ch.isdigit() for ch in _PLACE.sub(" ", said)):
        return False
    return not [t for t in tokens(said) if t not in _VAGUE and t not in _APPLIES]


_GREETING = re.compile(
    r"^\W*(?i:hi|hello|hey|dear|morning|good\s+(?:morning|afternoon|evening))"
    r"(?:\s+(?i:team|all|folks|noc)|\s+[A-Z][\w'-]*)?\s*[,!:-]"
)
"""A message's greeting, and whom it greets (``Hi Kate,``): nothing asked."""
_SIGN_OFF = re.compile(
    r"(?:^|(?<=[\s.,;:!?]))(?i:thanks|thank\s+you|many\s+thanks|thx|ty|cheers|regards"
    r"|kind\s+regards|best\s+regards|best|br)(?![\w-])[\s,.!]*(?:[A-Z][\w.'-]*\s*){0,2}[.!]?\s*$"
)
"""A message's sign-off, and who signs it (``Thanks, Marco``): nothing asked either."""
_TICKET = re.compile(r"(?<![\w-])(?!lnk)[A-Za-z]{2,10}(?:-[0-9]{1,8}|[0-9]{4,10})(?![\w-])", re.I)
"""A ticket's or a change's key (``Ticket DOC-160: <skill>``, ``CR-21670: <skill>``): where the
request is filed, which names no thing (a thing's name is no key: its number follows a
word joined to another; nor is a link id cut short, ``lnk-3305``); written with no hyphen, a key
has four digits or more (``CHG0051020``)."""
_PLACE = re.compile(
    r"(?<= )(?:step|section|item|point|part|page|paragraph|para|slide|stage|phase|appendix"
    r"|chapter|no|number)\s+[0-9]{1,3}[a-z]?(?= )"
)
"""A place in a document (``step 6``, ``section 4``): a number that names no thing."""


def _close(score: Score, best: Score) -> bool:
    """Within ``CLOSE`` of the best, and at least half its score (of weak scores, the weakest
    are not close: they are noise)."""
    return score.score >= best.score - CLOSE and score.score >= best.score / 2


def says_too_little(text: str) -> bool:
    """A topic, not a request: ids aside, one content word and no word that asks or bids
    (``errors``, ``cpu hq1-node-01``, ``upgrade``), or none at all (``check hq1-node-01``).
    ``how busy is acme-item-00002?`` says enough: a question about one thing."""
    folded = normalize(text)
    content = [t for t in tokens(folded) if t not in _VAGUE]
    if len(content) >= 2:
        return False
    words = re.findall(r"[a-z]+", folded)  # "who's" asks as "who" does
    asks = any(word in _REQUEST_WORDS for word in words)
    # a question relating the word to a named thing asks too: "ports on hq2-node-03?"
    asks = asks or ("?" in text and " 0 " in folded and any(w in _RELATING for w in words))
    return not content or not asks


def _layer_of(best: Score, threshold: float) -> Layer:
    """Which layer decided: the classifier when it alone was sure, else the bigger of the rest."""
    if best.classifier >= threshold:
        return Layer.CLASSIFIER
    if DESCRIPTION_WEIGHT * best.description >= best.features:
        return Layer.DESCRIPTION
    return Layer.FEATURES


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Deep merge of argument objects; ``extra`` wins."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = plain_json(value)
    return merged


def _data_as_text(message: Message) -> str:
    return " ".join(json.dumps(d) for d in data_parts(message))


def _refuse(layer: Layer, error: SkillError) -> Decision:
    return Decision(Action.REFUSE, layer, error=error)


def clarification_text(
    candidates: Iterable[Capability],
    note: str = "",
    *,
    matched: bool = True,
    catalogue: bool = False,
) -> str:
    """The question put to the caller when the router is unsure; the domain's ``note`` (what
    no skill does for the text) first, when it gave one. ``matched`` False: the text matched
    nothing, and ``candidates`` are what the caller can ask for. ``catalogue``: the caller
    asked what the agent can do, and ``candidates`` are that."""
    if catalogue:
        lines = ["What I can do for you:"]
    elif not matched:
        lead = "I could not match this to anything I do. What I can do:"
        lines = [note, "What I can do:"] if note else [lead]
    else:
        offered = list(candidates)
        candidates = offered
        question = "Did you mean this?" if len(offered) == 1 else "Which of these did you mean?"
        lines = [note, f"Or {question[0].lower()}{question[1:]}"] if note else [question]
    for index, capability in enumerate(candidates, start=1):
        skill = thawed(capability.manifest.skill)
        first = skill["description"].split(". ")[0].rstrip(".")
        lines.append(f"{index}. {capability.id} ({skill['name']}): {first}.")
    lines.append(
        "Reply with the skill id or its number in this task, or send a skill request "
        'Data Part {"skill": <id>, "arguments": {...}}.'
    )
    return "\n".join(lines)


def missing_text(capability: Capability, missing: Iterable[dict[str, str]]) -> str:
    """The question put to the caller when arguments are missing."""
    lines = [f"To run {capability.id} I still need:"]
    lines += [f"- {m['pointer']}: {m['description']}" for m in missing]
    lines.append(
        "Reply in this task with text, or with a Data Part holding the arguments "
        "(skill_version and interface_digest are in this message's data)."
    )
    return "\n".join(lines)
