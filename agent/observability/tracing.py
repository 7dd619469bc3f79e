"""Optional OpenTelemetry tracing: one span per skill run, inside the SDK's own spans.

Off unless ``NETAGENT_OTEL=on``. The a2a-sdk already wraps its request handler, dispatchers
and queues in spans through the global tracer provider (the project's tracing extra); this module
provides that provider (from the standard ``OTEL_*`` variables) and adds the span the SDK
cannot: the skill run, with task id, skill id and principal (subject and tenant, never the
token) as attributes, and the outcome (state, error code) set when the task ends.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import Token
from typing import TYPE_CHECKING, Any, TypeAlias

from agent.observability.log_format import TaskIds

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

SpanHandle: TypeAlias = "tuple[Span, Token[Context]]"
"""A running skill span and the context token that made it current."""

SERVICE_NAME = "a2a-agent"
"""The tracer's and the service's name when no deployment names its own (``AgentIdentity.slug``)."""
SPAN_NAME = "netagent.skill"
INSTALL_HINT = "install the OpenTelemetry SDK (the project's tracing extra)"

ATTR_TASK_ID = "netagent.task.id"
ATTR_CONTEXT_ID = "netagent.context.id"
ATTR_SKILL_ID = "netagent.skill.id"
ATTR_SUBJECT = "netagent.principal.subject"
ATTR_TENANT = "netagent.principal.tenant"
ATTR_STATE = "netagent.task.state"
ATTR_CODE = "netagent.error.code"


def tracer_provider_from_env(
    environ: Mapping[str, str] | None = None, service_name: str = SERVICE_NAME
) -> TracerProvider:
    """The process's SDK tracer provider: one already installed, or one built from OTEL_*.

    Already installed means e.g. ``opentelemetry-instrument`` or the embedding program set it;
    it is used as it is. Otherwise the exporters named by ``OTEL_TRACES_EXPORTER`` (``otlp``,
    the default, over HTTP; ``console``; ``none``) get a batch processor, the resource comes
    from ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES`` (``service_name``
    by default), and the provider becomes the global one so the a2a-sdk's spans go there too.
    """
    env = os.environ if environ is None else environ
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ValueError(f"NETAGENT_OTEL=on needs the OpenTelemetry SDK; {INSTALL_HINT}") from exc
    current = trace.get_tracer_provider()
    if isinstance(current, TracerProvider):
        return current
    attributes = {} if env.get("OTEL_SERVICE_NAME") else {"service.name": service_name}
    provider = TracerProvider(resource=Resource.create(attributes))
    names = env.get("OTEL_TRACES_EXPORTER", "otlp")
    for name in (n.strip().lower() for n in names.split(",") if n.strip()):
        if name == "none":
            continue
        provider.add_span_processor(BatchSpanProcessor(_exporter(name)))
    trace.set_tracer_provider(provider)
    return provider


def _exporter(name: str) -> Any:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter()
    if name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError as exc:
            raise ValueError(
                f"OTEL_TRACES_EXPORTER=otlp needs the exporter; {INSTALL_HINT}"
            ) from exc
        return OTLPSpanExporter()  # endpoint, headers, timeout: OTEL_EXPORTER_OTLP_*
    raise ValueError(f"OTEL_TRACES_EXPORTER {name!r} is not one of otlp, console, none")


class SkillSpans:
    """Opens the skill run's span (current while the run lasts) and closes it with its outcome."""

    def __init__(self, provider: Any, name: str = SERVICE_NAME) -> None:
        from opentelemetry import context, trace

        self._provider = provider
        self._tracer: Tracer = provider.get_tracer(name)
        self._context = context
        self._trace = trace

    def start(self, ids: TaskIds) -> SpanHandle:
        """A span for this run, made current so the tool calls' spans nest under it."""
        attributes = {
            ATTR_TASK_ID: ids.task_id,
            ATTR_CONTEXT_ID: ids.context_id,
            ATTR_SUBJECT: ids.subject or "anonymous",
        }
        if ids.skill_id:
            attributes[ATTR_SKILL_ID] = ids.skill_id
        if ids.tenant:
            attributes[ATTR_TENANT] = ids.tenant
        span = self._tracer.start_span(SPAN_NAME, attributes=attributes)
        token = self._context.attach(self._trace.set_span_in_context(span))
        return span, token

    def end(self, handle: SpanHandle, skill_id: str | None, state: str, code: str) -> None:
        """Record the outcome; a failed task marks the span an error (a refusal does not)."""
        span, token = handle
        if skill_id:
            span.set_attribute(ATTR_SKILL_ID, skill_id)
        span.set_attribute(ATTR_STATE, state)
        span.set_attribute(ATTR_CODE, code)
        if state == "failed":
            span.set_status(self._trace.StatusCode.ERROR, code)
        self._context.detach(token)
        span.end()

    def flush(self, timeout_millis: int = 5000) -> None:
        """Export what the batch processors still hold (the provider may be shared: no shutdown)."""
        self._provider.force_flush(timeout_millis)
