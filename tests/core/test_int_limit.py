"""Text a caller (or a remote agent, or an operator) chose, read as a number: never Python's
int-limit ``ValueError`` (past 4,300 digits) nor a superscript digit ``int()`` refuses.

The edge's own answers to an overlong ``A2A-Version`` are in
tests/integration/test_hostile_parsing.py; these are the other readers of digits.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from a2a.types import AgentCard, AgentInterface
from typer.testing import CliRunner

from agent import cli
from agent.client.calls import readable_versions
from agent.console.schemas import explain
from agent.edge.jsonrpc_send import version_accepted
from agent.edge.version import MAX_VERSION_CHARS, NO_VERSION, bound_version
from agent.interfaces.validation import SchemaValidator
from agent.security.credentials import ExchangeError, IssuedToken, RemoteTokenExchanger, ToolGrant
from agent.security.identity import owner_key, parse_owner_key
from agent.security.principal import Principal

HUGE = "1" * 4301
DIGITS = [HUGE, "9" * 10_000, "²", "1²"]


def test_an_overlong_version_becomes_no_version() -> None:
    for value in [HUGE, "1.0." + HUGE, "1.0" + " " * MAX_VERSION_CHARS]:
        headers = {"a2a-version": value}
        bound_version(headers)
        assert headers == {"a2a-version": NO_VERSION}
        assert not version_accepted({"a2a-version": value})
    kept = {"a2a-version": "1.0"}
    bound_version(kept)
    assert kept == {"a2a-version": "1.0"} and version_accepted(kept)


def test_a_remote_card_s_interface_of_an_overlong_version_is_left_out() -> None:
    """The SDK's ``ClientFactory`` skips a version that is no version but raises Python's
    int-limit ValueError on these: they are left out before it sees the card."""
    good = AgentInterface(url="http://a/rpc", protocol_binding="JSONRPC", protocol_version="1.0")
    nameless = AgentInterface(url="http://c/rpc", protocol_binding="JSONRPC", protocol_version="x")
    for version in [HUGE, "1." + HUGE]:
        odd = AgentInterface(
            url="http://b/rpc", protocol_binding="JSONRPC", protocol_version=version
        )
        card = AgentCard(name="n", supported_interfaces=[odd, nameless, good])
        kept = readable_versions(card)
        assert list(kept.supported_interfaces) == [nameless, good] and kept.name == "n"
        assert len(card.supported_interfaces) == 3  # the card itself is left as it was
    whole = AgentCard(supported_interfaces=[good])
    assert readable_versions(whole) is whole


def test_an_owner_key_with_an_overlong_length_is_no_key() -> None:
    assert parse_owner_key(owner_key("acme", "alice")) == ("acme", "alice")
    for length in DIGITS:
        assert parse_owner_key(f"{length}:acme:alice") is None


def test_a_pointer_index_of_many_digits_points_nowhere() -> None:
    schema = {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    validator = SchemaValidator(schema)
    arguments = [1.5]
    for index in DIGITS:
        detail = {"keyword": "oneOf", "schema_path": "/oneOf", "instance_path": f"/{index}"}
        explain(validator, schema, arguments, detail)  # no ValueError
        assert "alternatives" in detail


def test_audit_since_of_many_digits_is_a_clear_refusal(tmp_path: Path) -> None:
    home = {"NETAGENT_HOME": str(tmp_path)}
    for value in [f"{HUGE}m", "²d", "999999999999d", "99999-01-01"]:
        result = CliRunner().invoke(cli.app, ["audit", "--since", value], env=home)
        assert result.exit_code != 0, value
        assert "--since takes an ISO time or a look-back" in result.output, (value, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), value


class _TokenService:
    """A real token service on loopback that answers every exchange with ``answer``."""

    def __init__(self, answer: dict[str, Any]) -> None:
        body = json.dumps(answer).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/oauth/token"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


async def exchange_at(answer: dict[str, Any]) -> IssuedToken:
    service = _TokenService(answer)
    principal = Principal(subject="alice", tenant="acme", scopes=frozenset(), token="caller")
    grant = ToolGrant(principal=principal, tool="inventory", scopes=frozenset({"inventory.read"}))
    try:
        async with httpx.AsyncClient() as client:
            return await RemoteTokenExchanger(service.url, "credential", client).exchange(grant)
    finally:
        service.close()


async def test_a_token_service_lifetime_of_many_digits_is_an_invalid_response() -> None:
    token = jwt.encode({"jti": "t-1"}, "k" * 32, algorithm="HS256")
    issued = await exchange_at({"access_token": token, "expires_in": 300, "scope": "a.b"})
    assert (issued.expires_in, issued.scopes) == (300, {"a.b"})
    for lifetime in [HUGE, "²", "1e400", 1e400, -1, None, [300], True]:
        answer = {"access_token": token, "expires_in": lifetime, "scope": "a.b"}
        with pytest.raises(ExchangeError) as caught:
            await exchange_at(answer)
        assert caught.value.error == "invalid_response", lifetime


async def test_a_token_service_scope_is_split_on_the_space_only() -> None:
    token = jwt.encode({"jti": "t-2"}, "k" * 32, algorithm="HS256")
    joined = "inventory.read\u00a0capacity.plan"
    issued = await exchange_at({"access_token": token, "expires_in": 60, "scope": joined})
    assert issued.scopes == {joined}
