"""BindingStore's contract, held by the in-memory form and by the table on SQLite and PostgreSQL.

What the router and the executor rely on: a follow-up finds its task's binding only as the
owner that made it, a missing one reads as None, a put replaces, and what comes back is what
JSON columns hold.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy.exc import StatementError
from sqlalchemy.ext.asyncio import AsyncEngine

from agent.storage.bindings import (
    Binding,
    BindingStore,
    DatabaseBindingStore,
    InMemoryBindingStore,
    Phase,
)

ALICE = "acme:alice"
MALLORY = "globex:mallory"


@pytest.fixture
def store(form: str, engine_for: Callable[[], AsyncEngine]) -> BindingStore:
    if form == "memory":
        return InMemoryBindingStore()
    return DatabaseBindingStore(engine_for())


def clarify(task_id: str = "t-1", owner: str = ALICE) -> Binding:
    return Binding(
        task_id,
        owner,
        Phase.CLARIFY,
        candidates=("lookup_inventory", "check_link_capacity"),
        arguments={"link_id": "acme-lnk-00001", "window": {"hours": 24}},
        text="how busy is acme-lnk-00001?",
    )


async def test_a_task_without_a_binding_reads_as_none(store: BindingStore) -> None:
    assert await store.get("t-1", ALICE) is None


async def test_the_owner_reads_back_what_it_put(store: BindingStore) -> None:
    await store.put(clarify())
    assert await store.get("t-1", ALICE) == clarify()


async def test_another_owner_reads_none_as_if_there_were_no_binding(store: BindingStore) -> None:
    await store.put(clarify())
    assert await store.get("t-1", MALLORY) is None
    assert await store.get("t-1", "acme:") is None  # same tenant, anonymous


async def test_a_put_replaces_the_whole_binding(store: BindingStore) -> None:
    await store.put(clarify())
    bound = Binding("t-1", ALICE, Phase.BOUND, skill_id="check_link_capacity")
    await store.put(bound)
    found = await store.get("t-1", ALICE)
    assert found == bound
    assert found is not None and (found.candidates, found.arguments, found.text) == ((), {}, "")


async def test_a_put_by_another_owner_takes_the_task_over(store: BindingStore) -> None:
    """The upsert is keyed on the task alone (each task has one runner at a time)."""
    await store.put(clarify())
    await store.put(clarify(owner=MALLORY))
    assert await store.get("t-1", ALICE) is None
    assert await store.get("t-1", MALLORY) == clarify(owner=MALLORY)


async def test_bindings_of_different_tasks_stand_apart(store: BindingStore) -> None:
    await store.put(clarify("t-1"))
    await store.put(Binding("t-2", ALICE, Phase.ARGUMENTS, skill_id="lookup_inventory"))
    first, second = await store.get("t-1", ALICE), await store.get("t-2", ALICE)
    assert first is not None and first.phase is Phase.CLARIFY
    assert second is not None and second.phase is Phase.ARGUMENTS


async def test_arguments_come_back_as_json_holds_them(store: BindingStore) -> None:
    arguments = {"pair": ("a", "b"), "nested": {"n": [1, 2.5, None, True]}, "name": "zürich-01"}
    await store.put(Binding("t-1", ALICE, Phase.ARGUMENTS, skill_id="x", arguments=arguments))
    found = await store.get("t-1", ALICE)
    assert found is not None
    assert found.arguments == {
        "pair": ["a", "b"],
        "nested": {"n": [1, 2.5, None, True]},
        "name": "zürich-01",
    }


async def test_what_comes_back_is_a_copy(store: BindingStore) -> None:
    binding = clarify()
    await store.put(binding)
    binding.arguments["window"]["hours"] = 1  # the caller's object changes after the put
    found = await store.get("t-1", ALICE)
    assert found is not None
    found.arguments["link_id"] = "changed"
    again = await store.get("t-1", ALICE)
    assert again is not None and again.arguments == {
        "link_id": "acme-lnk-00001",
        "window": {"hours": 24},
    }


async def test_arguments_json_cannot_hold_are_refused_and_nothing_is_stored(
    store: BindingStore,
) -> None:
    odd = Binding("t-1", ALICE, Phase.ARGUMENTS, skill_id="x", arguments={"ids": {"a", "b"}})
    with pytest.raises((TypeError, StatementError)):
        await store.put(odd)
    assert await store.get("t-1", ALICE) is None
