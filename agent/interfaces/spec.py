"""The identifiers this package takes from the draft, each defined once.

The trusted Skill Interface Schema (``schemas/skill-interface-v1.json``) is the single source of
the interface version, the dialect URI, the resolution type and the version and digest grammars:
the constants below are read from it, so replacing that file with the draft's published schema
changes them in one commit. A missing member fails the import loudly rather than drifting.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any, Final

EXTENSION_URI: Final = (
    "https://agentic-network-management.github.io/agent-schema-interfaces"
    "/extensions/schema-interface/v1"
)
"""The schema-interface extension URI, advertised in ``AgentCard.capabilities.extensions``."""

DESCRIBE_SKILL_ID: Final = "describe_skill"
"""The skill that returns Skill Interface Documents (it has a document of its own too)."""

SCHEMAS_DIR: Final = (Path(__file__).resolve().parents[1] / "_schemas").resolve()
"""The trusted schemas, read from the package: ``agent/_schemas`` links to the top-level
``schemas/`` in a checkout (editable or not) and holds its files in a wheel, so every install
reads the same path."""

TRUSTED_SCHEMA_PATH: Final = SCHEMAS_DIR / "skill-interface-v1.json"


@cache
def _trusted_text() -> str:
    return TRUSTED_SCHEMA_PATH.read_text(encoding="utf-8")


def trusted_schema() -> dict[str, Any]:
    """A fresh copy of the trusted Skill Interface Schema (callers may not alter the original)."""
    schema = json.loads(_trusted_text())
    if not isinstance(schema, dict):
        raise RuntimeError(f"{TRUSTED_SCHEMA_PATH}: not a JSON object")
    return schema


def _member(*path: str) -> Any:
    node: Any = trusted_schema()
    for name in path:
        if not isinstance(node, dict) or name not in node:
            raise RuntimeError(f"{TRUSTED_SCHEMA_PATH}: no member /{'/'.join(path)}")
        node = node[name]
    return node


INTERFACE_VERSION: Final[str] = _member("properties", "interface_version", "const")
DIALECT: Final[str] = _member("$defs", "schema_reference", "properties", "dialect", "const")
INLINE_RESOLUTION: Final[str] = _member(
    "$defs", "schema_reference", "properties", "resolution", "properties", "type", "const"
)
VERSION_PATTERN: Final[str] = _member("$defs", "version", "pattern")
DIGEST_PATTERN: Final[str] = _member("$defs", "digest", "pattern")

_VERSION_RE: Final = re.compile(VERSION_PATTERN)
_DIGEST_RE: Final = re.compile(DIGEST_PATTERN)


def is_version(value: object) -> bool:
    """``N.N`` check with a full match: ``re.search``/JSON Schema ``$`` accept ``"1.0\\n"``."""
    return isinstance(value, str) and _VERSION_RE.fullmatch(value) is not None


def is_digest(value: object) -> bool:
    """``sha256:`` + 64 lowercase hex, full match (no trailing newline)."""
    return isinstance(value, str) and _DIGEST_RE.fullmatch(value) is not None
