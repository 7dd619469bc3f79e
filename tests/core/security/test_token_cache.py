"""Remembered verifications: once per token, never past its expiry, never a refusal, bounded."""

from __future__ import annotations

import pytest

from agent.base.settings import Settings
from agent.security.auth import TokenError, TokenVerifier, issue_token, load_or_create_signing_key
from agent.security.token_cache import VerifiedTokens


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def counting(expires: float | None = 2000.0):
    calls: list[str] = []

    def verify(token: str) -> tuple[str, float | None]:
        calls.append(token)
        if token.startswith("bad"):
            raise TokenError("refused")
        return token.upper(), expires

    return verify, calls


def test_a_token_is_verified_once_until_it_expires() -> None:
    verify, calls = counting(expires=2000.0)
    clock = Clock()
    cache = VerifiedTokens(verify, clock=clock)
    assert [cache("t1"), cache("t1"), cache("t1")] == ["T1"] * 3
    assert calls == ["t1"]
    clock.now = 2000.0  # at its expiry the verifier decides again
    cache("t1")
    assert calls == ["t1", "t1"]


def test_refusals_are_never_remembered() -> None:
    verify, calls = counting()
    cache = VerifiedTokens(verify)
    for _ in range(2):
        with pytest.raises(TokenError):
            cache("bad")
    assert calls == ["bad", "bad"] and len(cache) == 0


def test_a_token_without_expiry_is_verified_every_time() -> None:
    verify, calls = counting(expires=None)
    cache = VerifiedTokens(verify, clock=Clock())
    cache("t1"), cache("t1")
    assert calls == ["t1", "t1"]


def test_the_cache_is_bounded_and_drops_the_oldest() -> None:
    verify, calls = counting()
    cache = VerifiedTokens(verify, size=3, clock=Clock())
    for token in ("a", "b", "c", "d"):
        cache(token)
    assert len(cache) == 3
    cache("b")  # still there
    cache("a")  # dropped: verified again
    assert calls == ["a", "b", "c", "d", "a"]


def test_the_bearer_verifier_remembers_only_the_exact_token(tmp_path) -> None:
    settings = Settings.from_env({"NETAGENT_HOME": str(tmp_path)})
    key = load_or_create_signing_key(tmp_path)
    verifier = TokenVerifier(settings, key)
    token = issue_token(key, settings, subject="alice", tenant="acme", scopes=["inventory.read"])
    assert verifier.verify(token) == verifier.verify(token)
    head, payload, signature = token.split(".")
    tampered = ".".join([head, payload, ("A" if signature[0] != "A" else "B") + signature[1:]])
    with pytest.raises(TokenError):
        verifier.verify(tampered)
    expired = issue_token(
        key, settings, subject="alice", tenant="acme", scopes=[], ttl_seconds=-120
    )
    with pytest.raises(TokenError, match="expired"):
        verifier.verify(expired)
