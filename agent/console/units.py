"""Quantities as a person reads them; JSON keeps the schema's unit (bit/s)."""

from __future__ import annotations

RATE_UNITS = (("Tbit/s", 10**12), ("Gbit/s", 10**9), ("Mbit/s", 10**6), ("kbit/s", 10**3))


def bit_rate(value: float) -> str:
    """A rate in bit/s for people: ``6.55 Gbit/s``, ``200 Gbit/s``, ``500 Mbit/s``, ``12 bit/s``.

    Three significant digits at most past the unit's point (``6550000000`` -> ``6.55 Gbit/s``),
    no trailing zeros; a negative rate keeps its sign.
    """
    magnitude = abs(value)
    for unit, size in RATE_UNITS:
        if magnitude >= size:
            return f"{round(value / size, 2):g} {unit}"
    return f"{round(value, 2):g} bit/s"
