"""A2A-Extensions negotiation: echo of activated URIs, unknown ones ignored, required enforced."""

from __future__ import annotations

import httpx
import pytest
from a2a.types import ExtensionSupportRequiredError, ListTasksRequest

from agent.interfaces import EXTENSION_URI
from tests.a2a_helpers import BINDINGS, call, call_context, invoke, make_client
from tests.integration.conftest import TEST_REQUIRED_EXTENSION

DESCRIBE = {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}


def jsonrpc(method: str, message_data: dict) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": method,
        "params": {
            "message": {
                "messageId": "m-ext",
                "role": "ROLE_USER",
                "parts": [{"data": message_data, "mediaType": "application/json"}],
            }
        },
    }


@pytest.mark.parametrize("method", ["SendMessage", "SendStreamingMessage"])
def test_activated_extensions_are_echoed_and_unknown_ones_ignored(agent, method: str) -> None:
    headers = {"A2A-Version": "1.0", "A2A-Extensions": f"{EXTENSION_URI}, urn:example:unknown:v9"}
    with httpx.Client(timeout=10) as http:
        response = http.post(
            f"{agent.base_url}/a2a/jsonrpc", json=jsonrpc(method, DESCRIBE), headers=headers
        )
    assert response.status_code == 200
    assert response.headers["A2A-Extensions"] == EXTENSION_URI


def test_no_echo_when_nothing_is_activated(agent) -> None:
    with httpx.Client(timeout=10) as http:
        response = http.post(
            f"{agent.base_url}/a2a/jsonrpc",
            json=jsonrpc("SendMessage", DESCRIBE),
            headers={"A2A-Version": "1.0"},
        )
    assert response.status_code == 200
    assert "A2A-Extensions" not in response.headers


@pytest.mark.parametrize("activated", [True, False])
async def test_artifacts_and_status_messages_list_the_activated_extension(agent, activated) -> None:
    extensions = (EXTENSION_URI,) if activated else ()
    outcome = await call(
        agent.base_url,
        agent.token("alice"),
        "lookup_inventory",
        {"kind": "sites"},
        extensions=extensions,
    )
    assert [list(a.extensions) for a in outcome.task.artifacts] == [list(extensions)]
    failed = await invoke(
        agent.base_url, agent.token("alice"), "port_report", {}, extensions=extensions
    )
    assert list(failed.task.status.message.extensions) == list(extensions)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_missing_required_extension_is_refused_before_any_task(strict_agent, binding) -> None:
    # An identity of its own, so tasks other tests create on the shared agent do not count.
    token = strict_agent.token(
        f"refused-{binding}", tenant="acme", scopes=["inventory.read", "assurance.read"]
    )
    with pytest.raises(ExtensionSupportRequiredError) as refused:
        await call(
            strict_agent.base_url,
            token,
            "lookup_inventory",
            {"kind": "sites"},
            binding=binding,
            extensions=(EXTENSION_URI,),
        )
    assert TEST_REQUIRED_EXTENSION in str(refused.value.message)
    async with make_client(strict_agent.base_url, token, binding) as client:
        listed = await client.list_tasks(ListTasksRequest(), context=call_context(()))
    assert list(listed.tasks) == []


async def test_required_extension_activated_proceeds(strict_agent) -> None:
    outcome = await call(
        strict_agent.base_url,
        strict_agent.token("alice"),
        "lookup_inventory",
        {"kind": "sites"},
        extensions=(EXTENSION_URI, TEST_REQUIRED_EXTENSION),
    )
    assert outcome.state == "TASK_STATE_COMPLETED"


def test_required_extension_rejection_on_the_wire(strict_agent) -> None:
    headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {strict_agent.token('alice')}"}
    with httpx.Client(timeout=10) as http:
        rpc = http.post(
            f"{strict_agent.base_url}/a2a/jsonrpc",
            json=jsonrpc("SendMessage", DESCRIBE),
            headers=headers,
        ).json()
        rest = http.post(
            f"{strict_agent.base_url}/a2a/rest/message:send",
            json=jsonrpc("SendMessage", DESCRIBE)["params"],
            headers=headers,
        )
    assert rpc["error"]["code"] == -32008
    assert rest.status_code == 400
    assert TEST_REQUIRED_EXTENSION in rest.text
