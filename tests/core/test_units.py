"""Rates as a person reads them."""

from __future__ import annotations

import pytest

from agent.console.units import bit_rate


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (20_000_000_000, "20 Gbit/s"),
        (6_550_000_000, "6.55 Gbit/s"),
        (200_000_000_000, "200 Gbit/s"),
        (1_500_000_000_000, "1.5 Tbit/s"),
        (123_456_789, "123.46 Mbit/s"),
        (2_000, "2 kbit/s"),
        (999, "999 bit/s"),
        (0, "0 bit/s"),
        (-3_000_000_000, "-3 Gbit/s"),
    ],
)
def test_a_rate_is_given_in_the_unit_a_person_uses(value: float, text: str) -> None:
    assert bit_rate(value) == text
