"""Scope strings split on U+0020 alone (RFC 6749 §3.3), wherever a scope string is read.

Every other character ``str.isspace()`` holds (TAB, LF, VT, FF, CR, the C1 separators, NBSP,
U+1680, U+2000..U+200A, U+2028/9, U+202F, U+205F, U+3000) stays inside the token: the caller's
verifier, the tool-token verifier, the CLI's hint, and ``issue_token`` all read one scope.
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path
from typing import Any

import jwt
import pytest

from agent.base.settings import Settings
from agent.cli.calling import mint_command
from agent.security.auth import (
    SIGNING_ALGORITHM,
    SigningKey,
    TokenVerifier,
    issue_token,
    load_or_create_signing_key,
)
from agent.security.credentials import AGENT_SUBJECT, TOOL_ISSUER, ToolTokenVerifier
from agent.security.scopes import is_scope_token, scope_tokens

OTHER_WHITESPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace() and c != 0x20]
PIECES = ("inventory.read", "capacity.plan", "preview")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home")


@pytest.fixture
def key(settings: Settings) -> SigningKey:
    return load_or_create_signing_key(settings.home)


def sign(key: SigningKey, claims: dict[str, Any]) -> str:
    return jwt.encode(claims, key.private_key, SIGNING_ALGORITHM, {"kid": key.kid})


def test_the_class_is_every_unicode_whitespace_but_the_space() -> None:
    assert len(OTHER_WHITESPACE) >= 25
    assert {"\t", "\n", "\x85", "\xa0", "\u2003", "\u3000"} <= set(OTHER_WHITESPACE)


def test_only_the_space_separates() -> None:
    assert scope_tokens(" ".join(PIECES)) == frozenset(PIECES)
    assert scope_tokens("  inventory.read   preview ") == {"inventory.read", "preview"}
    assert scope_tokens("") == frozenset()
    for separator in OTHER_WHITESPACE:
        joined = separator.join(PIECES)
        assert scope_tokens(joined) == {joined}, repr(separator)
        assert not is_scope_token(joined), repr(separator)


def test_the_scope_token_grammar() -> None:
    assert all(is_scope_token(piece) for piece in PIECES)
    assert is_scope_token("!#[]^~:_.-/")
    for bad in ("", " ", '"', "\\", "\x7f", "é", "a b", "a\x00"):
        assert not is_scope_token(bad), repr(bad)


def test_the_callers_verifier_reads_one_unknown_scope(settings: Settings, key: SigningKey) -> None:
    verifier = TokenVerifier(settings, key)
    for separator in OTHER_WHITESPACE:
        joined = separator.join(PIECES)
        token = issue_token(
            key,
            settings,
            subject="alice",
            tenant="acme",
            scopes=[],
            extra_claims={"scope": joined},
        )
        assert verifier.verify(token).scopes == {joined}, repr(separator)


def test_the_tool_verifier_reads_one_unknown_scope(key: SigningKey) -> None:
    verifier = ToolTokenVerifier("inventory", TOOL_ISSUER, key=key.private_key.public_key())
    now = int(time.time())
    for separator in OTHER_WHITESPACE:
        joined = separator.join(PIECES)
        claims = {
            "iss": TOOL_ISSUER,
            "sub": "alice",
            "tenant": "acme",
            "aud": "inventory",
            "scope": joined,
            "act": {"sub": AGENT_SUBJECT},
            "exp": now + 120,
            "jti": uuid.uuid4().hex,
        }
        assert verifier.verify(sign(key, claims)).scopes == {joined}, repr(separator)


def test_issue_token_refuses_a_scope_that_would_read_back_as_several(
    settings: Settings, key: SigningKey
) -> None:
    for bad in [" ".join(PIECES), *(s.join(PIECES) for s in OTHER_WHITESPACE), ""]:
        with pytest.raises(ValueError, match="a scope is printable ASCII"):
            issue_token(key, settings, subject="alice", tenant="acme", scopes=[bad])


def test_the_cli_hint_keeps_a_joined_scope_out(settings: Settings, key: SigningKey) -> None:
    for separator in OTHER_WHITESPACE:
        claims = {
            "sub": "alice",
            "tenant": "acme",
            "scope": f"inventory.read {separator.join(PIECES[1:])}",
        }
        command = mint_command(sign(key, claims))
        assert command == "netagent token --subject alice --tenant acme --scope inventory.read", (
            repr(separator)
        )


def test_netagent_token_refuses_a_scope_that_would_read_back_as_several(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from agent import cli

    home = {"NETAGENT_HOME": str(tmp_path)}
    base = ["token", "--subject", "alice", "--tenant", "acme", "--create-key"]
    assert CliRunner().invoke(cli.app, [*base, "--scope", "preview"], env=home).exit_code == 0
    for bad in [" ".join(PIECES), *(s.join(PIECES) for s in OTHER_WHITESPACE)]:
        result = CliRunner().invoke(cli.app, [*base, "--scope", bad], env=home)
        assert result.exit_code != 0 and "--scope takes one scope" in result.output, repr(bad)
        assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_bearer_token_wrapped_in_other_whitespace_is_refused(
    settings: Settings, key: SigningKey
) -> None:
    from agent.edge.http_auth import Refusal, verify_bearer

    verifier = TokenVerifier(settings, key)
    token = issue_token(key, settings, subject="alice", tenant="acme", scopes=["preview"])
    assert verify_bearer(verifier, f"Bearer {token}").scopes == {"preview"}  # type: ignore[union-attr]
    assert verify_bearer(verifier, f"Bearer \t{token} ").scopes == {"preview"}  # type: ignore[union-attr]
    for space in OTHER_WHITESPACE:
        if space == "\t":
            continue
        for value in (f"Bearer {space}{token}", f"Bearer {token}{space}"):
            assert isinstance(verify_bearer(verifier, value), Refusal), repr(space)
