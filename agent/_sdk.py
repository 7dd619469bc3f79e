"""The one module that reads a2a-sdk internals; every other module uses only its public API.

Each function here names what it needs from the SDK's private surface, so an SDK upgrade that
moves one of them breaks here, with a clear name, and nowhere else. The import-rules test
(tests/test_architecture.py) holds every other module to that.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

from google.protobuf import json_format

from agent.edge.json_numbers import integral_numbers
from agent.edge.prepared_answer import take as take_answer
from agent.edge.proto_json import message_to_wire_dict

# The SDK's server side (a2a.server.routes, and agent.edge.sse's Starlette) is imported by the
# functions that patch or read it, which the app calls as it is built: a client that imports
# this module for import_client() below must not pay for a server.

__all__ = [
    "answer_printer",
    "card_etag",
    "etag_matches",
    "import_client",
    "params_parser",
    "parse_requests_fast",
    "sdk_spans_recorded",
    "serialize_integral_numbers",
    "serializes_integral_numbers",
    "stream_events_lean",
]


def card_etag(card: dict[str, Any]) -> str:
    """The SDK card route's ETag for a rendered card, so ours revalidates exactly as the SDK's."""
    from a2a.server.routes.agent_card_routes import _etag_for

    return str(_etag_for(card))


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Whether an If-None-Match header selects ``etag`` (the SDK's own RFC 9110 reading)."""
    from a2a.server.routes.agent_card_routes import _if_none_match_hits

    return bool(_if_none_match_hits(if_none_match, etag))


# -- the ProtoJSON step of the HTTP bindings ---------------------------------------------------
# Both HTTP adapters and the ListTasks serializer turn the handler's protobuf answers into JSON
# documents with json_format.MessageToDict, each through its own module-level name; each is
# bound here to one that writes integral numbers as integers (agent/edge/json_numbers.py). The
# public card is rendered by agent/registry/cards.py, which does the same itself; gRPC carries
# the protobuf itself and is not concerned.
def _serializing_modules() -> tuple[ModuleType, ...]:
    from a2a.server.routes import common as routes_common
    from a2a.server.routes import jsonrpc_dispatcher, rest_dispatcher

    return (rest_dispatcher, jsonrpc_dispatcher, routes_common)


def _message_to_dict(message: Any, *args: Any, **kwargs: Any) -> Any:
    defaults = set(kwargs) <= {"preserving_proto_field_name"}
    if not args and defaults and not kwargs.get("preserving_proto_field_name"):
        prepared = take_answer(message)  # a blocking send's answer, printed by its run
        if prepared is not None:
            return prepared
        return message_to_wire_dict(message, shared=True)  # default options: one faster walk
    return integral_numbers(json_format.MessageToDict(message, *args, **kwargs))


def serialize_integral_numbers() -> None:
    """Make the SDK's HTTP bindings write integral numbers as JSON integers (idempotent).

    Raises if an SDK module no longer serializes with ``MessageToDict``: an upgrade that moves
    the step must break here, not silently put ``1.0`` back on the wire.
    """
    for module in _serializing_modules():
        current = getattr(module, "MessageToDict", None)
        if current is not json_format.MessageToDict and current is not _message_to_dict:
            raise RuntimeError(f"{module.__name__} no longer serializes with MessageToDict")
        module.MessageToDict = _message_to_dict  # type: ignore[attr-defined]


def parse_requests_fast() -> None:
    """Make the SDK's JSON-RPC adapter parse request params with ``proto_parse.parse_dict``
    (ParseDict's outcome, faster; idempotent). Raises if the module no longer parses with
    ``ParseDict``: an upgrade that moves the step must break here, not silently slow down.
    """
    from a2a.server.routes import jsonrpc_dispatcher

    from agent.edge.proto_parse import parse_dict

    current = getattr(jsonrpc_dispatcher, "ParseDict", None)
    if current is not json_format.ParseDict and current is not parse_dict:
        raise RuntimeError(f"{jsonrpc_dispatcher.__name__} no longer parses with ParseDict")
    jsonrpc_dispatcher.ParseDict = parse_dict  # type: ignore[attr-defined,assignment]


def serializes_integral_numbers() -> bool:
    """Whether every serializing module of the SDK uses ours (a check for tests)."""
    return all(
        getattr(module, "MessageToDict", None) is _message_to_dict
        for module in _serializing_modules()
    )


# -- the SSE response of both HTTP bindings ----------------------------------------------------
# Both adapters build their streaming answer with routes.common.create_event_source_response,
# imported by name into each module; each name is bound here to agent/edge/sse.py's.


def stream_events_lean() -> None:
    """Make the SDK's HTTP bindings stream with ``agent.edge.sse`` (one helper task per
    stream instead of sse-starlette's five; idempotent). Raises if a module no longer builds
    its SSE answer with the SDK's ``create_event_source_response``."""
    from a2a.server.routes import common as routes_common
    from a2a.server.routes import jsonrpc_dispatcher, rest_dispatcher

    from agent.edge.sse import create_event_stream_response

    for module in (jsonrpc_dispatcher, rest_dispatcher):
        current = getattr(module, "create_event_source_response", None)
        if current is not routes_common.create_event_source_response and (
            current is not create_event_stream_response
        ):
            raise RuntimeError(
                f"{module.__name__} no longer streams with create_event_source_response"
            )
        module.create_event_source_response = create_event_stream_response  # type: ignore[attr-defined]


# -- the JSON-RPC SendMessage path (agent/edge/jsonrpc_send.py) --------------------------------
# It parses and prints with exactly what the SDK's JSON-RPC adapter uses (the names bound
# above), and steps aside whenever the SDK's spans would be recorded.


def params_parser() -> Any:
    """The function the SDK's JSON-RPC adapter parses request params with."""
    from a2a.server.routes import jsonrpc_dispatcher

    return jsonrpc_dispatcher.ParseDict  # type: ignore[attr-defined]


def answer_printer() -> Any:
    """The function the SDK's JSON-RPC adapter prints its answers with."""
    from a2a.server.routes import jsonrpc_dispatcher

    return jsonrpc_dispatcher.MessageToDict  # type: ignore[attr-defined]


def sdk_spans_recorded() -> bool:
    """Whether the SDK's tracing wrappers record anything: its instrumentation is on and a
    tracer provider other than OpenTelemetry's default proxy is installed."""
    from a2a.utils import telemetry as sdk_tracing

    if not (getattr(sdk_tracing, "otel_installed", False) and sdk_tracing.otel_enabled):
        return False
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


# -- the client's import (agent/client/governed.py, agent/devtools/conformance.py) -------------
# ``import a2a.client`` runs its package's __init__, whose ClientFactory module imports both gRPC
# transports (the 1.0 one, and the 0.3 compatibility one, whose pydantic types are most of the
# package's import) whichever binding the client speaks: 0.11 to 0.13 s of a client
# command's CPU. client_factory takes either transport as None when its import fails (gRPC is
# the SDK's optional extra), and only its GRPC producer reads them. A client of an HTTP binding
# imports the package with the gRPC modules blocked (``sys.modules[name] = None``: an import of
# it raises ImportError, as Python documents); they are unblocked at once, and the gRPC binding
# asked for later in the same process gets its transports back (_restore_grpc_transports).
_GRPC_MODULES = ("grpc", "a2a.client.transports.grpc", "a2a.compat.v0_3.grpc_transport")
_grpc_left_out = False
"""Whether import_client imported the SDK's client without its gRPC transports."""


def import_client(binding: str) -> None:
    """Import the a2a-sdk's client for ``binding`` (a card's ``protocolBinding`` name): without
    gRPC for ``JSONRPC`` and ``HTTP+JSON`` when nothing has imported it yet, with it for
    ``GRPC`` (its transports restored if an earlier call left them out). Idempotent; call it
    before using ``ClientFactory`` for a binding (``sdk_config`` does), and, to leave gRPC
    out, before anything imports ``a2a.client`` (the SDK calls do, first)."""
    global _grpc_left_out
    if binding == "GRPC":
        if _grpc_left_out:
            _restore_grpc_transports()
        return
    if "a2a.client" in sys.modules:
        return
    blocked = [name for name in _GRPC_MODULES if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import a2a.client
    except ImportError:  # the SDK no longer takes them as optional: import them as ever
        _unblock(blocked)
        import a2a.client  # noqa: F401
    finally:
        _unblock(blocked)
    from a2a.client import client_factory

    _grpc_left_out = client_factory.GrpcTransport is None  # type: ignore[attr-defined]


def _unblock(names: list[str]) -> None:
    for name in names:
        if name in sys.modules and sys.modules[name] is None:
            del sys.modules[name]


def _restore_grpc_transports() -> None:
    """Give client_factory the gRPC transports import_client left out (as its own imports
    would have bound them; a missing gRPC extra leaves them None, and the SDK says so)."""
    global _grpc_left_out
    from a2a.client import client_factory

    try:
        from a2a.client.transports.grpc import GrpcTransport
    except ImportError:
        return
    client_factory.GrpcTransport = GrpcTransport  # type: ignore[attr-defined]
    try:
        from a2a.compat.v0_3.grpc_transport import CompatGrpcTransport
    except ImportError:
        pass
    else:
        client_factory.CompatGrpcTransport = CompatGrpcTransport  # type: ignore[attr-defined]
    _grpc_left_out = False
