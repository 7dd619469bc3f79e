"""What goes over the wire on both HTTP bindings, read as another implementation reads it.

Raw httpx, no SDK client: the A2A version as a query parameter, the edge's refusals in each
binding's error shape, integral numbers as JSON integers (decoded with a strict reader), and
the cards' top-level security requirements (issue 20, items 3 to 6).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import RunningAgent

JSONRPC = "/a2a/jsonrpc"
REST = "/a2a/rest"
BINDINGS = ("jsonrpc", "rest")
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def send_body(binding: str, data: dict[str, Any], method: str = "SendMessage") -> dict[str, Any]:
    message = {
        "messageId": uuid.uuid4().hex,
        "role": "ROLE_USER",
        "parts": [{"mediaType": "application/json", "data": data}],
    }
    if binding == "rest":
        return {"message": message}
    return {"jsonrpc": "2.0", "id": "req-7", "method": method, "params": {"message": message}}


def send(
    client: httpx.Client,
    binding: str,
    body: Any,
    *,
    stream: bool = False,
    headers: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
) -> httpx.Response:
    path = JSONRPC if binding == "jsonrpc" else f"{REST}/message:{'stream' if stream else 'send'}"
    return client.post(path, json=body, headers=headers, params=params)


@pytest.fixture(scope="module")
def alice(agent: RunningAgent) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {agent.token('alice')}"}
    with httpx.Client(base_url=agent.base_url, headers=headers, timeout=30) as client:
        yield client


def describe_body(binding: str) -> dict[str, Any]:
    return send_body(
        binding, {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}
    )


def completed(binding: str, response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    document = response.json()
    task = document["result"]["task"] if binding == "jsonrpc" else document["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
    return dict(task)


# -- A2A-Version as a query parameter (item 3) ---------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_version_may_come_as_a_query_parameter(alice: httpx.Client, binding: str) -> None:
    response = send(alice, binding, describe_body(binding), params={"A2A-Version": "1.0"})
    completed(binding, response)


def test_the_version_parameter_serves_get_and_list_on_rest(alice: httpx.Client) -> None:
    task = completed(
        "rest", send(alice, "rest", describe_body("rest"), headers={"A2A-Version": "1.0"})
    )
    got = alice.get(f"{REST}/tasks/{task['id']}", params={"A2A-Version": "1.0"})
    assert got.status_code == 200 and got.json()["id"] == task["id"], got.text
    listed = alice.get(f"{REST}/tasks", params={"A2A-Version": "1.0", "pageSize": "1"})
    assert listed.status_code == 200 and len(listed.json()["tasks"]) == 1, listed.text


@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("version", ["0.3", "2.0", "abc", ""])
def test_a_bad_version_parameter_is_version_not_supported(
    alice: httpx.Client, binding: str, version: str
) -> None:
    response = send(alice, binding, describe_body(binding), params={"A2A-Version": version})
    assert_version_not_supported(binding, response)


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_header_wins_over_the_parameter(alice: httpx.Client, binding: str) -> None:
    good_header = send(
        alice,
        binding,
        describe_body(binding),
        headers={"A2A-Version": "1.0"},
        params={"A2A-Version": "0.3"},
    )
    completed(binding, good_header)
    bad_header = send(
        alice,
        binding,
        describe_body(binding),
        headers={"A2A-Version": "0.3"},
        params={"A2A-Version": "1.0"},
    )
    assert_version_not_supported(binding, bad_header)


@pytest.mark.parametrize("binding", BINDINGS)
def test_disagreeing_version_parameters_are_refused(alice: httpx.Client, binding: str) -> None:
    path = JSONRPC if binding == "jsonrpc" else f"{REST}/message:send"
    response = alice.post(f"{path}?A2A-Version=1.0&A2A-Version=2.0", json=describe_body(binding))
    assert_version_not_supported(binding, response)


def assert_version_not_supported(binding: str, response: httpx.Response) -> None:
    if binding == "jsonrpc":
        assert response.status_code == 200, response.text
        error = response.json()["error"]
        assert error["code"] == -32009, error
        assert response.json()["id"] == "req-7"
    else:
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert (error["code"], error["status"]) == (400, "FAILED_PRECONDITION"), error
        assert [d["reason"] for d in error["details"]] == ["VERSION_NOT_SUPPORTED"], error


# -- the edge's refusals in each binding's error shape (item 4) ------------------------------


def assert_rest_status(
    response: httpx.Response, status: int, rpc_status: str, reason: str
) -> dict[str, Any]:
    """The google.rpc.Status shape the SDK's own HTTP+JSON errors have."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "status", "message", "details"}, error
    assert (error["code"], error["status"]) == (status, rpc_status), error
    assert isinstance(error["message"], str) and error["message"]
    (info,) = error["details"]
    assert set(info) == {"@type", "reason", "domain", "metadata"}, info
    assert (info["@type"], info["reason"]) == (ERROR_INFO, reason), info
    assert all(isinstance(v, str) for v in info["metadata"].values()), info
    return dict(info)


def assert_rpc_error(
    response: httpx.Response, status: int, code: int, reason: str, request_id: Any
) -> dict[str, Any]:
    """A JSON-RPC 2.0 error answer, its details in ``data`` as the SDK's own carry them."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "error"} and body["jsonrpc"] == "2.0", body
    assert body["id"] == request_id, body
    error = body["error"]
    assert error["code"] == code and isinstance(error["message"], str), error
    (info,) = error["data"]
    assert (info["@type"], info["reason"]) == (ERROR_INFO, reason), info
    return dict(info)


def test_a_401_on_rest_is_a_google_rpc_status(agent: RunningAgent) -> None:
    with httpx.Client(base_url=agent.base_url, timeout=30) as client:
        response = client.get(f"{REST}/tasks", headers={"A2A-Version": "1.0"})
        bad = client.get(
            f"{REST}/tasks", headers={"A2A-Version": "1.0", "Authorization": "Bearer nope"}
        )
    info = assert_rest_status(response, 401, "UNAUTHENTICATED", "UNAUTHENTICATED")
    assert response.headers["www-authenticate"] == 'Bearer realm="netagent"'
    assert info["metadata"] == {"scheme": "Bearer"}
    info = assert_rest_status(bad, 401, "UNAUTHENTICATED", "UNAUTHENTICATED")
    assert bad.headers["www-authenticate"].startswith(
        'Bearer realm="netagent", error="invalid_token"'
    )
    assert info["metadata"] == {"scheme": "Bearer", "error": "invalid_token"}


@pytest.mark.parametrize("request_id", ["abc", 42, None, True])
def test_a_401_on_jsonrpc_is_a_jsonrpc_error_with_the_request_id(
    agent: RunningAgent, request_id: Any
) -> None:
    body = {"jsonrpc": "2.0", "id": request_id, "method": "ListTasks", "params": {}}
    with httpx.Client(base_url=agent.base_url, timeout=30) as client:
        missing = client.post(JSONRPC, json=body, headers={"A2A-Version": "1.0"})
        bad = client.post(
            JSONRPC, json=body, headers={"A2A-Version": "1.0", "Authorization": "Basic eA=="}
        )
    expected = None if isinstance(request_id, bool) else request_id  # as the SDK reads ids
    for response in (missing, bad):
        info = assert_rpc_error(response, 401, -32000, "UNAUTHENTICATED", expected)
        assert response.headers["www-authenticate"].startswith('Bearer realm="netagent"')
        assert info["domain"] == "netops-agent.edge"
    assert 'error="invalid_request"' in bad.headers["www-authenticate"]


def test_a_401_on_jsonrpc_whose_body_is_not_json_has_a_null_id(agent: RunningAgent) -> None:
    with httpx.Client(base_url=agent.base_url, timeout=30) as client:
        response = client.post(JSONRPC, content=b"{nope", headers={"A2A-Version": "1.0"})
    assert_rpc_error(response, 401, -32000, "UNAUTHENTICATED", None)


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_oversize_body_is_413_in_the_binding_shape(
    agent: RunningAgent, alice: httpx.Client, binding: str
) -> None:
    limit = agent.settings.limits.max_body_bytes
    body = send_body(binding, {"skill": "describe_skill", "arguments": {"pad": "x" * limit}})
    response = send(alice, binding, body)
    if binding == "jsonrpc":
        info = assert_rpc_error(response, 413, -32600, "BODY_TOO_LARGE", None)
    else:
        info = assert_rest_status(response, 413, "INVALID_ARGUMENT", "BODY_TOO_LARGE")
    assert info["metadata"] == {"limit": "max_body_bytes", "max": str(limit)}


@pytest.mark.parametrize("binding", BINDINGS)
def test_malformed_bodies_are_refused_in_the_binding_shape(
    agent: RunningAgent, alice: httpx.Client, binding: str
) -> None:
    path = JSONRPC if binding == "jsonrpc" else f"{REST}/message:send"
    depth = agent.settings.limits.max_body_depth + 1
    headers = {"A2A-Version": "1.0", "Content-Type": "application/json"}
    not_utf8 = alice.post(path, content=b'{"id": "\xff"}', headers=headers)
    too_deep = alice.post(path, content=b"[" * depth + b"]" * depth, headers=headers)
    if binding == "jsonrpc":
        info = assert_rpc_error(not_utf8, 200, -32700, "INVALID_REQUEST", None)
        assert_rpc_error(too_deep, 200, -32600, "INVALID_REQUEST", None)
    else:
        info = assert_rest_status(not_utf8, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")
        assert_rest_status(too_deep, 400, "INVALID_ARGUMENT", "INVALID_REQUEST")
    assert info["domain"] == "a2a-protocol.org"


def test_the_sdk_own_errors_have_the_same_shape(alice: httpx.Client) -> None:
    """The reference the edge matches: an SDK-built HTTP+JSON error (TaskNotFound)."""
    response = alice.get(f"{REST}/tasks/{uuid.uuid4()}", headers={"A2A-Version": "1.0"})
    info = assert_rest_status(response, 404, "NOT_FOUND", "TASK_NOT_FOUND")
    assert info["domain"] == "a2a-protocol.org"


# -- integral numbers as JSON integers (item 5) ----------------------------------------------


class FloatToken(float):
    """A number that arrived with a fraction or an exponent."""


def strict_loads(text: str) -> Any:
    return json.loads(text, parse_float=FloatToken)


def integral_float_tokens(document: Any, path: str = "") -> list[str]:
    """Pointers of numbers sent as ``n.0``: none may leave the agent."""
    if isinstance(document, FloatToken):
        return [path] if document.is_integer() else []
    if isinstance(document, dict):
        return [p for k, v in document.items() for p in integral_float_tokens(v, f"{path}/{k}")]
    if isinstance(document, list):
        return [p for i, v in enumerate(document) for p in integral_float_tokens(v, f"{path}/{i}")]
    return []


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        pointer = schema["$ref"]
        assert pointer.startswith("#/"), pointer
        target: Any = root
        for token in pointer[2:].split("/"):
            target = target[token]
        schema = target
    return schema


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type")
    return {kind} if isinstance(kind, str) else set(kind or [])


def integer_typed_floats(
    value: Any, schema: Any, root: dict[str, Any], path: str = ""
) -> list[str]:
    """What a reader decoding into integer types refuses: a float token where the schema says
    ``integer``."""
    if not isinstance(schema, dict):
        return []
    schema = _resolve(schema, root)
    found: list[str] = []
    integer = "integer" in _types(schema) and "number" not in _types(schema)
    if integer and isinstance(value, FloatToken):
        found.append(path)
    for combinator in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(combinator, []):
            found += integer_typed_floats(value, branch, root, path)
    if isinstance(value, dict):
        for key, member in value.items():
            sub = schema.get("properties", {}).get(key, schema.get("additionalProperties"))
            found += integer_typed_floats(member, sub, root, f"{path}/{key}")
    if isinstance(value, list):
        for index, item in enumerate(value):
            found += integer_typed_floats(item, schema.get("items"), root, f"{path}/{index}")
    return sorted(set(found))


METASCHEMA_INTEGERS = frozenset(
    {
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "minProperties",
        "maxProperties",
        "minContains",
        "maxContains",
    }
)


def metaschema_floats(schema: Any, path: str = "") -> list[str]:
    """Float tokens where the JSON Schema metaschema types a keyword as an integer."""
    found: list[str] = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in METASCHEMA_INTEGERS and isinstance(value, FloatToken):
                found.append(f"{path}/{key}")
            found += metaschema_floats(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            found += metaschema_floats(item, f"{path}/{index}")
    return found


CALLS = {
    "describe_skill": {"skill_id": "check_link_capacity"},
    "lookup_inventory": {"kind": "links"},
    "evaluate_resource_condition": {
        "resource_id": "network-resource-123",
        "condition": {
            "metric": "utilization",
            "operator": "gte",
            "threshold": 80,
            "unit": "percent",
        },
    },
    "check_link_capacity": {"link_id": "acme-lnk-00002", "requested_bps": 20000000000},
}


@pytest.fixture(scope="module")
def interfaces(alice: httpx.Client) -> dict[str, dict[str, Any]]:
    """Each skill's interface document (its schemas), by describe_skill."""
    documents = {}
    for skill in CALLS:
        body = send_body("rest", {"skill": "describe_skill", "arguments": {"skill_id": skill}})
        task = completed("rest", send(alice, "rest", body, headers={"A2A-Version": "1.0"}))
        (result,) = [a for a in task["artifacts"] if a["artifactId"] == "result"]
        documents[skill] = result["parts"][0]["data"]
    return documents


def skill_request(skill: str, interfaces: dict[str, dict[str, Any]]) -> dict[str, Any]:
    described = interfaces[skill]
    return {
        "skill": skill,
        "skill_version": described["skill_version"],
        "interface_digest": described["interface_digest"],
        "arguments": CALLS[skill],
    }


def tasks_and_events(binding: str, response: httpx.Response, stream: bool) -> list[Any]:
    """Every decoded document of the answer (each SSE event of a stream), read strictly."""
    assert response.status_code == 200, response.text
    if not stream:
        return [strict_loads(response.text)]
    return [
        strict_loads(line[len("data:") :])
        for line in response.text.splitlines()
        if line.startswith("data:")
    ]


def artifacts_of(document: Any, binding: str) -> list[dict[str, Any]]:
    body = document["result"] if binding == "jsonrpc" else document
    if "task" in body:
        return list(body["task"].get("artifacts", []))
    if "artifactUpdate" in body:
        return [body["artifactUpdate"]["artifact"]]
    return []


@pytest.mark.parametrize("stream", [False, True], ids=["send", "stream"])
@pytest.mark.parametrize("binding", BINDINGS)
@pytest.mark.parametrize("skill", list(CALLS))
def test_integral_numbers_leave_as_integers(
    alice: httpx.Client,
    interfaces: dict[str, dict[str, Any]],
    skill: str,
    binding: str,
    stream: bool,
) -> None:
    method = "SendStreamingMessage" if stream else "SendMessage"
    body = send_body(binding, skill_request(skill, interfaces), method)
    response = send(alice, binding, body, stream=stream, headers={"A2A-Version": "1.0"})
    documents = tasks_and_events(binding, response, stream)
    assert all(not integral_float_tokens(d) for d in documents), [
        integral_float_tokens(d) for d in documents
    ]
    document = interfaces[skill]["skill_interface"]
    schemas = {"result": document["output_schema"]["resolution"]["schema"]}
    for kind, reference in document.get("supporting_record_schemas", {}).items():
        schemas[kind] = reference["resolution"]["schema"]
    checked = 0
    for decoded in documents:
        for artifact in artifacts_of(decoded, binding):
            kind = "result" if artifact["artifactId"] == "result" else artifact["name"]
            for part in artifact["parts"]:
                if "data" not in part:
                    continue
                schema = schemas[kind]
                assert integer_typed_floats(part["data"], schema, schema) == [], (kind, part)
                if skill == "describe_skill":
                    assert metaschema_floats(part["data"]) == []
                checked += 1
    assert checked >= 1


def test_the_strict_reader_catches_a_double(interfaces: dict[str, dict[str, Any]]) -> None:
    """The checks above can fail: ``1.0`` where the schema says integer is caught."""
    schema = interfaces["lookup_inventory"]["skill_interface"]["output_schema"]["resolution"][
        "schema"
    ]
    decoded = strict_loads('{"kind": "links", "count": 3.0, "items": [{"minItems": 1.0}]}')
    assert integer_typed_floats(decoded, schema, schema) == ["/count"]
    assert integral_float_tokens(decoded) == ["/count", "/items/0/minItems"]
    assert metaschema_floats(decoded) == ["/items/0/minItems"]


def test_a_fraction_stays_a_fraction(alice: httpx.Client, interfaces: dict[str, Any]) -> None:
    """Only integral values change: an observed 42.5 percent would still be 42.5."""
    from agent.edge.json_numbers import integral_numbers

    assert integral_numbers({"a": [1.0, 2.5, -0.0, 2.0**53, 2.0**53 * 2]}) == {
        "a": [1, 2.5, 0, 2**53, 2.0**54]
    }


# -- the cards declare their security requirements (item 6) ----------------------------------


def test_both_cards_declare_the_bearer_requirement(
    agent: RunningAgent, alice: httpx.Client
) -> None:
    public = httpx.get(f"{agent.base_url}/.well-known/agent-card.json", timeout=30).json()
    extended = alice.get(f"{REST}/extendedAgentCard", headers={"A2A-Version": "1.0"}).json()
    for card in (public, extended):
        assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}], card
        assert set(card["securitySchemes"]) == {"bearer"}
    assert public["version"] != extended["version"]  # what they list differs (docs/interop.md)
