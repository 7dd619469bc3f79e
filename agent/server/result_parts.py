"""Results held to the output schema, and the Data Parts of fixed results, built once each.

A handler's dict is checked and converted on every call. A ``FixedResult`` is the same data for
the same key, so its check and its protobuf conversion (for a skill interface document, most
of a ``describe_skill`` call's own CPU) happen the first time and the Part is reused: the SDK
copies it into each artifact, so the held one is never altered. Keyed by the skill, its
interface digest and the result's key; bounded, the oldest going first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

from a2a.types import Part

from agent.edge.proto_json import data_part
from agent.interfaces import ErrorCode, SkillError, error_details
from agent.registry.fixed_result import FixedResult
from agent.registry.loader import Capability

JSON = "application/json"
DEFAULT_SIZE = 1024
"""More than the fixed results of any registry (describe_skill has one per skill version)."""


def check_output(capability: Capability, output: dict[str, Any]) -> None:
    """Refuse a result off the skill's output schema (OUTPUT_INVALID, with the details)."""
    interface = capability.interface
    if interface is None:
        return
    details = error_details(interface.output_validator, output)
    if details:
        raise SkillError(ErrorCode.OUTPUT_INVALID, "result does not match output_schema", details)


def result_part(output: dict[str, Any]) -> Part:
    """The result's Data Part, as every result is sent."""
    return data_part(output, JSON)


class FixedParts:
    """The Data Part of each fixed result, checked and built on first use."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._parts: OrderedDict[tuple[str, str | None, Hashable], Part] = OrderedDict()

    def part(self, capability: Capability, result: FixedResult) -> Part:
        """The held Part for ``result``, or a new one once its data passes the output check."""
        interface = capability.interface
        key = (capability.id, interface.interface_digest if interface else None, result.key)
        part = self._parts.get(key)
        if part is None:
            output = result.build()
            check_output(capability, output)  # a refusal is not held: it is raised every time
            part = self._parts[key] = result_part(output)
            while len(self._parts) > self._size:
                self._parts.popitem(last=False)
        return part

    def __len__(self) -> int:
        return len(self._parts)
