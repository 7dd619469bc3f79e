"""Reused tool tokens: one exchange per grant while fresh, never shared across grants, bounded.

Real exchanges with a real key (the embedded issuer, in-process and over its token endpoint);
the only stand-in is the cache's clock.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from agent.base.settings import Settings
from agent.security.auth import SigningKey, TokenVerifier, issue_token
from agent.security.auth import load_or_create_signing_key as load_key
from agent.security.credentials import (
    TOOL_ISSUER,
    TOOL_TOKEN_TTL_SECONDS,
    ExchangeError,
    IssuedToken,
    LocalIssuer,
    LocalTokenExchanger,
    RemoteTokenExchanger,
    ToolGrant,
    ToolTokenVerifier,
)
from agent.security.exchange_cache import CachingTokenExchanger, reuse_seconds
from agent.security.oauth import token_endpoint
from agent.security.principal import ANONYMOUS, Principal

SCOPES = frozenset({"assurance.read", "inventory.read"})
CONTEXT = {
    "skill_id": "evaluate_resource_condition",
    "skill_version": "1.0",
    "interface_digest": "sha-256:abc",
}
AUDIENCES = {"inventory", "telemetry"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class CountedExchanger(LocalTokenExchanger):
    """The embedded exchange, counting its exchanges; ``hold`` keeps them waiting until set."""

    def __init__(self, issuer: LocalIssuer, hold: asyncio.Event | None = None) -> None:
        super().__init__(issuer)
        self.calls = 0
        self._hold = hold

    async def exchange(self, grant: ToolGrant) -> IssuedToken:
        self.calls += 1
        if self._hold is not None:
            await self._hold.wait()
        return await super().exchange(grant)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture
def key(settings: Settings) -> SigningKey:
    return load_key(settings.home)


@pytest.fixture
def issuer(settings: Settings, key: SigningKey) -> LocalIssuer:
    return LocalIssuer(key, TokenVerifier(settings, key), audiences=AUDIENCES)


@pytest.fixture
def inner(issuer: LocalIssuer) -> CountedExchanger:
    return CountedExchanger(issuer)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(inner: CountedExchanger, clock: Clock) -> CachingTokenExchanger:
    return CachingTokenExchanger(inner, clock=clock)


def caller(
    key: SigningKey, settings: Settings, subject: str = "alice", scopes: frozenset[str] = SCOPES
) -> Principal:
    token = issue_token(key, settings, subject=subject, tenant="acme", scopes=sorted(scopes))
    return TokenVerifier(settings, key).verify(token)


def grant_for(who: Principal, **changes: object) -> ToolGrant:
    grant = ToolGrant(who, "inventory", SCOPES, dict(CONTEXT), audience="inventory")
    return replace(grant, **changes)  # type: ignore[arg-type]


def test_a_token_is_reused_until_30_s_or_a_tenth_of_its_life_before_expiry() -> None:
    assert reuse_seconds(TOOL_TOKEN_TTL_SECONDS) == 270.0
    assert reuse_seconds(3600) == 3240.0
    assert reuse_seconds(60) == 30.0
    assert reuse_seconds(30) == 0.0 and reuse_seconds(0) == 0.0 and reuse_seconds(-5) == 0.0


async def test_the_same_grant_gets_the_same_token_while_it_is_fresh(
    cache: CachingTokenExchanger,
    inner: CountedExchanger,
    key: SigningKey,
    settings: Settings,
    clock: Clock,
) -> None:
    grant = grant_for(caller(key, settings))
    first = await cache.exchange(grant)
    clock.now += 269
    again = await cache.exchange(replace(grant, context=dict(CONTEXT)))  # an equal grant
    assert again is first and inner.calls == 1
    verified = ToolTokenVerifier("inventory", TOOL_ISSUER, key=key.private_key.public_key())
    assert verified.verify(again.access_token).token_id == first.token_id


async def test_near_its_expiry_a_token_is_exchanged_anew(
    cache: CachingTokenExchanger,
    inner: CountedExchanger,
    key: SigningKey,
    settings: Settings,
    clock: Clock,
) -> None:
    grant = grant_for(caller(key, settings))
    first = await cache.exchange(grant)
    clock.now += reuse_seconds(first.expires_in)
    second = await cache.exchange(grant)
    assert inner.calls == 2 and second.token_id != first.token_id
    clock.now += 1
    assert (await cache.exchange(grant)) is second and inner.calls == 2


async def test_no_token_is_shared_across_callers_tools_scopes_or_context(
    cache: CachingTokenExchanger, inner: CountedExchanger, key: SigningKey, settings: Settings
) -> None:
    alice = caller(key, settings)
    base = grant_for(alice)
    variants = {
        "base": base,
        "alice's other token": grant_for(caller(key, settings)),
        "another caller": grant_for(caller(key, settings, subject="carl")),
        "another skill": grant_for(alice, context=CONTEXT | {"skill_id": "check_link_capacity"}),
        "another version": grant_for(alice, context=CONTEXT | {"skill_version": "1.1"}),
        "more context": grant_for(alice, context=CONTEXT | {"task_id": "t-1"}),
        "fewer scopes": grant_for(alice, scopes=frozenset({"assurance.read"})),
        "another audience": grant_for(alice, audience="telemetry"),
        "another tool": grant_for(alice, tool="inventory-v2"),
    }
    issued = {name: await cache.exchange(grant) for name, grant in variants.items()}
    assert inner.calls == len(variants)
    assert len({token.token_id for token in issued.values()}) == len(variants)
    assert issued["fewer scopes"].scopes == frozenset({"assurance.read"})
    for name, grant in variants.items():  # and each is then reused for its own grant only
        assert (await cache.exchange(grant)) is issued[name], name
    assert inner.calls == len(variants)


async def test_concurrent_calls_for_one_grant_share_one_exchange(
    issuer: LocalIssuer, key: SigningKey, settings: Settings
) -> None:
    hold = asyncio.Event()
    inner = CountedExchanger(issuer, hold)
    cache = CachingTokenExchanger(inner)
    grant = grant_for(caller(key, settings))
    calls = [asyncio.ensure_future(cache.exchange(grant)) for _ in range(20)]
    await asyncio.sleep(0.01)  # every call is now waiting on the exchange
    assert inner.calls == 1
    hold.set()
    issued = await asyncio.gather(*calls)
    assert inner.calls == 1 and len({token.token_id for token in issued}) == 1


async def test_a_cancelled_caller_leaves_the_shared_exchange_to_the_others(
    issuer: LocalIssuer, key: SigningKey, settings: Settings
) -> None:
    hold = asyncio.Event()
    inner = CountedExchanger(issuer, hold)
    cache = CachingTokenExchanger(inner)
    grant = grant_for(caller(key, settings))
    first = asyncio.ensure_future(cache.exchange(grant))
    second = asyncio.ensure_future(cache.exchange(grant))
    await asyncio.sleep(0.01)
    first.cancel()
    await asyncio.sleep(0)
    hold.set()
    issued = await second
    assert first.cancelled() and inner.calls == 1
    assert (await cache.exchange(grant)) is issued and inner.calls == 1


async def test_the_cache_is_bounded_and_drops_the_least_recently_used(
    inner: CountedExchanger, key: SigningKey, settings: Settings
) -> None:
    cache = CachingTokenExchanger(inner, size=2)
    a, b, c = (grant_for(caller(key, settings)) for _ in range(3))
    first_a = await cache.exchange(a)
    await cache.exchange(b)
    assert (await cache.exchange(a)) is first_a  # a is now the most recently used
    await cache.exchange(c)  # b goes
    assert len(cache) == 2 and inner.calls == 3
    assert (await cache.exchange(a)) is first_a and inner.calls == 3
    await cache.exchange(b)
    assert inner.calls == 4 and len(cache) == 2


async def test_a_refused_exchange_is_not_remembered(
    cache: CachingTokenExchanger, inner: CountedExchanger, key: SigningKey, settings: Settings
) -> None:
    unscoped = grant_for(caller(key, settings, scopes=frozenset({"capacity.plan"})))
    for _ in range(2):
        with pytest.raises(ExchangeError) as caught:
            await cache.exchange(unscoped)
        assert caught.value.error == "invalid_scope"
    with pytest.raises(ExchangeError):
        await cache.exchange(grant_for(ANONYMOUS))
    assert inner.calls == 3 and len(cache) == 0


async def test_remote_exchanges_are_reused_too(
    issuer: LocalIssuer, key: SigningKey, settings: Settings
) -> None:
    posts: list[httpx.Request] = []

    async def count(request: httpx.Request) -> None:
        posts.append(request)

    app = Starlette(routes=[Route("/oauth/token", token_endpoint(issuer), methods=["POST"])])
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), event_hooks={"request": [count]}
    ) as client:
        remote = RemoteTokenExchanger(
            "http://tokens.test/oauth/token", issuer.agent_credential(), client
        )
        cache = CachingTokenExchanger(remote)
        grant = grant_for(caller(key, settings))
        issued = await asyncio.gather(*(cache.exchange(grant) for _ in range(5)))
        issued.append(await cache.exchange(grant))
    assert len(posts) == 1 and len({token.token_id for token in issued}) == 1
