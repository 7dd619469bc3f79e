"""Signed Agent Cards (A2A 1.0 §8.4), against a real agent on 127.0.0.1.

Every card served (the public card, each caller's extended card on each of the three bindings)
verifies twice: with a2a-sdk's verifier, and with PyJWT's ``PyJWS`` alone over the RFC 8785 form
that the ``rfc8785`` package makes (not the SDK's canonicalizer). A card changed on the way (a
proxy in front of the agent rewrites it) is refused by ``netagent check`` and by the governed
client; so is an unsigned card when a signature is required.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import rfc8785
from a2a.types import AgentCard, GetExtendedAgentCardRequest
from a2a.utils.signing import create_signature_verifier
from cryptography.hazmat.primitives.asymmetric import ec
from google.protobuf.json_format import MessageToDict, ParseDict
from jwt.api_jws import PyJWS

from agent.client import CardSignatureRefusedError, GovernedClient
from agent.devtools.conformance import AGENT, check_agent
from agent.devtools.statuses import FAIL, NOT_APPLICABLE, PASS
from agent.registry.cards import JSONRPC_PATH, REST_PATH
from agent.security.auth import load_or_create_signing_key
from tests.a2a_helpers import make_client
from tests.cli_process import run_netagent
from tests.conftest import RunningAgent, start_agent
from tests.serving import json_server

JWKS_PATH = "/.well-known/jwks.json"
CARD_PATH = "/.well-known/agent-card.json"
ALL_BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")
CALLERS = ("alice", "vic", "paula")
Card = dict[str, Any]


# -- verifying without the SDK ----------------------------------------------------------------


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_json(value: Any) -> str:
    return b64url(json.dumps(value).encode())


def header_of(signature: dict[str, Any]) -> dict[str, Any]:
    protected = signature["protected"]
    decoded: dict[str, Any] = json.loads(
        base64.urlsafe_b64decode(protected + "=" * (-len(protected) % 4))
    )
    return decoded


def without_empty(value: Any) -> Any:
    """A2A §8.4.1's default-value exclusion: empty strings, lists and objects are left out."""
    if isinstance(value, dict):
        kept = {k: c for k, v in value.items() if (c := without_empty(v)) is not None}
        return kept or None
    if isinstance(value, list):
        items = [c for v in value if (c := without_empty(v)) is not None]
        return items or None
    return None if value == "" else value


def signing_payload(card: Card) -> bytes:
    """What is signed: the RFC 8785 form of the card without ``signatures``."""
    return bytes(rfc8785.dumps(without_empty({k: v for k, v in card.items() if k != "signatures"})))


def pyjws_verifies(card: Card, jwks: dict[str, Any]) -> dict[str, Any]:
    """The card's one signature, checked with PyJWS alone: the detached payload put back into
    the compact form (RFC 7515 Appendix F), the key the JWKS's by ``kid``. Its header."""
    (signature,) = card["signatures"]
    header = header_of(signature)
    (key,) = [k for k in jwks["keys"] if k["kid"] == header["kid"]]
    payload = signing_payload(card)
    token = ".".join([signature["protected"], b64url(payload), signature["signature"]])
    verified = PyJWS().decode(token, key=jwt.PyJWK(key).key, algorithms=["ES256"])
    assert verified == payload
    return header


def sdk_verifies(card: AgentCard, jwks: dict[str, Any]) -> None:
    keys = jwt.PyJWKSet.from_dict(jwks)
    create_signature_verifier(lambda kid, jku: keys[str(kid)], ["ES256"])(card)


# -- the cards as served ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def jwks(agent: RunningAgent) -> dict[str, Any]:
    keys: dict[str, Any] = httpx.get(agent.base_url + JWKS_PATH).json()
    return keys


async def extended_card(agent: RunningAgent, who: str, binding: str) -> tuple[Card, AgentCard]:
    """The caller's extended card as it came over ``binding``: its JSON (the wire's own on the
    HTTP bindings) and what the SDK's client read."""
    token = agent.token(who)
    async with make_client(agent.base_url, token, binding) as client:
        read = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    if binding == "JSONRPC":
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
        wire = httpx.post(agent.base_url + JSONRPC_PATH, json=body, headers=headers)
        return wire.json()["result"], read
    if binding == "HTTP+JSON":
        wire = httpx.get(f"{agent.base_url}{REST_PATH}/extendedAgentCard", headers=headers)
        return wire.json(), read
    return MessageToDict(read), read


def test_the_public_card_verifies_with_the_sdk_and_with_pyjws(
    agent: RunningAgent, jwks: dict[str, Any]
) -> None:
    card = httpx.get(agent.base_url + CARD_PATH).json()
    header = pyjws_verifies(card, jwks)
    sdk_verifies(ParseDict(card, AgentCard()), jwks)
    (key,) = jwks["keys"]
    assert header == {
        "alg": "ES256",
        "kid": key["kid"],
        "jku": agent.base_url + JWKS_PATH,
        "typ": "JOSE",
    }
    again = httpx.get(agent.base_url + CARD_PATH).json()
    assert again["signatures"] == card["signatures"]  # signed once (ES256 is randomized)


@pytest.mark.parametrize("binding", ALL_BINDINGS)
@pytest.mark.parametrize("who", CALLERS)
async def test_each_extended_card_verifies_on_each_binding(
    agent: RunningAgent, jwks: dict[str, Any], who: str, binding: str
) -> None:
    card, read = await extended_card(agent, who, binding)
    assert header_of(card["signatures"][0])["jku"] == agent.base_url + JWKS_PATH
    pyjws_verifies(card, jwks)
    sdk_verifies(read, jwks)
    sdk_verifies(ParseDict(card, AgentCard()), jwks)


async def test_one_signature_per_card_content(agent: RunningAgent) -> None:
    """The same content carries the same signature on every binding and for every caller who
    sees it (cached by its digest); a different content, a signature of its own."""
    seen = {
        (who, binding): (await extended_card(agent, who, binding))[0]
        for who in ("alice", "carl", "vic")
        for binding in ALL_BINDINGS
    }
    by_content: dict[bytes, set[str]] = {}
    for card in seen.values():
        by_content.setdefault(signing_payload(card), set()).add(json.dumps(card["signatures"]))
    assert all(len(signatures) == 1 for signatures in by_content.values()), by_content
    alice, carl, vic = (seen[(w, "GRPC")] for w in ("alice", "carl", "vic"))
    assert signing_payload(alice) == signing_payload(carl)  # other scopes, the same skills
    assert signing_payload(alice) != signing_payload(vic)
    assert alice["signatures"] != vic["signatures"]


# -- a card changed on the way ----------------------------------------------------------------


class Proxy:
    """A plain HTTP proxy in front of the agent that rewrites the public card, or the
    extended card (a JSON-RPC answer), with ``tamper``."""

    def __init__(self) -> None:
        self.target = ""
        self.tamper: Callable[[Card], Card] | None = None
        self.extended_only = False
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._forward(None)

            def do_POST(self) -> None:
                self._forward(self.rfile.read(int(self.headers.get("Content-Length", 0))))

            def _forward(self, body: bytes | None) -> None:
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                answer = httpx.request(
                    "POST" if body is not None else "GET",
                    proxy.target + self.path,
                    content=body,
                    headers=headers,
                    timeout=30,
                )
                content = proxy.rewrite(self.path, answer)
                self.send_response(answer.status_code)
                self.send_header("Content-Type", answer.headers.get("content-type", "text/plain"))
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def rewrite(self, path: str, answer: httpx.Response) -> bytes:
        if self.tamper is None or answer.status_code != 200:
            return answer.content
        if path == CARD_PATH and not self.extended_only:
            return json.dumps(self.tamper(answer.json())).encode()
        json_answer = answer.headers.get("content-type", "").startswith("application/json")
        document = answer.json() if path == JSONRPC_PATH and json_answer else None
        result = document.get("result", {}) if isinstance(document, dict) else {}
        if self.extended_only and isinstance(result, dict) and "supportedInterfaces" in result:
            assert isinstance(document, dict)
            document["result"] = self.tamper(result)
            return json.dumps(document).encode()
        return answer.content


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Proxy, RunningAgent]]:
    """The agent's card names the proxy (public_url), so the card's ``jku`` and interfaces
    are on the proxy's origin: a man in the middle, as a peer meets one."""
    front = Proxy()
    thread = threading.Thread(target=front.server.serve_forever, daemon=True)
    thread.start()
    running = start_agent(
        tmp_path_factory.mktemp("signed-home"), settings_overrides={"public_url": front.url}
    )
    front.target = running.base_url
    yield front, running
    running.stop()
    front.server.shutdown()
    front.server.server_close()


@contextlib.contextmanager
def jwks_server(document: dict[str, Any]) -> Iterator[str]:
    """Another origin serving the attacker's keys."""
    with json_server(document) as base:
        yield f"{base}{JWKS_PATH}"


ATTACKER = ec.generate_private_key(ec.SECP256R1())
ATTACKER_JWK = {
    **jwt.algorithms.ECAlgorithm.to_jwk(ATTACKER.public_key(), as_dict=True),
    "kid": "attacker",
    "alg": "ES256",
}


def resigned(card: Card, key: Any, header: dict[str, Any]) -> Card:
    """The card with one signature made with PyJWS over the card's signing payload."""
    token = PyJWS().encode(signing_payload(card), key, algorithm=header["alg"], headers=header)
    protected, _, signature = token.split(".")
    return {**card, "signatures": [{"protected": protected, "signature": signature}]}


def with_header(card: Card, header: dict[str, Any], signature: str = "") -> Card:
    return {**card, "signatures": [{"protected": b64url_json(header), "signature": signature}]}


def tampers(real: Any, kid: str, jku: str, elsewhere: str, cards: list[Card]) -> dict[str, Any]:
    """Each way a card can be changed on the way, as a function of the served card."""

    def changed(path: tuple[Any, ...], value: Any) -> Callable[[Card], Card]:
        def apply(card: Card) -> Card:
            card = json.loads(json.dumps(card))
            holder = card
            for step in path[:-1]:
                holder = holder[step]
            holder[path[-1]] = value(holder[path[-1]])
            return card

        return apply

    own = {"alg": "ES256", "kid": kid, "jku": jku, "typ": "JOSE"}
    public_key = json.dumps(jwt.algorithms.ECAlgorithm.to_jwk(real.public_key(), as_dict=True))
    return {
        "name changed": changed(("name",), lambda v: v + " (evil)"),
        "version changed": changed(("version",), lambda v: v + ".1"),
        "skill removed": changed(("skills",), lambda v: v[:-1]),
        "skill described otherwise": changed(("skills", 0, "description"), lambda v: v + "!"),
        "interface redirected": changed(
            ("supportedInterfaces", 0, "url"), lambda v: "http://127.0.0.1:9/a2a/jsonrpc"
        ),
        "streaming turned off": changed(("capabilities", "streaming"), lambda v: not v),
        "signed by another key": lambda c: resigned(c, ATTACKER, own),
        "another key with its own kid": lambda c: resigned(c, ATTACKER, {**own, "kid": "x"}),
        "wrong kid": lambda c: resigned(c, real, {**own, "kid": "not-" + kid}),
        "header without kid": lambda c: resigned(c, real, {"alg": "ES256", "jku": jku}),
        "alg none": lambda c: with_header(c, {**own, "alg": "none"}),
        "HS256 keyed with the public key": lambda c: with_header(
            c,
            {**own, "alg": "HS256"},
            b64url(
                hmac.new(
                    public_key.encode(),
                    f"{b64url_json({**own, 'alg': 'HS256'})}.{b64url(signing_payload(c))}".encode(),
                    hashlib.sha256,
                ).digest()
            ),
        ),
        "keys from another origin": lambda c: resigned(
            c, ATTACKER, {**own, "kid": "attacker", "jku": elsewhere}
        ),
        "another card's signature": lambda c: {
            **c,
            "signatures": next(o for o in cards if o["signatures"] != c["signatures"])[
                "signatures"
            ],
        },
    }


@pytest.fixture(scope="module")
def tampering(proxy: tuple[Proxy, RunningAgent]) -> Iterator[dict[str, Any]]:
    front, running = proxy
    real = load_or_create_signing_key(running.settings.home)
    card = httpx.get(front.url + CARD_PATH).json()
    jku = header_of(card["signatures"][0])["jku"]
    assert jku == front.url + JWKS_PATH
    token = running.token("paula")
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {}}
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    other = httpx.post(front.url + JSONRPC_PATH, json=body, headers=headers).json()["result"]
    assert other["signatures"] != card["signatures"]
    with jwks_server({"keys": [ATTACKER_JWK]}) as elsewhere:
        yield tampers(real.private_key, real.kid, jku, elsewhere, [card, other])


CONTENT = "does not match the card's content"
CASES = {
    "name changed": CONTENT,
    "version changed": CONTENT,
    "skill removed": CONTENT,
    "skill described otherwise": CONTENT,
    "interface redirected": CONTENT,
    "streaming turned off": CONTENT,
    "signed by another key": CONTENT,
    "another card's signature": CONTENT,
    "another key with its own kid": "kid x is not in",
    "wrong kid": "is not in http",
    "header without kid": "names no kid",
    "alg none": "alg 'none' is not accepted",
    "HS256 keyed with the public key": "alg 'HS256' is not accepted",
    "keys from another origin": "is not on the card's origin",
}
"""Each tampering, and the reason the refusal gives for it."""


@contextlib.contextmanager
def tampered(
    front: Proxy, tamper: Callable[[Card], Card] | None, extended: bool = False
) -> Iterator[None]:
    front.tamper, front.extended_only = tamper, extended
    try:
        yield
    finally:
        front.tamper, front.extended_only = None, False


async def test_the_untampered_card_is_verified_through_the_proxy(proxy) -> None:
    front, running = proxy
    async with GovernedClient(
        front.url, token=running.token("paula"), require_signature=True
    ) as client:
        advertised = await client.fetch_card()
    assert advertised.signature.signed
    assert advertised.signature.jku == front.url + JWKS_PATH
    assert "signature verified" in str(advertised.signature)
    report = await check_agent(front.url, require_signature=True, token=running.token("vic"))
    assert report.find(AGENT, "card signature").status == PASS  # type: ignore[union-attr]
    assert report.find(AGENT, "extended card signature").status == PASS  # type: ignore[union-attr]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("which", ["public", "extended"])
async def test_a_tampered_card_is_refused_by_check_and_client(
    proxy, tampering: dict[str, Any], case: str, which: str
) -> None:
    front, running = proxy
    token = running.token("paula")
    with tampered(front, tampering[case], extended=which == "extended"):
        async with GovernedClient(front.url, token=token) as client:
            with pytest.raises(CardSignatureRefusedError) as refused:
                await client.fetch_card()
        report = await check_agent(front.url, token=token)
    assert "has no valid signature" in str(refused.value)
    assert CASES[case] in str(refused.value)
    name = "card signature" if which == "public" else "extended card signature"
    found = report.find(AGENT, name)
    assert found is not None and found.status == FAIL, report.checks
    assert "has no valid signature" in found.reason
    assert not report.ok
    assert report.checks[-1] == found  # nothing is checked on a card that was refused


async def test_an_unsigned_card_is_used_unless_a_signature_is_required(proxy) -> None:
    front, _ = proxy

    def unsigned(card: Card) -> Card:
        return {k: v for k, v in card.items() if k != "signatures"}

    with tampered(front, unsigned):
        async with GovernedClient(front.url) as client:
            assert not (await client.fetch_card()).signature.signed
        async with GovernedClient(front.url, require_signature=True) as client:
            with pytest.raises(CardSignatureRefusedError, match="is not signed"):
                await client.fetch_card()
        lenient = await check_agent(front.url)
        strict = await check_agent(front.url, require_signature=True)
    assert lenient.find(AGENT, "card signature").status == NOT_APPLICABLE  # type: ignore[union-attr]
    found = strict.find(AGENT, "card signature")
    assert found is not None and found.status == FAIL and "is not signed" in found.reason
    assert not strict.ok


def test_netagent_check_says_so_and_exits_non_zero(proxy, tampering, tmp_path: Path) -> None:
    front, _ = proxy
    with tampered(front, tampering["signed by another key"]):
        refused = run_netagent(tmp_path, "check", front.url)
    assert refused.code == 1
    assert "cardsignature" in shown(refused.stdout), refused.stdout
    assert "hasnovalidsignature" in shown(refused.stdout), refused.stdout
    with tampered(front, lambda card: {k: v for k, v in card.items() if k != "signatures"}):
        unsigned = run_netagent(tmp_path, "check", front.url, "--require-signature")
    assert unsigned.code == 1
    assert "isnotsigned" in shown(unsigned.stdout), unsigned.stdout


@pytest.mark.parametrize("command", ["describe", "invoke", "chain"])
def test_the_client_commands_refuse_such_a_card_locally(
    proxy, tampering, tmp_path: Path, command: str
) -> None:
    front, _ = proxy
    args = {
        "describe": ["describe", front.url, "lookup_inventory"],
        "invoke": ["invoke", front.url, "lookup_inventory", "--args", "{}"],
        "chain": ["chain", front.url, "--from", "lookup_inventory", "--args", "{}"],
    }[command]
    if command == "chain":
        args += ["--to", "describe_skill"]
    with tampered(front, tampering["wrong kid"]):
        refused = run_netagent(tmp_path, *args, "--json")
    assert refused.code == 3, refused.stdout  # a local refusal: nothing was sent on that card
    error = json.loads(refused.stdout.splitlines()[-1])["error"]
    assert (error["where"], error["code"]) == ("local", "interface_invalid"), error
    assert "has no valid signature" in error["message"] and "is not in" in error["message"]
    with tampered(front, lambda card: {k: v for k, v in card.items() if k != "signatures"}):
        unsigned = run_netagent(tmp_path, *args, "--json", "--require-signature")
    assert unsigned.code == 3, unsigned.stdout
    assert "is not signed" in json.loads(unsigned.stdout.splitlines()[-1])["error"]["message"]


def shown(stdout: str) -> str:
    """The table's text without its spacing and borders (it folds long cells over lines)."""
    return "".join(stdout.split()).replace("│", "")
