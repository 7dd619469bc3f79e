"""Reading one environment variable: one parser for flags, one for numbers, one for text.

Settings and the limits both read NETAGENT_* variables, and settings imports the limits, so
the parsers live here, below both, and import nothing of the core. Every parser treats an
unset or empty variable as the default and raises a one-line ValueError naming the variable
for text it cannot read; the CLI prints it as ``error: settings: ...`` and exits 2.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar, overload

N = TypeVar("N", int, float)
T = TypeVar("T")

FLAG_WORDS: Mapping[str, bool] = {
    "1": True,
    "0": False,
    "true": True,
    "false": False,
    "yes": True,
    "no": False,
    "on": True,
    "off": False,
}
AUTO = "auto"


@overload
def flag(env: Mapping[str, str], name: str, default: bool) -> bool: ...


@overload
def flag(env: Mapping[str, str], name: str, default: None) -> bool | None: ...


def flag(env: Mapping[str, str], name: str, default: bool | None) -> bool | None:
    """A switch; a default of None is a third state, spelt ``auto``: the caller decides.

    Any case and surrounding whitespace are accepted, so ``NETAGENT_SEED=Off`` means off
    rather than whatever a narrower list of words happened to leave it at.
    """
    word = env.get(name, "").strip().lower()
    if not word or (default is None and word == AUTO):
        return default
    if word in FLAG_WORDS:
        return FLAG_WORDS[word]
    words = [*FLAG_WORDS, *([AUTO] if default is None else [])]
    raise ValueError(f"{name} must be one of {', '.join(words[:-1])} or {words[-1]}")


def number(
    env: Mapping[str, str],
    name: str,
    default: N,
    kind: Callable[[str], N],
    *,
    positive: bool = False,
) -> N:
    """An int or float; ``positive`` refuses zero and below, in the same one-line style."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    noun = "integer" if kind is int else "number"
    noun = f"a positive {noun}" if positive else f"an {noun}" if kind is int else f"a {noun}"
    try:
        value = kind(raw)
    except ValueError:
        raise ValueError(f"{name} must be {noun}") from None
    if positive and value <= 0:
        raise ValueError(f"{name} must be {noun}")
    return value


def text(env: Mapping[str, str], name: str, default: T) -> str | T:
    """The variable as written; unset or empty keeps the default (which may be None)."""
    return env.get(name) or default
