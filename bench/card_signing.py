"""Card-signing benchmark: what signing the agent's cards and verifying them costs.

Times, on the demo registry's cards, a first signature (``CardSigner``: the canonical form and
one ES256 signature), a signature held for an unchanged content (the digest the cache is keyed
by), and a client's verification (``CardVerifier``: the key set fetched from an in-process
transport, then a card verified before). Served cards cost nothing per request: the public card
is rendered once at start-up, an extended card once per caller shape. Prints figures; asserts
nothing. Bounded in count.

    .venv/bin/python -m bench.card_signing [--rounds 200]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
from a2a.types import AgentCard

from agent.registry.cards import CardFactory
from agent.registry.loader import load_registry
from agent.security.auth import SigningKey, load_or_create_signing_key
from agent.security.card_signatures import CardSigner, CardVerifier
from agent.security.principal import Principal
from netops.deployment import IDENTITY, SKILLS_DIR

BASE = "http://127.0.0.1:8000"
JWKS = BASE + "/.well-known/jwks.json"
CARD_URL = BASE + "/.well-known/agent-card.json"


def _median_ms(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def _median_ms_async(work: Callable[[], Awaitable[object]], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        await work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def _verification(key: SigningKey, card: AgentCard, rounds: int) -> tuple[float, float]:
    async def jwks(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"keys": [key.public_jwk]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(jwks)) as http:
        first = await _median_ms_async(lambda: CardVerifier(http).verify(card, CARD_URL), rounds)
        held = CardVerifier(http)
        await held.verify(card, CARD_URL)
        again = await _median_ms_async(lambda: held.verify(card, CARD_URL), rounds)
    return first, again


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    rounds = parser.parse_args().rounds
    key = load_or_create_signing_key(Path(tempfile.mkdtemp()))
    factory = CardFactory(load_registry(SKILLS_DIR), BASE, identity=IDENTITY)
    paula = Principal("paula", "acme", frozenset({"capacity.read", "capacity.plan", "preview"}))
    cards = {"public": factory.public_card, "extended (paula)": factory.extended_card(paula)}
    print(
        f"{'card':<18} {'bytes':>6} {'first signature':>16} {'held':>9} {'verify':>9} {'again':>9}"
    )
    for name, card in cards.items():
        held = CardSigner(key, JWKS)
        signed = held(card)
        first = _median_ms(lambda card=card: CardSigner(key, JWKS)(card), rounds)
        cached = _median_ms(lambda card=card, held=held: held(card), rounds)
        verify, again = asyncio.run(_verification(key, signed, rounds))
        print(
            f"{name:<18} {card.ByteSize():>6} {first:>13.3f} ms {cached:>6.3f} ms "
            f"{verify:>6.3f} ms {again:>6.3f} ms"
        )


if __name__ == "__main__":
    main()
