"""Schema References: shape, digest over the inline schema only, whole-reference identity."""

from __future__ import annotations

import copy

import pytest
from appendix_b import BASE, INPUT_SCHEMA

from agent.interfaces import (
    NotRepresentableError,
    digest_of,
    reference_identity,
    schema_reference,
    verify_reference,
)

URI = BASE + "evaluate-resource-condition-input"


def test_reference_shape_and_digest() -> None:
    ref = schema_reference(URI, "1.0", INPUT_SCHEMA)
    assert ref == {
        "schema_uri": URI,
        "version": "1.0",
        "dialect": "https://json-schema.org/draft/2020-12/schema",
        "digest": "sha256:3859a0f7418acee2a55bc8fb0c0137109d77213ec44c8134b3c23dfef2c48c62",
        "resolution": {"type": "inline", "schema": INPUT_SCHEMA},
    }
    assert verify_reference(ref) == []


def test_digest_covers_only_the_schema() -> None:
    ref = schema_reference(URI, "1.0", INPUT_SCHEMA)
    other = schema_reference(URI + "-v2", "2.0", INPUT_SCHEMA)
    assert ref["digest"] == other["digest"]
    assert reference_identity(ref) != reference_identity(other)
    assert reference_identity(ref) == reference_identity(copy.deepcopy(ref))


def test_reference_holds_its_own_copy() -> None:
    schema = copy.deepcopy(INPUT_SCHEMA)
    ref = schema_reference(URI, "1.0", schema)
    schema["required"].append("extra")
    assert ref["resolution"]["schema"] == INPUT_SCHEMA
    assert verify_reference(ref) == []


def test_unrepresentable_schema_is_refused() -> None:
    with pytest.raises(NotRepresentableError) as caught:
        schema_reference(URI, "1.0", {"maximum": 2**53})
    assert caught.value.pointer == "/maximum"


def test_verify_reference_reports_each_problem() -> None:
    ref = schema_reference(URI, "1.0", INPUT_SCHEMA)
    tampered = copy.deepcopy(ref)
    tampered["resolution"]["schema"]["required"] = ["resource_id"]
    (problem,) = verify_reference(tampered)
    assert problem == (
        f"/digest: mismatch: declared {ref['digest']}, inline schema has "
        f"{digest_of(tampered['resolution']['schema'])}"
    )
    assert verify_reference({**ref, "dialect": "http://json-schema.org/draft-07/schema#"}) == [
        "/dialect: must be https://json-schema.org/draft/2020-12/schema"
    ]
    fetched = {**ref, "resolution": {"type": "uri", "schema": INPUT_SCHEMA}}
    assert verify_reference(fetched) == ["/resolution/type: must be 'inline'"]
    assert verify_reference({**ref, "digest": ref["digest"].upper()}) == [
        "/digest: must be sha256: followed by 64 lowercase hex digits"
    ]
    assert verify_reference({**ref, "digest": ref["digest"] + "\n"}) == [
        "/digest: must be sha256: followed by 64 lowercase hex digits"
    ]
    assert verify_reference({**ref, "version": ""}) == ["/version: must be a non-empty string"]
    assert verify_reference({**ref, "resolution": {"type": "inline"}}) == [
        "/resolution: must be an object holding the schema inline"
    ]
    assert verify_reference("not a reference") == ["not an object"]


def test_foreign_reference_versions_need_not_follow_our_grammar() -> None:
    """Project choice 5: a client accepts any non-empty version on a foreign reference."""
    assert verify_reference(schema_reference(URI, "2024-05-01", True)) == []
