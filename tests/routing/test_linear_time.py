"""Every regular expression the request path runs on caller text costs time linear in the text.

A caller's text reaches the modules of ``PACKAGES`` (routing, every skill's
extractor, the edge's limits, console filters, MCP, the invoices example). A pattern that
retries a long run from each of its positions, or two quantifiers that can trade characters,
costs quadratic time or worse: one long message then holds a CPU for seconds.

The patterns are found, not listed: every compiled pattern (and ``Alternation``) a module of
``PACKAGES`` holds, and every pattern those modules build while they route (the router builds
some from skills' names): they are recorded while the real registry routes the spent routing
sets, and a pattern built from one skill's name is built for every other name too. A test
checks that every place that builds a pattern from a variable was reached.

Each pattern scans adversarial texts (runs of one character or of a short unit: letters,
digits, dashes, dots, every Unicode space, separators, the pattern's own words, after prefixes
it keys on) at one length and at four times it, in the thread's CPU time (another process's
load does not count). Linear time grows about four-fold, quadratic sixteen-fold. A cheap pass
on short texts finds suspects; only they are measured with care (best of several runs, the
growth measured again before it fails), so the test takes seconds, and a loaded machine can
slow it but not fail it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from agent.registry.loader import Registry, load_registry
from agent.routing.alternation import Alternation
from agent.routing.router import Router
from agent.security.principal import Principal
from netops.deployment import SKILLS_DIR
from tests.a2a_helpers import text_message

PACKAGES = (
    "agent.routing",
    "agent.builtin.describe_skill",
    "agent.edge",
    "agent.console",
    "agent.mcp",
    "skills",
    "examples.invoices",
)
"""Where caller text goes (each package's modules, its tests aside)."""
ROUTED_SETS = ("dev_set.json", "eval_set.json", "heldout_v10.json")
"""Spent routing sets whose texts are routed to record the patterns built while routing (the
held-out set reaches every function that builds one: the passive bid's, the description's)."""
RE_FUNCTIONS = ("compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn")
SPACES = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
UNITS = (
    *"x1 -.,;:!?%()'\"/_#=+\u00e9\u2013\n",
    SPACES,
    *("x1", "x ", "1 ", "1.", "a-", "a.", "1-", "a/", "1/", "a:", "1,", "-1", "x-1", "a-1-", "a_"),
    *("1 x ", "1k", "1g ", "; ", ". ", "?!", "a b ", "1 1 ", "1.1.", "1/1/", "ge-1/", "aA", "x="),
    *("abc1-xyz-", "lnk-", "a-lnk-1 ", "network-resource-1:", "1" + SPACES, "x" + SPACES, '"x'),
)
"""Units repeated into adversarial texts, beside each pattern's own words."""
PREFIXES = (". is ", "is the ", "1 ", "to ", "either ", "capacity of ", "a-", "x", "1")
PREFIXED_UNITS = (" ", SPACES, "x", "1", ".", "; ", "x ")
WORD_UNITS = (" ", ". ", "x ", "1 ", "-", "x", "1")
"""After a pattern's own word, units a pattern may run on from it."""
CHEAP, CAREFUL = 250, 500
"""Shorter lengths of the cheap pass and of the careful one (each also scans four times it)."""
CHEAP_GROWTH = 7.0
"""Cheap pass: a shape that grows more than this from ``CHEAP`` characters to four times as
many is a suspect (linear is about 4, quadratic 16; the short texts' times are noisy)."""
GROWTH = 9.0
"""Careful pass: growth from ``CAREFUL`` to four times as many characters that fails."""
TRIES = 3
FLOOR_NS = 200_000
"""Careful pass: the shorter text is lengthened (by fours, up to ``MAX_CAREFUL`` characters)
until one scan takes this long, so that a few microseconds of the clock's jitter on a fast scan
cannot pass for growth; a pattern that is not linear only grows faster on longer text."""
MAX_CAREFUL = 128_000
BUDGET_NS = 5_000_000
"""CPU time (ns) a text's scan may take before the growth is measured on a shorter one: a
linear pattern scans ``CAREFUL`` characters in well under a tenth of it."""


@dataclass(frozen=True)
class Scanned:
    """A pattern (or ``Alternation``) found on caller text's path, by where it lives."""

    where: str
    source: str
    scan: Callable[[str], Iterable[object]]


def _scanned(where: str, value: re.Pattern[Any] | Alternation) -> Iterator[Scanned]:
    """``value`` and, for an ``Alternation``, each of its alternatives."""
    if isinstance(value, Alternation):
        joined = "|".join(a.pattern for a in value.alternatives)
        yield Scanned(where, joined, value.finditer)
        for index, alternative in enumerate(value.alternatives):
            yield from _scanned(f"{where}.alternatives[{index}]", re.compile(alternative.pattern))
    elif isinstance(value.pattern, bytes):
        pattern = value
        yield Scanned(where, value.pattern.decode(), lambda t: pattern.finditer(t.encode()))
    else:
        yield Scanned(where, value.pattern, value.finditer)


def _held(value: object, where: str, seen: set[int], depth: int = 0) -> Iterator[Scanned]:
    """The patterns ``value`` is or holds (in containers, a few levels deep)."""
    if id(value) in seen or depth > 3:
        return
    seen.add(id(value))
    if isinstance(value, re.Pattern | Alternation):
        yield from _scanned(where, value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _held(item, f"{where}[{key!r}]", seen, depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for index, item in enumerate(value):
            yield from _held(item, f"{where}[{index}]", seen, depth + 1)


def module_names() -> Iterator[str]:
    """Every module of ``PACKAGES``, their tests and ``__main__`` aside."""
    for package in PACKAGES:
        yield package
        path = importlib.import_module(package).__path__
        for info in pkgutil.walk_packages(path, package + "."):
            if not info.name.endswith("__main__") and ".tests" not in info.name:
                yield info.name


def _key(scanned: Scanned) -> str:
    return scanned.source


def static_patterns() -> dict[str, Scanned]:
    """Every pattern a module of ``PACKAGES`` holds at its top level, by its first holder."""
    found: dict[str, Scanned] = {}
    for name in module_names():
        seen: set[int] = set()
        for attribute, value in vars(importlib.import_module(name)).items():
            for scanned in _held(value, f"{name}.{attribute}", seen):
                found.setdefault(_key(scanned), scanned)
    return found


_COMPILE = re.compile
"""``re.compile`` itself, for the recorder while ``re``'s functions are wrapped."""


@dataclass
class Recorder:
    """The patterns the modules of ``PACKAGES`` build while they run, by the function that
    built them (``re``'s functions and ``Alternation`` wrapped)."""

    patterns: dict[tuple[str | bytes, int], str]
    alternations: list[tuple[str, Alternation]]

    def site(self) -> str | None:
        """The function of ``PACKAGES`` calling (None for another module's call)."""
        frame = inspect.currentframe()
        while frame is not None and frame.f_globals.get("__name__") == __name__:
            frame = frame.f_back
        module = "" if frame is None else frame.f_globals.get("__name__", "")
        if frame is None or not module.startswith(PACKAGES) or module == Alternation.__module__:
            return None
        function = frame.f_code.co_qualname.split(".<locals>")[0]
        return f"{frame.f_globals['__name__']}.{function}"

    def wrapping(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(pattern: object, *args: Any, **kwargs: Any) -> Any:
            site = self.site()
            if site is not None and isinstance(pattern, str | bytes):
                compiled = _COMPILE(pattern) if not args and not kwargs else None
                flags = compiled.flags if compiled is not None else _flags(function, args, kwargs)
                self.patterns.setdefault((pattern, flags), site)
            return function(pattern, *args, **kwargs)

        return recorded


def _flags(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """The flags a call of ``re``'s ``function`` passes (by position or by name)."""
    bound = inspect.signature(function).bind_partial("", *args, **kwargs)
    return int(bound.arguments.get("flags", 0))


def _spent_texts() -> list[str]:
    texts: list[str] = []
    for name in ROUTED_SETS:
        spent = json.loads((Path(__file__).parent / name).read_text())
        for kind in ("clear", "ambiguous", "out_of_scope"):
            texts += [entry["text"] for entry in spent.get(kind, [])]
    return texts


CALLER = Principal(
    "paula",
    "acme",
    frozenset({"inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"}),
)


def _route_recording(recorder: Recorder) -> Registry:
    """The real registry, its router built and routing the spent sets under ``recorder``."""
    originals = {name: getattr(re, name) for name in RE_FUNCTIONS}
    init = Alternation.__init__

    def alternation(self: Alternation, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        site = recorder.site()
        if site is not None:
            recorder.alternations.append((site, self))

    try:
        for name, function in originals.items():
            setattr(re, name, recorder.wrapping(function))
        Alternation.__init__ = alternation  # type: ignore[method-assign]
        registry = load_registry(SKILLS_DIR)
        router = Router(registry)
        for text in _spent_texts():
            router.route(text_message(text), CALLER)
    finally:
        for name, function in originals.items():
            setattr(re, name, function)
        Alternation.__init__ = init  # type: ignore[method-assign]
    return registry


@cache
def recorded() -> tuple[Recorder, Registry]:
    recorder = Recorder({}, [])
    return recorder, _route_recording(recorder)


def _names(registry: Registry) -> list[str]:
    """Every skill's id as the router builds patterns of it (``agent.routing.names``),
    longest first."""
    found = {"[_-]".join(re.escape(part) for part in c.id.split("_")) for c in registry}
    return sorted(found, key=len, reverse=True)


def runtime_patterns() -> dict[str, Scanned]:
    """Every pattern built while routing; one built of a skill's name, for every name."""
    recorder, registry = recorded()
    names = _names(registry)
    found: dict[str, Scanned] = {}
    for (source, flags), site in recorder.patterns.items():
        text = source.decode() if isinstance(source, bytes) else source
        said = next((n for n in names if n in text), None)
        variants = {text: ""} if said is None else {text.replace(said, n): n for n in names}
        for variant, name in variants.items():
            built: Any = variant.encode() if isinstance(source, bytes) else variant
            where = f"{site} (built at run time{f' for {name!r}' if name else ''})"
            for scanned in _scanned(where, re.compile(built, flags)):
                found.setdefault(_key(scanned), scanned)
    for site, alternation in recorder.alternations:
        for scanned in _scanned(f"{site} (an Alternation built at run time)", alternation):
            found.setdefault(_key(scanned), scanned)
    return found


def request_patterns() -> dict[str, Scanned]:
    found = static_patterns()
    for key, scanned in runtime_patterns().items():
        found.setdefault(key, scanned)
    return {scanned.where: scanned for scanned in found.values()}


PATTERNS = request_patterns()


def _own_words(source: str) -> list[str]:
    """The pattern's literal words, as a caller could repeat them."""
    return sorted(set(re.findall(r"(?<![\\?])[a-z]{2,}", source)))[:16]


def shapes(source: str) -> Iterator[tuple[str, str]]:
    """(prefix, unit) of the texts a pattern is tried on."""
    words = _own_words(source)
    for unit in (*UNITS, *(w + " " for w in words), *words):
        yield "", unit
    for prefix in PREFIXES:
        for unit in PREFIXED_UNITS:
            yield prefix, unit
    for word in words:
        for unit in WORD_UNITS:
            yield word + " ", unit


def _text(prefix: str, unit: str, size: int) -> str:
    return prefix + (unit * (size // len(unit) + 1))[:size]


def _cost(scanned: Scanned, text: str, tries: int = 1) -> int:
    """The least CPU time (this thread's, in ns) of ``tries`` scans for every match."""
    best = None
    for _ in range(tries):
        start = time.thread_time_ns()
        for _match in scanned.scan(text):
            pass
        spent = time.thread_time_ns() - start
        best = spent if best is None else min(best, spent)
    assert best is not None
    return max(best, 1)


def growth(
    scanned: Scanned, prefix: str, unit: str, size: int, tries: int = 1
) -> tuple[float, int]:
    """Time on ``4 * size`` characters over time on ``size`` (or on fewer, while those take
    longer than ``BUDGET_NS``: a cubic pattern would take minutes on the longer text), and
    the size measured."""
    while _cost(scanned, _text(prefix, unit, size)) > BUDGET_NS and size > 16:
        size //= 4
    short = _cost(scanned, _text(prefix, unit, size), tries)
    return _cost(scanned, _text(prefix, unit, 4 * size), tries) / short, size


def careful_size(scanned: Scanned, prefix: str, unit: str) -> int:
    """``CAREFUL``, or longer while one scan takes less than ``FLOOR_NS``."""
    size = CAREFUL
    while size < MAX_CAREFUL and _cost(scanned, _text(prefix, unit, size)) < FLOOR_NS:
        size *= 4
    return size


def careful_growth(scanned: Scanned, prefix: str, unit: str) -> tuple[float, int]:
    """The least growth of a few careful measures (noise only adds to growth)."""
    size = careful_size(scanned, prefix, unit)
    least = (float("inf"), size)
    for _ in range(TRIES):
        least = min(least, growth(scanned, prefix, unit, size, tries=TRIES))
        if least[0] < GROWTH:
            break
    return least


@pytest.mark.parametrize("where", sorted(PATTERNS))
def test_every_pattern_on_caller_text_runs_in_linear_time(where: str) -> None:
    """Each pattern's time grows with the text, not with its square, on every shape tried."""
    scanned = PATTERNS[where]
    for prefix, unit in shapes(scanned.source):
        if growth(scanned, prefix, unit, CHEAP)[0] < CHEAP_GROWTH:
            continue
        found, size = careful_growth(scanned, prefix, unit)
        assert found < GROWTH, (
            f"{where} grows {found:.1f}x from {size} to {4 * size} characters of "
            f"{prefix!r} + {unit!r}...: {scanned.source[:160]!r}"
        )


def _dynamic_sites() -> set[str]:
    """Every function of ``PACKAGES`` that hands ``re`` a pattern it built (not a literal).
    (What a module compiles at its top level, it holds: ``static_patterns`` finds it.)"""
    sites: set[str] = set()
    for name in module_names():
        file = importlib.import_module(name).__file__
        assert file is not None
        tree = ast.parse(Path(file).read_text())
        for qualname, call in _re_calls(tree):
            first = call.args[0] if call.args else None
            if first is not None and not isinstance(first, ast.Constant) and qualname:
                sites.add(f"{name}.{qualname}")
    return sites


def _re_calls(tree: ast.AST, qualname: str = "") -> Iterator[tuple[str, ast.Call]]:
    """``re.<function>(...)`` calls in ``tree``, with the qualified name of their function."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield from _re_calls(node, f"{qualname}.{node.name}".lstrip("."))
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in RE_FUNCTIONS
        ):
            yield qualname, node
        yield from _re_calls(node, qualname)


ALTERNATION_SITES = {
    "agent.routing.alternation.Alternation.__init__",
    "agent.routing.alternation.Alternation._compiled",
}
"""Builds patterns of an ``Alternation``'s alternatives: the objects and their alternatives are
scanned whole (their per-character patterns are each a few of those alternatives)."""


def test_every_pattern_built_at_run_time_is_scanned() -> None:
    """Each function that builds a pattern was reached while the spent sets were routed, so its
    patterns are among those scanned: a new one, on a path those texts do not take, fails
    here until a text (or ``ROUTED_SETS``) reaches it."""
    recorder, _ = recorded()
    reached = set(recorder.patterns.values())
    missing = _dynamic_sites() - reached - ALTERNATION_SITES
    assert not missing, sorted(missing)


@pytest.mark.parametrize(("source", "unit"), [(r"\s*x", " "), (r"[0-9]*!", "7")])
def test_the_careful_pass_sees_a_pattern_that_is_not_linear(source: str, unit: str) -> None:
    """The measure itself: quadratic patterns, scanned for every match, grow past
    ``GROWTH`` (so a pass above means something)."""
    pattern = re.compile(source)
    found, _ = careful_growth(Scanned("known", source, pattern.finditer), "", unit)
    assert found >= GROWTH, found
