"""Bindings in a dict: the test seam, as the SDK's InMemoryTaskStore is for tasks.

Same contract as the table (``agent/storage/bindings.py``): owner-scoped reads, replace on put,
and values that round-trip through JSON, so a test cannot pass on an argument the database
could not have stored or would have handed back changed. One process only: nothing survives it.
"""

from __future__ import annotations

import json
from dataclasses import replace

from agent.storage.bindings import Binding, BindingStore


class InMemoryBindingStore(BindingStore):
    """Bindings of one process, keyed by task id."""

    def __init__(self) -> None:
        self._bindings: dict[str, Binding] = {}

    async def get(self, task_id: str, owner: str) -> Binding | None:
        """The binding of ``task_id`` if ``owner`` made it."""
        binding = self._bindings.get(task_id)
        if binding is None or binding.owner != owner:
            return None
        return _copy(binding)

    async def put(self, binding: Binding) -> None:
        """Insert or replace (the table's upsert on ``task_id``)."""
        self._bindings[binding.task_id] = _copy(binding)


def _copy(binding: Binding) -> Binding:
    """What the JSON columns would give back: lists for tuples, no shared mutable state."""
    return replace(
        binding,
        candidates=tuple(json.loads(json.dumps(list(binding.candidates)))),
        arguments=json.loads(json.dumps(binding.arguments)),
    )
