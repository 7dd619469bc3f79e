"""Random identifiers (UUID version 4) without a system call each.

``uuid.uuid4()`` asks the kernel for 16 bytes every time, and CPython lets go of the GIL
around that call: under load the event loop's thread then waits to get it back from
whichever thread took it (bench.perf --profile showed ``uuid4`` among the hottest frames
of a governed call, while it computes nothing). The bytes here come from the same source,
``os.urandom``, 2 KiB at a time; the identifiers are as unpredictable as
``uuid4``'s.
"""

from __future__ import annotations

import os

_BATCH = 128
_VARIANT = "89ab"
_hex: list[str] = []


def _refill() -> None:
    """128 fresh version-4 UUIDs as hex, from one read of ``os.urandom``."""
    raw = os.urandom(16 * _BATCH).hex()
    fresh = []
    for start in range(0, 32 * _BATCH, 32):
        h = raw[start : start + 32]
        fresh.append(f"{h[:12]}4{h[13:16]}{_VARIANT[int(h[16], 16) & 3]}{h[17:]}")
    _hex.extend(fresh)


# A forked child must not hand out its parent's remaining ids.
os.register_at_fork(after_in_child=_hex.clear)


def random_hex() -> str:
    """A fresh UUID as 32 hex digits (message ids, correlation ids, token ids)."""
    while True:
        try:
            return _hex.pop()  # atomic: two threads never get the same one
        except IndexError:
            _refill()


def random_id() -> str:
    """A fresh UUID in its usual text form (task and context ids)."""
    h = random_hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
