"""A caller's identity: which ``sub`` and ``tenant`` claims are valid, and the owner key.

The policy (docs/security.md#identity-claims) is checked once, where a token is verified, so
every later use (the task owner, bindings, the audit, a tool's tenant filter, the
console) holds only identities it can store and compare. The owner key is the one string
tasks, bindings and runner rows are stored and looked up under; it is injective over *all*
pairs of strings, not only the valid ones, so no choice of claims, valid or not, can produce
another identity's key.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TypeGuard

OWNER_COLUMN_CHARS = 255
"""The owner columns (the SDK's ``tasks.owner``, ``task_binding.owner``, ``task_runner.owner``)."""
MAX_TENANT_CHARS = 64
"""The audit's tenant column."""
_TENANT = re.compile(rf"[A-Za-z0-9._-]{{1,{MAX_TENANT_CHARS}}}")
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
"""Control, format (bidi overrides, zero-width characters), surrogate, private-use and
unassigned characters, and every separator; a plain space is allowed inside a subject."""


def owner_key(tenant: str | None, subject: str) -> str:
    """The stored owner of an authenticated caller's tasks: ``<len(tenant)>:<tenant>:<subject>``.

    The length in front says where the tenant ends, whatever either part holds (``:``
    included), so two different pairs never give one key; an anonymous caller (no subject)
    owns tasks under ``""``, which no pair gives.
    """
    tenant = tenant or ""
    return f"{len(tenant)}:{tenant}:{subject}"


def parse_owner_key(key: str) -> tuple[str, str] | None:
    """(tenant, subject) of a key :func:`owner_key` made; None for any other string."""
    length, separator, rest = key.partition(":")
    if not separator or not length.isascii() or not length.isdigit() or len(length) > 9:
        return None  # more digits than any stored string's length (and than int() reads)
    if length != str(int(length)):
        return None
    size = int(length)
    if len(rest) <= size or rest[size] != ":":
        return None
    return rest[:size], rest[size + 1 :]


MAX_SUBJECT_CHARS = OWNER_COLUMN_CHARS - len(owner_key("t" * MAX_TENANT_CHARS, ""))
"""So that the longest identity's owner key fits its column (187)."""

SUBJECT_REFUSED = (
    f"token subject must be 1 to {MAX_SUBJECT_CHARS} printable characters in NFC, "
    "without surrounding whitespace"
)
TENANT_REFUSED = f"token tenant must be 1 to {MAX_TENANT_CHARS} characters of A-Z a-z 0-9 . _ -"


def valid_tenant(tenant: object) -> TypeGuard[str]:
    """1 to 64 of ``A-Z a-z 0-9 . _ -``: a slug, compared exactly (case included)."""
    return isinstance(tenant, str) and _TENANT.fullmatch(tenant) is not None


def valid_subject(subject: object) -> TypeGuard[str]:
    """1 to 187 characters, already in NFC, none of them a control, format, surrogate,
    private-use, unassigned or separator character except an inner plain space.

    Not normalized here: two subjects the issuer tells apart (NFC and NFD forms of one name)
    must not become one identity, so a subject not in NFC is refused instead.
    """
    if not isinstance(subject, str) or not 1 <= len(subject) <= MAX_SUBJECT_CHARS:
        return False
    if subject != subject.strip() or not unicodedata.is_normalized("NFC", subject):
        return False
    return all(
        char == " " or unicodedata.category(char) not in _REFUSED_CATEGORIES for char in subject
    )
