"""The A2A gRPC binding: the SDK's ``GrpcHandler`` over the same request handler, same governance.

The JSON-RPC and HTTP+JSON bindings reach ``GovernedRequestHandler`` through the edge
middleware (agent/edge/http_auth.py, limits.py, extensions.py) and the SDK's route adapters;
this binding reaches the same handler object through the SDK's ``GrpcHandler``, with the edge
done here, per call, before the handler sees anything:

* **authentication**: the ``authorization`` metadata is verified by the very function the HTTP
  edge uses (``verify_bearer``), deny by default: without it only a send whose single Data
  Part names a skill an anonymous caller is entitled to gets through (``describe_skill``).
  A missing, repeated or bad token is ``UNAUTHENTICATED`` (with the same ``www-authenticate``
  challenge as HTTP's 401, as trailing metadata); an unreachable issuer ``UNAVAILABLE``. The
  principal reaches the handler as the same ``PrincipalUser`` the HTTP context builder hands
  over, so routing, enforcement, the task owner and the audit rows are the same.
* **the version**: ``a2a-version`` metadata, checked by the SDK's own rule (the one its HTTP
  adapters apply); without it the SDK assumes 0.3 and refuses, exactly as on HTTP, with the
  HTTP edge's fixed text (the value sent is not quoted back).
* **extensions**: ``a2a-extensions`` metadata is parsed by the SDK's builder; the activated
  ones are echoed in the response's initial metadata; required ones are the handler's check.
* **limits**: the server's ``max_receive_message_length`` is the edge's body limit
  (``RESOURCE_EXHAUSTED`` beyond it); protobuf decoding is bounded by its own recursion limit,
  and the handler's message check bounds parts, strings, items and depth as on HTTP.
* **errors**: A2A errors become ``google.rpc.Status`` with an ``ErrorInfo`` (reason, domain
  ``a2a-protocol.org``, the error's data as metadata), under the status codes of A2A 5.4
  (the SDK's own table differs for three of them: see ``GRPC_STATUS``).

The server runs in the event loop that runs uvicorn, started and stopped by the app's lifespan
(agent/app/transports.py); NETAGENT_GRPC_PORT chooses its port (docs/operations.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextvars import ContextVar
from typing import Any

import grpc
import grpc.aio
from a2a.auth.user import User
from a2a.extensions.common import HTTP_EXTENSION_HEADER, get_requested_extensions
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import (
    DefaultGrpcServerCallContextBuilder,
    GrpcHandler,
    RequestHandler,
)
from a2a.types import (
    AgentExtension,
    ContentTypeNotSupportedError,
    ExtendedAgentCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InternalError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    PushNotificationNotSupportedError,
    SendMessageRequest,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
    a2a_pb2,
    a2a_pb2_grpc,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT
from a2a.utils.errors import A2A_ERROR_REASONS, A2AError
from a2a.utils.grpc_status import status_to_grpc
from a2a.utils.proto_utils import validation_errors_to_bad_request
from a2a.utils.version_validator import validate_version
from google.protobuf import any_pb2, empty_pb2
from google.protobuf.message import DecodeError
from google.protobuf.message import Message as ProtobufMessage
from google.rpc import error_details_pb2, status_pb2

from agent.base.settings import Limits
from agent.edge.error_scrub import VERSION_TEXT
from agent.edge.extensions import activated
from agent.edge.http_auth import (
    AUTHENTICATION_REQUIRED,
    MAX_ANONYMOUS_BODY,
    ONE_CREDENTIAL,
    Refusal,
    challenge,
    verify_bearer,
)
from agent.edge.version import bound_version
from agent.security.auth import TokenVerifier
from agent.security.principal import ANONYMOUS, Principal, PrincipalUser

log = logging.getLogger(__name__)

AUTHORIZATION = "authorization"
WWW_AUTHENTICATE = "www-authenticate"
ERROR_DOMAIN = "a2a-protocol.org"
GRPC_STATUS: dict[type[A2AError], grpc.StatusCode] = {
    TaskNotFoundError: grpc.StatusCode.NOT_FOUND,
    TaskNotCancelableError: grpc.StatusCode.FAILED_PRECONDITION,
    PushNotificationNotSupportedError: grpc.StatusCode.UNIMPLEMENTED,
    UnsupportedOperationError: grpc.StatusCode.UNIMPLEMENTED,
    ContentTypeNotSupportedError: grpc.StatusCode.INVALID_ARGUMENT,
    InvalidAgentResponseError: grpc.StatusCode.INTERNAL,
    ExtendedAgentCardNotConfiguredError: grpc.StatusCode.FAILED_PRECONDITION,
    ExtensionSupportRequiredError: grpc.StatusCode.FAILED_PRECONDITION,
    VersionNotSupportedError: grpc.StatusCode.UNIMPLEMENTED,
    InvalidRequestError: grpc.StatusCode.INVALID_ARGUMENT,
    InvalidParamsError: grpc.StatusCode.INVALID_ARGUMENT,
    MethodNotFoundError: grpc.StatusCode.UNIMPLEMENTED,
    InternalError: grpc.StatusCode.INTERNAL,
}
"""A2A 5.4's table (the A2A errors) and the protocol errors' natural codes. The SDK's
GrpcHandler answers FAILED_PRECONDITION for PushNotificationNotSupported,
UnsupportedOperation and VersionNotSupported, where A2A 5.4 says UNIMPLEMENTED."""

_PRINCIPAL: ContextVar[Principal | None] = ContextVar("netagent_grpc_principal", default=None)
"""The caller this RPC was admitted as; each RPC runs in its own asyncio task, so its own
context: set by ``GovernedGrpcHandler._admit``, read by the context builder right after."""


def _metadata(context: grpc.aio.ServicerContext[Any, Any]) -> list[tuple[str, str]]:
    """The call's text metadata, keys lower-cased (gRPC sends them so; binary ones dropped)."""
    pairs = []
    for key, value in context.invocation_metadata() or ():
        if isinstance(value, str):
            pairs.append((key.lower(), value))
    return pairs


def requested_skill(request: SendMessageRequest) -> str | None:
    """The skill a send names in its single Data Part, if it is such a send (as on HTTP)."""
    parts = request.message.parts
    if len(parts) != 1 or not parts[0].HasField("data"):
        return None
    data = parts[0].data
    if data.WhichOneof("kind") != "struct_value":
        return None
    skill = data.struct_value.fields.get("skill")
    if skill is None or skill.WhichOneof("kind") != "string_value":
        return None
    return skill.string_value


class PrincipalGrpcContextBuilder(DefaultGrpcServerCallContextBuilder):
    """The SDK's gRPC context (its ``grpc_context``, the requested extensions) with our caller.

    The user is the ``PrincipalUser`` of the principal ``_admit`` verified, as the HTTP
    builder (agent/app/transports.py ``PrincipalContextBuilder``) hands over the one the middleware
    verified; ``state`` also carries the metadata as ``headers`` and the scopes as ``auth``,
    as the SDK's HTTP builder does.
    """

    def build(self, context: grpc.aio.ServicerContext[Any, Any]) -> ServerCallContext:
        """The SDK's context, plus the headers and auth the HTTP context carries."""
        call = super().build(context)
        call.state["headers"] = dict(_metadata(context))
        bound_version(call.state["headers"])
        principal = _PRINCIPAL.get()
        if principal is not None and principal.authenticated:
            call.state["auth"] = sorted(principal.scopes)
        return call

    def build_user(self, context: grpc.aio.ServicerContext[Any, Any]) -> User:
        """The admitted caller; never anyone else (an RPC not admitted is anonymous)."""
        return PrincipalUser(_PRINCIPAL.get() or ANONYMOUS)


@validate_version(PROTOCOL_VERSION_CURRENT)
async def _version_accepted(context: ServerCallContext) -> None:
    """The SDK's version rule, applied to the metadata (it raises VersionNotSupportedError)."""


def _metadata_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


class GovernedGrpcHandler(GrpcHandler):
    """The SDK's servicer, each RPC admitted first (authentication, version, extension echo),
    and its errors in A2A 5.4's status codes with their data in the ``ErrorInfo``."""

    def __init__(
        self,
        request_handler: RequestHandler,
        *,
        verifier: TokenVerifier,
        anonymous_skill: Callable[[str], bool],
        declared: Iterable[AgentExtension],
    ) -> None:
        super().__init__(request_handler, PrincipalGrpcContextBuilder())
        self._verifier = verifier
        self._anonymous_skill = anonymous_skill
        self._declared = list(declared)

    async def _admit(
        self,
        request: ProtobufMessage,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        """Let the call in as its verified caller, or end it (abort raises)."""
        metadata = _metadata(context)
        credentials = [value for key, value in metadata if key == AUTHORIZATION]
        if len(credentials) > 1:
            await self._unauthenticated(context, Refusal(ONE_CREDENTIAL, "invalid_request"))
        if credentials:
            verdict = verify_bearer(self._verifier, credentials[0])
            if isinstance(verdict, Refusal):
                await self._unauthenticated(context, verdict)
            else:
                _PRINCIPAL.set(verdict)
        elif self._anonymous_send(request):
            _PRINCIPAL.set(ANONYMOUS)
        else:
            await self._unauthenticated(context, Refusal(AUTHENTICATION_REQUIRED, None))
        headers = dict(metadata)
        bound_version(headers)  # a value too long for the SDK's check to read is no version
        try:
            await _version_accepted(ServerCallContext(state={"headers": headers}))
        except VersionNotSupportedError:  # the fixed text HTTP answers too: the value unquoted
            await self.abort_context(VersionNotSupportedError(message=VERSION_TEXT), context)
        requested = get_requested_extensions(
            [value for key, value in metadata if key == HTTP_EXTENSION_HEADER.lower()]
        )
        active = activated(self._declared, requested)
        if active:
            echo = ((HTTP_EXTENSION_HEADER.lower(), ", ".join(active)),)
            await context.send_initial_metadata(echo)

    def _anonymous_send(self, request: ProtobufMessage) -> bool:
        if not isinstance(request, SendMessageRequest) or request.ByteSize() > MAX_ANONYMOUS_BODY:
            return False
        skill = requested_skill(request)
        return bool(skill and self._anonymous_skill(skill))

    @staticmethod
    async def _unauthenticated(
        context: grpc.aio.ServicerContext[Any, Any], refusal: Refusal
    ) -> None:
        if refusal.unavailable:
            await context.abort(grpc.StatusCode.UNAVAILABLE, refusal.description)
        context.set_trailing_metadata(
            ((WWW_AUTHENTICATE, challenge(refusal.description, refusal.error)),)
        )
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal.description)

    async def abort_context(
        self, error: A2AError, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        """End the call with the error as ``google.rpc.Status``: A2A 5.4's code, an ErrorInfo
        (reason, domain, the error's data as string metadata), a BadRequest for field errors."""
        code = GRPC_STATUS.get(type(error), grpc.StatusCode.INTERNAL)
        data = error.data if isinstance(error.data, dict) else {}
        violations = data.get("errors") if isinstance(error, InvalidParamsError) else None
        info = error_details_pb2.ErrorInfo(
            reason=A2A_ERROR_REASONS.get(type(error), "UNKNOWN_ERROR"),
            domain=ERROR_DOMAIN,
            metadata={
                str(k): _metadata_value(v)
                for k, v in data.items()
                if not (violations and k == "errors")
            },
        )
        status = status_pb2.Status(code=code.value[0], message=error.message)
        detail = any_pb2.Any()
        detail.Pack(info)
        status.details.append(detail)
        if violations:
            bad_request = any_pb2.Any()
            bad_request.Pack(validation_errors_to_bad_request(violations))
            status.details.append(bad_request)
        rich = status_to_grpc(status)
        context.set_trailing_metadata(tuple(rich.trailing_metadata))
        await context.abort(rich.code, rich.details)

    # -- each RPC: admitted, then the SDK's servicer method --------------------------------

    async def SendMessage(  # noqa: N802 (the service's method names)
        self, request: a2a_pb2.SendMessageRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> a2a_pb2.SendMessageResponse:
        await self._admit(request, context)
        return await super().SendMessage(request, context)

    async def SendStreamingMessage(  # noqa: N802
        self, request: a2a_pb2.SendMessageRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[a2a_pb2.StreamResponse]:
        await self._admit(request, context)
        async for item in super().SendStreamingMessage(request, context):
            yield item

    async def GetTask(  # noqa: N802
        self, request: a2a_pb2.GetTaskRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> a2a_pb2.Task:
        await self._admit(request, context)
        return await super().GetTask(request, context)

    async def ListTasks(  # noqa: N802
        self, request: a2a_pb2.ListTasksRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> a2a_pb2.ListTasksResponse:
        await self._admit(request, context)
        return await super().ListTasks(request, context)

    async def CancelTask(  # noqa: N802
        self, request: a2a_pb2.CancelTaskRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> a2a_pb2.Task:
        await self._admit(request, context)
        return await super().CancelTask(request, context)

    async def SubscribeToTask(  # noqa: N802
        self, request: a2a_pb2.SubscribeToTaskRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[a2a_pb2.StreamResponse]:
        await self._admit(request, context)
        async for item in super().SubscribeToTask(request, context):
            yield item

    async def GetExtendedAgentCard(  # noqa: N802
        self,
        request: a2a_pb2.GetExtendedAgentCardRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> a2a_pb2.AgentCard:
        await self._admit(request, context)
        return await super().GetExtendedAgentCard(request, context)

    async def CreateTaskPushNotificationConfig(  # noqa: N802
        self,
        request: a2a_pb2.TaskPushNotificationConfig,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> a2a_pb2.TaskPushNotificationConfig:
        await self._admit(request, context)
        return await super().CreateTaskPushNotificationConfig(request, context)

    async def GetTaskPushNotificationConfig(  # noqa: N802
        self,
        request: a2a_pb2.GetTaskPushNotificationConfigRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> a2a_pb2.TaskPushNotificationConfig:
        await self._admit(request, context)
        return await super().GetTaskPushNotificationConfig(request, context)

    async def ListTaskPushNotificationConfigs(  # noqa: N802
        self,
        request: a2a_pb2.ListTaskPushNotificationConfigsRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> a2a_pb2.ListTaskPushNotificationConfigsResponse:
        await self._admit(request, context)
        return await super().ListTaskPushNotificationConfigs(request, context)

    async def DeleteTaskPushNotificationConfig(  # noqa: N802
        self,
        request: a2a_pb2.DeleteTaskPushNotificationConfigRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> empty_pb2.Empty:
        await self._admit(request, context)
        return await super().DeleteTaskPushNotificationConfig(request, context)


MALFORMED = "request is not a decodable message (malformed, or nested deeper than protobuf reads)"


class _Undecodable:
    """What a request that protobuf could not decode is handed to the servicer as."""


class DecodeGuard(grpc.aio.ServerInterceptor):
    """A request protobuf cannot decode is ``INVALID_ARGUMENT`` with a fixed text.

    gRPC would answer ``UNKNOWN`` with the ``DecodeError``'s text (upb's own words); the HTTP
    edge refuses an undecodable or over-deep body up front likewise (agent/edge/limits.py).
    Protobuf's recursion limit (100 messages, about 33 levels of a Data Part's objects) bounds
    the decoder; the handler's message check bounds depth below that (``max_depth``).
    """

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_deserializer is None:
            return handler
        decode = handler.request_deserializer

        def guarded(raw: bytes) -> Any:
            try:
                return decode(raw)
            except DecodeError:
                return _Undecodable()

        if handler.unary_unary is not None:
            unary: Any = handler.unary_unary  # a coroutine function on grpc.aio

            async def unary_call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                if isinstance(request, _Undecodable):
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, MALFORMED)
                return await unary(request, context)

            return grpc.unary_unary_rpc_method_handler(
                unary_call, guarded, handler.response_serializer
            )
        if handler.unary_stream is not None:
            stream: Any = handler.unary_stream  # an async generator function on grpc.aio

            async def stream_call(
                request: Any, context: grpc.aio.ServicerContext[Any, Any]
            ) -> AsyncIterator[Any]:
                if isinstance(request, _Undecodable):
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, MALFORMED)
                async for item in stream(request, context):
                    yield item

            return grpc.unary_stream_rpc_method_handler(
                stream_call, guarded, handler.response_serializer
            )
        return handler


class GrpcServer:
    """A ``grpc.aio`` server for one handler, on ``host:port``, in the running event loop."""

    def __init__(
        self,
        servicer: GovernedGrpcHandler,
        *,
        host: str,
        port: int,
        limits: Limits,
        shared_port: bool = False,
        grace_seconds: float = 5.0,
    ) -> None:
        self._servicer = servicer
        self._address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        self._options: Sequence[tuple[str, Any]] = (
            ("grpc.max_receive_message_length", limits.max_body_bytes),
            # One process owns its port (a second agent on it fails to start, as uvicorn
            # would); ``serve --workers`` shares it between its workers, as uvicorn does.
            ("grpc.so_reuseport", 1 if shared_port else 0),
        )
        self._grace = grace_seconds
        self._server: grpc.aio.Server | None = None

    @property
    def address(self) -> str:
        """Where it listens (``host:port``)."""
        return self._address

    async def start(self) -> None:
        """Bind and serve; a port that cannot be bound stops start-up with a clear error."""
        server = grpc.aio.server(interceptors=[DecodeGuard()], options=self._options)
        a2a_pb2_grpc.add_A2AServiceServicer_to_server(self._servicer, server)  # type: ignore[no-untyped-call]
        try:
            server.add_insecure_port(self._address)
        except RuntimeError as exc:
            raise OSError(f"gRPC: cannot listen on {self._address}: {exc}") from None
        await server.start()
        self._server = server
        log.info("A2A gRPC binding listening on %s", self._address)

    async def stop(self) -> None:
        """Refuse new calls, give open ones the grace period, then end them."""
        if self._server is not None:
            await self._server.stop(self._grace)
            self._server = None
