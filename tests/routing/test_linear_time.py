"""Routing reads caller text in linear time: every regular expression it runs, and the whole.

A caller's text reaches every module below (routing, the lexicon, the extractors, limits,
console filters, MCP). A pattern that retries a long run from each of its positions, or two
quantifiers that can trade characters, costs quadratic (or worse) time: a few thousand
characters then hold a CPU for seconds. Each pattern is timed on adversarial texts (runs of one
character or of a short unit: letters, digits, dashes, dots, every Unicode space, separators,
and the pattern's own words) at one length and at four times it; linear time grows about
four-fold, quadratic sixteen-fold. The bound sits between, with a floor below which times are
too small to compare on a busy machine.
"""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.registry.loader import load_registry
from agent.routing.router import MAX_READ_TEXT, Router
from agent.security.principal import Principal
from netops.deployment import SKILLS_DIR, network_deployment
from tests.a2a_helpers import text_message

MODULES = (
    "agent.routing.classifier",
    "agent.routing.router",
    "agent.routing.descriptions",
    "agent.routing.features",
    "agent.routing.extractors",
    "agent.routing.alternation",
    "agent.routing.skill_request",
    "agent.builtin.describe_skill.extract",
    "agent.edge.limits",
    "agent.edge.error_scrub",
    "agent.console.routes",
    "agent.mcp.endpoint",
    "agent.mcp.server",
    "agent.mcp.projection",
    "skills.common.text",
    "skills.common.lexicon",
    "skills.check_link_capacity.extract",
    "skills.evaluate_resource_condition.extract",
    "skills.link_headroom.extract",
    "skills.lookup_inventory.extract",
    "skills.plan_link_upgrade.extract",
)
SPACES = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
UNITS = (
    *"x1 -.,;:!?%()'\"/_\u00e9\u2013",
    SPACES,
    *("x1", "x ", "1 ", "1.", "a-", "a.", "1-", "a/", "1/", "a:", "1,", "-1", "x-1", "a-1-"),
    *("1 x ", "1k", "1g ", "; ", ". ", "?!", "a b ", "1 1 ", "1.1.", "1/1/", "ge-1/", "aA"),
    *("abc1-xyz-", "lnk-", "network-resource-1:", "1" + SPACES, "x" + SPACES),
)
"""Units repeated into adversarial texts, beside each pattern's own words."""
PREFIXES = ("", ". is ", "is the ", "1 ", "to ", "either ", "capacity of ")
SHORT, LONG = 500, 2000
FLOOR_S = 0.002
"""Below this a long text's time says nothing (a linear pattern takes well under it)."""
GROWTH = 9.0
"""Time on the long text over time on the short one: linear is about 4, quadratic 16."""


def _patterns(value: object, seen: set[int], depth: int = 0) -> Iterator[re.Pattern[str]]:
    if id(value) in seen or depth > 3:
        return
    seen.add(id(value))
    if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _patterns(item, seen, depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _patterns(item, seen, depth + 1)


def request_patterns() -> dict[str, re.Pattern[str]]:
    """Every compiled pattern the modules on caller text's path hold, by where it lives."""
    found: dict[str, re.Pattern[str]] = {}
    for name in MODULES:
        module = importlib.import_module(name)
        seen: set[int] = set()
        for attribute, value in vars(module).items():
            for index, pattern in enumerate(_patterns(value, seen)):
                found[f"{name}.{attribute}[{index}]"] = pattern
    return found


PATTERNS = request_patterns()


def _own_words(pattern: re.Pattern[str]) -> list[str]:
    """The pattern's literal words, as a caller could repeat them."""
    return sorted(set(re.findall(r"(?<![\\?])[a-z]{2,}", pattern.pattern)))[:12]


def _text(prefix: str, unit: str, size: int) -> str:
    return prefix + (unit * (size // len(unit) + 1))[:size]


def _cost(pattern: re.Pattern[str], text: str, tries: int = 3) -> float:
    """Best of ``tries``: the least a scan of every match takes (others' load only adds)."""
    best = float("inf")
    for _ in range(tries):
        start = time.perf_counter()
        for _match in pattern.finditer(text):
            pass
        best = min(best, time.perf_counter() - start)
    return best


def _growth(pattern: re.Pattern[str], prefix: str, unit: str) -> tuple[float, float]:
    long_ = _cost(pattern, _text(prefix, unit, LONG), tries=1)
    if long_ < FLOOR_S:
        return 1.0, long_
    long_ = min(long_, _cost(pattern, _text(prefix, unit, LONG)))
    short = _cost(pattern, _text(prefix, unit, SHORT))
    return long_ / max(short, 1e-6), long_


def _shapes(pattern: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    words = _own_words(pattern)
    for unit in (*UNITS, *(w + " " for w in words), *words):
        yield "", unit
    for prefix in PREFIXES[1:]:
        for unit in (" ", SPACES, "x", "1", ".", "; "):
            yield prefix, unit
    for word in words:
        yield word + " ", " "
        yield word + " ", ". "


@pytest.mark.parametrize("where", sorted(PATTERNS))
def test_every_pattern_on_caller_text_runs_in_linear_time(where: str) -> None:
    """Each pattern's time grows with the text, not with its square, on every shape tried."""
    pattern = PATTERNS[where]
    for prefix, unit in _shapes(pattern):
        growth, long_ = _growth(pattern, prefix, unit)
        assert growth < GROWTH, (
            f"{where} grows {growth:.1f}x from {SHORT} to {LONG} characters of "
            f"{prefix!r} + {unit!r}... ({long_ * 1000:.1f} ms): {pattern.pattern[:120]!r}"
        )


ALPHABET = st.sampled_from([*"xa1 -.,;:/_%?(", "\u00a0", "\u3000", "\n", "\u2013", "0"])


@settings(
    max_examples=15,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(unit=st.lists(ALPHABET, min_size=1, max_size=4).map("".join))
def test_no_pattern_grows_faster_than_the_text_on_any_short_unit(unit: str) -> None:
    """Any short unit repeated, after any prefix a pattern keys on: still linear."""
    for where, pattern in PATTERNS.items():
        for prefix in ("", ". is ", "1 "):
            growth, long_ = _growth(pattern, prefix, unit)
            assert growth < GROWTH, (
                f"{where} grows {growth:.1f}x on {prefix!r} + {unit!r}... "
                f"({long_ * 1000:.1f} ms): {pattern.pattern[:120]!r}"
            )


ROUTER = Router(load_registry(SKILLS_DIR), features=network_deployment().routing_features)
CALLER = Principal(
    "paula",
    "acme",
    frozenset({"inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"}),
)
ROUTED_UNITS = (
    "x",
    "1",
    " ",
    SPACES,
    "; ",
    "a-",
    "1.",
    "and ",
    "either ",
    "enough more ",
    "capacity of for x ",
    "is 1 " + " " * 40,
    "acme-lnk-00002 ",
    "cpu above 90% on nyc1-core-01 ",
)


def _route_cost(text: str) -> float:
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        ROUTER.route(text_message(text), CALLER)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize("unit", ROUTED_UNITS, ids=repr)
def test_routing_a_long_text_costs_linear_time(unit: str) -> None:
    """The whole of routing (every layer, the lexicon, the extractor it picks): linear in the
    text up to what it reads, and no more beyond (``MAX_READ_TEXT``)."""
    ROUTER.warm()
    quarter = _route_cost(_text("", unit, MAX_READ_TEXT // 4))
    whole = _route_cost(_text("", unit, MAX_READ_TEXT))
    beyond = _route_cost(_text("", unit, 50 * MAX_READ_TEXT))
    if whole >= FLOOR_S:
        assert whole / max(quarter, 1e-6) < GROWTH, (unit, quarter, whole)
    assert beyond < max(3 * whole, 0.05), (unit, whole, beyond)
