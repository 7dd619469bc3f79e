"""Conformance checker: the schema-interface procedure, run against any A2A agent.

``check_agent`` fetches the target's card and walks the draft's client procedure (digest §6,
§7, §8.2, §9, §10) for every skill bound in the extension's ``params.skills``, recording one
``Check`` per step instead of stopping at the first problem:

* agent:  card fetched, the binding's interface offered, the extended card (with a token),
          the extension advertised, ``interface_version`` 1.0, well-formed bindings,
          ``describe_skill`` listed, and (when the card marks any extension ``required``) that
          a request without it is refused with the protocol's ExtensionSupportRequiredError.
* skill:  listed in ``card.skills``; ``describe_skill`` answers; three-way digest (advertised =
          returned = computed); trusted-schema validation with the selected identity;
          embedded-schema digests; and two negative probes sent with the raw a2a-sdk client
          (a governed client refuses to send bad requests): a wrong ``interface_digest`` must
          end REJECTED ``interface_mismatch``, a schema-invalid argument REJECTED
          ``input_invalid`` whose ``details`` carry JSON Pointers.

The probes are built so a conforming agent refuses them before any domain logic runs; a
non-conforming agent might execute them, so point the checker only at agents whose skills are
safe to call. A probe the caller may not make (``authorization_failed``, HTTP 401/403) is a
skip with its reason, not a failure; ``Report.ok`` is true when no check failed.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import uuid
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import Any, Final

import httpx
from a2a.helpers import new_data_part
from a2a.types import (
    AgentCard,
    ExtensionSupportRequiredError,
    GetExtendedAgentCardRequest,
    Message,
    Role,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import A2AError
from google.protobuf.json_format import MessageToDict, ParseDict

from agent.client.calls import Calls, open_calls, service_parameters
from agent.client.errors import CredentialRefusedError, refusal_in
from agent.client.governed import http_client
from agent.devtools.statuses import FAIL, NOT_APPLICABLE, PASS, SKIP
from agent.interfaces import (
    DESCRIBE_SKILL_ID,
    EXTENSION_URI,
    INTERFACE_VERSION,
    NotRepresentableError,
    ReferenceRefusedError,
    SchemaCheckError,
    SchemaValidator,
    check_schema,
    compile_validator,
    digest_of,
    error_details,
    is_digest,
    is_version,
    json_pointer,
    json_type_name,
    trusted_schema,
    verify_reference,
)
from agent.routing.skill_request import plain_json
from agent.security.card_signatures import CardSignatureError, CardVerifier

AGENT: Final = "(agent)"
CARD_PATH: Final = "/.well-known/agent-card.json"
JSON: Final = "application/json"
REJECTED: Final = "TASK_STATE_REJECTED"
COMPLETED: Final = "TASK_STATE_COMPLETED"
JSON_POINTER: Final = re.compile(r"(?:/(?:[^~/]|~[01])*)*")
_WRONG_VALUES: Final[tuple[Any, ...]] = (
    123456789,
    "conformance-probe",
    True,
    None,
    [],
    {"conformance-probe": True},
)

SKILLS_AT_ONCE: Final = 2
"""Skills checked at the same time (each one's requests one after another): while the agent
answers one, this process reads the other's answer. Two keep well under the per-caller limits
an agent may set: at most two describe_skill calls at once, and one request to any other
skill."""

# The check names, in the order a report lists them for one subject.
CARD = "card fetched"
CARD_SIGNATURE = "card signature"
CARD_INTERFACE = "binding offered"
EXTENDED_CARD = "extended card"
EXTENDED_SIGNATURE = "extended card signature"
EXTENSION = "extension advertised"
VERSION = "interface_version"
BINDINGS = "bindings well-formed"
DESCRIBE_LISTED = "describe_skill listed"
REQUIRED_EXTENSION = "required extension enforced"
LISTED = "listed in card.skills"
DESCRIBE = "describe_skill"
DIGEST = "three-way digest"
TRUSTED = "trusted schema"
EMBEDDED = "embedded digests"
MISMATCH = "probe: interface_mismatch"
INPUT = "probe: input_invalid"
SKILL_CHECKS: Final = (LISTED, DESCRIBE, DIGEST, TRUSTED, EMBEDDED, MISMATCH, INPUT)


@dataclass(frozen=True)
class Check:
    """One step's verdict: pass, fail, skip or n/a, with a short reason."""

    subject: str
    name: str
    status: str
    reason: str


@dataclass
class Report:
    """Everything one run found about one target, in the order it was checked."""

    target: str
    binding: str
    authenticated: bool
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    refusal: CredentialRefusedError | None = None
    """The agent's own reason when it refused the credential (401/403) at the card."""
    unreachable: str | None = None
    """Why nothing answered at the card's URL (refused, unknown host, timeout), if so: then
    nothing was checked, which is not the same as an agent that does not conform."""

    @property
    def ok(self) -> bool:
        """True when every check that ran passed (skipped and n/a ones do not count)."""
        return all(c.status != FAIL for c in self.checks)

    def counts(self) -> dict[str, int]:
        """How many checks ended in each status."""
        return {
            s: sum(c.status == s for c in self.checks) for s in (PASS, FAIL, SKIP, NOT_APPLICABLE)
        }

    def failed(self) -> list[Check]:
        """The failing checks."""
        return [c for c in self.checks if c.status == FAIL]

    def find(self, subject: str, name: str) -> Check | None:
        """The check of that name for that subject (``AGENT`` for agent-level checks)."""
        return next((c for c in self.checks if (c.subject, c.name) == (subject, name)), None)

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON (what ``netagent check --json FILE`` writes)."""
        return {
            "target": self.target,
            "binding": self.binding,
            "authenticated": self.authenticated,
            "ok": self.ok,
            "unreachable": self.unreachable,
            "counts": self.counts(),
            "notes": list(self.notes),
            "checks": [asdict(c) for c in self.checks],
        }


@dataclass(frozen=True)
class _Binding:
    skill_id: str
    skill_version: str
    interface_digest: str


async def check_agent(
    base_url: str,
    *,
    token: str | None = None,
    binding: str = "JSONRPC",
    timeout: float = 30.0,
    require_signature: bool = False,
) -> Report:
    """Run every check against the agent at ``base_url`` as the bearer of ``token``; a card
    whose signature fails (or, with ``require_signature``, an unsigned card) ends the run."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with http_client(headers=headers, timeout=timeout) as http:
        checker = _Checker(
            base_url.rstrip("/"),
            binding,
            http,
            authenticated=bool(token),
            require_signature=require_signature,
        )
        await checker.run()
        return checker.report


def invalid_argument(schema: Any) -> tuple[dict[str, Any], str] | None:
    """An ``arguments`` object that fails ``schema``, and how it was made; None if none is found.

    With required members: ``{}``. Otherwise a wrong type for the first property in sorted
    order (the document's RFC 8785 member order, whatever order a transport delivers). Either
    candidate is used only if the schema really rejects it.
    """
    if not isinstance(schema, dict):
        return None
    try:
        validator = compile_validator(schema)
    except (SchemaCheckError, ReferenceRefusedError):
        return None
    required = schema.get("required")
    if isinstance(required, list) and required and not validator.is_valid({}):
        return {}, "{} (required: " + ", ".join(map(str, required)) + ")"
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return None
    name, subschema = min(properties.items())
    allowed = _types(subschema)
    for value in _WRONG_VALUES:
        kind = json_type_name(value)
        if kind in allowed or (kind == "integer" and "number" in allowed):
            continue
        candidate = {name: value}
        if not validator.is_valid(candidate):
            article = "an" if kind[0] in "aeiou" else "a"
            return candidate, f"{name!r} given {article} {kind}"
    return None


def is_json_pointer(value: Any) -> bool:
    """RFC 6901: empty, or ``/``-separated tokens with ``~`` only as ``~0`` or ``~1``."""
    return isinstance(value, str) and JSON_POINTER.fullmatch(value) is not None


class _Checker:
    def __init__(
        self,
        base_url: str,
        binding: str,
        http: httpx.AsyncClient,
        *,
        authenticated: bool,
        require_signature: bool = False,
    ) -> None:
        self.base_url = base_url
        self.binding = binding
        self.http = http
        self.authenticated = authenticated
        self.report = Report(base_url, binding, authenticated)
        self.card = AgentCard()
        self.activation = [EXTENSION_URI]
        self.signatures = CardVerifier(http, require_signature=require_signature)

    # -- recording --------------------------------------------------------------------------

    def _add(self, subject: str, name: str, status: str, reason: str) -> None:
        self.report.checks.append(Check(subject, name, status, reason))

    def _skip_rest(self, subject: str, names: tuple[str, ...], reason: str) -> None:
        done = {c.name for c in self.report.checks if c.subject == subject}
        for name in names:
            if name not in done:
                self._add(subject, name, SKIP, reason)

    # -- the procedure ----------------------------------------------------------------------

    async def run(self) -> None:
        if not await self._card():
            return
        bindings = self._extension()
        if bindings is None:
            return
        required = sorted(e.uri for e in self.card.capabilities.extensions if e.required and e.uri)
        await self._required_probe(required, bindings)
        self.activation = sorted({EXTENSION_URI, *required})
        others = [u for u in required if u != EXTENSION_URI]
        if others:
            self.report.notes.append(
                "activated the card's required extension(s) "
                + ", ".join(others)
                + " on every other request, so the schema-interface checks can run"
            )
        listed = {s.id for s in self.card.skills}
        turns = asyncio.Semaphore(SKILLS_AT_ONCE)

        async def checked(bound: _Binding) -> list[Check]:
            # A checker of its own, so that each skill's checks stay together in the report.
            own = copy.copy(self)
            own.report = Report(self.base_url, self.binding, self.authenticated)
            async with turns:
                await own._skill(bound, listed)
            return own.report.checks

        for checks in await asyncio.gather(*(checked(bound) for bound in bindings)):
            self.report.checks += checks

    async def _card(self) -> bool:
        url = self.base_url + CARD_PATH
        try:
            response = await self.http.get(url)
            response.raise_for_status()
            card = ParseDict(response.json(), AgentCard(), ignore_unknown_fields=True)
        except httpx.HTTPError as exc:
            refusal = refusal_in(exc)
            self.report.refusal = refusal
            if isinstance(exc, httpx.TransportError):
                self.report.unreachable = _short(exc)
            why = _short(exc) if refusal is None else f"{refusal}"
            self._add(AGENT, CARD, FAIL, f"GET {url}: {why}")
            return False
        except Exception as exc:  # JSON or ProtoJSON errors: not a card
            self._add(AGENT, CARD, FAIL, f"GET {url}: not an A2A agent card ({_short(exc)})")
            return False
        self._add(AGENT, CARD, PASS, f"{card.name!r} version {card.version} from {url}")
        if not await self._signature(card, CARD_SIGNATURE):
            return False
        self.card = card
        interface = self._interface_url()
        if interface is None:
            offered = ", ".join(i.protocol_binding for i in card.supported_interfaces) or "none"
            self._add(
                AGENT, CARD_INTERFACE, FAIL, f"no {self.binding} interface (offered: {offered})"
            )
            return False
        self._add(AGENT, CARD_INTERFACE, PASS, f"{self.binding} at {interface}")
        if not self.authenticated:
            return True
        if not card.capabilities.extended_agent_card:
            self._add(AGENT, EXTENDED_CARD, NOT_APPLICABLE, "the card offers no extended card")
            return True
        try:
            async with self._calls(self.activation) as calls:
                extended = await calls.get_extended_agent_card(GetExtendedAgentCardRequest())
        except Exception as exc:  # whatever any agent answers is reported, never raised
            self._add(AGENT, EXTENDED_CARD, FAIL, f"GetExtendedAgentCard: {_short(exc)}")
            return True  # the public card still serves for the rest
        self._add(
            AGENT,
            EXTENDED_CARD,
            PASS,
            f"{len(extended.skills)} skill(s) for this caller (public card: {len(card.skills)})",
        )
        if not await self._signature(extended, EXTENDED_SIGNATURE):
            return False
        self.card = extended
        if self._interface_url() is None:
            self._add(AGENT, CARD_INTERFACE, FAIL, f"the extended card has no {self.binding}")
            return False
        return True

    async def _signature(self, card: AgentCard, name: str) -> bool:
        """Whether the card may be used: its signature verifies, or it has none and none is
        required (then the check is n/a)."""
        try:
            check = await self.signatures.verify(card, self.base_url + CARD_PATH)
        except CardSignatureError as exc:
            self._add(AGENT, name, FAIL, f"{exc}: the card is not used")
            return False
        if check.signed:
            self._add(AGENT, name, PASS, str(check))
        else:
            self._add(AGENT, name, NOT_APPLICABLE, "not signed (--require-signature refuses it)")
        return True

    def _interface_url(self) -> str | None:
        return next(
            (i.url for i in self.card.supported_interfaces if i.protocol_binding == self.binding),
            None,
        )

    def _extension(self) -> list[_Binding] | None:
        extension = next(
            (e for e in self.card.capabilities.extensions if e.uri == EXTENSION_URI), None
        )
        if extension is None:
            self._add(
                AGENT,
                EXTENSION,
                FAIL,
                f"{EXTENSION_URI} is not in capabilities.extensions: the agent does not offer "
                "the schema-interface procedure",
            )
            return None
        required = json.dumps(extension.required)
        self._add(AGENT, EXTENSION, PASS, f"{EXTENSION_URI} (required: {required})")
        params = plain_json(MessageToDict(extension).get("params", {}))
        params = params if isinstance(params, dict) else {}
        version = params.get("interface_version")
        if version == INTERFACE_VERSION:
            self._add(AGENT, VERSION, PASS, f"params.interface_version is {version!r}")
        else:
            self._add(AGENT, VERSION, FAIL, f"params.interface_version is {version!r}, not '1.0'")
        bindings, problems = _bindings(params.get("skills"))
        if problems:
            self._add(AGENT, BINDINGS, FAIL, "; ".join(problems))
        elif not bindings:
            self._add(AGENT, BINDINGS, FAIL, "params.skills binds no skill")
        else:
            self._add(
                AGENT,
                BINDINGS,
                PASS,
                f"{len(bindings)} binding(s): string skill_id, N.N skill_version, "
                "sha256 interface_digest, one per skill",
            )
        if any(s.id == DESCRIBE_SKILL_ID for s in self.card.skills):
            self._add(AGENT, DESCRIBE_LISTED, PASS, "describe_skill is in card.skills")
        else:
            self._add(AGENT, DESCRIBE_LISTED, FAIL, "card.skills has no describe_skill")
        return bindings

    async def _required_probe(self, required: list[str], bindings: list[_Binding]) -> None:
        if not required:
            self._add(AGENT, REQUIRED_EXTENSION, NOT_APPLICABLE, "no extension is marked required")
            return
        activated = [u for u in (EXTENSION_URI,) if u not in required]
        skill_id = bindings[0].skill_id if bindings else DESCRIBE_SKILL_ID
        request = {"skill": DESCRIBE_SKILL_ID, "arguments": {"skill_id": skill_id}}
        try:
            task = await self._send(request, activated)
        except ExtensionSupportRequiredError:
            self._add(
                AGENT,
                REQUIRED_EXTENSION,
                PASS,
                f"without {', '.join(required)}: ExtensionSupportRequiredError",
            )
            return
        except Exception as exc:  # whatever any agent answers is reported, never raised
            self._add(
                AGENT,
                REQUIRED_EXTENSION,
                FAIL,
                f"without {', '.join(required)}: expected ExtensionSupportRequiredError, "
                f"got {type(exc).__name__}: {_short(exc)}",
            )
            return
        self._add(
            AGENT,
            REQUIRED_EXTENSION,
            FAIL,
            f"without {', '.join(required)}: a task came back "
            f"({TaskState.Name(task.status.state)}) instead of ExtensionSupportRequiredError",
        )

    async def _skill(self, bound: _Binding, listed: set[str]) -> None:
        skill = bound.skill_id
        if skill not in listed:
            self._add(skill, LISTED, FAIL, "bound in params.skills but not in card.skills")
            self._skip_rest(skill, SKILL_CHECKS, "not listed in card.skills (a client stops)")
            return
        self._add(skill, LISTED, PASS, f"version {bound.skill_version}")
        document = await self._describe(bound)
        input_schema = None
        if document is None:
            self._skip_rest(skill, (DIGEST, TRUSTED, EMBEDDED), "no document to check")
        elif self._trusted(bound, document) and self._embedded(skill, document):
            input_schema = document["input_schema"]["resolution"]["schema"]
        await self._mismatch_probe(bound)
        await self._input_probe(bound, input_schema)

    async def _describe(self, bound: _Binding) -> dict[str, Any] | None:
        skill = bound.skill_id
        request = {"skill": DESCRIBE_SKILL_ID, "arguments": {"skill_id": skill}}
        try:
            task = await self._send(request, self.activation)
        except Exception as exc:  # whatever any agent answers is reported, never raised
            self._add(skill, DESCRIBE, FAIL, f"request failed: {_short(exc)}")
            return None
        state = TaskState.Name(task.status.state)
        if state != COMPLETED:
            error = _error_object(task)
            self._add(
                skill,
                DESCRIBE,
                FAIL,
                f"ended {state}: {error.get('code', 'no error code')} {error.get('message', '')}",
            )
            return None
        artifacts = [a for a in task.artifacts if a.name == DESCRIBE_SKILL_ID]
        if len(artifacts) != 1 or len(task.artifacts) != 1 or len(artifacts[0].parts) != 1:
            self._add(
                skill,
                DESCRIBE,
                FAIL,
                f"{len(task.artifacts)} artifact(s); expected exactly one named describe_skill "
                "with one part",
            )
            return None
        data = plain_json(MessageToDict(artifacts[0].parts[0]).get("data"))
        document = data.get("skill_interface") if isinstance(data, dict) else None
        if not isinstance(document, dict):
            self._add(skill, DESCRIBE, FAIL, "the result's Data Part holds no skill_interface")
            return None
        self._add(skill, DESCRIBE, PASS, f"task {task.id[:8]} COMPLETED with the document")
        returned = data.get("interface_digest")
        try:
            computed = digest_of(document)
        except NotRepresentableError as exc:
            self._add(skill, DIGEST, FAIL, f"the document has no RFC 8785 form: {exc}")
            return document
        if bound.interface_digest == returned == computed:
            self._add(skill, DIGEST, PASS, f"advertised = returned = computed = {computed}")
        else:
            self._add(
                skill,
                DIGEST,
                FAIL,
                f"advertised {bound.interface_digest}, returned {returned}, computed {computed}",
            )
        return document

    def _trusted(self, bound: _Binding, document: dict[str, Any]) -> bool:
        skill = bound.skill_id
        shape = error_details(_trusted_validator(), document)
        problems = [
            f"{d['instance_path'] or '(document)'}: {d['keyword']}"
            + (f" (expected {d['expected']}, got {d['actual']})" if "expected" in d else "")
            for d in shape
        ]
        for member, selected in (
            ("skill_id", skill),
            ("skill_version", bound.skill_version),
        ):
            if document.get(member) != selected:
                problems.append(f"/{member}: {document.get(member)!r} is not the advertised")
        if not shape:
            if not is_version(document["skill_version"]):
                problems.append("/skill_version: not N.N (full match)")
            if document["skill_id"] in document["supporting_record_schemas"]:
                problems.append("/supporting_record_schemas: a record kind equals the skill id")
        if problems:
            self._add(skill, TRUSTED, FAIL, "; ".join(problems[:5]))
        else:
            self._add(
                skill,
                TRUSTED,
                PASS,
                f"valid against {trusted_schema().get('$id')}; interface_version "
                f"{INTERFACE_VERSION}, skill_id and skill_version as advertised",
            )
        if shape:
            self._add(skill, EMBEDDED, SKIP, "the document's shape is invalid")
            return False
        return True

    def _embedded(self, skill: str, document: dict[str, Any]) -> bool:
        references = [
            ("/input_schema", document["input_schema"]),
            ("/output_schema", document["output_schema"]),
            *(
                (json_pointer(["supporting_record_schemas", kind]), reference)
                for kind, reference in sorted(document["supporting_record_schemas"].items())
            ),
        ]
        problems: list[str] = []
        for pointer, reference in references:
            found = [
                f"{pointer}{p if p.startswith('/') else ': ' + p}"
                for p in verify_reference(reference)
            ]
            if not found:
                try:
                    check_schema(reference["resolution"]["schema"])
                except SchemaCheckError as exc:
                    found.append(f"{pointer}/resolution/schema{exc.pointer}: {exc.reason}")
            problems += found
        if problems:
            self._add(skill, EMBEDDED, FAIL, "; ".join(problems[:5]))
            return False
        kinds = len(references) - 2
        self._add(
            skill,
            EMBEDDED,
            PASS,
            f"{len(references)} schema(s) match their digests "
            f"(input, output, {kinds} record kind(s))",
        )
        return True

    async def _mismatch_probe(self, bound: _Binding) -> None:
        skill = bound.skill_id
        if skill == DESCRIBE_SKILL_ID:
            self._add(
                skill,
                MISMATCH,
                NOT_APPLICABLE,
                "describe_skill requests carry no skill_version/interface_digest (§7.1)",
            )
            return
        wrong = _other_digest(bound.interface_digest)
        request = {
            "skill": skill,
            "skill_version": bound.skill_version,
            "interface_digest": wrong,
            "arguments": {},
        }
        await self._probe(
            skill, MISMATCH, request, "interface_mismatch", "a wrong interface_digest"
        )

    async def _input_probe(self, bound: _Binding, input_schema: Any) -> None:
        skill = bound.skill_id
        if input_schema is None:
            self._add(skill, INPUT, SKIP, "no verified input schema to derive an argument from")
            return
        derived = invalid_argument(input_schema)
        if derived is None:
            self._add(skill, INPUT, SKIP, "no invalid argument can be derived from input_schema")
            return
        arguments, how = derived
        request: dict[str, Any] = {"skill": skill, "arguments": arguments}
        if skill != DESCRIBE_SKILL_ID:
            request["skill_version"] = bound.skill_version
            request["interface_digest"] = bound.interface_digest
        await self._probe(skill, INPUT, request, "input_invalid", how, details=True)

    async def _probe(
        self,
        skill: str,
        name: str,
        request: dict[str, Any],
        expected: str,
        sent: str,
        *,
        details: bool = False,
    ) -> None:
        try:
            task = await self._send(request, self.activation)
        except Exception as exc:  # whatever any agent answers is reported, never raised
            status = _http_status(exc)
            if status in (401, 403):
                who = "an anonymous caller" if not self.authenticated else "this caller"
                self._add(skill, name, SKIP, f"{who} may not invoke {skill}: HTTP {status}")
            else:
                self._add(skill, name, FAIL, f"request failed: {_short(exc)}")
            return
        state = TaskState.Name(task.status.state)
        error = _error_object(task)
        code = error.get("code")
        if code == "authorization_failed":
            message = error.get("message", "")
            self._add(
                skill, name, SKIP, f"caller may not invoke {skill}: authorization_failed {message}"
            )
            return
        if state != REJECTED or code != expected:
            self._add(
                skill,
                name,
                FAIL,
                f"sent {sent}: expected REJECTED {expected}, got {state} {code or ''}".rstrip(),
            )
            return
        if not details:
            self._add(skill, name, PASS, f"sent {sent}: REJECTED {expected}")
            return
        entries = error.get("details")
        if entries is None:
            self._add(skill, name, PASS, f"sent {sent}: REJECTED {expected} (no details)")
            return
        if not isinstance(entries, list) or not entries:
            self._add(skill, name, FAIL, f"sent {sent}: details is not a non-empty array")
            return
        paths = [e.get("instance_path") if isinstance(e, dict) else None for e in entries]
        bad = [p for p in paths if not is_json_pointer(p)]
        if bad:
            shown = json.dumps(bad[:3])
            self._add(skill, name, FAIL, f"sent {sent}: instance_path not a JSON Pointer: {shown}")
            return
        shown = ", ".join(repr(p) for p in paths[:3]) + (" ..." if len(paths) > 3 else "")
        self._add(skill, name, PASS, f"sent {sent}: REJECTED {expected}; instance_path {shown}")

    # -- the wire ---------------------------------------------------------------------------

    def _calls(self, extensions: list[str]) -> Calls:
        # The token rides in each call's parameters too: gRPC sends no HTTP client headers.
        parameters = service_parameters(self.http.headers.get("Authorization"), extensions)
        return open_calls(self.card, self.binding, self.http, parameters, streaming=False)

    async def _send(self, data: dict[str, Any], extensions: list[str]) -> Task:
        message = Message(
            message_id=uuid.uuid4().hex,
            role=Role.ROLE_USER,
            parts=[new_data_part(data, media_type=JSON)],
            extensions=list(extensions),
        )
        async with self._calls(extensions) as calls:
            async for event in calls.send_message(SendMessageRequest(message=message)):
                if event.HasField("task"):
                    return event.task
        raise A2AError("no task came back")


@cache
def _trusted_validator() -> SchemaValidator:
    return compile_validator(trusted_schema())


def _bindings(skills: Any) -> tuple[list[_Binding], list[str]]:
    if not isinstance(skills, list):
        return [], ["params.skills is not an array"]
    found: dict[str, _Binding] = {}
    problems: list[str] = []
    for index, entry in enumerate(skills):
        where = f"params.skills[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: not an object")
            continue
        skill_id = entry.get("skill_id")
        version = entry.get("skill_version")
        digest = entry.get("interface_digest")
        wrong = []
        if not isinstance(skill_id, str) or not skill_id:
            wrong.append("skill_id is not a non-empty string")
        if not is_version(version):
            wrong.append(f"skill_version {version!r} is not N.N")
        if not is_digest(digest):
            wrong.append(f"interface_digest {digest!r} is not sha256:<64 lowercase hex>")
        if isinstance(skill_id, str) and skill_id in found:
            wrong.append(f"a second binding for {skill_id!r}")
        if wrong:
            problems.append(f"{where}: " + ", ".join(wrong))
        elif isinstance(skill_id, str):
            found[skill_id] = _Binding(skill_id, str(version), str(digest))
    return list(found.values()), problems


def _types(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def _other_digest(digest: str) -> str:
    """A well-formed digest that differs from ``digest`` in its last hex digit."""
    return digest[:-1] + ("1" if digest.endswith("0") else "0")


def _error_object(task: Task) -> dict[str, Any]:
    parts = [MessageToDict(p) for p in task.status.message.parts]
    data = [p["data"] for p in parts if isinstance(p.get("data"), dict)]
    return plain_json(data[0]) if data else {}


def _http_status(exc: BaseException) -> int | None:
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, httpx.HTTPStatusError):
            return seen.response.status_code
        seen = seen.__cause__ or seen.__context__
    return None


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


__all__ = [
    "AGENT",
    "FAIL",
    "NOT_APPLICABLE",
    "PASS",
    "SKIP",
    "Check",
    "Report",
    "check_agent",
    "invalid_argument",
    "is_json_pointer",
]
