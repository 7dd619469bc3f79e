"""The one module that reads or rebinds a2a-sdk internals; every other module uses only its
public API (tests/test_architecture.py and tests/test_private_names.py hold them to that).

Only what the SDK's public API (a2a-sdk 1.3.0) cannot do is here; each entry says what it
needs, why, and the SDK release that would let it go. An SDK upgrade that moves one of them
breaks here, with a clear name, and nowhere else:

- ``card_etag``, ``etag_matches``: the card route's weak ETag and its If-None-Match reading,
  for our card route, which renders the fixed public card once and adds ``Last-Modified``.
- ``serialize_integral_numbers``: integral numbers written as JSON integers by the HTTP
  bindings (``MessageToDict`` writes ``1.0`` for every number of a ``Struct``).
- ``parse_requests_fast``, ``params_parser``, ``answer_printer``: the JSON-RPC adapter's
  request parsing and answer printing, made faster (docs/architecture.md, bypass table).
- ``stream_events_lean``: both HTTP bindings' SSE answer (one helper task per stream).
- ``sdk_spans_recorded``: whether the SDK's tracing wrappers record anything, which its
  tracing module says only in module-level flags.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from google.protobuf import json_format

from agent.edge.json_numbers import integral_numbers
from agent.edge.prepared_answer import take as take_answer
from agent.edge.proto_json import message_to_wire_dict

# The SDK's server side (a2a.server.routes, and agent.edge.sse's Starlette) is imported by the
# functions that patch or read it, which the app calls as it is built.

__all__ = [
    "answer_printer",
    "card_etag",
    "etag_matches",
    "params_parser",
    "parse_requests_fast",
    "sdk_spans_recorded",
    "serialize_integral_numbers",
    "serializes_integral_numbers",
    "stream_events_lean",
]


def card_etag(card: dict[str, Any]) -> str:
    """The SDK card route's ETag for a rendered card, so ours revalidates exactly as the SDK's.

    Goes when an SDK release exports it (1.3.0 keeps it private to ``agent_card_routes``) or
    lets ``create_agent_card_routes`` serve a card rendered once."""
    from a2a.server.routes.agent_card_routes import _etag_for

    return str(_etag_for(card))


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Whether an If-None-Match header selects ``etag`` (the SDK's own RFC 9110 reading).
    Goes with :func:`card_etag`."""
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
    the step must break here, not silently put ``1.0`` back on the wire. Goes when an SDK
    release takes a serializer for its HTTP bindings (1.3.0 takes none).
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
    Goes when its gain falls under 5 % of every bench.perf cell, or an SDK release takes a
    parser (1.3.0 takes none).
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
    its SSE answer with the SDK's ``create_event_source_response``. Goes when its gain falls
    under 5 % of every bench.perf cell, or an SDK release streams with one task (1.3.0 uses
    sse-starlette's)."""
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
    """The function the SDK's JSON-RPC adapter parses request params with (goes with
    :func:`parse_requests_fast`)."""
    from a2a.server.routes import jsonrpc_dispatcher

    return jsonrpc_dispatcher.ParseDict  # type: ignore[attr-defined]


def answer_printer() -> Any:
    """The function the SDK's JSON-RPC adapter prints its answers with (goes with
    :func:`serialize_integral_numbers`)."""
    from a2a.server.routes import jsonrpc_dispatcher

    return jsonrpc_dispatcher.MessageToDict  # type: ignore[attr-defined]


def sdk_spans_recorded() -> bool:
    """Whether the SDK's tracing wrappers record anything: its instrumentation is on and a
    tracer provider other than OpenTelemetry's default proxy is installed. Goes when an SDK
    release says so publicly (1.3.0 keeps it in its tracing module's flags)."""
    from a2a.utils import telemetry as sdk_tracing

    if not (getattr(sdk_tracing, "otel_installed", False) and sdk_tracing.otel_enabled):
        return False
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
