"""agent/base/ids.py: pooled random identifiers are real version-4 UUIDs and never repeat,
whichever thread asks."""

from __future__ import annotations

import threading
import uuid

from agent.base.ids import random_hex, random_id


def test_every_id_is_a_version_4_uuid_in_its_usual_form() -> None:
    for _ in range(2000):  # several refills
        text = random_id()
        parsed = uuid.UUID(text)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert str(parsed) == text
        hexed = random_hex()
        assert uuid.UUID(hex=hexed).version == 4 and len(hexed) == 32


def test_no_two_ids_are_the_same_across_threads() -> None:
    seen: list[list[str]] = [[] for _ in range(8)]

    def draw(into: list[str]) -> None:
        into.extend(random_hex() for _ in range(5000))

    threads = [threading.Thread(target=draw, args=(bucket,)) for bucket in seen]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    drawn = [value for bucket in seen for value in bucket]
    assert len(set(drawn)) == len(drawn) == 40000
    # Random, not a counter: the hex digits outside the fixed version/variant are spread.
    assert len({value[0] for value in drawn}) == 16


def test_a_forked_child_draws_its_own_ids() -> None:
    import os

    random_hex()  # the pool holds ids now
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        os.write(write, random_hex().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    theirs = os.read(read, 64).decode()
    os.close(read)
    assert theirs != random_hex()
