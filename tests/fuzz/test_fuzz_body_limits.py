"""Bodies past the size limit (declared or chunked) and JSON nested past what parsers survive."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import CrashLog, Fuzzer, closing_checks, fuzz
from tests.fuzz.test_fuzz_jsonrpc import INVALID_REQUEST

TARGET = "body_limits"
PATHS = (
    ("/a2a/jsonrpc", "jsonrpc"),
    ("/a2a/rest/message:send", "rest"),
    ("/a2a/rest/message:stream", "rest"),
    ("/a2a/rest/tasks/abc:cancel", "rest"),
    ("/oauth/token", "rest"),
)


def _chunks(total: int, size: int) -> Iterator[bytes]:
    """A body sent with Transfer-Encoding: chunked (no Content-Length to check up front)."""
    sent = 0
    while sent < total:
        step = min(size, total - sent)
        sent += step
        yield b" " * step


@fuzz(150, postgresql=15)
@given(
    where=st.sampled_from(PATHS),
    excess=st.integers(min_value=1, max_value=256 * 1024),
    chunked=st.booleans(),
    chunk=st.sampled_from([4096, 65536, 300_000]),
)
def test_oversize_bodies(fuzzer: Fuzzer, where, excess, chunked, chunk):
    """Past max_body_bytes: 413 with a clear error, declared or counted while streaming."""
    path, binding = where
    total = fuzzer.limits.max_body_bytes + excess
    content = _chunks(total, chunk) if chunked else b" " * total
    answer = fuzzer.send(TARGET, "POST", path, binding=binding, content=content)
    assert answer.status == 413, answer
    message = answer.error["message"]
    assert message == f"request body exceeds {fuzzer.limits.max_body_bytes} bytes", answer
    if binding == "jsonrpc":
        assert answer.code == INVALID_REQUEST, answer


@fuzz(600, postgresql=30)
@given(
    where=st.sampled_from(PATHS[:4]),
    depth=st.integers(min_value=1, max_value=20_000),
    opener=st.sampled_from([b"[", b'{"a":', b'[{"b":']),
    closed=st.booleans(),
)
def test_deep_bodies(fuzzer: Fuzzer, where, depth, opener, closed):
    """Nesting past what the parsers survive is refused up front; shallower, by the parser."""
    path, binding = where
    closer = {b"[": b"]", b'{"a":': b"}", b'[{"b":': b"}]"}[opener]
    body = opener * depth + (b"1" + closer * depth if closed else b"")
    answer = fuzzer.send(TARGET, "POST", path, binding=binding, content=body)
    levels = depth * (2 if opener == b'[{"b":' else 1)
    if levels > fuzzer.limits.max_body_depth:
        assert answer.error["message"].startswith("JSON nested more than"), answer
        assert answer.code == (INVALID_REQUEST if binding == "jsonrpc" else 400), answer
    else:
        assert answer.kind in ("rpc_error", "rest_error"), answer


@fuzz(500, postgresql=30)
@given(
    where=st.sampled_from(PATHS[:3]),
    size=st.integers(min_value=0, max_value=64 * 1024),
    filler=st.sampled_from([b" ", b"[", b"{", b'"', b"\\", b"\xff", b"\x00"]),
)
def test_junk_within_the_limit(fuzzer: Fuzzer, where, size, filler):
    """Junk under the size limit is read and refused by the parser as what it is."""
    path, binding = where
    answer = fuzzer.send(TARGET, "POST", path, binding=binding, content=filler * size)
    assert answer.kind in ("rpc_error", "rest_error"), answer


def test_zz_closing_checks(fuzzer: Fuzzer, crash_log: CrashLog, record_property) -> None:
    """Last in the module: the plan met, nothing crashed, nothing lost (harness.closing_checks)."""
    closing_checks(fuzzer, crash_log, TARGET, record_property)
