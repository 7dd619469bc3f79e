"""Messages past the limits, odd parts and plain text, over both bindings.

Limit violations are generated where the generator knows the limit and the place, so the
answer must be the protocol's InvalidParamsError naming that limit and JSON Pointer (and the
value itself never appears in the answer). Plain text of any kind must be routed to a task
(completed, a question, or refused with a draft code) or refused as a protocol error.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Answer, CrashLog, Fuzzer, closing_checks, fuzz
from tests.fuzz.strategies import json_values
from tests.fuzz.test_fuzz_jsonrpc import INVALID_PARAMS

TARGET = "messages"
SENTINEL = "Zq7"  # marks generated values, to prove an answer never echoes them


def _send(fuzzer: Fuzzer, params: dict[str, Any], binding: str) -> Answer:
    if binding == "jsonrpc":
        body = {"jsonrpc": "2.0", "id": 9, "method": "SendMessage", "params": params}
        return fuzzer.rpc(TARGET, body)
    return fuzzer.send(
        TARGET, "POST", "/a2a/rest/message:send", binding="rest", content=fuzzer.dumps(params)
    )


def _refusal(answer: Answer, binding: str) -> dict[str, str]:
    """The InvalidParamsError's metadata (limit, max, pointer) on either binding."""
    if binding == "jsonrpc":
        assert answer.code == INVALID_PARAMS, answer
        [info] = answer.error["data"]
    else:
        assert (answer.status, answer.reason) == (400, "INVALID_PARAMS"), answer
        [info] = answer.error["details"]
    return info["metadata"]


def _message(parts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"messageId": "fuzz-m", "role": "ROLE_USER", "parts": parts, **extra}


PLACES = (
    "text",
    "parts",
    "data_string",
    "data_items",
    "data_depth",
    "message_metadata",
    "part_metadata",
    "request_metadata",
    "extensions",
    "message_id",
    "filename",
)


@st.composite
def over_limit(draw: st.DrawFn, limits: Any) -> tuple[dict[str, Any], str, str]:
    """(params, limit, pointer) for a message that breaks exactly one limit at one place.

    How far past the limit, which part carries it and the names around it vary, so every
    example is a different request.
    """
    long_text = SENTINEL + "x" * (limits.max_string_length + draw(st.integers(0, 4000)))
    many = [SENTINEL] * (limits.max_items + draw(st.integers(1, 50)))
    deep: Any = SENTINEL
    for _ in range(limits.max_depth + draw(st.integers(1, 8))):
        deep = {"k": deep}
    name = draw(st.text(alphabet="abcdefgh_", min_size=1, max_size=8))
    lead = [{"text": f"check link acme-lnk-0000{i}"} for i in range(draw(st.integers(0, 3)))]
    at = f"/message/parts/{len(lead)}"
    place = draw(st.sampled_from(PLACES))
    text_part = {"text": "check link acme-lnk-00002"}
    if place == "text":
        params = {"message": _message([*lead, {"text": long_text}])}
        return params, "max_string_length", f"{at}/text"
    if place == "parts":
        count = limits.max_parts + draw(st.integers(min_value=1, max_value=5))
        return {"message": _message([text_part] * count)}, "max_parts", "/message/parts"
    if place == "data_string":
        data = {"skill": "lookup_inventory", "arguments": {name: long_text}}
        params = {"message": _message([*lead, {"data": data}])}
        return params, "max_string_length", f"{at}/data/arguments/{name}"
    if place == "data_items":
        data = draw(
            st.sampled_from(
                [many, {f"{name}{i}": 1 for i in range(limits.max_items + 1)}, {name: many}]
            )
        )
        pointer = f"{at}/data/{name}" if data == {name: many} else f"{at}/data"
        return {"message": _message([*lead, {"data": data}])}, "max_items", pointer
    if place == "data_depth":
        return {"message": _message([*lead, {"data": deep}])}, "max_depth", f"{at}/data"
    if place == "message_metadata":
        message = _message([text_part], metadata={name: long_text})
        return {"message": message}, "max_string_length", f"/message/metadata/{name}"
    if place == "part_metadata":
        part = {**text_part, "metadata": {name: many}}
        return {"message": _message([*lead, part])}, "max_items", f"{at}/metadata/{name}"
    if place == "request_metadata":
        params = {"message": _message([text_part]), "metadata": {name: deep}}
        return params, "max_depth", f"/metadata/{name}"
    if place == "extensions":
        message = _message([text_part], extensions=many)
        return {"message": message}, "max_items", "/message/extensions"
    if place == "message_id":
        message = {**_message([text_part]), "messageId": long_text}
        return {"message": message}, "max_string_length", "/message/messageId"
    part = {**text_part, "filename": long_text}
    return {"message": _message([*lead, part])}, "max_string_length", f"{at}/filename"


@fuzz(700, postgresql=60)
@given(binding=st.sampled_from(["jsonrpc", "rest"]), data=st.data())
def test_limits_name_the_limit_and_the_place(fuzzer: Fuzzer, binding, data):
    """One limit broken at one place: InvalidParamsError with that limit and pointer."""
    params, limit, pointer = data.draw(over_limit(fuzzer.limits))
    answer = _send(fuzzer, params, binding)
    refusal = _refusal(answer, binding)
    assert refusal["limit"] == limit, refusal
    if limit == "max_depth":  # the pointer names the level past the limit, inside the value
        assert refusal["pointer"].startswith(pointer + "/"), (refusal, pointer)
    else:
        assert refusal["pointer"] == pointer, (refusal, pointer)
    assert str(getattr(fuzzer.limits, limit)) == refusal["max"]
    assert SENTINEL not in json.dumps(answer.error), "the answer echoes the value"


@fuzz(200, postgresql=40)
@given(
    binding=st.sampled_from(["jsonrpc", "rest"]),
    role=st.sampled_from(["ROLE_AGENT", "ROLE_UNSPECIFIED", "ROLE_NOPE", None]),
    parts=st.sampled_from(["none", "empty_text", "content_less", "ok"]),
    context=st.one_of(st.none(), st.text(min_size=37, max_size=60)),
)
def test_malformed_messages(fuzzer: Fuzzer, binding, role, parts, context):
    """A role other than user, no parts, an empty text part, a context id past 36: refused."""
    message: dict[str, Any] = {"messageId": "fuzz-shape", "parts": [{"text": "hello"}]}
    if role is not None:
        message["role"] = role
    message["parts"] = {
        "none": [],
        "empty_text": [{"text": "hello"}, {"text": ""}],
        "content_less": [{"mediaType": "text/plain"}],
        "ok": [{"text": "hello"}],
    }[parts]
    if context is not None:
        message["contextId"] = context
    answer = _send(fuzzer, {"message": message}, binding)
    broken = role != "ROLE_USER" or parts in ("none", "empty_text") or context is not None
    if broken:
        assert answer.kind in ("rpc_error", "rest_error"), answer
        assert answer.code in (INVALID_PARAMS, 400), answer


texts = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=80),
    st.sampled_from(
        [
            "does a 20G flow fit on acme-lnk-00002?",
            "list the links of nyc1",
            "is network-resource-123 over 80 percent utilization?",
            "headroom on acme-lnk-00001 " * 50,
            "\u202e\u0000\ufeff",
            "%s%s%n' OR 1=1; --",
        ]
    ),
).filter(bool)


@fuzz(200, postgresql=80)
@given(
    binding=st.sampled_from(["jsonrpc", "rest"]),
    text=texts,
    extra=st.lists(
        st.one_of(
            st.builds(lambda d: {"data": d}, json_values),
            st.builds(lambda t: {"text": t}, st.text(min_size=1, max_size=30)),
            st.just({"raw": "aGVsbG8=", "mediaType": "application/octet-stream"}),
            st.just({"url": "https://example.invalid/x", "mediaType": "text/html"}),
        ),
        max_size=2,
    ),
    modes=st.one_of(
        st.none(), st.lists(st.sampled_from(["text/plain", "application/json", "image/png"]))
    ),
    hint=st.one_of(st.none(), st.text(max_size=20), json_values),
)
def test_plain_text(fuzzer: Fuzzer, binding, text, extra, modes, hint):
    """Any text, with extra parts, output modes and a skill hint: a task or a protocol error."""
    params: dict[str, Any] = {"message": _message([{"text": text}, *extra])}
    if hint is not None:
        params["message"]["metadata"] = {"skill_id": hint}
    if modes is not None:
        params["configuration"] = {"acceptedOutputModes": modes}
    answer = _send(fuzzer, params, binding)
    assert answer.state is not None or answer.kind in ("rpc_error", "rest_error"), answer


@fuzz(100, postgresql=40)
@given(
    binding=st.sampled_from(["jsonrpc", "rest"]),
    surrogate=st.integers(min_value=0xD800, max_value=0xDFFF),
    around=st.text(alphabet="abc xyz", min_size=1, max_size=10),
)
def test_lone_surrogates(fuzzer: Fuzzer, binding, surrogate, around):
    """JSON may escape a lone surrogate; protobuf strings cannot hold one: never a crash."""
    text = f'"{around}\\u{surrogate:04x}{around}"'
    message = json.dumps(_message([{"text": "x"}])).replace('"x"', text)
    if binding == "jsonrpc":
        envelope = '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
        raw = envelope + message + "}}"
        answer = fuzzer.send(
            TARGET, "POST", "/a2a/jsonrpc", binding="jsonrpc", content=raw.encode()
        )
    else:
        raw = f'{{"message": {message}}}'
        answer = fuzzer.send(
            TARGET, "POST", "/a2a/rest/message:send", binding="rest", content=raw.encode()
        )
    assert answer.kind in ("rpc_error", "rest_error") or answer.state is not None, answer


def test_zz_closing_checks(fuzzer: Fuzzer, crash_log: CrashLog, record_property) -> None:
    """Last in the module: the plan met, nothing crashed, nothing lost (harness.closing_checks)."""
    closing_checks(fuzzer, crash_log, TARGET, record_property)
