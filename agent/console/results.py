"""A skill's result in one line for a person: the answer first, with units.

The console knows no skill, so it reads a result by the conventions skills' outputs share:
what the result is about (a top-level ``*_id``), its answer in a word (``recommendation``,
``result``, ``decision``), its answer in a sentence (``verdict``, ``summary``, ``reason``,
``message``), and its measures by their names' units (``*_bps`` in bit/s, ``*_ratio`` 0..1,
``*_percent``, a value beside its ``unit``, a ``count`` of a ``kind``). A refused or failed
task reads as its error's code and message.
"""

from __future__ import annotations

from typing import Any

from agent.console.units import bit_rate

SUBJECT_SUFFIX = "_id"
WORDS = ("recommendation", "result", "decision")
SENTENCES = ("verdict", "summary", "reason", "message")
MAX_SUMMARY = 240
"""A summary longer than this is cut (the whole result is one click away)."""


def _word(value: str) -> str:
    return value.replace("_", " ")


def _number(value: float) -> str:
    return f"{value:,.1f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"


def _measure(key: str, value: Any, result: dict[str, Any]) -> str | None:
    """One member as a measure with its unit, or None when its name gives no unit."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    label = key.rsplit("_", 1)[0].replace("_", " ")
    if key.endswith("_bps"):
        return f"{label} {bit_rate(value)}"
    if key.endswith("_ratio"):
        return f"{label} {_number(value * 100)} %"
    if key.endswith("_percent"):
        return f"{label} {_number(value)} %"
    unit = result.get("unit")
    if key.startswith("observed_") and isinstance(unit, str):
        return f"observed {_number(value)} {unit}"
    if key == "count" and isinstance(result.get("kind"), str):
        cut = " (not all listed)" if result.get("truncated") is True else ""
        return f"{_number(value)} {result['kind']}{cut}"
    return None


def _first(result: dict[str, Any], keys: tuple[str, ...]) -> str:
    return next((str(result[k]) for k in keys if isinstance(result.get(k), str) and result[k]), "")


def summarize(result: Any) -> str:
    """The result in one line: subject, answer word, sentence; measures when no sentence
    says it (and ``recommended_*`` ones always). "" when nothing in it reads as an answer."""
    if not isinstance(result, dict):
        return _cut(str(result)) if isinstance(result, str | int | float) else ""
    subject = next(
        (v for k, v in result.items() if k.endswith(SUBJECT_SUFFIX) and isinstance(v, str)), ""
    )
    word = _word(_first(result, WORDS))
    sentence = _first(result, SENTENCES)
    measures = [
        m
        for k, v in result.items()
        if (not sentence or k.startswith("recommended_")) and (m := _measure(k, v, result))
    ]
    answer = "; ".join(p for p in (word, sentence, ", ".join(measures)) if p)
    if not answer:
        return ""
    return _cut(f"{subject}: {answer}" if subject else answer)


def error_summary(error: Any) -> str:
    """A refused or failed task's error object as ``code: message``."""
    if isinstance(error, dict):
        code, message = error.get("code", ""), error.get("message", "")
        return _cut(": ".join(str(p) for p in (code, message) if p))
    return _cut(str(error)) if error is not None else ""


def _cut(text: str) -> str:
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 1] + "…"
