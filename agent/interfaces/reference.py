"""Schema References (project choice 4): identity, fingerprint and inline content of one schema.

The digest covers only ``resolution.schema``; identity is the whole reference, so two
references name the same schema only if ``schema_uri``, ``version``, ``dialect`` and ``digest``
all match (``reference_identity``).
"""

from __future__ import annotations

import json
from typing import Any

from agent.interfaces.digest import NotRepresentableError, canonical_json, digest_of
from agent.interfaces.spec import DIALECT, INLINE_RESOLUTION, is_digest

__all__ = ["reference_identity", "schema_reference", "verify_reference"]


def schema_reference(schema_uri: str, version: str, schema: Any) -> dict[str, Any]:
    """A reference carrying a canonical copy of ``schema`` inline, with its digest.

    Raises ``NotRepresentableError`` (pointer relative to ``schema``) if JCS cannot encode it.
    """
    copy = json.loads(canonical_json(schema))  # later edits to the caller's object cannot leak in
    return {
        "schema_uri": schema_uri,
        "version": version,
        "dialect": DIALECT,
        "digest": digest_of(copy),
        "resolution": {"type": INLINE_RESOLUTION, "schema": copy},
    }


def verify_reference(ref: Any) -> list[str]:
    """Problems with a received reference (empty: its inline schema is the one it names).

    Checks shape, dialect, inline resolution and that ``digest`` is the digest of
    ``resolution.schema``. Whether the schema is a usable 2020-12 schema is
    ``validation.check_schema``'s job.
    """
    if not isinstance(ref, dict):
        return ["not an object"]
    problems = [
        f"/{member}: must be a non-empty string"
        for member in ("schema_uri", "version")
        if not isinstance(ref.get(member), str) or not ref[member]
    ]
    if ref.get("dialect") != DIALECT:
        problems.append(f"/dialect: must be {DIALECT}")
    resolution = ref.get("resolution")
    if not isinstance(resolution, dict) or "schema" not in resolution:
        return [*problems, "/resolution: must be an object holding the schema inline"]
    if resolution.get("type") != INLINE_RESOLUTION:
        problems.append(f"/resolution/type: must be {INLINE_RESOLUTION!r}")
    declared = ref.get("digest")
    if not is_digest(declared):
        return [*problems, "/digest: must be sha256: followed by 64 lowercase hex digits"]
    try:
        actual = digest_of(resolution["schema"])
    except NotRepresentableError as exc:
        return [*problems, f"/resolution/schema{exc.pointer}: {exc.reason}"]
    if actual != declared:
        problems.append(f"/digest: mismatch: declared {declared}, inline schema has {actual}")
    return problems


def reference_identity(ref: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """What two references must share to name the same schema (direct composition)."""
    return (ref.get("schema_uri"), ref.get("version"), ref.get("dialect"), ref.get("digest"))
