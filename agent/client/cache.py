"""Validated interface documents, reused only while the card still advertises them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.interfaces.validation import SchemaValidator


@dataclass(frozen=True)
class VerifiedInterface:
    """A Skill Interface Document that passed steps 3-6, with its validators compiled."""

    card_url: str
    interface_url: str
    skill_id: str
    skill_version: str
    interface_digest: str
    document: dict[str, Any]
    input_validator: SchemaValidator
    output_validator: SchemaValidator
    record_validators: dict[str, SchemaValidator]

    def schema_uri(self, role: str, kind: str | None = None) -> str:
        """The ``schema_uri`` of the input, output or a record kind's schema."""
        if role == "record":
            return str(self.document["supporting_record_schemas"][kind]["schema_uri"])
        return str(self.document[f"{role}_schema"]["schema_uri"])

    def schema(self, role: str, kind: str | None = None) -> dict[str, Any]:
        """The inline JSON Schema of the input, output or a record kind (steps 5-6 checked
        that each reference carries one)."""
        if role == "record":
            reference = self.document["supporting_record_schemas"][kind]
        else:
            reference = self.document[f"{role}_schema"]
        schema = reference["resolution"]["schema"]
        return schema if isinstance(schema, dict) else {}


class InterfaceCache:
    """Keyed by target identity (card URL + interface URL, project choice 12) and skill id.

    An entry is returned only when the version and digest the current card advertises are
    the ones it was validated for; anything else means a fresh describe_skill.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str, str], VerifiedInterface] = {}

    def get(
        self, card_url: str, interface_url: str, skill_id: str, version: str, digest: str
    ) -> VerifiedInterface | None:
        """The cached interface if it is still the advertised one."""
        entry = self._entries.get((card_url, interface_url, skill_id))
        if entry is None or (entry.skill_version, entry.interface_digest) != (version, digest):
            return None
        return entry

    def put(self, interface: VerifiedInterface) -> None:
        """Remember a verified interface (replacing any older one for the same key)."""
        self._entries[(interface.card_url, interface.interface_url, interface.skill_id)] = interface

    def __len__(self) -> int:
        return len(self._entries)
