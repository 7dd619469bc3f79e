"""Skill requests whose arguments break the skills' own input schemas, over both bindings.

Each skill starts from arguments that complete (checked first), then one mutation derived
from its input schema (as ``describe_skill`` returns it) is applied: a required member
dropped, a value of a type the schema refuses, a bound or pattern or enum missed, an unknown
member, anything at all; or the request envelope itself is broken. The schema, run locally,
is the oracle: an invalid instance must come back REJECTED ``input_invalid`` with a detail at
(or above, or below) the mutated JSON Pointer; a valid one must never be ``input_invalid``.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, FormatChecker

from tests.conftest import RunningAgent
from tests.fuzz.harness import Answer, CrashLog, Fuzzer, closing_checks, fuzz
from tests.fuzz.strategies import json_values
from tests.fuzz.test_fuzz_jsonrpc import INVALID_PARAMS

TARGET = "skill_arguments"
BASES: dict[str, dict[str, Any]] = {
    "describe_skill": {"skill_id": "lookup_inventory"},
    "lookup_inventory": {"kind": "links", "limit": 5},
    "evaluate_resource_condition": {
        "resource_id": "network-resource-123",
        "condition": {
            "metric": "utilization",
            "operator": "gte",
            "threshold": 80,
            "unit": "percent",
        },
    },
    "check_link_capacity": {"link_id": "acme-lnk-00002", "requested_bps": 5_000_000_000},
    "link_headroom": {"link_id": "acme-lnk-00002"},
    # plan_link_upgrade's base is check_link_capacity's result, fetched at set-up
}
PLANNER = "paula"  # plan_link_upgrade needs capacity.plan and the preview opt-in
TYPED_POOL: list[Any] = [None, True, 0, -1, 2.5, "", "text", [], [1], {}, {"k": 1}]
REQUEST_OPTIONAL = ("skill_version", "interface_digest")


class Skill:
    """One skill as the fuzz sees it: interface, input schema, base arguments, caller."""

    def __init__(self, skill_id: str, described: dict[str, Any], base: dict[str, Any]) -> None:
        self.id = skill_id
        self.version = described["skill_version"]
        self.digest = described["interface_digest"]
        self.schema = described["skill_interface"]["input_schema"]["resolution"]["schema"]
        self.validator = Draft202012Validator(self.schema, format_checker=FormatChecker())
        self.base = base
        self.subject = PLANNER if skill_id == "plan_link_upgrade" else "alice"

    def request(self, arguments: Any) -> dict[str, Any]:
        """The schema-interface Data Part for these arguments."""
        return {
            "skill": self.id,
            "skill_version": self.version,
            "interface_digest": self.digest,
            "arguments": arguments,
        }

    def slots(self) -> list[tuple[tuple[str, ...], dict[str, Any], dict[str, Any]]]:
        """(path, property schema, parent object schema) for every property we can mutate."""
        found = []

        def walk(schema: dict[str, Any], instance: Any, path: tuple[str, ...]) -> None:
            for name, sub in schema.get("properties", {}).items():
                found.append(((*path, name), sub, schema))
                if isinstance(instance, dict) and isinstance(instance.get(name), dict):
                    walk(sub, instance[name], (*path, name))

        walk(self.schema, self.base, ())
        return found


def _result_of(answer: Answer) -> dict[str, Any]:
    task = answer.body["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
    [artifact] = [a for a in task["artifacts"] if a["artifactId"] == "result"]
    return artifact["parts"][0]["data"]


def _message(data: Any) -> dict[str, Any]:
    return {
        "messageId": "fuzz-skill",
        "role": "ROLE_USER",
        "parts": [{"mediaType": "application/json", "data": data}],
    }


@pytest.fixture(scope="module")
def skills(fuzz_agent: RunningAgent, fuzzer: Fuzzer) -> dict[str, Skill]:
    """Every skill alice or paula may call, with arguments checked to complete."""
    described: dict[str, dict[str, Any]] = {}
    for skill_id in [*BASES, "plan_link_upgrade"]:
        token = fuzz_agent.token(PLANNER if skill_id == "plan_link_upgrade" else "alice")
        data = {"skill": "describe_skill", "arguments": {"skill_id": skill_id}}
        answer = fuzzer.rpc("setup", _rpc(_message(data)), token=token)
        described[skill_id] = _result_of(answer)
    found = {s: Skill(s, described[s], BASES[s]) for s in BASES}
    capacity = found["check_link_capacity"]
    answer = fuzzer.rpc("setup", _rpc(_message(capacity.request(capacity.base))))
    found["plan_link_upgrade"] = Skill(
        "plan_link_upgrade", described["plan_link_upgrade"], _result_of(answer)
    )
    for skill in found.values():
        token = fuzz_agent.token(skill.subject)
        answer = fuzzer.rpc("setup", _rpc(_message(skill.request(skill.base))), token=token)
        _result_of(answer)  # the base completes, so each mutation is what breaks it
        assert skill.validator.is_valid(skill.base)
    return found


def _rpc(message: dict[str, Any], method: str = "SendMessage") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}


def _set(instance: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    copy: dict[str, Any] = _deep_copy(instance)
    target = copy
    for key in path[:-1]:
        target = target[key]
    if value is _DROP:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = value
    return copy


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


_DROP = object()


def _pointer(path: tuple[str, ...]) -> str:
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in path)


@st.composite
def argument_mutations(draw: st.DrawFn, skill: Skill) -> tuple[Any, str | None]:
    """(arguments, the pointer the mutation touched) for one skill."""
    slots = skill.slots()
    path, sub, parent = draw(st.sampled_from(slots))
    kind = draw(
        st.sampled_from(["drop", "wrong_type", "bound", "unknown", "anything", "not_object"])
    )
    if kind == "drop":
        present = [s for s in slots if _present(skill.base, s[0])]
        path = draw(st.sampled_from([s[0] for s in present]))
        return _set(skill.base, path, _DROP), _pointer(path)
    if kind == "wrong_type":
        refused = [v for v in TYPED_POOL if not Draft202012Validator(sub).is_valid(v)]
        value = draw(st.sampled_from(refused)) if refused else draw(json_values)
        return _set(skill.base, path, value), _pointer(path)
    if kind == "bound":
        return _set(skill.base, path, draw(_near_bounds(sub))), _pointer(path)
    if kind == "unknown":
        name = draw(
            st.text(min_size=1, max_size=12).filter(lambda n: n not in parent.get("properties", {}))
        )
        return _set(skill.base, (*path[:-1], name), draw(json_values)), _pointer((*path[:-1], name))
    if kind == "anything":
        return _set(skill.base, path, draw(json_values)), _pointer(path)
    return draw(json_values.filter(lambda v: not isinstance(v, dict))), None


def _present(instance: Any, path: tuple[str, ...]) -> bool:
    for key in path:
        if not isinstance(instance, dict) or key not in instance:
            return False
        instance = instance[key]
    return True


def _near_bounds(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values at and just beyond what a property schema allows."""
    options: list[st.SearchStrategy[Any]] = [json_values]
    for key, step in (("minimum", -1), ("maximum", 1)):
        if key in schema:
            edge = schema[key]
            options.append(st.sampled_from([edge, edge + step, edge + step * 10**6]))
    if "maxLength" in schema:
        options.append(st.just("x" * (int(schema["maxLength"]) + 1)))
    if "minLength" in schema:
        options.append(st.just(""))
    if "pattern" in schema:
        options.append(st.sampled_from(["", "-leading-dash", "has space", "x" * 65, "ü"]))
    if "enum" in schema:
        options.append(st.text(max_size=12))
    if "format" in schema:
        options.append(st.sampled_from(["2026-13-01T00:00:00Z", "yesterday", "2026-11-29"]))
    return st.one_of(options)


def _finite(value: Any) -> bool:
    """False for what the message limits refuse before any task: NaN or Infinity (not JSON),
    and U+0000 in any string or key (PostgreSQL text cannot hold it)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, dict):
        return all(_finite(k) and _finite(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _assert_invalid_params(answer: Answer, binding: str) -> str:
    """The protocol's InvalidParamsError on either binding; returns its pointer."""
    if binding == "jsonrpc":
        assert answer.code == INVALID_PARAMS, answer
        [info] = answer.error["data"]
        return str(info["metadata"]["pointer"])
    assert (answer.status, answer.reason) == (400, "INVALID_PARAMS"), answer
    return str(answer.error["details"][0]["metadata"]["pointer"])


def _related(detail_path: str, pointer: str) -> bool:
    """A detail at the pointer, above it (e.g. a oneOf at the root) or below it."""
    return (
        detail_path == pointer
        or pointer.startswith(detail_path + "/")
        or detail_path.startswith(pointer + "/")
        or detail_path == ""
    )


def _send(fuzzer: Fuzzer, skill: Skill, data: Any, binding: str, stream: bool) -> Answer:
    token = fuzzer.tokens[skill.subject]
    message = _message(data)
    if binding == "jsonrpc":
        method = "SendStreamingMessage" if stream else "SendMessage"
        return fuzzer.rpc(TARGET, _rpc(message, method), token=token)
    path = "/a2a/rest/message:stream" if stream else "/a2a/rest/message:send"
    headers = fuzzer.headers(Authorization=f"Bearer {token}")
    body = fuzzer.dumps({"message": message})
    return fuzzer.send(TARGET, "POST", path, binding="rest", content=body, headers=headers)


SKILL_IDS = [*BASES, "plan_link_upgrade"]


@fuzz(800, postgresql=150)
@given(
    skill_id=st.sampled_from(SKILL_IDS),
    binding=st.sampled_from(["jsonrpc", "rest"]),
    stream=st.booleans(),
    data=st.data(),
)
def test_arguments_that_break_the_input_schema(
    fuzzer: Fuzzer, skills: dict[str, Skill], skill_id, binding, stream, data
):
    """The local schema decides: invalid means REJECTED input_invalid at the mutated place."""
    skill = skills[skill_id]
    arguments, pointer = data.draw(argument_mutations(skill))
    answer = _send(fuzzer, skill, skill.request(arguments), binding, stream)
    if not _finite(arguments):  # NaN or Infinity: not JSON, refused before any task
        _assert_invalid_params(answer, binding)
        return
    assert answer.state is not None, answer  # a task, never a protocol error, for these
    if not isinstance(arguments, dict):
        assert (answer.state, answer.code) == ("TASK_STATE_REJECTED", "input_invalid"), answer
        return
    if skill.validator.is_valid(arguments):
        assert answer.code != "input_invalid", (arguments, answer)
        return
    assert (answer.state, answer.code) == ("TASK_STATE_REJECTED", "input_invalid"), answer
    details = answer.error.get("details", [])
    assert details, answer.error
    assert any(_related(d["instance_path"], pointer) for d in details), (pointer, details)


@fuzz(300, postgresql=40)
@given(
    skill_id=st.sampled_from(SKILL_IDS),
    binding=st.sampled_from(["jsonrpc", "rest"]),
    change=st.sampled_from(["version", "digest", "drop", "extra", "skill", "unknown_skill"]),
    value=json_values,
)
def test_broken_skill_requests(
    fuzzer: Fuzzer, skills: dict[str, Skill], skill_id, binding, change, value
):
    """The request envelope broken: interface_mismatch, input_invalid, skill_not_advertised."""
    skill = skills[skill_id]
    data = skill.request(skill.base)
    if change in ("version", "digest"):
        key = "skill_version" if change == "version" else "interface_digest"
        expected = None if value == data[key] else "interface_mismatch"
        data[key] = value
    elif change == "drop":
        for key in REQUEST_OPTIONAL:
            data.pop(key)
        expected = None if skill.id == "describe_skill" else "interface_mismatch"
    elif change == "extra":
        data["extra_member"] = value
        expected = "input_invalid"
    elif change == "skill":
        data["skill"] = value if not isinstance(value, str) else ""
        expected = "input_invalid"
    else:
        data["skill"] = f"no_such_skill_{len(str(value))}"
        expected = "skill_not_advertised"
    answer = _send(fuzzer, skill, data, binding, stream=False)
    if not _finite(data):  # NaN or Infinity: not JSON, refused before any task
        _assert_invalid_params(answer, binding)
    elif expected is None:
        assert answer.state == "TASK_STATE_COMPLETED", answer
    else:
        assert (answer.state, answer.code) == ("TASK_STATE_REJECTED", expected), (data, answer)


@fuzz(200, postgresql=20)
@given(
    skill_id=st.sampled_from(SKILL_IDS),
    binding=st.sampled_from(["jsonrpc", "rest"]),
    data=st.data(),
)
def test_arguments_beyond_the_message_limits(
    fuzzer: Fuzzer, skills: dict[str, Skill], skill_id, binding, data
):
    """A string, array or nesting past the agent's limits: a protocol error naming where."""
    skill = skills[skill_id]
    path, _, _ = data.draw(st.sampled_from(skill.slots()))
    limits = fuzzer.limits
    value = data.draw(
        st.sampled_from(
            [
                "x" * (limits.max_string_length + 1),
                list(range(limits.max_items + 1)),
                _nested(limits.max_depth + 1),
            ]
        )
    )
    answer = _send(fuzzer, skill, skill.request(_set(skill.base, path, value)), binding, False)
    where = "/message/parts/0/data/arguments" + _pointer(path)
    pointer = _assert_invalid_params(answer, binding)
    assert pointer.startswith(where), (pointer, where)


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def test_zz_closing_checks(fuzzer: Fuzzer, crash_log: CrashLog, record_property) -> None:
    """Last in the module: the plan met, nothing crashed, nothing lost (harness.closing_checks)."""
    closing_checks(fuzzer, crash_log, TARGET, record_property)
