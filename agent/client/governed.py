"""The schema-governed client: the draft's eleven-step sequence (digest §10), in order.

1 card · 2 advertisement · 3 describe_skill · 4 three-way digest check · 5 trusted-schema
validation · 6 embedded-schema digests · 7 input validation · 8 invocation with skill_version
and interface_digest · 9 results · 10 output and record validation · 11 hand them over.
Nothing is sent after a local failure, and no schema is ever fetched from anywhere.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
from a2a.helpers import new_data_part
from a2a.types import (
    AgentCard,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    Message,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError

from agent.client.bindings import BINDINGS, GRPC
from agent.client.cache import InterfaceCache, VerifiedInterface
from agent.client.calls import Calls, open_calls, service_parameters
from agent.client.errors import (
    REFUSED_STATUSES,
    CardSignatureRefusedError,
    InputInvalidError,
    InterfaceInvalidError,
    OutputInvalidError,
    RemoteTaskError,
    SkillNotAdvertisedError,
    refusal_from_body,
)
from agent.interfaces import (
    DESCRIBE_SKILL_ID,
    EXTENSION_URI,
    INTERFACE_VERSION,
    compile_validator,
    digest_of,
    error_details,
    trusted_schema,
    verify_document,
)
from agent.interfaces.order import document_order, in_schema_order
from agent.routing.skill_request import plain_json
from agent.security.card_signatures import (
    UNSIGNED,
    CardSignatureError,
    CardVerifier,
    SignatureCheck,
)
from agent.security.outbound import outbound_client

CARD_PATH = "/.well-known/agent-card.json"
JSON = "application/json"
ResultHandler = Callable[[dict[str, Any], "Invocation"], Awaitable[None] | None]
RecordHandler = Callable[["Record", "Invocation | None"], Awaitable[None] | None]


@dataclass(frozen=True)
class Record:
    """One supporting record: its kind (the artifact name), artifactId and validated data."""

    kind: str
    artifact_id: str
    data: dict[str, Any]
    schema_uri: str


@dataclass
class Invocation:
    """A completed, validated invocation (step 11 hands this over)."""

    task_id: str
    context_id: str
    output: dict[str, Any]
    records: list[Record]
    interface: VerifiedInterface
    endpoint: str

    @property
    def output_schema_uri(self) -> str:
        """The stable identity of the result's schema (for domain handlers)."""
        return self.interface.schema_uri("output")


@dataclass
class ClientStats:
    """Counters a caller (or a test) can read: what the client actually did."""

    card_fetches: int = 0
    describe_calls: int = 0
    invocations: int = 0


@dataclass
class _Advertised:
    card: AgentCard
    card_url: str
    interface_url: str
    bindings: dict[str, tuple[str, str]] = field(default_factory=dict)
    signature: SignatureCheck = UNSIGNED
    """What the verification of the card's signature found (the extended card's, if read)."""


def _extension_params(card: AgentCard) -> dict[str, Any] | None:
    for extension in card.capabilities.extensions:
        if extension.uri == EXTENSION_URI:
            params = MessageToDict(extension).get("params", {})  # a Struct: always an object
            return plain_json(params) if isinstance(params, dict) else None
    return None


class GovernedClient:
    """An async client for one target agent, over one A2A binding.

    A signed card is used only when its signature verifies (``CardVerifier``: keys from the
    card's own origin); ``require_signature`` refuses an unsigned card too.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        binding: str = "JSONRPC",
        cache: InterfaceCache | None = None,
        http: httpx.AsyncClient | None = None,
        require_signature: bool = False,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.card_url = self.base_url + CARD_PATH
        self.binding = binding
        self.cache = cache if cache is not None else InterfaceCache()
        self.stats = ClientStats()
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}
        self._token = token
        self._own_http = http is None
        self._http = http or http_client(timeout=30)
        self._signatures = CardVerifier(self._http, require_signature=require_signature)
        self._result_handlers: dict[str, list[ResultHandler]] = {}
        self._record_handlers: dict[str, list[RecordHandler]] = {}

    async def __aenter__(self) -> GovernedClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client if this client made it."""
        if self._own_http:
            await self._http.aclose()

    # -- domain handlers (keyed by stable schema_uri, not by agent) -------------------------

    def on_result(self, schema_uri: str, handler: ResultHandler) -> None:
        """Call ``handler(output, invocation)`` for every validated result of that schema."""
        self._result_handlers.setdefault(schema_uri, []).append(handler)

    def on_record(self, schema_uri: str, handler: RecordHandler) -> None:
        """Call ``handler(record, invocation)`` for every validated record of that schema."""
        self._record_handlers.setdefault(schema_uri, []).append(handler)

    # -- steps 1 and 2 ----------------------------------------------------------------------

    async def fetch_card(self) -> _Advertised:
        """Step 1: the card this caller sees (the extended one when authenticated)."""
        self.stats.card_fetches += 1
        try:
            response = await self._http.get(self.card_url, headers=self._auth)
            if response.status_code in REFUSED_STATUSES:  # the agent says why: pass that on
                status = response.status_code
                raise refusal_from_body(status, _json_or_none(response), self.card_url)
            response.raise_for_status()
            card = ParseDict(response.json(), AgentCard(), ignore_unknown_fields=True)
        except (httpx.HTTPError, ValueError, ParseError) as exc:
            raise InterfaceInvalidError(f"agent card unavailable at {self.card_url}") from exc
        signature = await self._verified(card)
        if self._token and card.capabilities.extended_agent_card:
            async with self._calls(card, streaming=False) as calls:
                card = await calls.get_extended_agent_card(GetExtendedAgentCardRequest())
            signature = await self._verified(card)
        interface_url = next(
            (i.url for i in card.supported_interfaces if i.protocol_binding == self.binding), None
        )
        if interface_url is None:
            raise SkillNotAdvertisedError(f"the card offers no {self.binding} interface")
        advertised = _Advertised(card, self.card_url, interface_url, signature=signature)
        params = _extension_params(card)
        if params and params.get("interface_version") == INTERFACE_VERSION:
            for binding in params.get("skills", []):
                if isinstance(binding, dict) and isinstance(binding.get("skill_id"), str):
                    if binding["skill_id"] in advertised.bindings:  # at most one per skill
                        raise InterfaceInvalidError(
                            f"the card binds {binding['skill_id']!r} more than once"
                        )
                    advertised.bindings[binding["skill_id"]] = (
                        str(binding.get("skill_version")),
                        str(binding.get("interface_digest")),
                    )
        return advertised

    async def _verified(self, card: AgentCard) -> SignatureCheck:
        """Step 1's last part: a signed card is used only if its signature verifies."""
        try:
            return await self._signatures.verify(card, self.card_url)
        except CardSignatureError as exc:
            raise CardSignatureRefusedError(str(exc)) from None

    @staticmethod
    def selected(advertised: _Advertised, skill_id: str) -> tuple[str, str]:
        """Step 2: describe_skill and the skill are advertised; their version and digest."""
        listed = {s.id for s in advertised.card.skills}
        if DESCRIBE_SKILL_ID not in listed:
            raise SkillNotAdvertisedError("the card does not advertise describe_skill")
        if skill_id not in listed or skill_id not in advertised.bindings:
            raise SkillNotAdvertisedError(f"the card does not advertise {skill_id!r}")
        return advertised.bindings[skill_id]

    async def why_not(self, skill_id: str) -> str | None:
        """The agent's own words on a skill its card does not advertise (removed, and what
        replaces it), or None. One request naming only the skill, with no ``skill_version``
        or ``interface_digest`` (an invocation needs both) and no arguments: nothing runs."""
        try:
            advertised = await self.fetch_card()
            task = await self._send(advertised.card, {"skill": skill_id, "arguments": {}})
        except Exception:  # an explanation is a courtesy: its failure changes nothing
            return None
        if TaskState.Name(task.status.state) == "TASK_STATE_COMPLETED":
            return None
        message = _error_object(task).get("message")
        return message if isinstance(message, str) and message else None

    # -- steps 3 to 6 -----------------------------------------------------------------------

    async def describe(self, skill_id: str) -> VerifiedInterface:
        """Steps 1-6 (or a cache hit bound to what the current card advertises)."""
        return (await self.describe_on_card(skill_id))[1]

    async def describe_on_card(self, skill_id: str) -> tuple[_Advertised, VerifiedInterface]:
        """Steps 1-6, and the card they read: ``invoke(..., card=card)`` then sends on that
        same reading (a chain checks two skills' composition and sends on what it checked)."""
        advertised = await self.fetch_card()
        return advertised, await self._describe(advertised, skill_id)

    async def _describe(self, advertised: _Advertised, skill_id: str) -> VerifiedInterface:
        version, digest = self.selected(advertised, skill_id)
        cached = self.cache.get(
            advertised.card_url, advertised.interface_url, skill_id, version, digest
        )
        if cached is not None:
            return cached
        self.stats.describe_calls += 1
        request = {"skill": DESCRIBE_SKILL_ID, "arguments": {"skill_id": skill_id}}
        task = await self._send(advertised.card, request)
        state = TaskState.Name(task.status.state)
        if state != "TASK_STATE_COMPLETED":  # the agent's own answer: a remote state, not ours
            raise RemoteTaskError(task.id, state, _error_object(task))
        described = [a for a in task.artifacts if a.name == DESCRIBE_SKILL_ID]
        if len(described) != 1 or len(described[0].parts) != 1:
            raise InterfaceInvalidError("describe_skill returned no single result artifact")
        data = plain_json(MessageToDict(described[0].parts[0]).get("data"))
        if not isinstance(data, dict) or not isinstance(data.get("skill_interface"), dict):
            raise InterfaceInvalidError("describe_skill returned no document")
        document = data["skill_interface"]
        computed = digest_of(document)
        if not (data.get("interface_digest") == digest == computed):  # step 4: all three agree
            raise InterfaceInvalidError(
                "interface digests disagree (advertised, returned, computed)",
                [digest, str(data.get("interface_digest")), computed],
            )
        problems = verify_document(  # steps 5 and 6
            document, expected_digest=digest, skill_id=skill_id, skill_version=version
        )
        if problems:
            raise InterfaceInvalidError("the document fails verification", problems)
        document = document_order(document, trusted_schema())  # as received: a Struct's order
        verified = _compile(advertised, skill_id, version, digest, document)
        self.cache.put(verified)
        return verified

    # -- steps 7 to 11 ----------------------------------------------------------------------

    async def invoke(
        self, skill_id: str, arguments: dict[str, Any], *, card: _Advertised | None = None
    ) -> Invocation:
        """The whole sequence for one blocking invocation (on ``card``, a reading of the card
        that ``describe_on_card`` just made, instead of a new one)."""
        invocation: Invocation | None = None
        async for item in self._invoke(skill_id, arguments, streaming=False, card=card):
            if isinstance(item, Invocation):
                invocation = item
        assert invocation is not None
        return invocation

    async def stream(
        self, skill_id: str, arguments: dict[str, Any]
    ) -> AsyncIterator[Record | Invocation]:
        """Streaming invocation: each validated record as it arrives, then the Invocation."""
        async for item in self._invoke(skill_id, arguments, streaming=True):
            yield item

    async def _invoke(
        self,
        skill_id: str,
        arguments: dict[str, Any],
        *,
        streaming: bool,
        card: _Advertised | None = None,
    ) -> AsyncIterator[Record | Invocation]:
        advertised = card if card is not None else await self.fetch_card()
        interface = await self._describe(advertised, skill_id)
        details = error_details(interface.input_validator, arguments)  # step 7
        if details:
            raise InputInvalidError("arguments do not match input_schema", details)
        request = {  # step 8
            "skill": skill_id,
            "skill_version": interface.skill_version,
            "interface_digest": interface.interface_digest,
            "arguments": arguments,
        }
        self.stats.invocations += 1
        records: list[Record] = []
        output: dict[str, Any] | None = None
        task_id = ""
        final: Task | None = None
        async with self._calls(advertised.card, streaming=streaming) as calls:
            async for event in calls.send_message(SendMessageRequest(message=_message(request))):
                kind = event.WhichOneof("payload")
                if kind == "task":
                    final = event.task
                    task_id = event.task.id
                elif kind == "artifact_update":
                    task_id = event.artifact_update.task_id
                    artifact = event.artifact_update.artifact
                    if artifact.name != skill_id:
                        record = self._record(interface, artifact)  # step 10, per record
                        records.append(record)
                        await self._dispatch_record(record, None)
                        yield record
                elif kind == "status_update":
                    task_id = event.status_update.task_id
            if streaming or final is None:
                final = await calls.get_task(GetTaskRequest(id=task_id))
        state = TaskState.Name(final.status.state)  # step 9
        if state != "TASK_STATE_COMPLETED":
            raise RemoteTaskError(final.id, state, _error_object(final))
        for artifact in final.artifacts:
            if artifact.name == skill_id:
                output = self._output(interface, artifact)
            elif not streaming:
                record = self._record(interface, artifact)
                records.append(record)
        if output is None:
            raise OutputInvalidError("the task completed without a result artifact")
        invocation = Invocation(
            final.id, final.context_id, output, records, interface, advertised.interface_url
        )
        for handler in self._result_handlers.get(invocation.output_schema_uri, []):
            await _maybe_await(handler(output, invocation))
        if not streaming:
            for record in records:
                await self._dispatch_record(record, invocation)
        yield invocation

    # -- helpers ----------------------------------------------------------------------------

    @staticmethod
    def _output(interface: VerifiedInterface, artifact: Any) -> dict[str, Any]:
        data = _single_data(artifact)
        details = error_details(interface.output_validator, data)
        if details:
            raise OutputInvalidError("result does not match output_schema", details)
        ordered: dict[str, Any] = in_schema_order(data, interface.schema("output"))
        return ordered  # in the schema's order: a Struct's is random

    @staticmethod
    def _record(interface: VerifiedInterface, artifact: Any) -> Record:
        kind = artifact.name
        validator = interface.record_validators.get(kind)
        if validator is None:
            raise OutputInvalidError(f"artifact {kind!r} is no declared record kind")
        data = _single_data(artifact)
        details = error_details(validator, data)
        if details:
            raise OutputInvalidError(f"{kind} record does not match its schema", details)
        ordered = in_schema_order(data, interface.schema("record", kind))
        return Record(kind, artifact.artifact_id, ordered, interface.schema_uri("record", kind))

    async def _dispatch_record(self, record: Record, invocation: Invocation | None) -> None:
        for handler in self._record_handlers.get(record.schema_uri, []):
            await _maybe_await(handler(record, invocation))

    async def _send(self, card: AgentCard, request: dict[str, Any]) -> Task:
        async with self._calls(card, streaming=False) as calls:
            async for event in calls.send_message(SendMessageRequest(message=_message(request))):
                if event.HasField("task"):
                    return event.task
        raise InterfaceInvalidError("no task came back")

    def _calls(self, card: AgentCard, *, streaming: bool) -> _Answered:
        """The SDK's client for this binding (agent/client/calls.py); a card whose interfaces
        it cannot use is the agent's mistake, not a traceback."""
        parameters = service_parameters(self._auth.get("Authorization"), [EXTENSION_URI])
        try:
            calls = open_calls(card, self.binding, self._http, parameters, streaming=streaming)
        except ValueError as exc:
            raise InterfaceInvalidError(
                f"the card offers no {self.binding} interface this client can call: {exc}"
            ) from exc
        return _Answered(calls)


_MISSHAPEN = (ValueError, TypeError, ParseError)
"""What reading an answer of the wrong shape raises in the SDK's client: a result
that is neither task nor message (ValueError), a null result (TypeError), a member of the
wrong type (ParseError)."""


@contextmanager
def _answer_read() -> Iterator[None]:
    try:
        yield
    except _MISSHAPEN as exc:
        raise InterfaceInvalidError(f"the agent's answer is no A2A response: {exc}") from exc


class _Answered:
    """The calls, with an answer of the wrong shape reported as the agent's
    (``InterfaceInvalidError``) instead of raised as the parser's error: a command line would
    print a traceback for an agent's mistake."""

    def __init__(self, calls: Calls) -> None:
        self._calls = calls

    async def __aenter__(self) -> _Answered:
        await self._calls.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._calls.__aexit__(*exc)

    async def send_message(self, request: SendMessageRequest) -> AsyncIterator[StreamResponse]:
        events = self._calls.send_message(request)
        while True:
            try:
                with _answer_read():
                    event = await anext(events)
            except StopAsyncIteration:
                return
            yield event

    async def get_task(self, request: GetTaskRequest) -> Task:
        with _answer_read():
            return await self._calls.get_task(request)

    async def get_extended_agent_card(self, request: GetExtendedAgentCardRequest) -> AgentCard:
        with _answer_read():
            return await self._calls.get_extended_agent_card(request)


def http_client(*, timeout: float, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    """``httpx.AsyncClient(headers=headers, timeout=timeout)``, with its TLS context (certifi's
    CA bundle loaded: 40 to 70 ms of a command's start here) made for its first https request,
    not for a client that speaks only plain http. The caller's token goes through a proxy of
    the environment only tunnelled, over https to another host (``agent/security/outbound.py``)."""
    return outbound_client(headers=headers, timeout=timeout, direct=_TlsWhenAsked())


class _TlsWhenAsked(httpx.AsyncBaseTransport):
    """httpx's default transport (``AsyncHTTPTransport()``: verified TLS, SSL_CERT_FILE and
    SSL_CERT_DIR read), made for the first request that is not plain http; plain http goes
    through one whose TLS context is never used (and has no CA: it could verify nothing)."""

    def __init__(self) -> None:
        import ssl

        self._plain = httpx.AsyncHTTPTransport(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
        self._tls: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme == "http":
            return await self._plain.handle_async_request(request)
        if self._tls is None:
            self._tls = httpx.AsyncHTTPTransport()
        return await self._tls.handle_async_request(request)

    async def aclose(self) -> None:
        await self._plain.aclose()
        if self._tls is not None:
            await self._tls.aclose()


def _compile(
    advertised: _Advertised, skill_id: str, version: str, digest: str, document: dict[str, Any]
) -> VerifiedInterface:
    def validator(reference: dict[str, Any]) -> Any:  # verify_document has checked each schema
        return compile_validator(reference["resolution"]["schema"], checked=True)

    return VerifiedInterface(
        card_url=advertised.card_url,
        interface_url=advertised.interface_url,
        skill_id=skill_id,
        skill_version=version,
        interface_digest=digest,
        document=document,
        input_validator=validator(document["input_schema"]),
        output_validator=validator(document["output_schema"]),
        record_validators={
            kind: validator(reference)
            for kind, reference in document["supporting_record_schemas"].items()
        },
    )


def _message(data: dict[str, Any]) -> Message:
    return Message(
        message_id=uuid.uuid4().hex,
        role=Role.ROLE_USER,
        parts=[new_data_part(data, media_type=JSON)],
        extensions=[EXTENSION_URI],
    )


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _single_data(artifact: Any) -> dict[str, Any]:
    parts = [MessageToDict(p) for p in artifact.parts]
    data = [p["data"] for p in parts if "data" in p]
    if len(data) != 1 or not isinstance(data[0], dict):
        raise OutputInvalidError(f"artifact {artifact.name!r} holds no single JSON object")
    return plain_json(data[0])


def _error_object(task: Task) -> dict[str, Any]:
    parts = [MessageToDict(p) for p in task.status.message.parts]
    data = [p["data"] for p in parts if isinstance(p.get("data"), dict)]
    return plain_json(data[0]) if data else {}


async def _maybe_await(value: Awaitable[None] | None) -> None:
    if value is not None:
        await value


__all__ = [
    "BINDINGS",
    "GRPC",
    "ClientStats",
    "GovernedClient",
    "Invocation",
    "Record",
    "StreamResponse",
    "http_client",
]
