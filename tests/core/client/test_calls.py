"""The governed client's calls through the a2a-sdk's client (agent/client/calls.py), against a
scripted agent on loopback: what goes on the wire, and an agent's misshapen answer or unusable
card reported as the agent's mistake (``InterfaceInvalidError``), never a traceback."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from agent.client import GovernedClient, InterfaceInvalidError
from agent.interfaces import EXTENSION_URI
from tests.core.client.scripted import Scripted, governed_card, scripted_agent

HUGE = "1" * 4301
"""A protocol version past Python's 4,300-digit int limit."""
ANSWERS = {
    "neither": {"jsonrpc": "2.0", "id": "x", "result": {}},
    "bare task": {"jsonrpc": "2.0", "id": "x", "result": {"id": "t", "contextId": "c"}},
    "result is a list": {"jsonrpc": "2.0", "id": "x", "result": [1, 2]},
    "result is null": {"jsonrpc": "2.0", "id": "x", "result": None},
    "wrong type inside": {"jsonrpc": "2.0", "id": "x", "result": {"task": {"id": 5}}},
}


@pytest.fixture(scope="module")
def scripted() -> Iterator[tuple[Scripted, str]]:
    with scripted_agent() as served:
        yield served


def describe(url: str, token: str | None = None) -> None:
    async def run() -> None:
        async with GovernedClient(url.removesuffix("/rpc"), token=token) as client:
            await client.describe("x")

    asyncio.run(run())


@pytest.mark.parametrize("tenant", ["", "t1"], ids=["no-tenant", "tenant"])
@pytest.mark.parametrize("answer", list(ANSWERS))
def test_a_misshapen_answer_is_the_agent_s_fault_not_a_traceback(
    scripted: tuple[Scripted, str], answer: str, tenant: str
) -> None:
    """The SDK's client raises its parser's ValueError, TypeError or ParseError on these; the
    governed client reports InterfaceInvalidError (which the command line prints in a line)."""
    script, url = scripted
    script.card = governed_card(url, tenant)
    script.answer(ANSWERS[answer])
    with pytest.raises(InterfaceInvalidError, match="no A2A response"):
        describe(url)


def test_the_token_extension_and_version_go_on_the_wire(scripted: tuple[Scripted, str]) -> None:
    script, url = scripted
    script.card = governed_card(url)
    script.answer(ANSWERS["neither"])
    script.requests.clear()
    with pytest.raises(InterfaceInvalidError):
        describe(url, token="abc.def")
    ((headers, body),) = script.requests
    assert headers["authorization"] == "Bearer abc.def"
    assert headers["a2a-extensions"] == EXTENSION_URI
    assert headers["a2a-version"] == "1.0"
    assert (body["jsonrpc"], body["method"]) == ("2.0", "SendMessage")


def card_with_versions(url: str, *versions: str) -> dict[str, Any]:
    card = governed_card(url)
    card["supportedInterfaces"] = [
        {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": v} for v in versions
    ]
    return card


@pytest.mark.parametrize("odd", [HUGE, "1." + HUGE])
def test_an_interface_of_an_overlong_version_leaves_the_good_one_usable(
    scripted: tuple[Scripted, str], odd: str
) -> None:
    script, url = scripted
    script.card = card_with_versions(url, odd, "1.0")
    script.answer(ANSWERS["neither"])
    script.requests.clear()
    with pytest.raises(InterfaceInvalidError, match="no A2A response"):
        describe(url)
    assert len(script.requests) == 1  # the call was made, on the good interface


@pytest.mark.parametrize("versions", [[HUGE], ["one"], ["1." + HUGE, "two"]])
def test_a_card_without_a_usable_interface_is_the_agent_s_fault(
    scripted: tuple[Scripted, str], versions: list[str]
) -> None:
    script, url = scripted
    script.card = card_with_versions(url, *versions)
    script.requests.clear()
    with pytest.raises(InterfaceInvalidError, match="no JSONRPC interface this client can call"):
        describe(url)
    assert script.requests == []
