"""Skill Interface Documents: built once per skill version by the agent, verified by clients.

Agent side (draft §4.4): ``build_interface`` assembles the nine members from the skill's own
schemas, checks the result exactly as a client would (``verify_document``), then freezes it with
its digest and compiled validators. This happens at start-up; ``describe_skill`` only returns
``SkillInterface.document`` and never builds or alters anything per request.

Client side (draft §10, steps 4-6): ``verify_document`` checks a received document against the
trusted Skill Interface Schema, the selected identity, every embedded schema digest and the
advertised interface digest. Any problem it reports makes the interface ``interface_invalid``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any, Final, NoReturn

from agent.base.errors import SchemaInterfaceError
from agent.interfaces.digest import NotRepresentableError, canonical_json, digest_of
from agent.interfaces.errors import ErrorCode
from agent.interfaces.pointer import json_pointer
from agent.interfaces.reference import schema_reference, verify_reference
from agent.interfaces.spec import INTERFACE_VERSION, is_version, trusted_schema
from agent.interfaces.validation import (
    SchemaCheckError,
    SchemaValidator,
    check_schema,
    compile_validator,
    error_details,
)

__all__ = [
    "InterfaceBuildError",
    "SchemaSpec",
    "SkillInterface",
    "build_interface",
    "verify_document",
]

SchemaSpec = tuple[str, str, Any]
"""``(schema_uri, version, schema)`` for one of the skill's own schemas."""

_ABSOLUTE_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


class InterfaceBuildError(SchemaInterfaceError):
    """The skill's interface cannot be advertised; the message names the skill and the member."""

    code: Final = ErrorCode.INTERFACE_INVALID

    def __init__(self, skill_id: str, problem: str) -> None:
        self.skill_id = skill_id
        self.problem = problem
        super().__init__(f"skill {skill_id!r}: invalid interface: {problem}")


@dataclass(frozen=True, slots=True)
class SkillInterface:
    """One validated, immutable Skill Interface Document with what serving it needs.

    The document is kept only as its RFC 8785 bytes, the exact input of ``interface_digest``;
    ``document`` hands out a fresh copy, so no caller can alter what is advertised.
    """

    skill_id: str
    skill_version: str
    interface_digest: str
    canonical_document: bytes = field(repr=False)
    input_validator: SchemaValidator = field(repr=False, compare=False)
    output_validator: SchemaValidator = field(repr=False, compare=False)
    record_validators: Mapping[str, SchemaValidator] = field(repr=False, compare=False)
    response_modes: tuple[str, ...]
    cancelable: bool

    @property
    def document(self) -> dict[str, Any]:
        """A fresh copy of the document (the ``skill_interface`` of a describe_skill result)."""
        document: dict[str, Any] = json.loads(self.canonical_document)
        return document

    @property
    def record_kinds(self) -> tuple[str, ...]:
        """The declared supporting-record kinds (Artifact names), sorted."""
        return tuple(sorted(self.record_validators))


def build_interface(
    skill_id: str,
    skill_version: str,
    input_schema: SchemaSpec,
    output_schema: SchemaSpec,
    record_schemas: Mapping[str, SchemaSpec],
    interaction: Mapping[str, Any],
    authority: Mapping[str, Any],
    constraints: Mapping[str, Any],
) -> SkillInterface:
    """Assemble, validate and freeze a skill's interface; raise ``InterfaceBuildError``."""

    def fail(problem: str) -> NoReturn:
        raise InterfaceBuildError(skill_id, problem)

    def own_reference(pointer: str, spec: SchemaSpec) -> dict[str, Any]:
        schema_uri, version, schema = spec
        if not is_version(version):  # our own schemas use N.N (project choice 5)
            fail(f"{pointer}/version: {version!r} is not N.N")
        if not isinstance(schema_uri, str) or not _ABSOLUTE_URI.fullmatch(schema_uri):
            fail(f"{pointer}/schema_uri: {schema_uri!r} is not an absolute URI")
        try:
            return schema_reference(schema_uri, version, schema)
        except NotRepresentableError as exc:
            fail(f"{pointer}/resolution/schema{exc.pointer}: {exc.reason}")

    def copy(name: str, value: Any) -> Any:
        try:
            return json.loads(canonical_json(value))
        except NotRepresentableError as exc:
            fail(f"/{name}{exc.pointer}: {exc.reason}")

    if not is_version(skill_version):
        fail(f"/skill_version: {skill_version!r} is not N.N")
    document = {
        "interface_version": INTERFACE_VERSION,
        "skill_id": skill_id,
        "skill_version": skill_version,
        "input_schema": own_reference("/input_schema", input_schema),
        "output_schema": own_reference("/output_schema", output_schema),
        "supporting_record_schemas": {
            kind: own_reference(json_pointer(["supporting_record_schemas", kind]), spec)
            for kind, spec in sorted(record_schemas.items())
        },
        "interaction": copy("interaction", interaction),
        "authority": copy("authority", authority),
        "constraints": copy("constraints", constraints),
    }
    problems = verify_document(document, skill_id=skill_id, skill_version=skill_version)
    if problems:
        fail("; ".join(problems))
    canonical = canonical_json(document)
    frozen = json.loads(canonical)  # private to the validators below
    records = frozen["supporting_record_schemas"]
    return SkillInterface(
        skill_id=skill_id,
        skill_version=skill_version,
        interface_digest=digest_of(document),
        canonical_document=canonical,
        input_validator=_checked(frozen["input_schema"]),
        output_validator=_checked(frozen["output_schema"]),
        record_validators=MappingProxyType({kind: _checked(records[kind]) for kind in records}),
        response_modes=tuple(frozen["interaction"]["response_modes"]),
        cancelable=frozen["interaction"]["cancelable"],
    )


def _checked(reference: dict[str, Any]) -> SchemaValidator:
    """The validator of a reference's schema, which verify_document has just checked."""
    return compile_validator(reference["resolution"]["schema"], checked=True)


@cache
def _trusted_validator() -> SchemaValidator:
    return compile_validator(trusted_schema())


def verify_document(
    document: Any,
    expected_digest: str | None = None,
    skill_id: str | None = None,
    skill_version: str | None = None,
) -> list[str]:
    """Problems with a Skill Interface Document; an empty list means it may be used.

    ``expected_digest`` is the advertised ``interface_digest``; ``skill_id`` and
    ``skill_version`` are the identity the caller selected. Each problem starts with the JSON
    Pointer of the member at fault.
    """
    if not isinstance(document, dict):
        return ["(document): not a JSON object"]
    try:
        computed = digest_of(document)
    except NotRepresentableError as exc:
        return [f"{exc.pointer or '(document)'}: {exc.reason}"]
    problems: list[str] = []
    if expected_digest is not None and computed != expected_digest:
        problems.append(
            f"(document): interface digest mismatch: expected {expected_digest!r}, "
            f"the document's is {computed}"
        )
    # The trusted schema's const also pins interface_version to INTERFACE_VERSION.
    shape = [_shape_problem(d) for d in error_details(_trusted_validator(), document)]
    problems += shape
    version = document.get("skill_version")
    if isinstance(version, str) and not is_version(version) and not shape:
        problems.append(f"/skill_version: {version!r} is not N.N (trailing characters)")
    for member, selected in (("skill_id", skill_id), ("skill_version", skill_version)):
        if selected is not None and document.get(member) != selected:
            problems.append(f"/{member}: {document.get(member)!r} is not the selected {selected!r}")
    if shape:
        return problems  # the members below cannot be trusted to exist
    for pointer, ref in _references(document):
        found = [_at(pointer, p) for p in verify_reference(ref)]
        if not found:
            try:
                check_schema(ref["resolution"]["schema"])
            except SchemaCheckError as exc:
                found.append(f"{pointer}/resolution/schema{exc.pointer}: {exc.reason}")
        problems += found
    if document["skill_id"] in document["supporting_record_schemas"]:
        pointer = json_pointer(["supporting_record_schemas", document["skill_id"]])
        problems.append(f"{pointer}: a record kind must not equal the skill id")
    return problems


def _references(document: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    yield "/input_schema", document["input_schema"]
    yield "/output_schema", document["output_schema"]
    for kind, ref in sorted(document["supporting_record_schemas"].items()):
        yield json_pointer(["supporting_record_schemas", kind]), ref


def _at(pointer: str, problem: str) -> str:
    return pointer + problem if problem.startswith("/") else f"{pointer}: {problem}"


def _shape_problem(detail: dict[str, str]) -> str:
    expected = f"expected {detail['expected']}, " if "expected" in detail else ""
    return (
        f"{detail['instance_path'] or '(document)'}: fails the Skill Interface Schema "
        f"({detail['keyword']}: {expected}got {detail['actual']})"
    )
