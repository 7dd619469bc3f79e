"""Pure parsers that pull skill arguments out of an operator's plain text.

A2A messages name no skill: when a caller sends text, the router picks a skill and that skill's
``extract(text)`` fills what arguments it can. Everything here is a small pure function: no I/O,
deterministic, never raises on any input (a non-``str`` counts as empty), and returns ``None`` or
``[]`` when it finds nothing. Range checks against a skill's schema are the extractor's job.
The English words they read (typo keywords, number words, operator phrases, rate unit words) are
data, in ``words.json`` beside this module (read by ``skills.common.words``); the patterns around
them (ids, numbers, unit symbols) are here.

Decisions, one place each (the docs list them for callers):

* Bandwidth is in bit/s; ``10 more gigabits``, ``3 extra G`` read as 10 and 3 Gbit/s. A
  capital ``B`` with a rate suffix (``GB/s``, ``GBps``, ``MB per
  second``) or the word ``byte`` means bytes (x 8). A bare ``10GB`` (no ``/s``) is read as bits,
  the way operators write "a 10GB link"; ``GBPS`` in capitals is bits. A bare lower-case ``m``
  after a number is *minutes* (``30m``), never megabits: write ``500M`` or ``500 Mbps``. A bare
  ``k`` or ``K`` is not a bandwidth (it is too often a count). SI prefixes only: no ``Gibps``.
* Durations count a month as 30 days and a fortnight as 14; ``this week`` is 7 days. Calendar
  words (``today``, ``yesterday``, ``since Monday``) and vague ones (``a few hours``) are not
  durations. A bare upper-case ``M`` is not minutes.
* Operators: the leftmost operator phrase wins, and the longest phrase at that position
  (``at or above`` beats ``above``); ``gone past``, ``crossed``, ``tops`` mean above. ``over``
  followed by a time phrase (``over the last hour``)
  is not an operator. Equality (``equals``, ``==``) maps to nothing: the skills have no ``eq``.
* Metrics: ``cpu``/``memory``/``errors`` words beat ``utilization`` words, because those often
  qualify them (``cpu utilization``, ``memory usage``); among them the first mentioned wins.
  ``drops``, ``discards`` and ``packet loss`` are *not* errors (different counters): no metric.
  ``latency``, ``jitter``, ``temperature`` and ``optical_power`` are named although the
  inventory does not observe them, so the skill can say so (``OTHER_METRIC_UNITS``).
* Typos: a word of six letters or more one edit (insert, delete, substitute, swap two
  neighbours) away from a keyword is read as that keyword, as is a five-letter keyword with two
  neighbours swapped (``abvoe``); the first letter must be right. Ids are never corrected.
* Only the first ``MAX_TEXT`` characters of a message are read.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from agent.sdk import Alternation, Alternative
from agent.sdk import total as total  # re-exported: every skill's extractor is total
from skills.common import words

MAX_TEXT = 20_000
"""Characters of a message the parsers read; the rest is ignored."""

METRIC_UNITS: dict[str, str] = {
    "utilization": "percent",
    "cpu": "percent",
    "memory": "percent",
    "errors": "count",
}
"""The unit each observed metric is recorded in (mirrors ``db.choices.METRIC_UNITS``)."""

OTHER_METRIC_UNITS: dict[str, str] = {
    "latency": "ms",
    "jitter": "ms",
    "temperature": "celsius",
    "optical_power": "dBm",
}
"""Metrics operators ask about that the inventory does not observe, in their usual unit: the
extractor names them, so the skill can say plainly that it does not observe them."""
METRIC_UNITS_ALL: dict[str, str] = {**METRIC_UNITS, **OTHER_METRIC_UNITS}

_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"), "-")
_QUOTES = dict.fromkeys(map(ord, "\u2018\u2019\u201a\u201b\u2032"), "'")
_DQUOTES = dict.fromkeys(map(ord, "\u201c\u201d\u201e\u201f\u2033"), '"')
_TRANSLATE = {**_DASHES, **_QUOTES, **_DQUOTES, ord("\u00d7"): "x", ord("\u2715"): "x"}

# ---------------------------------------------------------------------------------------------
# Normalisation


def clean(text: object) -> str:
    """NFKC-normalise ``text``, unify dashes, quotes and the times sign; keep case; non-str: ""."""
    if not isinstance(text, str):
        return ""
    try:
        normal = unicodedata.normalize("NFKC", text[:MAX_TEXT])
    except ValueError:  # pragma: no cover - lone surrogates normalise fine, but be total
        return ""
    return normal.translate(_TRANSLATE)


_KEYWORDS = words.KEYWORDS
_NOT_TYPOS = words.NOT_TYPOS
_KEYS_SORTED = tuple(sorted(_KEYWORDS))
_WORD = re.compile(r"(?<![\w\-/:.])[^\W\d_]{5,}(?![\w\-/:]|\.\w)")


def _one_edit(word: str, key: str) -> bool:
    """True when ``word`` is one insert/delete/substitute/neighbour-swap away from ``key``."""
    if len(word) == len(key):
        diffs = [i for i, (a, b) in enumerate(zip(word, key, strict=True)) if a != b]
        if len(diffs) == 1:
            return True
        i = diffs[0] if len(diffs) == 2 else -1
        return i >= 0 and diffs[1] == i + 1 and word[i] == key[i + 1] and word[i + 1] == key[i]
    short, long_ = (word, key) if len(word) < len(key) else (key, word)
    if len(long_) - len(short) != 1:
        return False
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


def _is_swap(word: str, key: str) -> bool:
    """True when ``word`` is ``key`` with two neighbouring letters swapped."""
    if len(word) != len(key) or word == key:
        return False
    diffs = [i for i, (a, b) in enumerate(zip(word, key, strict=True)) if a != b]
    return (
        len(diffs) == 2
        and diffs[1] == diffs[0] + 1
        and word[diffs[0]] == key[diffs[1]]
        and word[diffs[1]] == key[diffs[0]]
    )


@functools.lru_cache(maxsize=4096)
def correct_word(word: str) -> str:
    """The keyword ``word`` (lower case) is a cheap typo of, or ``word`` itself."""
    if word in _KEYWORDS or word in _NOT_TYPOS or len(word) < 5:
        return word
    for key in _KEYS_SORTED:
        if key[0] != word[0] or abs(len(key) - len(word)) > 1:
            continue
        if (len(key) >= 6 and len(word) >= 6 and _one_edit(word, key)) or _is_swap(word, key):
            return key
    return word


def fold(text: Any) -> str:
    """``clean`` + lower case + typo correction of keywords; what word-level parsers read."""
    if type(text) is str and len(text) <= _RECENT_LENGTH:
        return _fold_recent(text)
    return _fold(text)


def _fold(text: Any) -> str:
    lowered = clean(text).lower()
    return _WORD.sub(lambda m: correct_word(m.group(0)), lowered)


_RECENT_LENGTH = 2048
"""Texts up to this long keep their folded and masked forms among the last few: routing one
message reads it through each extractor, which fold and mask it again (three
folds and three maskings per text message, 50 us of its routing). A message read again later
(the same request retried) finds them too; nothing else depends on it."""
_fold_recent = functools.lru_cache(maxsize=32)(_fold)


# ---------------------------------------------------------------------------------------------
# Identifiers

_LINK_ID = re.compile(r"(?<![a-z0-9_.\-])([a-z][a-z0-9]*)[-_]lnk[-_](\d+)(?![a-z0-9_])", re.I)
"""A link id of any number, as operators write theirs (``globex-lnk-3301``); one the inventory
lacks (its ids have five digits) routes as a link and is then not found, not read as no link."""
DEVICE_ROLE = r"(?!(?:to|vs|and|or|via|from|of|in|on|at|per|by|lnk)-)[a-z]{1,12}"
"""A device name's role: any word, as operators name theirs (``core``, ``pe``, ``p``, ``border``,
``spine``, ``tor``), but a joining word ("vlan100-to-200") or a link id's ``lnk``. A name of a
role the inventory lacks routes as a device and is then not found, not read as no device."""
_DEVICE = re.compile(
    # site, role, number
    rf"(?<![a-z0-9_.\-])([a-z]{{2,5}}\d{{1,3}})-({DEVICE_ROLE})"
    r"-(\d{1,3})(?![a-z0-9_]|-\w)",
    re.I,
)
_RESOURCE = re.compile(
    r"(?<![\w.\-])network-resource-(\d{1,18})(?::([A-Za-z][A-Za-z0-9/._\-]{0,62}[A-Za-z0-9]|[A-Za-z])(?![\w/\-]|\.\w))?(?!\w)",
    re.I,
)
INTERFACE_NAME = re.compile(
    r"(?<![\w\-/])(?:(?:xe|ge|et|ae|fe|te|gi|te|hu|fa|eth|ethernet|gigabitethernet"
    r"|tengigabitethernet|hundredgige|port-channel|po)-?\d+(?:/\d+){1,3}(?::\d+)?"
    r"|ae\d+|po\d+|ethernet\d+)(?![\w/])",
    re.I,
)
"""An interface named as vendors name theirs: ``xe-0/0/1``, ``Gi1/0/24``, ``ae3``, ``Ethernet1``."""
_ID_LIMIT = 64


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def link_ids(text: Any) -> list[str]:
    """Link ids like ``acme-lnk-00001`` (case and ``_`` forgiven), lower-cased, in order."""
    found = [f"{m[1].lower()}-lnk-{m[2]}" for m in _LINK_ID.finditer(clean(text))]
    return _unique([x for x in found if len(x) <= _ID_LIMIT])


def device_names(text: Any) -> list[str]:
    """Device names like ``nyc1-core-01`` or ``lon1-agg-02``, lower-cased, numbers zero-padded."""
    found = [
        f"{m[1].lower()}-{m[2].lower()}-{int(m[3]):02d}" for m in _DEVICE.finditer(clean(text))
    ]
    return _unique([x for x in found if len(x) <= _ID_LIMIT])


def resource_ids(text: Any) -> list[str]:
    """Resource ids: ``network-resource-123`` (device), ``network-resource-1001:et-0/0/2`` (port).

    The prefix is lower-cased; an interface name keeps its case (``Ethernet1``), minus trailing
    punctuation.
    """
    found = []
    for m in _RESOURCE.finditer(clean(text)):
        device = f"network-resource-{m[1]}"
        found.append(f"{device}:{m[2]}" if m[2] else device)
    return _unique(found)


def device_refs(text: Any) -> list[str]:
    """Devices named by name or by resource id (an interface id names its device), in order."""
    cleaned = clean(text)
    refs: list[tuple[int, str]] = [
        (m.start(), f"{m[1].lower()}-{m[2].lower()}-{int(m[3]):02d}")
        for m in _DEVICE.finditer(cleaned)
    ]
    refs += [(m.start(), f"network-resource-{m[1]}") for m in _RESOURCE.finditer(cleaned)]
    return _unique([ref for _, ref in sorted(refs) if len(ref) <= _ID_LIMIT])


def mask_ids(text: str) -> str:
    """``text`` with link ids, device names and resource ids blanked out (same length)."""
    if len(text) <= _RECENT_LENGTH:
        return _mask_recent(text)
    return _mask(text)


def _mask(text: str) -> str:
    for pattern in (_RESOURCE, _LINK_ID, _DEVICE):
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return text


_mask_recent = functools.lru_cache(maxsize=32)(_mask)


# ---------------------------------------------------------------------------------------------
# Numbers, percentages, bandwidth


@dataclass(frozen=True, slots=True)
class Found:
    """One parsed value and where it sits in the text it was found in."""

    start: int
    end: int
    value: Any


_NUMBER = re.compile(r"(?<![\w.])(\d{1,15}(?:\.\d{1,9})?)(?:\s?(k)(?![a-z]))?(?!\w|\.\d)", re.I)
_PERCENT_MARK = re.compile(r"(?<!\s)\s*+(?:%|per\s?cent\b|pct\b|percent(?:age)?\b)", re.I)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def numbers(text: str) -> list[Found]:
    """Plain numbers (``90``, ``0.8``, ``1k`` = 1000) not glued to a word; value is a float."""
    found = []
    for m in _NUMBER.finditer(text):
        value = _finite(float(m[1]) * (1000 if m[2] else 1))
        if value is not None:
            found.append(Found(m.start(), m.end(), value))
    return found


def is_percent_at(text: str, end: int) -> bool:
    """Whether a percent sign or word follows position ``end`` of ``text``."""
    return _PERCENT_MARK.match(text, end) is not None


_SPACE_RUN = re.compile(r"\s*+")


def after_spaces(text: str, position: int) -> int:
    r"""The position after the whitespace at ``position`` of ``text``: where a pattern read
    after a found thing starts (one that began with ``\s*`` itself would read a long run of
    spaces again from each of its positions, in quadratic time)."""
    found = _SPACE_RUN.match(text, position)
    return position if found is None else found.end()


def percent(text: Any) -> float | None:
    """The first percentage: ``80%``, ``80 %``, ``80 percent``, ``80 per cent``, ``80 pct``."""
    cleaned = clean(text)
    for number in numbers(cleaned):
        if is_percent_at(cleaned, number.end):
            return float(number.value)
    return None


_BANDWIDTH = re.compile(
    r"(?<![\w.\-/:])(?:(\d{1,3})\s?[xX*]\s?)?(\d{1,3}(?:,\d{3})+|\d{1,15}(?:\.\d{1,9})?)"
    r"[ \t]{0,2}(?:(?:more|extra|additional|spare|free)[ \t]{1,2})?"
    r"([A-Za-z]{1,12}(?:/[A-Za-z]{1,3})?(?:\s+per\s+sec(?:ond)?)?)(?![\w/])"
)
_WORD_PREFIX = words.BANDWIDTH_WORD_PREFIXES
_LETTER_PREFIX = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BIT_SUFFIXES = words.BIT_WORDS | {"b", "b/s"}
_ETHERNET = {"e", "be", "ige"}
_BARE = {"G", "g", "T", "M"}
"""Prefixes that mean a rate on their own: ``10G``, ``1T``, ``500M`` (not ``m``, ``k``)."""


def _bandwidth_factor(unit: str) -> int | None:
    """bit/s per unit of ``unit`` (``Gbps`` -> 1e9, ``GB/s`` -> 8e9), or None if not a rate."""
    unit = re.sub(r"(?:(?<!\s)\s++per\s++sec(?:ond)?|/sec)$", "/s", unit)
    lower = unit.lower()
    for word, factor in _WORD_PREFIX.items():
        if lower.startswith(word):
            rest = lower[len(word) :]
            if word in words.BANDWIDTH_PREFIXES_ALONE and rest == "":
                return factor  # "10 gig", "10 gigs", "10GigE"
            if rest in words.BIT_WORDS:
                return factor
            if rest in words.BYTE_WORDS:
                return factor * 8
    if lower in words.BIT_WORDS:
        return 1
    if unit in {"Bps", "B/s"} or lower in words.BYTE_RATE_WORDS:
        return 8
    prefix, rest = unit[:1], unit[1:]
    scale = _LETTER_PREFIX.get(prefix.lower())
    if scale is None:
        return None
    if rest == "":
        return scale if prefix in _BARE else None
    if rest in {"Bps", "B/s"} or rest.lower() in words.BYTE_WORDS:
        return scale * 8
    if rest.lower() in _BIT_SUFFIXES or (scale >= 10**9 and rest.lower() in _ETHERNET):
        return scale
    return None


def find_bandwidths(text: Any) -> list[Found]:
    """Every rate in ``text`` as bit/s (``10G``, ``1.5 Gb/s``, ``2x100G``, ``10 GB/s`` = 80e9)."""
    cleaned = clean(text)
    found = []
    for m in _BANDWIDTH.finditer(cleaned):
        factor = _bandwidth_factor(m[3])
        if factor is None:
            continue
        try:
            amount = Decimal(m[2].replace(",", "")) * factor * int(m[1] or 1)
        except InvalidOperation:  # pragma: no cover - the pattern only admits digits
            continue
        bps = int(amount)
        if bps >= 1:
            found.append(Found(m.start(), m.end(), bps))
    return found


def bandwidth_bps(text: Any) -> int | None:
    """The first rate in ``text`` in bit/s, e.g. ``"2x100G"`` -> 200_000_000_000.

    Accepts ``10G``, ``10 Gbps``, ``10 gbit/s``, ``10 gig``, ``10GE``, ``500M``, ``500 Mbps``,
    ``1.5 Gb/s``, ``1,000 Mbps``, ``400G``, ``2x100G``; bytes (``10 GB/s``, ``10 GBps``,
    ``10 gigabytes per second``) are multiplied by 8. See the module notes for what is not read.
    """
    found = find_bandwidths(text)
    return found[0].value if found else None


# ---------------------------------------------------------------------------------------------
# Durations

_UNIT_SECONDS = {
    "s": 1,
    "m": 60,
    "h": 3600,
    "d": 86400,
    "w": 604800,
    "mo": 2592000,
    "fortnight": 1209600,
}
_UNIT_WORDS = (
    r"(?P<u_s>sec(?:ond)?s?|s)"
    r"|(?P<u_m>min(?:ute)?s?|mn|(?-i:m))"
    r"|(?P<u_h>h(?:ou)?rs?|hours?|h)"
    r"|(?P<u_d>days?|d)"
    r"|(?P<u_w>w(?:ee)?ks?|weeks?|w)"
    r"|(?P<u_mo>months?|mos?)"
    r"|(?P<u_fortnight>fortnights?)"
)
_NUMBER_WORDS = words.NUMBER_WORDS
_WORD_ALT = "|".join(
    re.escape(w).replace(r"\ ", r"\s+") for w in sorted(_NUMBER_WORDS, key=len, reverse=True)
)
_DURATION = re.compile(
    r"(?:(?<![\w.\-/:])|(?<=\d[hHdDwWm]))(?:(?P<num>\d{1,9}(?:\.\d{1,6})?)\s?-?\s?|(?P<word>"
    + _WORD_ALT
    + r")(?:\s+|-))(?:"
    + _UNIT_WORDS
    + r")(?![^\W\d]|/)",
    re.I,
)
_ISO = re.compile(
    r"(?<![\w])P(?:(\d{1,6})W)?(?:(\d{1,6})D)?(?:T(?:(\d{1,6})H)?(?:(\d{1,6})M)?(?:(\d{1,6})S)?)?(?!\w)"
)
_JOIN = re.compile(r"\s*(?:,|and)?\s*", re.I)


def _unit_of(m: re.Match[str]) -> tuple[int, str]:
    for name, seconds in _UNIT_SECONDS.items():
        if m.group(f"u_{name}"):
            return seconds, m.group(f"u_{name}")
    return 0, ""  # pragma: no cover - one unit group always matches


def find_durations(text: Any) -> list[Found]:
    """Every span of time in ``text`` in seconds; adjacent parts add up (``1h 30m`` = 5400)."""
    cleaned = clean(text)
    parts: list[tuple[int, int, int, int]] = []  # start, end, seconds, unit
    for m in _DURATION.finditer(cleaned):
        unit, unit_text = _unit_of(m)
        if m["num"] is not None:
            amount = float(m["num"])
        elif len(unit_text) < 2:
            continue  # "a m", "last s": a word and a letter are not a duration
        else:
            word = re.sub(r"[\s-]+", " ", m["word"].lower())
            amount = float(_NUMBER_WORDS.get(word, _NUMBER_WORDS.get(word.replace(" ", "-"), 0)))
        seconds = round(amount * unit)
        if seconds >= 1:
            parts.append((m.start(), m.end(), seconds, unit))
    for m in _ISO.finditer(cleaned):
        if m.end() - m.start() < 3 or m.group(0).endswith("T"):
            continue
        w, d, h, mi, s = (int(g or 0) for g in m.groups())
        seconds = w * 604800 + d * 86400 + h * 3600 + mi * 60 + s
        if seconds >= 1:
            parts.append((m.start(), m.end(), seconds, 0))
    parts.sort()
    merged: list[Found] = []
    last_unit = 0
    for start, end, seconds, unit in parts:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and unit
            and last_unit > unit
            and _JOIN.fullmatch(cleaned, previous.end, start)
        ):
            merged[-1] = Found(previous.start, end, previous.value + seconds)
        else:
            merged.append(Found(start, end, seconds))
        last_unit = unit
    return merged


def duration_seconds(text: Any) -> int | None:
    """The first span of time in ``text``, in whole seconds.

    Reads ``last 15 minutes``, ``past 2 hours``, ``over the last day``, ``this week`` (604800),
    ``24h``, ``30m``, ``90 s``, ``an hour``, ``half an hour``, ``1.5 hours``, ``15-minute``,
    ``a couple of days``, ``1h30m``, ISO 8601 ``PT15M``. See the module notes for what is not.
    """
    found = find_durations(text)
    return int(found[0].value) if found else None


# ---------------------------------------------------------------------------------------------
# Comparison operators

_OPERATOR_PHRASES = {**words.OPERATOR_PHRASES_BEFORE, **words.OPERATOR_PHRASES_AFTER}
_POSTFIX = frozenset(words.OPERATOR_PHRASES_AFTER)
_TIME_AFTER = (
    r"(?!\s+(?:the\s+)?(?:last|past|previous|prior|recent|next|trailing|rolling|this|that)\b)"
    r"(?!\s+(?:a|an|one)\s+(?:second|minute|hour|day|week|month|fortnight)s?\b)"
    r"(?!\s+\d+(?:\.\d+)?\s?(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?"
    r"|w|wks?|weeks?|months?)\b)"
)


def _phrase_pattern(phrase: str) -> str:
    body = r"\s+".join(re.escape(word) for word in phrase.split(" "))
    if phrase == ">":
        return r"(?<![-<=])>(?![=>])"
    if phrase == "<":
        return r"(?<![<])<(?![=>\-])"
    if phrase == "+":  # (not a join, "model + cpu", nor a sum, "10+2")
        return r"(?<=[\d%])\+(?![\w+])"
    if phrase[0].isalpha():
        body = r"(?<![\w\-/])" + body
    if phrase[-1].isalpha():
        body += r"(?![\w\-/])"
    if phrase.split(" ")[-1] in {"over", "above", "beyond", "under", "past"}:
        body += _TIME_AFTER
    return body


_PHRASES_LONGEST_FIRST = sorted(_OPERATOR_PHRASES, key=len, reverse=True)
_OPERATOR_NAMES = {f"p{i}": p for i, p in enumerate(_PHRASES_LONGEST_FIRST)}


@dataclass(frozen=True, slots=True)
class Comparison:
    """An operator phrase: ``op`` in gt/gte/lt/lte; ``postfix`` when it follows the number."""

    op: str
    start: int
    end: int
    postfix: bool


_OPERATOR_SEARCH = Alternation(
    [
        Alternative(f"(?P<p{i}>{_phrase_pattern(p)})", p[0])
        for i, p in enumerate(_PHRASES_LONGEST_FIRST)
    ],
    starts=r"(?<![\w\-/])[a-z]|["
    + re.escape("".join(sorted({p[0] for p in _PHRASES_LONGEST_FIRST if not p[0].isalpha()})))
    + "]",
)
"""The operator phrases' search, trying only where a phrase can start: a letter at a word start
(every worded phrase begins behind a lookbehind for it) or a symbol anywhere. Scanning for the
phrases' first words, each behind its own lookbehind, had cost 106 us on the worked example's
text; this, 8 us. (That single pattern, which tests hold this one equal to, cost 50 ms to
compile at every start; it lives in tests/unit/test_extractors.py now.)"""


def find_comparison(text: str) -> Comparison | None:
    """The leftmost operator phrase in already-folded ``text`` (longest at that position)."""
    m = _OPERATOR_SEARCH.search(text)
    if m is None or m.lastgroup is None:
        return None
    phrase = _OPERATOR_NAMES[m.lastgroup]
    return Comparison(_OPERATOR_PHRASES[phrase], m.start(), m.end(), phrase in _POSTFIX)


def comparison(text: Any) -> str | None:
    """The operator an operator means: ``gt``, ``gte``, ``lt`` or ``lte`` (None if none).

    ``at or above``, ``at least``, ``>=``, ``no less than``, ``90% or more`` -> gte;
    ``above``, ``over``, ``more than``, ``exceeds``, ``greater than``, ``>`` -> gt;
    ``below``, ``under``, ``less than``, ``<`` -> lt;
    ``at or below``, ``at most``, ``<=``, ``no more than``, ``90% or less`` -> lte.
    """
    found = find_comparison(mask_ids(fold(text)))
    return found.op if found else None


# ---------------------------------------------------------------------------------------------
# Metrics

_SPECIFIC_METRICS = re.compile(
    r"(?<![\w\-/])(?:"
    r"(?P<cpu>cpus?\d{0,2}|processors?|control[\s-]plane)"
    r"|(?P<memory>memory|mem|ram|memories|heap)"
    r"|(?P<errors>errors?|errs?|crcs?|fcs|runts|giants)"
    r"|(?P<latency>latency|latencies|delay|rtt|round[\s-]trip(?:\s+time)?)"
    r"|(?P<jitter>jitter)"
    r"|(?P<temperature>temperature|temp|thermals?)"
    r"|(?P<optical_power>optical\s+(?:power|levels?)|light\s+levels?|[rt]x\s+power"
    r"|(?:receive|transmit)\s+power)"
    r")(?![\w\-/])"
)
_UTILIZATION = re.compile(
    r"(?<![\w\-/])(?:utili[sz](?:ation|ed|ing)|utilization|util|utils|utl|utilz|usage"
    r"|load|loaded|busy|busier|busiest|traffic|throughput|saturation|saturated"
    r"|bandwidth|bw)(?![\w\-/])"
)


def metric(text: Any) -> str | None:
    """The metric a request is about: ``utilization``, ``cpu``, ``memory``, ``errors``, or one
    the inventory does not observe (``latency``, ``jitter``, ``temperature``,
    ``optical_power``: see ``OTHER_METRIC_UNITS``), or None.

    utilization: utilization/utilisation/util/usage/load/busy/traffic/throughput/bandwidth;
    cpu: cpu/processor/control plane; memory: memory/mem/ram/heap; errors: errors/errs/crc/fcs.
    A cpu, memory or errors word wins over a utilization word (``cpu usage`` is cpu).
    """
    folded = mask_ids(fold(text))
    specific = _SPECIFIC_METRICS.search(folded)
    if specific is not None and specific.lastgroup is not None:
        return specific.lastgroup
    return "utilization" if _UTILIZATION.search(folded) else None


# ---------------------------------------------------------------------------------------------
# Helpers for extractors


def clamp_int(value: float, low: int, high: int) -> int:
    """``value`` rounded and forced into ``[low, high]``."""
    return max(low, min(high, round(value)))


def plain_number(value: float) -> int | float:
    """``80.0`` -> ``80``; other values unchanged (JSON reads nicer)."""
    return int(value) if float(value).is_integer() else value
