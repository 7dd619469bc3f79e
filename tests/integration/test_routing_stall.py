"""One caller's largest text message does not stall the other callers, on any binding.

A real agent serves; a second caller polls ``/healthz`` and makes a cheap A2A call in a thread
of its own while the first sends the largest text message the limits let through, of shapes
that cost a backtracking pattern its square (long runs of one character, every Unicode space,
separators, a digit before long spaces), on JSON-RPC, HTTP+JSON and gRPC. Routing reads a
bounded text in linear time, off the event loop when it is long: the other caller's worst
latency stays far below what an unbounded, quadratic read cost (seconds to minutes).
"""

from __future__ import annotations

import pytest

from bench.routing_stall import BINDINGS, worst_latency
from tests.conftest import RunningAgent

SHAPES = (
    "x",
    "unicode-spaces",
    "separators",
    "rate-spaces",
    "is-spaces",
    "enough-more",
    "digit-runs",
)
BOUND_S = 0.5
"""Generous for a loaded two-core machine; the unbounded read stalled for seconds and more."""


@pytest.mark.parametrize("binding", BINDINGS)
def test_largest_text_message_does_not_stall_other_callers(
    agent: RunningAgent, binding: str
) -> None:
    """The other caller's worst latency while each shape's largest message is routed."""
    worst = worst_latency(agent.base_url, agent.token("paula"), SHAPES, [binding])
    assert worst[binding] < BOUND_S, worst
