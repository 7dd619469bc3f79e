"""Arguments of ``lookup_inventory`` from plain text.

* ``kind``: the first inventory word that is what the caller wants listed, not a filter:
  sites (site, datacenter, dc, pop, location), devices (device, router, switch, box, node,
  host, chassis, firewall, gear), interfaces (interface, port, intf, iface, nic), links (link,
  circuit, cable, connection, uplink, lag, trunk, neighbour, peer, adjacency, topology). A word
  after ``on``/``at``/``in``/``to``/``behind``... (``ports on the switch``) or right before an id
  (``router nyc1-core-01``) is a filter; when only such words appear, a device word still means
  devices (``show router nyc1-core-01``), and ``what is connected to X`` or ``devices
  connected to X`` means links (X's, whose other ends are those devices).
* ``site``: a site slug (three letters and a number, ``nyc1``) standing on its own.
* ``device``: the first device name or resource id (an interface id names its device).
* ``role``: only in the shapes ``core routers``, ``agg switches``, ``edge devices``, ``role
  core``, and only when listing devices (or the kind is unknown).
* ``status``: mapped onto the statuses the inventory filters by, which differ per kind: links
  connected/planned/down/decommissioning, devices active/planned/offline/failed/decommissioning.
  Sites and interfaces are not filtered by status; with no kind, only planned and
  decommissioning (valid for both) are kept.
* ``limit``: ``first 10``, ``top 10``, ``limit 20``, ``show 5 devices``; at most 500.
"""

from __future__ import annotations

import re
from typing import Any

from skills.common.text import (
    DEVICE_ROLE,
    INTERFACE_NAME,
    after_spaces,
    clamp_int,
    device_refs,
    fold,
    link_ids,
    mask_ids,
    total,
)

LIMIT_RANGE = (1, 500)

_KIND_WORDS = {
    "sites": r"sites?|data\s?cent(?:er|re)s?|dcs|pops?|locations?|facilit(?:y|ies)|campus(?:es)?",
    "devices": r"devices?|routers?|switch(?:es)?|box(?:es)?|nodes?|hosts?|chassis|firewalls?"
    r"|appliances?|gear|hardware|equipment|rtrs?|sws?",
    "interfaces": r"interfaces?|ports?|intfs?|ifaces?|nics?",
    "links": r"links?|circuits?|cables?|cabling|connections?|uplinks?|downlinks?|lags?"
    r"|trunks?|neighbou?rs?|peers?|adjacenc(?:y|ies)|topology|interconnects?|backhauls?",
}
_KIND = re.compile(
    "|".join(
        rf"(?P<{kind}>(?<![\w\-/:])(?:{words})(?![\w\-/]))" for kind, words in _KIND_WORDS.items()
    )
)
_FILTER_BEFORE = re.compile(
    r"(?:\b(?:on|at|in|inside|behind|to|from|between|within|under|for|off|via|per)"
    r"|attached\s+to|connected\s+to|hanging\s+off)"
    r"\s+(?:(?:the|this|that|these|those|a|an|each|every|all|my|our|its|their|one)\s+)?$"
)
_SITE_CODE = r"[a-z]{3}\d{1,2}"
_ID_AFTER = re.compile(
    rf"(?:[a-z]{{2,5}}\d{{1,3}}-{DEVICE_ROLE}-\d|network-resource-\d|"
    + _SITE_CODE
    + r"(?![\w\-/:]))"
)
_CONNECTED_TO = re.compile(
    r"\b(?:what|who|which)(?:'s|\s+is|\s+are)?\s+(?:connected|attached|cabled|plugged\s+in)\s+to\b"
)
_CONNECTED_KIND = re.compile(
    # the devices on the other end of a device's links: "devices connected to <device>",
    # "which routers are attached to <device>" (its links say who they are)
    r"\b(?:devices?|routers?|switch(?:es)?|box(?:es)?|nodes?|gear|hosts?)\s+(?:that\s+|which\s+)?"
    r"(?:are\s+|is\s+)?(?:connected|attached|cabled|linked|plugged\s+in)\s+to\s(?:the\s)?"
    r"(?:(?:router|switch|device|box|node)\s)?"
)
_SITE = re.compile(r"(?<![\w\-/:.])(" + _SITE_CODE + r")(?![\w\-/:]|\.\w)")
_NOT_SITES = frozenset(
    {
        "top",
        "max",
        "min",
        "eth",
        "fxp",
        "gig",
        "ten",
        "hun",
        "lag",
        "cpu",
        "mem",
        "ram",
        "crc",
        "err",
        "vrf",
        "irb",
        "vla",
        "utf",
        "sha",
        "ipv",
        "pop",
        "rfc",
        "dns",
    }
)
_ROLE_WORDS = {
    "core": r"core",
    "aggregation": r"agg|aggr|aggregation|aggregate|distribution|dist",
    "edge": r"edge|border",
    "access": r"access|tor|top[\s-]of[\s-]rack",
}
_DEVICE_NOUN = (
    r"(?:devices?|routers?|switch(?:es)?|box(?:es)?|nodes?|gear|rtrs?|sws?|role|layer|tier)"
)
_ROLE = re.compile(
    "|".join(
        rf"(?<![\w\-/])(?P<{role}>(?:{words})\s+(?:layer\s+|tier\s+)?{_DEVICE_NOUN}\b"
        rf"|role\s*(?:=|:|of|is)?\s*(?:{words})\b)"
        for role, words in _ROLE_WORDS.items()
    )
)
_STATUS_WORDS: tuple[tuple[str, str], ...] = (
    ("planned", r"planned|future|upcoming|not\s+yet\s+(?:built|live|installed|connected)"),
    ("decommissioning", r"decommission(?:ed|ing)?|decomm?(?:ed|ing)?|being\s+retired|retiring"),
    ("failed", r"failed|failing|broken|dead"),
    (
        "offline",
        r"(?<!drill\s)(?<!break\s)(?<!narrow\s)(?<!scroll\s)(?<!top\s)(?<!top-)down(?!\s+(?:to|the|by)\b)"
        r"|offline|off-line|unreachable|out\s+of\s+service|oos",
    ),
    (
        "up",
        r"active|online|in\s+service|operational|healthy|(?:are|is|currently)\s+up"
        r"|up\s+(?=links|circuits|devices|routers|switches)|connected(?!\s+to)",
    ),
)
_STATUS = re.compile(
    "|".join(rf"(?<![\w\-/])(?P<{name}>{words})(?![\w\-/])" for name, words in _STATUS_WORDS)
)
_STATUS_BY_KIND = {
    "links": {
        "planned": "planned",
        "decommissioning": "decommissioning",
        "failed": "down",
        "offline": "down",
        "up": "connected",
    },
    "devices": {
        "planned": "planned",
        "decommissioning": "decommissioning",
        "failed": "failed",
        "offline": "offline",
        "up": "active",
    },
    None: {"planned": "planned", "decommissioning": "decommissioning"},
}
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "five": 5, "ten": 10, "twenty": 20}
_LIMIT = re.compile(
    r"(?<![\w-])(?:first|top|limit(?:\s+(?:to|of))?|max(?:imum)?|up\s+to|at\s+most|only)\s+"
    r"(\d{1,6}|one|two|three|five|ten|twenty)(?![\w.%])(?!\s*(?:%|percent|pct))"
    r"|(?<![\w-])(?:show|list|give|get|find)\s+(?:me\s+)?(?:the\s+)?(?:first\s+)?"
    r"(\d{1,6}|one|two|three|five|ten|twenty)\s+(?=[a-z])"
)


def _kind(folded: str, masked: str) -> str | None:
    connected = _CONNECTED_KIND.finditer(masked)
    if any(_ID_AFTER.match(folded, after_spaces(folded, m.end())) for m in connected):
        return "links"
    filters: list[str] = []
    for m in _KIND.finditer(masked):
        kind = m.lastgroup
        if kind is None:  # pragma: no cover - one named group always matches
            continue
        before = _FILTER_BEFORE.search(masked, max(0, m.start() - 60), m.start())
        if before or _ID_AFTER.match(folded, after_spaces(folded, m.end())):
            filters.append(kind)
            continue
        return kind
    if _CONNECTED_TO.search(masked):
        return "links"
    return "devices" if "devices" in filters else None


def _limit(masked: str) -> int | None:
    m = _LIMIT.search(masked)
    if m is None:
        return None
    word = m[1] or m[2]
    value = int(word) if word.isdigit() else _NUMBER_WORDS[word]
    return clamp_int(value, *LIMIT_RANGE) if value >= 1 else None


def _named(text: str, kind: str | None, devices: list[str]) -> tuple[str | None, str | None]:
    """The kind a named thing gives a text that says none (``acme-lnk-00002 total capacity?``:
    links; ``vendor of nyc1-core-01``: devices; ``xe-0/0/1 on nyc1-core-01``: interfaces), and
    the link named when links are asked for (1.1: that one link)."""
    link = next(iter(link_ids(text)), None)  # (ids of 64 characters at most)
    if kind is None and link is not None:
        return "links", link
    if kind is None and devices:
        return ("interfaces" if INTERFACE_NAME.search(text) else "devices"), None
    return kind, link if kind == "links" else None


@total
def extract(text: str) -> dict[str, Any]:
    """Whatever of ``kind``, ``site``, ``device``, ``link``, ``role``, ``status``, ``limit``
    text states."""
    arguments: dict[str, Any] = {}
    folded = fold(text)
    masked = mask_ids(folded)
    devices = device_refs(text)  # (likewise)
    said = _kind(folded, masked)
    kind, link = _named(text, said, devices)
    if kind is not None:
        arguments["kind"] = kind
    if link is not None:
        arguments["link"] = link
    site = next((m[1] for m in _SITE.finditer(masked) if m[1][:3] not in _NOT_SITES), None)
    if site is not None:
        arguments["site"] = site
    if devices and link is None:  # (the link named is the one: no device filters it)
        arguments["device"] = devices[0]
    if kind in (None, "devices"):
        role = _ROLE.search(masked)
        if role is not None and role.lastgroup is not None:
            arguments["role"] = role.lastgroup
    # (a thing named, its kind unsaid, is asked about, not filtered: "is acme-lnk-00002 up?"
    # wants its record, whatever its status)
    if kind in _STATUS_BY_KIND and (said is not None or kind is None) and link is None:
        status = _STATUS.search(masked)
        if status is not None and status.lastgroup is not None:
            mapped = _STATUS_BY_KIND[kind].get(status.lastgroup)
            if mapped is not None:
                arguments["status"] = mapped
    limit = _limit(masked)
    if limit is not None:
        arguments["limit"] = limit
    return arguments
