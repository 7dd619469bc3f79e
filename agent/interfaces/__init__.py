"""Schema-governed skill interfaces (interface version 1.0), independent of any domain.

Each skill version gets one immutable Skill Interface Document: Schema References that carry
the skill's JSON Schemas inline with SHA-256 digests over their RFC 8785 form, plus interaction,
authority and constraints, itself fingerprinted by ``interface_digest``. The agent builds and
validates it at start-up (``build_interface``); a client checks what it received
(``verify_document``) before trusting it. Where the draft is silent, the
project's choices decide (docs/schema-interfaces.md, "Project choices").
"""

from agent.interfaces.digest import NotRepresentableError, canonical_json, digest_of
from agent.interfaces.document import (
    InterfaceBuildError,
    SchemaSpec,
    SkillInterface,
    build_interface,
    verify_document,
)
from agent.interfaces.errors import (
    TASK_STATE_FAILED,
    TASK_STATE_REJECTED,
    ErrorCode,
    ErrorObject,
    Phase,
    SkillError,
    error_object,
)
from agent.interfaces.pointer import json_pointer
from agent.interfaces.reference import reference_identity, schema_reference, verify_reference
from agent.interfaces.spec import (
    DESCRIBE_SKILL_ID,
    DIALECT,
    DIGEST_PATTERN,
    EXTENSION_URI,
    INLINE_RESOLUTION,
    INTERFACE_VERSION,
    SCHEMAS_DIR,
    TRUSTED_SCHEMA_PATH,
    VERSION_PATTERN,
    is_digest,
    is_version,
    trusted_schema,
)
from agent.interfaces.validation import (
    MAX_DETAILS,
    ReferenceRefusedError,
    SchemaCheckError,
    SchemaValidator,
    check_schema,
    compile_validator,
    error_details,
    json_type_name,
)

__all__ = [
    "DESCRIBE_SKILL_ID",
    "DIALECT",
    "DIGEST_PATTERN",
    "EXTENSION_URI",
    "INLINE_RESOLUTION",
    "INTERFACE_VERSION",
    "MAX_DETAILS",
    "SCHEMAS_DIR",
    "TASK_STATE_FAILED",
    "TASK_STATE_REJECTED",
    "TRUSTED_SCHEMA_PATH",
    "VERSION_PATTERN",
    "ErrorCode",
    "ErrorObject",
    "InterfaceBuildError",
    "NotRepresentableError",
    "Phase",
    "ReferenceRefusedError",
    "SchemaCheckError",
    "SchemaSpec",
    "SchemaValidator",
    "SkillError",
    "SkillInterface",
    "build_interface",
    "canonical_json",
    "check_schema",
    "compile_validator",
    "digest_of",
    "error_details",
    "error_object",
    "is_digest",
    "is_version",
    "json_pointer",
    "json_type_name",
    "reference_identity",
    "schema_reference",
    "trusted_schema",
    "verify_document",
    "verify_reference",
]
