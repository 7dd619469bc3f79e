"""Building, freezing and verifying Skill Interface Documents (draft §4, §10 steps 4-6)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import socket
from typing import Any

import pytest
from appendix_b import (
    ARGUMENTS,
    BASE,
    INPUT_SCHEMA,
    RECORD,
    RESULT,
    SKILL_ID,
    assert_never_connected,
    worked_example,
)
from jsonschema import Draft202012Validator

from agent.interfaces import (
    DIALECT,
    INTERFACE_VERSION,
    TRUSTED_SCHEMA_PATH,
    InterfaceBuildError,
    SkillInterface,
    build_interface,
    compile_validator,
    digest_of,
    error_details,
    is_version,
    trusted_schema,
    verify_document,
)

# Regression anchor: any change to the document layout or to canonicalization changes it.
WORKED_EXAMPLE_DIGEST = "sha256:1d988d1c03f6567a15fd4ca997b7cf3b36bcf45d4043dcf2a61652d8752fd463"
# The digest's §2 sample reference shows this digest for the reconstructed input schema.
INPUT_SCHEMA_DIGEST = "sha256:3859a0f7418acee2a55bc8fb0c0137109d77213ec44c8134b3c23dfef2c48c62"
NINE = {
    "interface_version",
    "skill_id",
    "skill_version",
    "input_schema",
    "output_schema",
    "supporting_record_schemas",
    "interaction",
    "authority",
    "constraints",
}


@pytest.fixture(scope="module")
def interface() -> SkillInterface:
    return build_interface(**worked_example())


def build_error(**overrides: Any) -> str:
    with pytest.raises(InterfaceBuildError) as caught:
        build_interface(**worked_example(**overrides))
    assert caught.value.skill_id == overrides.get("skill_id", SKILL_ID)
    return str(caught.value)


# -- the trusted schema ------------------------------------------------------------------------


def test_trusted_schema_is_a_2020_12_schema_with_an_id() -> None:
    schema = json.loads(TRUSTED_SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("urn:schema-governed-agent:")
    assert set(schema["required"]) == NINE
    assert "additionalProperties" not in schema  # project choice 10
    assert (INTERFACE_VERSION, DIALECT) == ("1.0", "https://json-schema.org/draft/2020-12/schema")


@pytest.mark.parametrize("version", ["1.0", "0.3", "10.12", "0.0"])
def test_version_grammar_accepts(version: str) -> None:
    assert is_version(version)


@pytest.mark.parametrize("version", ["01.0", "1.00", "1", "1.0.0", "v1.0", "1.0\n", " 1.0", ""])
def test_version_grammar_rejects(version: str) -> None:
    assert not is_version(version)


# -- building ----------------------------------------------------------------------------------


def test_worked_example_document_layout(interface: SkillInterface) -> None:
    document = interface.document
    assert set(document) == NINE
    assert document["interface_version"] == "1.0"
    assert (document["skill_id"], document["skill_version"]) == (SKILL_ID, "1.0")
    assert document["input_schema"] == {
        "schema_uri": BASE + "evaluate-resource-condition-input",
        "version": "1.0",
        "dialect": "https://json-schema.org/draft/2020-12/schema",
        "digest": INPUT_SCHEMA_DIGEST,
        "resolution": {"type": "inline", "schema": INPUT_SCHEMA},
    }
    assert list(document["supporting_record_schemas"]) == ["resource-observation"]
    assert document["interaction"] == {
        "response_modes": ["sync", "stream", "poll"],
        "cancelable": False,
    }
    assert document["authority"] == {
        "default_mode": "observe_only",
        "approval_may_be_required": False,
    }
    assert document["constraints"] == {}
    assert (interface.response_modes, interface.cancelable) == (("sync", "stream", "poll"), False)
    assert interface.record_kinds == ("resource-observation",)


def test_worked_example_digest_is_stable(interface: SkillInterface) -> None:
    assert interface.interface_digest == WORKED_EXAMPLE_DIGEST
    assert digest_of(interface.document) == WORKED_EXAMPLE_DIGEST
    # Independent oracle: for ASCII text and integers, sorted compact json.dumps is JCS.
    plain = json.dumps(interface.document, sort_keys=True, separators=(",", ":"))
    assert interface.canonical_document == plain.encode()
    assert "sha256:" + hashlib.sha256(plain.encode()).hexdigest() == WORKED_EXAMPLE_DIGEST
    reordered = worked_example()
    reordered["input_schema"] = (
        reordered["input_schema"][0],
        "1.0",
        dict(reversed(list(INPUT_SCHEMA.items()))),
    )
    reordered["authority"] = dict(reversed(list(reordered["authority"].items())))
    assert build_interface(**reordered).interface_digest == WORKED_EXAMPLE_DIGEST


def test_worked_example_instances_validate(interface: SkillInterface) -> None:
    assert error_details(interface.input_validator, ARGUMENTS) == []
    assert error_details(interface.output_validator, RESULT) == []
    assert error_details(interface.record_validators["resource-observation"], RECORD) == []
    bad_result = {**RESULT, "result": "maybe"}
    assert [d["keyword"] for d in error_details(interface.output_validator, bad_result)] == ["enum"]
    no_time = {k: v for k, v in RECORD.items() if k != "observed_at"}
    (missing,) = error_details(interface.record_validators["resource-observation"], no_time)
    assert (missing["instance_path"], missing["actual"]) == ("/observed_at", "missing")
    stale = {**RECORD, "observed_at": "yesterday"}
    (fmt,) = error_details(interface.record_validators["resource-observation"], stale)
    assert (fmt["keyword"], fmt["expected"]) == ("format", "date-time")


def test_interface_is_immutable(interface: SkillInterface) -> None:
    document = interface.document
    document["skill_version"] = "9.9"
    document["input_schema"]["resolution"]["schema"]["properties"].clear()
    assert interface.document["skill_version"] == "1.0"
    assert digest_of(interface.document) == interface.interface_digest
    with pytest.raises(dataclasses.FrozenInstanceError):
        interface.skill_version = "2.0"  # type: ignore[misc]
    with pytest.raises(TypeError):
        interface.record_validators["other"] = compile_validator(True)  # type: ignore[index]


def test_later_edits_to_the_callers_schemas_do_not_leak_in() -> None:
    kwargs = worked_example()
    built = build_interface(**kwargs)
    kwargs["input_schema"][2]["properties"]["condition"]["required"].remove("unit")
    kwargs["constraints"]["max_records"] = 5
    without_unit = copy.deepcopy(ARGUMENTS)
    del without_unit["condition"]["unit"]
    assert error_details(built.input_validator, without_unit) != []
    assert built.interface_digest == WORKED_EXAMPLE_DIGEST


@pytest.mark.parametrize("version", ["1.0\n", "01.0", "1", "1.0.0", "v1.0"])
def test_bad_skill_version_is_refused(version: str) -> None:
    assert "/skill_version" in build_error(skill_version=version)


def test_our_own_schema_versions_use_the_grammar() -> None:
    spec = (BASE + "evaluate-resource-condition-input", "1.0\n", INPUT_SCHEMA)
    assert "/input_schema/version" in build_error(input_schema=spec)


def test_schema_uri_must_be_absolute() -> None:
    spec = ("evaluate-resource-condition-input", "1.0", INPUT_SCHEMA)
    assert "/input_schema/schema_uri" in build_error(input_schema=spec)


def test_record_kind_equal_to_skill_id_is_refused() -> None:
    records = {SKILL_ID: (BASE + "resource-observation", "1.0", True)}
    message = build_error(record_schemas=records)
    assert f"/supporting_record_schemas/{SKILL_ID}: a record kind must not equal the skill id" in (
        message
    )


def test_remote_ref_fails_the_build_and_is_never_fetched(
    spy_port: tuple[int, socket.socket],
) -> None:
    port, server = spy_port
    schema = copy.deepcopy(INPUT_SCHEMA)
    schema["properties"]["resource_id"] = {"$ref": f"http://127.0.0.1:{port}/x.json"}
    message = build_error(input_schema=(BASE + "in", "1.0", schema))
    assert "/input_schema/resolution/schema/properties/resource_id/$ref" in message
    assert "not a local" in message
    assert_never_connected(server)


def test_integer_beyond_2_53_is_refused_with_its_pointer() -> None:
    assert "/constraints/max_records" in build_error(constraints={"max_records": 2**53})
    schema = copy.deepcopy(INPUT_SCHEMA)
    schema["properties"]["resource_id"]["maxLength"] = 2**60
    message = build_error(input_schema=(BASE + "in", "1.0", schema))
    assert "/input_schema/resolution/schema/properties/resource_id/maxLength" in message


def test_invalid_embedded_schema_is_refused() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "strng"}}}
    message = build_error(output_schema=(BASE + "out", "1.0", schema))
    assert "/output_schema/resolution/schema/properties/a/type" in message


@pytest.mark.parametrize(
    ("member", "value", "pointer"),
    [
        ("interaction", {"response_modes": [], "cancelable": False}, "/interaction/response_modes"),
        ("interaction", {"response_modes": ["sync", "sync"], "cancelable": False}, "/interaction"),
        ("interaction", {"response_modes": ["push"], "cancelable": False}, "/interaction"),
        ("interaction", {"response_modes": ["sync"]}, "/interaction/cancelable"),
        ("authority", {"default_mode": "execute"}, "/authority/approval_may_be_required"),
        ("authority", {"default_mode": "do", "approval_may_be_required": True}, "/authority"),
        ("constraints", [], "/constraints"),
    ],
)
def test_posture_members_follow_the_trusted_schema(member: str, value: Any, pointer: str) -> None:
    assert pointer in build_error(**{member: value})


# -- verifying (client side) -------------------------------------------------------------------


def test_verify_accepts_the_advertised_document(interface: SkillInterface) -> None:
    assert verify_document(interface.document, WORKED_EXAMPLE_DIGEST, SKILL_ID, "1.0") == []


def test_one_character_in_an_embedded_schema_breaks_its_digest(interface: SkillInterface) -> None:
    document = interface.document
    document["input_schema"]["resolution"]["schema"]["properties"]["condition"]["properties"][
        "operator"
    ]["enum"][1] = "gtf"
    problems = verify_document(document, WORKED_EXAMPLE_DIGEST, SKILL_ID, "1.0")
    assert any(p.startswith("/input_schema/digest: mismatch") for p in problems)
    assert any("interface digest mismatch" in p for p in problems)
    assert len(problems) == 2


def test_changed_skill_version_breaks_the_interface_digest(interface: SkillInterface) -> None:
    document = interface.document
    document["skill_version"] = "1.1"
    problems = verify_document(document, WORKED_EXAMPLE_DIGEST)
    assert problems == [
        f"(document): interface digest mismatch: expected '{WORKED_EXAMPLE_DIGEST}', "
        f"the document's is {digest_of(document)}"
    ]
    assert any(
        p.startswith("/skill_version: '1.1' is not the selected")
        for p in verify_document(document, skill_version="1.0")
    )


def test_identity_must_match_the_selection(interface: SkillInterface) -> None:
    problems = verify_document(interface.document, skill_id="other_skill")
    assert problems == [
        "/skill_id: 'evaluate_resource_condition' is not the selected 'other_skill'"
    ]


def test_trailing_newline_version_passes_json_schema_but_not_verification(
    interface: SkillInterface,
) -> None:
    document = interface.document
    document["skill_version"] = "1.0\n"
    assert error_details(compile_validator(trusted_schema()), document) == []  # the hazard
    assert any(p.startswith("/skill_version") for p in verify_document(document))


def test_digest_that_matches_an_invalid_schema_is_still_refused(interface: SkillInterface) -> None:
    document = interface.document
    bad = {"$ref": "https://example.com/elsewhere.json"}
    document["output_schema"]["resolution"]["schema"] = bad
    document["output_schema"]["digest"] = digest_of(bad)
    (problem,) = verify_document(document)
    assert problem.startswith("/output_schema/resolution/schema/$ref:")


@pytest.mark.parametrize(
    ("path", "value", "prefix"),
    [
        (("input_schema", "resolution", "type"), "uri", "/input_schema/resolution/type"),
        (("output_schema", "dialect"), "draft-07", "/output_schema/dialect"),
        (("output_schema", "digest"), "sha256:" + "A" * 64, "/output_schema/digest"),
        (("interface_version",), "1.1", "/interface_version"),
        (("interaction", "cancelable"), "no", "/interaction/cancelable"),
    ],
)
def test_shape_problems_are_reported(
    interface: SkillInterface, path: tuple[str, ...], value: Any, prefix: str
) -> None:
    document = interface.document
    node = document
    for name in path[:-1]:
        node = node[name]
    node[path[-1]] = value
    problems = verify_document(document)
    assert problems
    assert all(p.startswith(prefix) for p in problems)


def test_missing_member_is_reported(interface: SkillInterface) -> None:
    document = interface.document
    del document["constraints"]
    assert verify_document(document) == [
        "/constraints: fails the Skill Interface Schema (required: expected object, got missing)"
    ]


def test_unknown_top_level_members_are_allowed_but_digested(interface: SkillInterface) -> None:
    document = {**interface.document, "x-note": "extra"}
    assert verify_document(document) == []
    assert verify_document(document, WORKED_EXAMPLE_DIGEST) != []


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([], "(document): not a JSON object"),
        ({"constraints": {"n": 2**53}}, "/constraints/n: integer of magnitude >= 2^53"),
    ],
)
def test_unusable_documents(document: Any, problem: str) -> None:
    assert verify_document(document)[0].startswith(problem)
