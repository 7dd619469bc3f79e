"""Prometheus metrics, the request observer (pure ASGI) and the executor's task observer.

Every label value comes from a bounded set: the binding (from the path), the A2A method (the
SDK's own method table, or the matched route), the HTTP status, skill ids from the registry,
task states, error codes and router layers. Nothing a caller writes becomes a label; anything
unrecognised is ``other``. The metrics are per process (each replica serves its own), held in
a registry per app so that two agents in one process (tests) never mix their counts.

Per-request cost is a few dictionary lookups, two clock reads and two cached-child updates;
the JSON-RPC method is read where the SDK already parsed it (the call context's state, which
the context builder leaves in the ASGI scope), never by parsing the body again.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.exposition import generate_latest
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent.interfaces import ErrorCode, Phase
from agent.observability.log_format import (
    REQUEST_ID_HEADER,
    TaskIds,
    bind_task,
    new_request_id,
    request_id_var,
)

if TYPE_CHECKING:
    from agent.observability.tracing import SkillSpans, SpanHandle
    from agent.registry.loader import Capability
    from agent.routing.decision import Decision
    from agent.security.principal import Principal

log = logging.getLogger("agent.tasks")

METRICS_PATH = "/metrics"
CALL_STATE_KEY = "netagent.call_state"
"""Where the context builder leaves the SDK call context's state in the ASGI scope."""
OTHER = "other"
NONE = "none"
AGENT_CARD_PATH = "/.well-known/agent-card.json"

JSONRPC_METHODS = (  # A2A 1.0's JSON-RPC methods, in the specification's order
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "GetExtendedAgentCard",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
)
REST_OPERATIONS = {
    "on_message_send": "SendMessage",
    "on_message_send_stream": "SendStreamingMessage",
    "on_get_task": "GetTask",
    "list_tasks": "ListTasks",
    "on_cancel_task": "CancelTask",
    "on_subscribe_to_task": "SubscribeToTask",
    "handle_authenticated_agent_card": "GetExtendedAgentCard",
    "set_push_notification": "CreateTaskPushNotificationConfig",
    "get_push_notification": "GetTaskPushNotificationConfig",
    "list_push_notifications": "ListTaskPushNotificationConfigs",
    "delete_push_notification": "DeleteTaskPushNotificationConfig",
}
"""The SDK's REST endpoints (``create_rest_routes``) by name, as the protocol's method names."""

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

_SHORT_STATE = {
    "TASK_STATE_COMPLETED": "completed",
    "TASK_STATE_FAILED": "failed",
    "TASK_STATE_REJECTED": "rejected",
    "TASK_STATE_CANCELED": "canceled",
    "TASK_STATE_INPUT_REQUIRED": "input_required",
}


def _outcomes() -> dict[tuple[str, bool], tuple[str, str]]:
    """(executor outcome, accepted) -> (state, code), computed once from the error codes."""
    table: dict[tuple[str, bool], tuple[str, str]] = {}
    for accepted in (False, True):
        for outcome in ("completed", "input_required", "canceled"):
            table[outcome, accepted] = (outcome, NONE)
        phase = Phase.PROCESSING if accepted else Phase.BEFORE_ACCEPTANCE
        for code in ErrorCode:
            table[str(code), accepted] = (_SHORT_STATE[code.terminal_state(phase)], str(code))
    return table


OUTCOMES = _outcomes()


class Metrics:
    """The agent's metric families, in a registry of their own."""

    def __init__(self) -> None:
        # No ``*_created`` series: half the exposition, no use here. prometheus_client ships
        # py.typed but leaves this function unannotated.
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "netagent_http_requests",
            "HTTP requests by binding (jsonrpc, rest, card, other), A2A method and status.",
            ["binding", "method", "status"],
            registry=self.registry,
        )
        self.request_seconds = Histogram(
            "netagent_http_request_duration_seconds",
            "Time from request to the end of the response (a stream's whole life).",
            ["binding", "method"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.tasks = Counter(
            "netagent_tasks",
            "Skill runs by skill, final or interrupted state, and error code (none if none).",
            ["skill", "state", "code"],
            registry=self.registry,
        )
        self.task_seconds = Histogram(
            "netagent_task_duration_seconds",
            "Time the executor spent on one message, from routing to the final state.",
            ["skill", "state"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.routing = Counter(
            "netagent_routing_decisions",
            "Routing decisions by the stage that decided and the action taken.",
            ["stage", "action"],
            registry=self.registry,
        )
        self._request_children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def observe_request(self, binding: str, method: str, status: int, seconds: float) -> None:
        """Count one request and its latency (label children are cached; labels are bounded)."""
        key = (binding, method, status)
        children = self._request_children.get(key)
        if children is None:
            children = (
                self.requests.labels(binding, method, str(status)),
                self.request_seconds.labels(binding, method),
            )
            self._request_children[key] = children
        children[0].inc()
        children[1].observe(seconds)

    def exposition(self) -> bytes:
        """The text format Prometheus scrapes."""
        return generate_latest(self.registry)


def metrics_endpoint(metrics: Metrics) -> Any:
    """``GET /metrics``: this process's counters."""

    async def endpoint(_: Request) -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

    return endpoint


class RequestObserver:
    """Pure ASGI: request counts and latency by binding and method; the request id for logs.

    Outermost, so refusals at the edge (401, 413) are counted too. The binding is known from
    the path; the method only after the app ran: from the SDK call context's state for
    JSON-RPC, from the matched endpoint for REST, from the matched route otherwise.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        metrics: Metrics | None,
        request_ids: bool,
        jsonrpc_path: str,
        rest_path: str,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.request_ids = request_ids
        self.jsonrpc_paths = frozenset({jsonrpc_path, jsonrpc_path + "/"})
        self.rest_prefix = rest_path + "/"

    def binding(self, path: str) -> str:
        """jsonrpc, rest, card or other, from the path alone."""
        if path in self.jsonrpc_paths:
            return "jsonrpc"
        if path.startswith(self.rest_prefix):
            return "rest"
        if path == AGENT_CARD_PATH:
            return "card"
        return OTHER

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        header: tuple[bytes, bytes] | None = None
        if self.request_ids:
            incoming = next((v for k, v in scope["headers"] if k == REQUEST_ID_HEADER), None)
            request_id = new_request_id(incoming)
            request_id_var.set(request_id)
            header = (REQUEST_ID_HEADER, request_id.encode("ascii"))

        async def reply(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if header is not None:
                    message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        if self.metrics is None:
            await self.app(scope, receive, reply)
            return
        started = time.perf_counter()
        try:
            await self.app(scope, receive, reply)
        finally:
            binding = self.binding(scope["path"])
            self.metrics.observe_request(
                binding, _method(binding, scope), status, time.perf_counter() - started
            )


def _method(binding: str, scope: Scope) -> str:
    """The A2A method (or route) the request reached; ``other`` when it reached none."""
    if binding == "jsonrpc":
        state = scope.get(CALL_STATE_KEY)
        method = state.get("method") if state is not None else None
        return method if method in JSONRPC_METHODS else OTHER
    if binding == "rest":
        endpoint = scope.get("endpoint")
        return REST_OPERATIONS.get(getattr(endpoint, "__name__", ""), OTHER)
    if binding == "card":
        return "GetAgentCard"
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path.startswith("/") else OTHER


class TaskObserver:
    """The executor's hooks: routing decisions, and each skill run's start and end.

    With nothing enabled it still binds the log ids (one context variable) and writes the
    ``agent.tasks`` line only when INFO is enabled for it.
    """

    def __init__(self, metrics: Metrics | None = None, spans: SkillSpans | None = None) -> None:
        self.metrics = metrics
        self._spans = spans
        self._task_children: dict[tuple[str, str, str], tuple[Any, Any]] = {}
        self._routing_children: dict[tuple[str, str], Any] = {}

    def routed(self, decision: Decision) -> None:
        """Count a routing decision by its layer and action."""
        if self.metrics is None:
            return
        key = (decision.stage.value, decision.action.value)
        child = self._routing_children.get(key)
        if child is None:
            child = self._routing_children[key] = self.metrics.routing.labels(*key)
        child.inc()

    def started(
        self,
        task_id: str,
        context_id: str,
        principal: Principal,
        capability: Capability | None,
    ) -> tuple[float, SpanHandle | None]:
        """Bind the run's ids for logs, open its span; returns what ``finished`` needs."""
        ids = TaskIds(
            task_id,
            context_id,
            capability.id if capability is not None else None,
            principal.subject or None,
            principal.tenant,
        )
        bind_task(ids)
        span = self._spans.start(ids) if self._spans is not None else None
        return time.perf_counter(), span

    def finished(
        self,
        watch: tuple[float, SpanHandle | None],
        capability: Capability | None,
        outcome: str,
        accepted: bool,
    ) -> None:
        """Count the run by skill, state and code; log one line; close the span."""
        started, span = watch
        seconds = time.perf_counter() - started
        skill = capability.id if capability is not None else NONE
        state, code = OUTCOMES.get((outcome, accepted), (OTHER, OTHER))
        if self.metrics is not None:
            key = (skill, state, code)
            children = self._task_children.get(key)
            if children is None:  # labels() costs ~2 us; the bounded children are kept
                children = (
                    self.metrics.tasks.labels(skill, state, code),
                    self.metrics.task_seconds.labels(skill, state),
                )
                self._task_children[key] = children
            children[0].inc()
            children[1].observe(seconds)
        log.info(
            "%s %s%s in %.1f ms",
            skill if capability is not None else "(no skill chosen)",
            state,
            f" ({code})" if code != NONE else "",
            seconds * 1000,
            extra={"state": state, "code": code, "duration_ms": round(seconds * 1000, 1)},
        )
        if span is not None and self._spans is not None:
            self._spans.end(span, capability.id if capability else None, state, code)

    def flush(self) -> None:
        """At shutdown: spans still batched for export go out now."""
        if self._spans is not None:
            self._spans.flush()
