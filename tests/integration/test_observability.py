"""Observability on a real agent: /metrics moves with governed invocations, JSON log lines
carry the correlation ids, and the skill span carries task, skill and principal."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from prometheus_client.parser import text_string_to_metric_families

from agent.observability.log_format import JsonFormatter
from agent.observability.tracing import tracer_provider_from_env
from tests.a2a_helpers import binding_of, invoke, send, text_message
from tests.conftest import RunningAgent, free_port, start_agent

WORKED = {
    "resource_id": "network-resource-123",
    "condition": {"metric": "utilization", "operator": "gte", "threshold": 80, "unit": "percent"},
}
SKILL = "evaluate_resource_condition"
JSONRPC = "/a2a/jsonrpc"
A2A = {"A2A-Version": "1.0", "Content-Type": "application/json"}
BIN = Path(sys.executable).parent

Sample = tuple[str, tuple[tuple[str, str], ...]]


@pytest.fixture(scope="module")
def spans(backend: str) -> InMemorySpanExporter:
    """One per backend: stopping an agent shuts its provider down, and the exporter with it."""
    return InMemorySpanExporter()


@pytest.fixture(scope="module")
def observed(
    tmp_path_factory: pytest.TempPathFactory, spans: InMemorySpanExporter, backend: str
) -> Iterator[RunningAgent]:
    """Metrics on (the default), tracing on into memory, request ids for JSON logs; one agent
    per database backend (``backend`` makes the fixture follow the suite's parametrization)."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    running = start_agent(
        tmp_path_factory.mktemp("observed-home"),
        settings_overrides={"otel": True, "log_format": "json"},
        tracer_provider=provider,
    )
    yield running
    running.stop()
    provider.shutdown()


def scrape(agent: RunningAgent) -> tuple[dict[Sample, float], str]:
    """Every sample /metrics exposes, by name and labels, and the raw text."""
    response = httpx.get(f"{agent.base_url}/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples: dict[Sample, float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return samples, response.text


def delta(before: dict[Sample, float], after: dict[Sample, float], name: str, **labels: str):
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


async def test_metrics_move_with_governed_invocations(observed: RunningAgent) -> None:
    token = observed.token("alice")
    before, _ = scrape(observed)

    interface = await binding_of(observed.base_url, token, SKILL)  # describe_skill, JSON-RPC
    done = await invoke(observed.base_url, token, SKILL, WORKED, interface)
    assert done.state == "TASK_STATE_COMPLETED"
    unitless = {
        **WORKED,
        "condition": {k: v for k, v in WORKED["condition"].items() if k != "unit"},
    }
    refused = await invoke(
        observed.base_url, token, SKILL, unitless, interface, binding="HTTP+JSON"
    )
    assert refused.state == "TASK_STATE_REJECTED" and refused.error["code"] == "input_invalid"
    routed = await send(
        observed.base_url, token, text_message("does a 20G flow fit on acme-lnk-00002?")
    )
    assert routed.task.metadata["routing"]["stage"] == "model"
    assert routed.state == "TASK_STATE_COMPLETED"
    streamed = await invoke(
        observed.base_url,
        token,
        "describe_skill",
        {"skill_id": SKILL},
        binding="HTTP+JSON",
        streaming=True,
    )  # the helper reads the final task with GetTask afterwards
    assert streamed.state == "TASK_STATE_COMPLETED"
    # Nothing a caller writes becomes a label: an unknown skill name, an unknown method.
    secret = f"acme-secret-{uuid.uuid4().hex[:8]}"
    unknown = await invoke(observed.base_url, token, secret, {})
    assert unknown.error["code"] == "skill_not_advertised"
    bogus = httpx.post(
        f"{observed.base_url}{JSONRPC}",
        headers={**A2A, "Authorization": f"Bearer {token}"},
        json={"jsonrpc": "2.0", "id": 1, "method": secret, "params": {}},
    )
    assert bogus.json()["error"]["code"] == -32601
    anonymous = httpx.post(
        f"{observed.base_url}{JSONRPC}",
        headers=A2A,
        json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": secret}},
    )
    assert anonymous.status_code == 401

    after, text = scrape(observed)
    tasks = "netagent_tasks_total"
    assert delta(before, after, tasks, skill=SKILL, state="completed", code="none") == 1
    assert delta(before, after, tasks, skill=SKILL, state="rejected", code="input_invalid") == 1
    assert delta(before, after, tasks, skill="describe_skill", state="completed", code="none") == 2
    assert (
        delta(before, after, tasks, skill="check_link_capacity", state="completed", code="none")
        == 1
    )
    assert (
        delta(before, after, tasks, skill="none", state="rejected", code="skill_not_advertised")
        == 1
    )
    seconds = "netagent_task_duration_seconds_count"
    assert delta(before, after, seconds, skill=SKILL, state="completed") == 1

    routing = "netagent_routing_decisions_total"
    assert delta(before, after, routing, stage="explicit_request", action="run") == 4
    assert delta(before, after, routing, stage="explicit_request", action="refuse") == 1
    assert delta(before, after, routing, stage="model", action="run") == 1

    requests = "netagent_http_requests_total"
    # JSON-RPC sends: describe, the worked example, the text, the unknown skill.
    assert (
        delta(before, after, requests, binding="jsonrpc", method="SendMessage", status="200") == 4
    )
    assert delta(before, after, requests, binding="rest", method="SendMessage", status="200") == 1
    assert delta(before, after, requests, binding="jsonrpc", method="other", status="200") == 1
    assert delta(before, after, requests, binding="jsonrpc", method="other", status="401") == 1
    assert delta(before, after, requests, binding="card", method="GetAgentCard", status="200") == 6
    for method in ("SendStreamingMessage", "GetTask"):
        assert delta(before, after, requests, binding="rest", method=method, status="200") == 1
    latency = "netagent_http_request_duration_seconds_count"
    assert delta(before, after, latency, binding="jsonrpc", method="SendMessage") == 4
    assert delta(before, after, latency, binding="rest", method="SendMessage") == 1
    assert secret not in text and "alice" not in text and "acme" not in text


def test_metrics_need_no_token_and_can_be_turned_off(
    observed: RunningAgent, tmp_path: Path
) -> None:
    assert httpx.get(f"{observed.base_url}/metrics", timeout=10).status_code == 200
    quiet = start_agent(tmp_path / "quiet", seeded=False, settings_overrides={"metrics": False})
    try:
        assert httpx.get(f"{quiet.base_url}/metrics", timeout=10).status_code == 404
        assert "x-request-id" not in httpx.get(f"{quiet.base_url}/healthz").headers
    finally:
        quiet.stop()


class Lines(logging.Handler):
    """Keeps what the JSON formatter writes, one string per record."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.setFormatter(JsonFormatter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def json_lines() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("agent")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_json_log_lines_carry_the_correlation_ids(
    observed: RunningAgent, json_lines: Lines
) -> None:
    token = observed.token("alice")
    request_id = f"obs-{uuid.uuid4().hex[:12]}"
    response = httpx.post(
        f"{observed.base_url}{JSONRPC}",
        headers={**A2A, "Authorization": f"Bearer {token}", "X-Request-ID": request_id},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {
                "message": {
                    "messageId": uuid.uuid4().hex,
                    "role": "ROLE_USER",
                    "parts": [{"text": "does a 20G flow fit on acme-lnk-00002?"}],
                }
            },
        },
        timeout=30,
    )
    task = response.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert response.headers["x-request-id"] == request_id
    entries = [json.loads(line) for line in json_lines.lines]
    mine = [e for e in entries if e.get("task_id") == task["id"]]
    assert mine, entries
    finished = [e for e in mine if e["logger"] == "agent.tasks"]
    assert len(finished) == 1
    (entry,) = finished
    assert entry["request_id"] == request_id
    assert entry["context_id"] == task["contextId"]
    assert entry["skill_id"] == "check_link_capacity"
    assert (entry["principal"], entry["tenant"]) == ("alice", "acme")
    assert (entry["state"], entry["code"], entry["level"]) == ("completed", "none", "info")
    assert token not in json.dumps(entries)
    # An id a caller made up that is not a plain short token is replaced, not logged.
    replaced = httpx.get(f"{observed.base_url}/healthz", headers={"X-Request-ID": "a b;c"})
    assert replaced.headers["x-request-id"] != "a b;c"
    assert len(replaced.headers["x-request-id"]) == 32


async def test_the_skill_span_carries_task_skill_and_principal(
    observed: RunningAgent, spans: InMemorySpanExporter
) -> None:
    token = observed.token("paula")
    spans.clear()
    interface = await binding_of(observed.base_url, token, SKILL)
    outcome = await invoke(observed.base_url, token, SKILL, WORKED, interface)
    assert outcome.state == "TASK_STATE_COMPLETED"
    mine = [
        s
        for s in spans.get_finished_spans()
        if s.attributes.get("netagent.task.id") == outcome.task.id
    ]
    assert [s.name for s in mine] == ["netagent.skill"]
    (span,) = mine
    assert dict(span.attributes) == {
        "netagent.task.id": outcome.task.id,
        "netagent.context.id": outcome.task.context_id,
        "netagent.skill.id": SKILL,
        "netagent.principal.subject": "paula",
        "netagent.principal.tenant": "acme",
        "netagent.task.state": "completed",
        "netagent.error.code": "none",
    }
    assert span.status.status_code is not StatusCode.ERROR
    values = [str(v) for s in spans.get_finished_spans() for v in s.attributes.values()]
    assert token not in values


@pytest.mark.backend_free
def test_unknown_trace_exporter_is_a_settings_error() -> None:
    with pytest.raises(ValueError, match="OTEL_TRACES_EXPORTER"):
        tracer_provider_from_env({"OTEL_TRACES_EXPORTER": "carrier-pigeon"})


class Collector(ThreadingHTTPServer):
    """A minimal OTLP/HTTP trace receiver on loopback: keeps every exported span."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), CollectorHandler)
        self.requests: list[ExportTraceServiceRequest] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/traces"


class CollectorHandler(BaseHTTPRequestHandler):
    server: Collector

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.requests.append(ExportTraceServiceRequest.FromString(body))
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: Any) -> None:
        pass


@dataclass
class Served:
    """What ``netagent serve`` wrote to stderr and exported, once it has stopped."""

    entries: list[dict[str, Any]]
    exports: list[ExportTraceServiceRequest]
    task: dict[str, Any]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``netagent serve`` with JSON logs and tracing to an OTLP endpoint; one anonymous call.

    On its embedded SQLite default whatever the suite's backend: what it checks is the
    process's logging and exporting, which no database changes; it starts once per module.
    """
    tmp = tmp_path_factory.mktemp("served")
    collector = Collector()
    threading.Thread(target=collector.serve_forever, daemon=True).start()
    port = free_port()
    env = {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp),
        "NETAGENT_HOME": str(tmp / "home"),
        "NETAGENT_PORT": str(port),
        "NETAGENT_GRPC_PORT": "off",
        "NETAGENT_SEED": "0",
        "NETAGENT_LIVE_TELEMETRY": "0",
        "NETAGENT_LOG_FORMAT": "json",
        "NETAGENT_OTEL": "on",
        "OTEL_SERVICE_NAME": "netops-under-test",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.endpoint,
    }
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    url = f"http://127.0.0.1:{port}"
    stderr_path = tmp / "stderr.log"
    with stderr_path.open("w") as stderr:
        process = subprocess.Popen(
            [str(BIN / "netagent"), "serve"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 300  # a cold start trains the routing model first
            while True:
                assert process.poll() is None, stderr_path.read_text()
                assert time.monotonic() < deadline, stderr_path.read_text()
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            httpx.get(f"{url}/healthz", headers={"X-Request-ID": "serve-json-1"}, timeout=5)
            response = httpx.post(
                f"{url}{JSONRPC}",
                headers=A2A,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "SendMessage",
                    "params": {
                        "message": {
                            "messageId": uuid.uuid4().hex,
                            "role": "ROLE_USER",
                            "parts": [
                                {
                                    "mediaType": "application/json",
                                    "data": {
                                        "skill": "describe_skill",
                                        "arguments": {"skill_id": "lookup_inventory"},
                                    },
                                }
                            ],
                        }
                    },
                },
                timeout=30,
            )
            task = response.json()["result"]["task"]
        finally:
            os.killpg(process.pid, signal.SIGTERM)  # a clean stop flushes the batched spans
            process.wait(timeout=30)
    collector.shutdown()
    collector.server_close()
    entries = [json.loads(line) for line in stderr_path.read_text().splitlines()]
    yield Served(entries, collector.requests, task)


def test_serve_with_json_logs_writes_only_json_lines(served: Served) -> None:
    """Every stderr line parsed (the fixture); uvicorn's access lines carry the request id."""
    access = [e for e in served.entries if e["logger"] == "uvicorn.access"]
    assert any(
        e.get("request_id") == "serve-json-1"
        and e["http_status"] == 200
        and e["http_path"] == "/healthz"
        for e in access
    ), access
    assert any(e["logger"] == "uvicorn.error" for e in served.entries)
    (finished,) = [e for e in served.entries if e["logger"] == "agent.tasks"]
    assert (finished["task_id"], finished["skill_id"]) == (served.task["id"], "describe_skill")


def test_serve_exports_the_skill_span_inside_the_sdk_spans(served: Served) -> None:
    spans = [
        (resource_spans.resource, span)
        for request in served.exports
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]
    by_id = {span.span_id: span for _, span in spans}
    mine = [(r, s) for r, s in spans if s.name == "netagent.skill"]
    assert len(mine) == 1, [s.name for _, s in spans]
    ((resource, span),) = mine
    attributes = {a.key: a.value.string_value for a in span.attributes}
    assert attributes == {
        "netagent.task.id": served.task["id"],
        "netagent.context.id": served.task["contextId"],
        "netagent.skill.id": "describe_skill",
        "netagent.principal.subject": "anonymous",
        "netagent.task.state": "completed",
        "netagent.error.code": "none",
    }
    service = {a.key: a.value.string_value for a in resource.attributes}["service.name"]
    assert service == "netops-under-test"
    # The a2a-sdk's own spans went to the same provider, and the skill run nests inside them.
    parent = by_id[span.parent_span_id]
    assert parent.trace_id == span.trace_id
    assert any("a2a" in s.name or "request_handler" in s.name for _, s in spans)
