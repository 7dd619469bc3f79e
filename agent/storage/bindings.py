"""Task bindings: the skill (or the open question) a task is bound to.

A follow-up message names only its task; the binding says where it goes. ``BindingStore`` is
the interface the executor and router rely on; ``DatabaseBindingStore`` keeps bindings in a
table on the shared database, so they survive a restart and hold on every replica;
``InMemoryBindingStore`` keeps them in a dict, the test seam (as the SDK's ``InMemoryTaskStore``
is for tasks), under the same contract.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import Enum
from typing import Any

from sqlalchemy import Insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.engine import dialect_module
from agent.storage.schema import task_binding


class Phase(Enum):
    """Where a task stands with the router."""

    CLARIFY = "clarify"  # waiting for the caller to pick one of ``candidates``
    ARGUMENTS = "arguments"  # skill chosen; waiting for missing arguments
    BOUND = "bound"  # skill chosen and run


@dataclass(frozen=True)
class Binding:
    """One task's routing state."""

    task_id: str
    owner: str
    phase: Phase
    skill_id: str | None = None
    candidates: tuple[str, ...] = ()
    arguments: dict[str, Any] = field(default_factory=dict)
    text: str = ""


class BindingStore(ABC):
    """Where bindings live; a binding is visible only to the owner that made it.

    The contract every form keeps (tests/core/storage/test_bindings_contract.py): ``get`` of a
    task no binding names, or one another owner made, is None; ``put`` replaces the task's
    binding whoever made it before; what comes back is a copy, its ``arguments`` as JSON holds
    them (tuples come back as lists).
    """

    @abstractmethod
    async def get(self, task_id: str, owner: str) -> Binding | None:
        """The binding of ``task_id`` if ``owner`` made it."""

    @abstractmethod
    async def put(self, binding: Binding) -> None:
        """Insert or replace the binding of ``binding.task_id``."""


class DatabaseBindingStore(BindingStore):
    """Bindings in the ``task_binding`` table."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._insert = dialect_module(engine.dialect.name).insert

    async def get(self, task_id: str, owner: str) -> Binding | None:
        """The binding of ``task_id`` if ``owner`` made it."""
        async with self._engine.connect() as connection:
            row = (
                await connection.execute(
                    select(task_binding).where(
                        task_binding.c.task_id == task_id, task_binding.c.owner == owner
                    )
                )
            ).first()
        if row is None:
            return None
        return Binding(
            task_id=row.task_id,
            owner=row.owner,
            phase=Phase(row.phase),
            skill_id=row.skill_id,
            candidates=tuple(row.candidates),
            arguments=dict(row.arguments),
            text=row.text,
        )

    async def put(self, binding: Binding) -> None:
        """Insert or replace, in one statement (one writer per task at a time: its runner)."""
        values = binding_row(binding, datetime.now(UTC))
        async with self._engine.begin() as connection:
            await connection.execute(self._upsert(values))

    def _upsert(self, values: dict[str, Any]) -> Insert:
        insert = self._insert(task_binding).values(values)
        changed = {k: insert.excluded[k] for k in values if k != "task_id"}
        upsert: Insert = insert.on_conflict_do_update(index_elements=["task_id"], set_=changed)
        return upsert


class InMemoryBindingStore(BindingStore):
    """Bindings in a dict keyed by task id: one process's, nothing survives it.

    Same contract as the table: owner-scoped reads, replace on put, and values that round-trip
    through JSON, so a test cannot pass on an argument the database could not have stored or
    would have handed back changed.
    """

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


def binding_row(binding: Binding, updated_at: datetime) -> dict[str, Any]:
    """``binding`` as a ``task_binding`` row: the one shape both the store and the settlement
    batch write."""
    return {
        "task_id": binding.task_id,
        "owner": binding.owner,
        "phase": binding.phase.value,
        "skill_id": binding.skill_id,
        "candidates": list(binding.candidates),
        "arguments": binding.arguments,
        "text": binding.text,
        "updated_at": updated_at,
    }
