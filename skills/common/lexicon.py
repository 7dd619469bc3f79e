"""The network lexicon: what operators' words mean, as features for the core's router.

The core router (``agent/routing``) knows no network; it reads a deployment's
``FeatureProvider`` (``agent.sdk.FeatureProvider``). This module is the network's: ``netops``
registers :class:`NetworkFeatures` in its ``Deployment``. Everything domain-specific the router
reads lives here, in one place:

* **Metrics and their synonyms** (:data:`METRIC_SYNONYMS`): utilization (load, busy, hot,
  saturated, congested...), cpu (processor, control plane), memory (ram, heap), errors (crc,
  fcs, discards, drops), and those the trade asks about that no skill here observes
  (:data:`OBSERVED` is the four): packet loss, latency (delay, rtt), jitter, temperature,
  optical power (light levels, dBm, rx/tx power), power draw (watts, kW), fan speed, uptime,
  voltage, humidity, bit error rate (BER, SNR). Each adds its canonical word to the text the
  router reads, plus ``metric``.
* **Resource kinds recognized structurally**: a device name (``nyc1-core-01``) or resource id
  adds ``device``; an interface name (``xe-0/0/1``, ``ge-0/0/0``, ``Ethernet1/1``, ``et-0/0/2``)
  ``interface``; a link id (``acme-lnk-00002``) ``link``; a site slug (``nyc1``) ``site``.
* **Votes** for the skills of this deployment, by id:

  - the threshold pattern (a metric, a comparison, a number, maybe a unit) for
    ``evaluate_resource_condition``; a metric and a resource without a threshold ("how busy is
    acme-lnk-00002?") for it too, more weakly: the skill asks for the threshold;
  - capacity phrasing (``N more G``, ``room for``, ``take another``, ``spare``, ``slack``,
    ``fit``, a bare ``headroom``, a bandwidth with a link or two devices) for
    ``check_link_capacity``; a headroom in percent for the deprecated ``link_headroom`` (its
    own answer, which it keeps: the router lets a replaced skill lose otherwise);
  - attribute words (model, hardware, software version or release, vendor or a vendor's name,
    serial, endpoints, which ports, status, up or down, site, whether it exists) about one
    resource (named, or described by its site and role: "the sfo1 edge box"), for
    ``lookup_inventory``; strongly for its parts (``ports
    on <device>``, ``links from <device>``) or a link's ends (``A and Z ends``); a set of the
    inventory's things (``every access switch``, ``list the links``) too;
  - upgrade phrasing about a link, for ``plan_link_upgrade`` (strongly, of a named link alone);
    the rates it moves to or from (``a bump to 100G``) are its targets, no traffic to fit;
  - against the evaluation: a metric of no named resource and no threshold (``crc errs??``,
    ``is <site> congested``), a resource said to be full without a threshold (``is <link>
    saturated``: a threshold, or no room left?);
  - against every skill here: a metric no skill observes, with no other metric (``packet loss
    on <link> over 1%?``), unless it is the reason of an upgrade or capacity question; the
    caller is told so (``TextFeatures.note``); a change bid (``shut down``, ``reboot``,
    ``push the config``, ``roll out``, ``open a ticket``: no skill makes changes), a test run on
    the network (``ping the far end of <link>``, ``traceroute``: the caller is told no skill
    runs one), an inspection verb with
    nothing to measure or know (``verify the link between ...``: which check?), advice on a
    symptom (``what do we do?``), a watch kept (``keep an eye on <device>``), a health asked in
    no measure (``<link> - is it fine?``) and a question about networking in general
    (``explain OSPF vs IS-IS``), so the router asks.

* **Asks** between two skills one request fits alike (``TextFeatures.asks``): a topic, a few
  words with none that asks, naming a resource and a metric without a threshold (``<device>
  interface errors``) or its bare status (``status of <link>?``): the inventory's record, or
  an evaluation?; a rate in question (``is 10G enough for <link>``) or more bandwidth needed
  with no figure: the capacity check, or the upgrade planner? So are sufficiency with no
  traffic named (``the 10G link <link> - enough?``) and growth of no size (``can <link>
  grow?``), and an upgrade weighed against moving the traffic; a link's capacity said and no
  more (``what's the bandwidth on <link>``): its record, or its room? A question (``how busy
  is <link>?``, ``what is the status of <link>``) is no topic: it keeps its skill.

  A vote only raises (or, negative, lowers) a skill's score among the caller's candidates; it
  never adds a skill the caller may not use.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from types import MappingProxyType

from agent.sdk import TextFeatures
from skills.common.text import (
    INTERFACE_NAME,
    METRIC_UNITS,
    Comparison,
    clean,
    device_refs,
    find_bandwidths,
    find_comparison,
    fold,
    is_percent_at,
    link_ids,
    mask_ids,
    numbers,
)

EVALUATE = "evaluate_resource_condition"
CAPACITY = "check_link_capacity"
INVENTORY = "lookup_inventory"
UPGRADE = "plan_link_upgrade"
LEGACY = "link_headroom"
"""The deprecated headroom skill (replaced by the capacity check): its own answer is a percent."""

METRIC_SYNONYMS: dict[str, str] = {
    "utilization": r"utili[sz](?:ation|ed|ing)|util|utils|usage|load(?:ed)?|busy-ness|busy"
    r"|busyness|busier|busiest|hot|hotter|hottest|saturat(?:ed|ion|ing)|congest(?:ed|ion)|maxed(?:\s+out)?|pegged|throughput"
    r"|running\s+hot|idle|idling|quiet|under[\s-]?utili[sz]ed|underused|lightly\s+used",
    "cpu": r"cpus?|processors?|control[\s-]plane|routing\s+engine",
    "memory": r"memory|mem|ram|heap",
    "errors": r"errors?|errs?|crcs?|fcs|discards?|discarding|drops?|dropping|dropped|runts|giants",
    "packet loss": r"packet[\s-]loss|pkt[\s-]loss|loss|lossy|losing\s+packets",
    "latency": r"latency|latencies|delay|delays|rtt|round[\s-]trip(?:\s+time)?|response\s+time",
    "jitter": r"jitter|pdv",
    "temperature": r"temperature|temp|temps|degrees|celsius|fahrenheit|thermal|overheat(?:ing|ed)?"
    r"|hotter|warmer|cooler|colder|heat|\d+(?:\.\d+)?\s*(?:°\s*)?[cf]|\d+(?:\.\d+)?\s*°",
    "optical power": r"optical\s+(?:power|levels?)|light\s+(?:levels?|readings?)|dbm"
    r"|(?:rx|tx|receive|transmit|received|transmitted)\s+(?:optical\s+)?(?:power|light)"
    r"|optics?\s+levels?",
    "power draw": r"power\s+(?:draw|drawn|consumption|usage|use|budget|load)|drawing\s+power"
    r"|wattage|watts?|kilowatts?|\d+(?:\.\d+)?\s*kw",
    "power supply": r"psus?|power\s+suppl(?:y|ies)|power\s+modules?",
    "fan speed": r"fans?(?:\s+(?:speeds?|rpms?|trays?))?|rpms?",
    "uptime": r"uptime|up[\s-]time|time\s+since\s+(?:the\s+)?(?:last\s+)?(?:reboot|boot|restart)",
    "voltage": r"voltages?|volts?|\d+(?:\.\d+)?\s*v",
    "humidity": r"humidity|relative\s+humidity",
    "bit error rate": r"bit[\s-]error[\s-]rate|ber|(?:pre|post)[\s-]fec(?:\s+ber)?|snr"
    r"|signal[\s-]to[\s-]noise(?:\s+ratio)?|osnr",
    # a reliability figure of the fleet's history, which no telemetry here holds
    "failure rate": r"mtbf|mttr|mttf|mean\s+time\s+(?:between|to)\s+(?:failures?|repairs?|restore)"
    r"|failure\s+rates?|afr",
}
"""Canonical metric -> the words operators use for it (regular expression, lower case)."""
OBSERVED = frozenset(METRIC_UNITS)
"""The metrics the inventory observes (``skills.common.text.METRIC_UNITS``): the others above
are known, so that a request about one is told it, not run by a skill that cannot answer it."""

_METRIC = re.compile(
    # one lookbehind and one lookahead around the named alternatives, not one pair per metric:
    # the same matches in the same order (each metric's words are tried, each followed by the
    # lookahead, before the next metric's), and 2-3 times faster, being tried once per position
    r"(?<![\w\-/])(?:"
    + "|".join(rf"(?P<m{i}>{words})" for i, words in enumerate(METRIC_SYNONYMS.values()))
    + r")(?![\w\-/])"
)
_METRIC_NAMES = {f"m{i}": name for i, name in enumerate(METRIC_SYNONYMS)}
_UTILIZATION_GROUP = f"m{list(METRIC_SYNONYMS).index('utilization')}"
_INTERFACE = INTERFACE_NAME
_SITE = re.compile(r"(?<![\w\-/:.])(?:site\s+)?[a-z]{3}\d{1,2}(?![\w\-/:])")
_CAPACITY = re.compile(
    # ("spares" are parts kept for a failure, no room)
    r"(?<![\w-])(?:room\s+(?:for|on|left)|take\s+(?:another|(?:an?|the)\s+extra|more|on)|spare(?!s\b)"
    r"|slack"
    # ("is <link> fit for ...": the adjective, suitability, no room)
    r"|fit\b(?<!is\sfit)(?<!are\sfit)(?<!be\sfit)(?<!\bnot\sfit)"
    # (not a compound: "Carry-over: <device> cpu above 50%?" carries nothing)
    r"|(?:fits|squeeze|squeezed|absorb|carry|handle|accommodate|push)(?![\w-])"
    r"|space\s+for|enough\s+(?:bandwidth|capacity|room|space)|headroom\s+for"
    # capacity for traffic to come: "does the link have capacity for that extra load?"
    r"|(?:capacity|bandwidth|bw)\s+for\s+(?:the\s+|that\s+|this\s+|an?\s+|some\s+)?"
    r"(?:extra|additional|more|new|another|added)\b"
    # the check named by its object: "check <link> capacity", "the bandwidth check on <link>"
    r"|check\s+(?:the\s+)?(?:capacity|bandwidth|bw)\b"
    r"|(?:capacity|bandwidth|bw)\s+(?:check|of|on)\b"
    r"|\d+(?:\.\d+)?\s*(?:more|extra|additional)\s+(?:g|gig|gigs|gbps|gbit|gigabits?|m|mbps"
    r"|megabits?|t|tbps)\b|another\s+\d|(?:more|extra|additional)\s+\d"
    r"|free\s+(?:bandwidth|capacity|bw|headroom)|avail(?:able)?\.?\s+(?:bandwidth|capacity|bw)"
    # a rate said available, free or spare ("has at least 4 Gbps available"): room, no threshold
    r"|\d+(?:\.\d+)?\s*(?:g|gig|gigs|gbps|gbit|gigabits?|m|mbps|megabits?|t|tbps)\s+(?:\w+\s+){0,3}?"
    r"(?:available|free|spare|unused)\b"
    # a newcomer taken on ("can we add the new customer in <site>?"): room for its traffic
    r"|(?:add|onboard|fit|host|take\s+on)\s+(?:the\s+|a\s+|an\s+|another\s+|one\s+more\s+)?"
    r"(?:new\s+)?(?:customers?|tenants?|clients?|services?)\b"
    r"|how\s+many\s+(?:gigabits|gbps|gbit/s|megabits|mbps|bits|bps))"
)
_SIZE = re.compile(
    # a link's capacity or bandwidth, saying not which of it (free, used, needed): "capacity of
    # <link>", "what's the bandwidth on <link>": its size on record, or its room?
    # (what it is for says which: "bandwidth on <link> for the backup job" is room to fit it)
    # (the total said, "provisioned bandwidth of <link>", is its size on record: an attribute)
    r"(?<![\w-])(?<!provisioned\s)(?<!configured\s)(?<!contracted\s)(?<!committed\s)"
    r"(?<!nominal\s)(?<!physical\s)(?<!total\s)(?<!rated\s)"
    r"(?:capacity|bandwidth|bw)\s+(?:of|on)\b"
)
_FOR_WHOM = re.compile(r"(?<![\w-])for\s+(?!me\b|us\b)")
"""What a size is for, which makes it room to fit (read after ``_SIZE`` on its line)."""
_SIZE_ASKED = re.compile(
    # the same in other words: "how much bandwidth does <link> have", "<link> how much
    # capacity", "the capacity figure for <link>", "bandwidth details for <link>", "capture
    # <link> capacity" (none of them free, left or spare: that is room, the capacity check's)
    r"(?<![\w-])(?:how\s+much\s+(?:capacity|bandwidth|bw)(?:\s+(?:does|do|is|has))?"
    r"(?:\s{2,}|\s+(?:the\s+|this\s+|that\s+)?(?:link|circuit)\s+)(?:have|got|carry|on|there)?"
    r"|(?:capacity|bandwidth|bw)\s+(?:figures?|info|information|details|numbers|stats)"
    r"\s+(?:for|of|on)|\s{2}(?:'s\s+)?(?:capacity|bandwidth|bw)(?=\s*[.?!]?\s*$)"
    r"|\s{2}how\s+much\s+(?:capacity|bandwidth|bw)(?=\s*[.?!]?\s*$))"
)
_ROOM_SAID = re.compile(
    # room, said anywhere: the capacity check's ("need free bandwidth numbers for <link>")
    r"(?<![\w-])(?:left|free|spare|available|remaining|headroom|room|unused|fits?)(?![\w-])"
)
_CHECK_SIZE = re.compile(r"check\s+(?:the\s+)?(?:capacity|bandwidth|bw)")
"""The check's verb and the noun alone ("check the capacity"): its size, or its room?"""
_WINDOW_SAID = re.compile(
    r"(?<![\w-])(?:last|past|previous)\s+(?:\d+\s*[a-z]*|hour|hr|day|week|night)(?![\w-])"
)
_CHECK_NAMED = re.compile(r"(?:capacity|bandwidth|bw)[\s-]+check|checker")
"""The capacity check named as a thing ("run the capacity check on <link>"): its room."""
_SIZE_NOUN = re.compile(r"(?<![\w-])(?:capacity|bandwidth|bw)(?![\w-])")
_TOTAL = re.compile(
    # a link's size said as its total: "total capacity", "nominal bandwidth", "contracted bw"
    r"(?<![\w-])(?:total|nominal|provisioned|configured|contracted|committed|rated|physical"
    r"|tier|circuit\s+size|port\s+speed)(?![\w-])"
)
_ROOM_MORE = re.compile(
    # room in other words: "avail bw", "not in use", "can we still add", "for it", "grow"
    r"(?<![\w-])(?:avail\w*|not\s+in\s+use|still|add\w*|extra|more|grow\w*|push\w*|for\s+it"
    r"|saturat\w*)(?![\w-])"
)
_TRAFFIC_FOR = re.compile(
    # traffic its room is wanted for: "bandwidth of <link> for the backup job"
    r"(?<![\w-])for\s+(?:the\s+|a\s+|an\s+|this\s+|that\s+|our\s+|some\s+|\w+\s+){0,2}"
    r"(?:traffic|flows?|streams?|jobs?|backups?|replication|transfers?|loads?|waves?|feeds?)"
    r"(?![\w-])"
)
_DEMAND = re.compile(
    # load or traffic to come, no measure of what is carried: "that extra load", "the new traffic"
    r"(?<![\w-])(?:extra|additional|more|new|added)\s+(?:load|traffic|throughput|usage)(?![\w-])"
)
_LEFT = re.compile(
    # what is left of a link, in any words: "what's left on", "how much juice is left"
    r"(?<![\w-])(?:what\W?s\s+left|how\s+much\s+(?:\w+\s+){0,2}(?:is\s+|do\s+we\s+have\s+)?left"
    r"|(?:remaining|unused|leftover|left[\s-]over|unclaimed|untapped|residual|spare)\s+"
    r"(?:throughput|bandwidth|capacity|bw|b/w|room|headroom|space|bits|gbps|mbps|rate)"
    r"|(?:throughput|bandwidth|capacity|bw|room|headroom|gigs?|gbps|mbps|bits)\s+(?:is\s+|are\s+)?"
    r"(?:still\s+)?"
    r"(?:left|remaining|remains|free|available|unused)"
    r"|how\s+much\s+(?:\w+\s+){0,2}(?:is\s+|do\s+we\s+have\s+)?(?:still\s+)?(?:free|available|unused)"
    r"|left\s+(?:on|over\s+on|in)\b)"
)
_HEADROOM = re.compile(r"(?<![\w-])(?:headroom|hdrm|hdroom|headrom)(?![\w-])")
_FULL = re.compile(
    # a resource said to be full, without a threshold: its utilization, or its room left
    # (how saturated or congested it is, a degree, is its load: "how congested is <link>?";
    # how full, its load or its room)
    r"(?<![\w-])(?<!how\s)(?:saturat(?:ed|ion|ing)|congest(?:ed|ion)|maxed(?:\s+out)?|pegged)"
    r"(?![\w-])|(?<![\w-])full(?![\w-])"
)
_STATE_ASKED = re.compile(
    # a state asked, verb first: "is <link> busy", "are the uplinks overloaded?" (not said, "<link>
    # keeps running hot")
    # (tried from the start of the text or of a run of non-word characters holding a stop,
    # without backtracking into runs: linear in the text)
    r"(?:^\W*+|(?<!\W)[^\w.;:!?,]*+[.;:!?,]\W*+)"
    r"(?:is|are)\s++(?:(?:the|this|that|it|our|its)\s++)?(?:[\w/-]*+\s++){0,3}?"
    r"(?:really\s+|too\s+|very\s+|still\s+)?(?:hot|busy|saturated|congested|maxed(?:\s+out)?"
    r"|pegged|overloaded|loaded|running\s+hot)(?![\w-])"
)
_STATE = re.compile(
    r"hot|hottest|running\s+hot|busy|busier|busiest|saturat\w*|congest\w*|maxed(?:\s+out)?"
    r"|pegged|idle|idling|quiet|under[\s-]?utili[sz]ed|underused|lightly\s+used|throughput"
)
"""Metric words that say a state rather than ask for a measure."""
_RATE = re.compile(r"speed|nominal|rated|line\s+rate|port\s+speed")
_PERCENT = re.compile(r"%|(?<![\w-])(?:percent|percentage|pct)(?![\w-])")
_CHANGE_BID = (
    # a change to the network, which no read-only skill makes: asked about, never run; bid
    # (the text's first verb, or after "please", "can you"...), not a later step ("before we
    # push the config"); after a purpose ("to enable LACP fast timers, configure ...") too
    r"(?:^\s*|[.;:!?]\s+|\s[-\u2013\u2014]+\s+|(?<![\w-])(?:please|pls|can\s+you|could\s+you"
    r"|would\s+you|go\s+ahead\s+and|i\s+need\s+you\s+to|need\s+to|let'?s|we\s+must)\s+)"
)
_CHANGE_VERB = (
    r"(?:shut(?:\s+down)?|roll\s*out|push\s+out|no\s+shut|reboot|restart|reload|configure|commit|deploy"
    r"|provision|roll\s*back|bounce|delete|enable|disable|book|reserve"
    # a configuration object applied ("apply the QoS policy to <link>")
    r"|apply\s+(?:[\w.-]+\s+){0,3}?(?:config\w*|polic\w+|templates?"
    r"|acls?|filters?|route-?maps?|patch\w*|changes?|images?|firmware|software|releases?|upgrades?)"
    # diagnostics gathered, which no skill gathers ("collect a tech-support bundle from <device>")
    r"|(?:collect|gather|grab|pull)\s+(?:the\s+|a\s+|an\s+)?(?:tech[\s-]?support|show\s+tech"
    r"|rsi|core\s*dumps?|crash\s*dumps?|diagnostics?|debug\s+logs?|syslogs?|logs?)"
    r"|install|uninstall|remove|rename|create|modify|escalate|edit|amend|reset|replace|swap"
    r"|assign|allocate|activate|deactivate|decommission|drain|schedule|order|rotate|revoke|renew"
    r"|cut\s*over|fail\s*over|re-?route|block|unblock|isolate|quarantine"
    # a setting raised or lowered, not a link's rate ("increase the capacity of <link>": a plan)
    r"|(?:increase|decrease|raise|lower|reduce)"
    r"(?!\s+(?:the\s+|its\s+)?(?:capacity|bandwidth|bw|speed|rate|size)\b)"
    # traffic moved, not a rate moved onto a link ("move 6 Gbps onto <link>": will it fit?),
    # nor a link moved to a rate ("move to 400G": an upgrade)
    r"|(?:move|shift|steer)(?!\s+(?:another\s+|an?\s+)?(?:extra\s+|additional\s+)?\d)"
    r"(?!\s+(?:it\s+)?(?:up\s+)?to\s+(?:an?\s+)?\d)"
    # "add" a thing, not a rate ("add 10G to <link>?" is the capacity check's question)
    r"|add(?!\s+(?:another\s+|an?\s+)?(?:extra\s+|additional\s+)?\d)"
    r"|set(?!\s+of)|update(?!\s+(?:me|us)\b)|correct(?!\s+me\b)"
    # (a change's bodies and processes are no change: "Change board wants ...", "per change
    # management")
    r"|change(?!\s+(?:request|record|ticket|window|log|id|number|ref|board|advisory|management"
    r"|control|freeze|calendar|approval|manager|process|review|team|proposal|prep"
    r"|preparation)\b)"
    r"|clear\s+(?:the\s+)?(?:\w+\s+)?(?:counters|cache|caches|table|tables|sessions?|entries)|(?:turn|bring)\s+(?:\w+\s+)?(?:up|down|on|off)"
    r"|push\s+(?:the\s+|a\s+)?(?:[\w-]+\s+){0,3}?(?:acl|config\w*|polic\w+|change|route"
    r"|filter|template)"
    # a limit lifted or dropped ("drop the rate-limit on <port>", "lift the policer")
    r"|(?:drop|lift|remove|disable|relax)\s+(?:the\s+|its\s+|that\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:rate[\s-]?limit\w*|limiter|shap(?:er|ing)|policer|polic\w+|acls?|filters?)"
    # a message to others than the caller: "send the weekly report to the management list"
    r"|(?:send|forward|e-?mail|mail|post)\s+(?!(?:me|us)\b)(?:[\w'-]+\s+){1,6}?to\s+"
    r"(?!(?:me|us)\b)(?:the|a|an|our|my|his|her|their|all|every|each)\b"
    # (a mail even to the caller: the agent answers here, it sends no mail)
    r"|e-?mail\s+(?:me|us)\b"
    r"|(?:e-?mail|notify|page|ping|alert)\s+(?:the|our|all|every)\s+(?:[\w-]+\s+)?"
    r"(?:team|teams|list|group|channel|on-?call|noc|engineers?|managers?|management|customers?)"
    r"|(?:open|raise|file|log)\s+(?:a\s+|an\s+)?(?:[\w-]+\s+)?(?:ticket|case|incident))(?![\w-])"
    # a noun, not a bid ("lower than 50%?", "change in util", "increase of errors"), nor a
    # label ("Update: ...")
    # (one space: a named thing blanked between them is the verb's object, "decommission <link>
    # in the records")
    r"(?!\s(?:than|in|of)\b)(?!\s*:)"
)
_CHANGE = re.compile(_CHANGE_BID + _CHANGE_VERB)
_CHANGE_AT = re.compile(_CHANGE_VERB)
_PURPOSE = re.compile(
    # (from the start of the text or of a run of non-word characters holding a stop and a space,
    # the run read once: linear in the text)
    r"(?:^\W*+|(?<!\W)(?>\W*?[.;:!?]\s)\W*+)(?:to|in\s+order\s+to)\s+[^,.;:!?]{1,80},\s+"
)
"""A purpose said first ("to enable LACP fast timers, ..."): a bid may follow it."""


def _change_bid(masked: str) -> bool:
    """Whether ``masked`` bids a change (``_CHANGE``), or bids one after a purpose."""
    if _CHANGE.search(masked):
        return True
    purpose = _PURPOSE.search(masked) if "," in masked else None
    return purpose is not None and _CHANGE_AT.match(masked, purpose.end()) is not None


_PROBE = re.compile(
    # a test run on the network, which no skill runs: "ping the far end of <link>", "can you
    # traceroute to <device>" (bid as a change is)
    r"(?:^\s*|[.;:!?]\s+|(?<![\w-])(?:please|pls|can\s+you|could\s+you|would\s+you"
    r"|go\s+ahead\s+and|i\s+need\s+you\s+to|need\s+to|let'?s)\s+)"
    r"(?:ping|traceroute|trace\s*route|tracert|mtr|iperf|run\s+(?:a\s+|an\s+)?(?:ping|traceroute"
    r"|iperf|speed\s*test|loopback\s+test|bert))(?![\w-])(?!\s*:)"
)
_CHATTER = re.compile(
    # writing for its own sake, which no skill does: "compose a limerick about the core
    # switches", "tell me a joke about BGP"
    r"(?<![\w-])(?:write|compose|draft|make\s+up|tell|sing|give)\s+(?:me\s+|us\s+)?(?:an?\s+|some\s+)"
    r"(?:\w+\s+)?(?:poem|poems|limerick|haiku|sonnet|song|ballad|joke|jokes|rhyme|riddle|story"
    r"|bedtime\s+story)(?![\w-])"
)
_HOT = re.compile(r"hot|hotter|hottest|running\s+hot")
_CHASSIS = re.compile(
    # (a part that heats: "is the transceiver on <interface> running too hot?")
    r"(?<![\w-])(?:chassis(?!\s+type)|transceivers?|optics?|sfps?|qsfps?|psus?|linecards?"
    r"|line\s+cards?|supervisors?)(?![\w-])"
)
_SOFTWARE_CHANGE = re.compile(
    # a change of what a device runs, wherever it is asked ("upgrade the firmware on <device>",
    # "should we patch junos on ...?"): no link upgrade, and no skill here makes it
    r"(?<![\w-])(?:upgrad\w*|updat\w*|patch\w*|flash\w*|downgrad\w*|reimag\w*|install\w*)\s+"
    r"(?:(?:the|its|their|a|an|new|latest)\s+)*(?:[\w.-]+\s+)?(?:firmware|software|os|image|code"
    r"|junos|eos|ios|ios-xe|ios-xr|nx-?os|bios|release|microcode|patch)(?![\w-])"
    # (or a thing taken to a release by its number: "upgrade <device> to 23.4R1")
    r"|(?<![\w-])(?:upgrad\w*|updat\w*|downgrad\w*)\s+(?:[^.;:!?]{0,40}?\s)?to\s+(?:version\s+|v)?"
    r"\d+(?:\.\d+)+(?:[a-z]+\d*)?(?:\.\d+)*(?![\w-])(?!\.\d)"
)
_PERFORMED = re.compile(
    # an upgrade carried out, which the planner only recommends: "go ahead and upgrade <link>"
    r"(?<![\w-])(?:go\s+ahead\s+(?:and|with)|proceed\s+(?:to|with)|carry\s+out|perform|execute"
    r"|implement|do)\s+(?:the\s+|an?\s+|that\s+)?"
    # (its rate or kind between: "implement the 400G upgrade", "do the approved link upgrade")
    r"(?:(?:\d[\w.]*|link|circuit|capacity|bandwidth|planned|proposed|approved)\s+){0,2}upgrad\w*"
    # an upgrade bid for a time ("Upgrade <link> to 100G during the Saturday window", "pls
    # upgrade <link> tonight"): work scheduled, not a recommendation asked
    r"|(?:^\W*+|[.;:!?]\s++|(?<![\w-])(?:please|pls|kindly)\s++)(?:upgrade|bump)\s+"
    # (not a recommendation named for a time: "upgrade plan for <link> in the next window")
    r"(?!(?:recommend|plan|advi|option|proposal|path|candidate|decision|assessment)\w*)"
    r"[^.;:!?]{0,60}?"
    # (or bid as approved, or to be carried out: "as approved in the last CAB", "- proceed with
    # the implementation")
    r"(?:(?<![\w-])(?:as\s+approved|(?:was|were|been|is|got)\s+approved"
    r"|(?:proceed|go\s+ahead)\s+with\s+(?:the\s+)?(?:implementation"
    r"|change|work|rollout))"
    r"|(?<![\w-])(?:during|in|at|on|this|next)\b[^.;:!?]{0,30}?"
    r"(?<![\w-])(?:window|maintenance|mw|weekend|monday|tuesday|wednesday|thursday"
    r"|friday|saturday|sunday)|(?<![\w-])(?:tonight|now|today|immediately|asap|right\s+away))"
    r"(?![\w-])"
)
_PROTOCOL_STATE = re.compile(
    # a routing protocol's sessions or neighbours, which no skill reads: "is the bgp neighbor on
    # <device> established", "the BGP session to the upstream"
    r"(?<![\w-])(?:bgp|ospf|is-?is|eigrp|ldp|rsvp|pim|bfd|vrrp|hsrp)\s+(?:\w+\s+)?(?:sessions?"
    r"|neighbou?rs?|neighbou?rships?|peers?|peerings?|adjacenc\w*|process\w*|state|status"
    r"|established|flap\w*"
    # its own figures, which no telemetry here holds: "the OSPF cost on <link> higher than 100"
    r"|costs?|metrics?|weights?|local[\s-]?pref\w*|med|timers?|hold[\s-]?times?|areas?|routes?"
    r"|prefix(?:es)?)(?![\w-])"
)
_PROTOCOLS = ("bgp", "ospf", "is-is", "isis", "eigrp", "ldp", "rsvp", "pim", "bfd", "vrrp", "hsrp")
"""The routing protocols' names, looked for before their state is (most texts name none)."""
PROTOCOL_NOTE = (
    "This agent reads no routing-protocol state (BGP, OSPF sessions and neighbours): its skills "
    "only read the network's inventory and telemetry (and recommend upgrades)."
)
_INSPECT = re.compile(
    # a look at something, saying neither what to measure nor what to know of it
    r"(?<![\w-])(?:verify|inspect|examine|investigate|look\s+(?:at|into)|troubleshoot"
    r"|sanity[\s-]check|eyeball|diagnose|review|assess|assessment|evaluate|appraise"
    r"|(?:have|take)\s+a\s+(?:quick\s+)?look|validate|baseline"
    # a view asked of no measure: "a view on <link> for the renegotiation", "numbers on the
    # core boxes for the deck" (not "so I can compare": the reason for a run)
    r"|(?:a\s+)?view\s+on|(?:numbers|figures)\s+(?:on|for)"
    # facts gathered, of no kind: "gather the facts on <link>", "collect some info on <device>"
    r"|(?:gather|collect|compile|pull\s+together|put\s+together|prepare|assemble)\s+"
    r"(?:the\s+|some\s+|all\s+(?:the\s+)?)?(?:facts|details|info|information|data|evidence"
    r"|numbers|figures)"
    # information asked, of no kind: "we need info on <device>", "any information about <link>"
    # (of a thing named: an id, masked to blanks, or "the <site> firewall")
    r"|(?:info|information|intel|details)\s+(?:on|about|regarding|re)(?=\s{3,}|\s+(?:the|this"
    r"|that|our|your)\s+(?:\w+\s+)?(?:device|router|switch|link|circuit|box|firewall|site|port"
    r"|interface)s?(?![\w-]))"
    # a watch kept, which no skill keeps: "keep an eye on <device>", "monitor <link>"
    r"|keep\s+(?:an\s+)?eyes?\s+on|keep\s+tabs\s+on|keep\s+watch\s+on|watch|monitor|babysit)"
    r"(?![\w-])"
)
_STATE_LOOK = re.compile(
    # a state looked at, not read off a record: "check the status of", "a quick status on",
    # "its current state", "gather the state of"
    r"(?<![\w-])(?:check|checking|verify|query|gather|get|give\s+me)\s+(?:me\s+|us\s+)?"
    r"(?:a\s+|an\s+|the\s+|its\s+)?(?:\w+\s+)?(?:status|state)(?![\w-])"
    r"|(?<![\w-])(?:quick|current|overall|general|latest|present)\s+(?:status|state)(?![\w-])"
    r"|(?<![\w-])(?:status|state)\s+unknown(?![\w-])"
)
_UP_DOWN = re.compile(
    r"(?<![\w-])(?:up|down|admin|oper|operational|active|planned|decommission\w*|maintenance)"
    r"(?![\w-])"
)
"""A state named (``up or down``, ``admin/oper``, a record's ``planned``): the record's."""
_LOOK_AS_NOUN = re.compile(r"(?<![\w-])(?:the|a|an|our|for)\s+(?:\w+\s+)?$")
"""Before a look's word, what makes it a noun: "for the morning review" (no look asked)."""
_EVENT = (
    r"(?:cutover|cut-over|rollout|roll-out|change|migration|move|season|holidays?|peak|failover"
    r"|fail-over|launch|go-live|event|campaign|sale|surge|onboarding|traffic\s+from|next\s+\d+"
    r"\s+(?:months?|weeks?|years?)|next\s+(?:year|quarter|month)|growth)"
)
_SUITED = re.compile(
    # fit or ready for an event, or able to take it: "fit for the cutover", "ready for
    # tomorrow's change", "can <link> handle the rollout", "fit to take the traffic from the
    # failed path", "fit for purpose for the next 12 months"
    r"(?<![\w-])(?:(?:fit|ready|good|ok|okay|prepared|sized)\s+(?:for|to\s+(?:take|handle|carry"
    r"|absorb))|handle|cope\s+with|survive|take|absorb)\s+(?:\S+\s+){0,5}?"
    rf"{_EVENT}(?![\w-])"
)
_FOR_PURPOSE = re.compile(
    # an attribute word naming a purpose, not asking the attribute: "for the hardware refresh",
    # "the vendor renegotiation", "a software audit"
    r"(?<![\w-])(hardware|hw|vendor|software|platform|model|firmware)\s+(?=(?:refresh|renewal"
    r"|renegotiation|negotiation|review|audit|lifecycle|life\s+cycle|eol|contract|deck|meeting"
    r"|call|budget|planning|roadmap)(?![\w-]))"
    # the vendor as who asks or wrote, not its name asked: "Vendor TAC is asking ...", "the
    # vendor asked us to ...", "Vendor note: ...", "per vendor guidance"
    r"|(?<![\w-])(vendor(?:'s)?)\s+(?=(?:tac|doc|docs|documentation|note|notes|bulletin|bulletins"
    r"|guidance|guide|reference|advisory|advisories|support|case|qbr|engineer|engineers|team"
    r"|asked|asks|says|said|wants|wanted|recommends|recommended|suggests|suggested|told"
    r"|requires|requested|best\s+practice|eol\s+review)(?![\w-]))"
)
_HEALTH = re.compile(
    # whether a thing is well, in no measure: "is <link> fine?", "is it healthy", "health of"
    r"(?<![\w-])(?:(?:is|are|was|looks?|seems?|running|doing|still)\s+(?:\S+\s+){0,6}?"
    r"(?:fine|ok|okay|alright|all\s+right|healthy|happy|good|normal|sane|behaving|up\s+to\s+the\s+job)"
    r"|health(?:y|\s+of|[\s-]?checks?)?"
    # a problem asked after, of no kind: "is there a problem between A and B?", "anything wrong
    # with <device>"
    r"|(?:is|are)\s+there\s+(?:a\s+|an\s+|any\s+)?(?:problems?|issues?|trouble)\s+(?:on|with|between|at|in)"
    r"|(?:anything|something)\s+wrong\s+(?:with|on|at)|what'?s\s+wrong\s+(?:with|on|at)"
    # its condition or shape, of no measure: "condition of <device>?", "what shape is it in"
    r"|conditions?\s+(?:of|on|for)|(?:what|which)\s+(?:\w+\s+)?(?:shape|condition)\s+(?:is|are)"
    r"|in\s+(?:good|bad|poor|decent|ok|what)\s+(?:shape|condition)"
    # how it fares, in no measure: "how is <link> looking", "how are the uplinks holding up"
    r"|how(?:'?s|\s+(?:is|are|was|were))\s+(?:\S+\s+){0,8}?(?:looking|doing|holding\s+up|performing"
    r"|getting\s+on|faring))(?![\w-])"
)
_HEALTH_WORD = re.compile(r"(?<![\w-])health(?:y|[\s-]?checks?)?(?![\w-])")
_PART_WORDS = frozenset(
    ("interface", "interfaces", "port", "ports", "lag", "lags", "bundle", "bundles")
)
"""A thing's parts, whose health may be asked as the thing's is."""
_CONCERN = re.compile(
    # a concern, of no measure: "which links need attention", "worried about them"
    r"(?<![\w-])(?:needs?\s+(?:some\s+)?attention|worr(?:y|ied|ying)\s+about"
    r"|concern(?:ed|ing)?\s+(?:about|with)|at\s+risk|troubl(?:e|ed|esome))(?![\w-])"
)
_ASKING = re.compile(
    # a word that asks or bids: without one, "<thing> <word>" is a topic ("<link> status")
    r"(?<![\w-])(?:how|what|what'?s|whats|which|who|where|when|why|is|are|was|were|does|do|did"
    r"|can|could|will|would|should|has|have|show|list|give|get|tell|find|confirm|verify"
    r"|report|pull|fetch|display|look\s+up|lookup|evaluate|compare|need|want)(?![\w-])"
)
_CHECK_BID = re.compile(
    # "check" bids where a verb stands (first, after a pause, "please", "to"...); after a noun it
    # is one ("<device> status check": a topic, the check of its status)
    r"(?:^\W*|[.;:!?,]\s*|(?<![\w-])(?:please|pls|plz|you|someone|to|and|then|also|just|now)\s+)"
    r"check(?![\w-])"
)
TOPIC_WORDS = 4
"""A topic is this many words at most, ids aside ("status of <link>?", "<device> interface
errors"): a longer text without a word that asks is a request in other words."""
_TOPIC_WORD = re.compile(r"[a-z]{2,}")
_BARE_STATE = frozenset(("status", "state"))
"""Attribute words that alone, in a topic, may be the record's or the thing's health."""
_RATE_ENOUGH = re.compile(
    # a rate in question, not a rate to add: "is 10G enough for <link>"
    # (no two neighbouring runs of spaces can trade characters: linear in the text)
    r"\d(?:\.\d+)?(?:\s*+(?:[kmgt]|gig|gigs|gbps|mbps|tbps|gbit|gbe|ge))?"
    r"(?:\s++(?:link|circuit|pipe))?\s++(?:be\s++|is\s++|still\s++)?(?:enough|sufficient|adequate|plenty)(?![\w-])"
)
_SUFFICIENT = re.compile(
    r"(?<![\w-])(?:enough|sufficient|adequate)(?![\w-])(?!\s+(?:for|to|with)\b)"
)
_MORE_WANTED = re.compile(r"(?<![\w-])(?:another|extra|additional|more)(?![\w-])")
"""More of something wanted: sufficiency (``_SUFFICIENT``) before it on its line is for it."""
"""Sufficiency asked, and not for what ("is <link> big enough?", not "... big enough for
another forty gigabits")."""
_LINK_RATE = (
    r"\d+(?:\.\d+)?\s*(?:g|gig|gbps|gbit|gbe|ge|m|mbps|t|tbps)\s+(?:link|circuit|pipe|uplink)"
)
_OWN_RATE = re.compile(
    # the rate a named link is, not traffic to fit on it: "the 10G link <link>", "<link>, a
    # 100G circuit" (an id is blanked in the masked text: two spaces at least)
    rf"(?<![\w.])(?:{_LINK_RATE})\s\s|(?<!\s)\s\s[\s,(-]*+(?:is\s+|being\s+)?an?\s+{_LINK_RATE}(?![\w-])"
)
_UNSIZED = re.compile(
    # whether a thing can take more, of no size: "can <device> take more?", "is there space on
    # <link>", "can <link> cope?", "is <device> ready for the extra load", "room on <link>?",
    # "can <link> handle it?" (what "it" is, is not said)
    r"(?:(?<![\w-])(?:take\s+(?:on\s+)?more|(?:any\s+|is\s+there\s+(?:any\s+)?)(?:space|room)\s+on"
    r"|cope|coping|ready\s+for\s+(?:the\s+|more\s+|extra\s+|additional\s+)+(?:load|traffic)"
    r"|(?:handle|take|absorb|carry|manage)\s+(?:it|that|this|them))"
    r"|^\W*(?:any\s+)?(?:space|room)\s+on)"
    r"\s*[?.!]*\s*$"
)
_GROW = re.compile(
    # whether a thing can grow, of no size and nothing after: "can <link> grow?", "room to grow
    # on <link>?"
    r"(?<![\w-])(?:grow|growth|expand|expansion|scale)(?:\s+(?:on|at|for))?\s*[?.!]*\s*$"
)
_ELSEWHERE = re.compile(
    # an upgrade weighed against moving the traffic: "upgrade it or just move traffic
    # elsewhere?", "upgrade or rebalance?" (not "or can it wait", "or stay at 10G": the plan's)
    r"(?<![\w-])or\s+(?:[\w']+\s+){0,3}?(?:move|moving|re-?route|re-?routing|re-?balanc\w*|shift"
    r"|shifting|steer|steering|offload\w*|redistribut\w*|spread|load[\s-]?balanc\w*)(?![\w-])"
    # (a move to a rate is the upgrade itself: "or move to the next standard speed")
    r"(?!\s+(?:it\s+)?(?:up\s+)?to\s+(?:an?\s+|the\s+)?(?:next|faster|higher|bigger|\d))"
    # (and a move up is one too: "stay at 10G or move up?")
    r"(?!\s+(?:it\s+)?up(?![\w-]))"
)
_STORY = re.compile(
    r"(?<![\w-])(?:tell\s+me\s+about|story|picture|situation|rundown|lowdown)(?![\w-])"
)
_LOAD_OF = re.compile(
    # a measure of what a thing carries, of it: "the utilization of <link>", "traffic on <link>"
    r"(?<![\w-])(?:utili[sz]ation|util|usage|load|traffic|throughput)\s+(?:of|on|for|across"
    r"|through)(?![\w-])"
)
"""A link's load asked of no threshold and no size: against a threshold, or the room left?"""
_LOAD_WORD = re.compile(r"utili[sz]ation|util|utils|usage|load(?:ed)?")
_GROWING = re.compile(r"(?<![\w-])(?:grow\w*|expan\w*|scal(?:e|ing))(?![\w-])")
"""Growth, anywhere: load beside it is room to fill, the capacity check's."""
_LINK_WORD = r"links?|circuits?|paths?|uplinks?|downlinks?|pipes?|trunks?|lags?|between"
_LINKISH = re.compile(rf"(?<![\w-])(?:{_LINK_WORD}|interfaces?|ports?)(?![\w-])")
"""A link, or an interface, said in words: room or load is of it, not of a whole device."""
_ROOM_WORD = re.compile(r"(?<![\w-])(?:capacity|bandwidth|bw|headroom|room|spare)(?![\w-])")
"""Room said in a bare word ("how much capacity does <device> have"): of which link?"""
_LINK_WORDS = re.compile(rf"(?<![\w-])(?:{_LINK_WORD})(?![\w-])")
"""A link said in words: beside a named interface, "interface" or "port" is that one's word."""
_UP = re.compile(
    # whether a thing is up or down, asked: "is <link> up", "and is it even up?"
    r"(?<![\w-])(?:is|are)\s+(?:(?:it|they|the\s+\w+)\s+)?(?:even\s+|still\s+|actually\s+)?"
    # (not "up to 10G", "down by half", "up for renewal")
    r"(?:up|down)(?![\w-])(?!\s*(?:to|from|for|by|with|against|the|an?|\d)(?![\w-]))"
)
_RATE_AT = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?\s*(?:g|gig|gigs|gbps|gbit|gbe|ge|m|mbps|t|tbps)(?![\w/])"
)
_FOR_RATE = re.compile(
    # a rate to fit, said as what it is for: "okay for the 5G request", "take 2G more"
    r"(?<![\w-])(?:for|fit|take|carry|absorb|handle)\s+(?:the\s+|a\s+|an\s+|another\s+|that\s+"
    r"|this\s+|extra\s+|additional\s+)*\d+(?:\.\d+)?\s*(?:g|gig|gigs|gbps|gbit|m|mbps|t|tbps)"
    r"(?![\w/])"
)
_OR = re.compile(r"(?<![\w-])or(?![\w-])")
_EITHER = re.compile(r"(?<![\w-])either(?![\w-])")
"""``either A or B``: two requests offered, joined by the next ``or`` on its line."""
_EVERYTHING = re.compile(
    # all there is of a thing, of no kind: "show me everything on <device>"
    r"(?<![\w-])(?:everything|all\s+(?:you\s+(?:have|know|got)|there\s+is)|the\s+lot"
    r"|whatever\s+(?:you\s+)?(?:have|know|got|there\s+is)"
    r"|the\s+full\s+picture)\s+(?:on|about|for|of|at|regarding|re)(?![\w-])"
)
_BETWEEN = re.compile(r"^\W*(?:the\s+)?(?:link|links|circuit|path)\s+between\s+and\W*$")
_NEED_MORE = re.compile(
    r"(?<![\w-])(?:need|needs|require|requires|want)\s+(?:more|extra|additional|a\s+lot\s+more)\s+"
    r"(?:bandwidth|capacity|bw|room|headroom|throughput)(?![\w-])"
)
_TARGET = re.compile(
    # a rate a link would be upgraded to (or from): "a bump to 100G", "from 10G to 40G"
    # (or stayed at, against another: "stay at 10G or move up?"; or moved with an arrow, "go
    # 10G->40G": both its ends)
    r"(?:(?<![\w-])(?:to|into|from|stay\s+(?:at|on)|go(?:ing)?(?:\s+up)?)\s+(?:an?\s+)?"
    r"|(?:->|=>|\u2192|-to-)\s*)"
    r"\d+(?:\.\d+)?\s*(?:g|gig|gigs|gbps|gbit|gbe|ge|t|tbps|m|mbps)(?![\w/])"
    r"|(?<!\d)\d+(?:\.\d+)?\s*(?:g|gig|gigs|gbps|gbit|gbe|ge|t|tbps|m|mbps)\s*(?=->|=>|\u2192|-to-)"
)
_CHOICES = re.compile(
    # rates offered as choices: "40G or 100G", "a 100G or a 400G", "25G, 40G or 100G"
    r"(?<![\w-])(?:\d+(?:\.\d+)?\s*(?:g|gig|gbps|gbe|ge|t|tbps)\s*,\s*(?:an?\s+)?)*"
    r"\d+(?:\.\d+)?\s*(?:g|gig|gbps|gbe|ge|t|tbps),?\s+or\s+(?:an?\s+)?\d+(?:\.\d+)?\s*"
    r"(?:g|gig|gbps|gbe|ge|t|tbps)(?![\w/])"
)
_CHOICE_RATE = re.compile(r"(?<!\d)\d+(?:\.\d+)?\s*(?:g|gig|gbps|gbe|ge|t|tbps)(?![\w/])")
_CARRIED = re.compile(
    r"(?<![\w-])(?:carry(?:ing)?|carries|carried|traffic|throughput|flowing|passing)(?![\w-])"
)
_OBSERVED_OVER = re.compile(
    # a time gone by, over which a rate was observed: "in the last hr", "over the past week",
    # "peaked", "stayed below", "in the busy hour", "overnight"
    r"(?<![\w-])(?:(?:in|over|during|for|within)\s+the\s+(?:last|past|previous)|peak(?:ed|ing)"
    r"|stayed|remained|averag(?:ed|ing)|busy\s+hour|overnight|yesterday"
    r"|last\s+(?:night|hour|hr|day|week))(?![\w-])"
)
_ADVICE = re.compile(
    # advice on a symptom, which no skill gives: "<link> is congested, what do we do?"
    r"(?<![\w-])(?:what\s+(?:do|should|can|shall|must)\s+(?:we|i)\s+do|what\s+now|what\s+to\s+do"
    r"|how\s+(?:do|should|can)\s+(?:we|i)\s+(?:fix|handle|solve|resolve|deal\s+with)"
    r"|any\s+(?:ideas|advice|suggestions|thoughts)|what\s+would\s+you\s+do"
    r"|what\s+do\s+you\s+think|thoughts\s*\??\s*$)(?![\w-])"
    # a symptom, then a bare call for help: "<device> is dropping packets, help"
    r"|[,.;:!-]\s*(?:pls\s+|please\s+)?help(?:\s+(?:me|us|pls|please))?\s*[.!?]*\s*$"
)
_PROTOCOL = (
    r"(?:ospf|is-is|isis|bgp|mpls|eigrp|rip|stp|rstp|mstp|spanning[\s-]tree|vxlan|evpn|tcp|udp"
    r"|ipv4|ipv6|vlans?|lacp|ldp|rsvp(?:-te)?|segment\s+routing|srv6|qos|dns|dhcp|nat|arp|icmp"
    r"|snmp|netconf|gnmi|lldp|vrrp|hsrp|bfd|pim|igmp|ecmp)"
)
_THEORY = re.compile(
    # a question about networking in general, not about this network: "explain OSPF vs IS-IS"
    rf"(?<![\w-])(?:explain|difference\s+between|compare|teach\s+me|tell\s+me\s+about"
    rf"|how\s+(?:does|do)|what\s+(?:is|are|does)|what'?s|why\s+(?:does|do|is)|overview\s+of"
    rf"|primer\s+on)\s+(?:\w+\s+){{0,3}}?{_PROTOCOL}(?![\w-])"
)
_AND = re.compile(r"(?<![\w-])(?:and|plus|&|\+|as\s+well\s+as)(?![\w-])")
_LISTED = re.compile(
    # a second ask set apart: "...? also what's on its far end", "(1) ...; (2) ...", "(a) ...
    # (b) ...", "first ...; then ..." (not a semicolon alone: "customer complains of
    # congestion; what's the spare bandwidth" is a reason, then the ask)
    r"(?<![\w-])also(?![\w-])|(?<![\w-])\(?(?:b|2|ii)\)|(?<![\w-])then(?![\w-])"
    # (a second ask on the first's answer: "does 2G fit? If not, what should we upgrade to?")
    r"|[?.]\s+if\s+(?:not|so)(?![\w-])"
)
_ALTERNATIVE = re.compile(
    # "or" offering two courses ("a headroom check or an upgrade plan?"), not one word's
    # alternatives: "whether or not", "or so", "or more", "above or equal to"
    r"(?<![\w-])(?<!whether\s)or(?![\w-])(?!\s+(?:not|so|more|less|higher|lower|above|below"
    r"|over|under|greater|equal|fewer|worse|better|same|similar|thereabouts)(?![\w-]))"
)
_WHETHER = re.compile(r"(?<![\w-])(?:whether|if)\s+$")
READ_ONLY = (EVALUATE, CAPACITY, INVENTORY, UPGRADE, LEGACY)
"""The skills a change request is not for (all of this deployment's)."""
PROBE_NOTE = (
    "This agent runs no tests on the network (ping, traceroute): its skills only read the "
    "network's inventory and telemetry (and recommend upgrades)."
)
CHANGE_NOTE = (
    "This agent makes no changes: its skills only read the network's inventory and telemetry "
    "(and recommend upgrades)."
)
_VENDOR = (
    r"(?:juniper|cisco|arista|nokia|huawei|ericsson|ciena|extreme|mikrotik|fortinet|dell|hpe"
    r"|aruba|brocade|mellanox|palo\s+alto|checkpoint|zte|ubiquiti)"
)
_SOFTWARE = re.compile(
    r"(?<![\w-])(?:software|firmware|image|os|code|release|version|junos|eos|ios|nx-?os)(?![\w-])"
)
_LOADED = re.compile(r"load(?:ed)?")
"""What a device has loaded, beside a software word, is its image, not its utilization."""
_MAKE = (
    # the noun (who made it: "the make of <device>", "make and model"), not the verb ("is <link>
    # going to make it through the peak")
    r"(?:(?<=the\s)|(?<=its\s)|(?<=what\s)|(?<=which\s)|(?<=their\s))make"
    r"|make(?=\s*(?:and|&|/|,)\s*model)"
)
_ATTRIBUTE = re.compile(
    r"(?<![\w-])(?:model|models|hardware|hw|platform|chassis\s+type|software(?:\s+version)?"
    r"|os\s+version|firmware|version|vendor|vendors|manufacturer|serial(?:\s+number)?"
    rf"|{_MAKE}"
    r"|sn|endpoints?|ends?|other\s+end|far\s+end|(?:other|far)\s+side|a[\s-]side|b[\s-]side"
    r"|which\s+ports?"
    r"|what\s+ports?|status|state|which\s+site|what\s+site|located|location|where\s+is"
    # its role offered as a choice: "is <device> an edge or a core device?"
    r"|(?:edge|access|aggregation|agg|core|spine|leaf|border|distribution)\s+or\s+an?\s+\w+"
    r"(?=\s+(?:device|router|switch|box|node))"
    r"|role|hostname|ip\s+address|connected\s+to|attached\s+to|terminate[sd]?"
    # the label an operator gave it ("the description on <port>")
    # (not a form's field: "Description: please check")
    r"|(?:description|descr)(?!\s*:)|alias"
    # software and identity: "what os is it running", "its resource id"
    r"|os|operating\s+system|image|junos|eos|ios|nx-?os|resource\s+ids?|identifiers?|ids?"
    # its parts and ends: interfaces, ports, bundles, the links at a device
    r"|interfaces?|ports?|lags?|bundles?|port[\s-]channels?|members?|neighbou?rs?"
    # (where it goes, "going to <device>", "going to which site?", not the future: "going to be
    # a problem")
    # ("the attached graph": a document sent, no connection)
    r"|connects?|connecting|(?<!the\s)(?<!see\s)attached|(?:which|what|any)\s+links"
    r"|going\s+to(?=\s*$|\s*[^\w\s]|\s\s|\s+(?:the|an?|which|what|where)\b)"
    r"|mgmt|management\s+(?:ip|interface|address)"
    # its rated figures: "nominal speed", "line rate"
    # (the verb with its object, "record the result", asks no record)
    r"|speed|nominal|rated|line\s+rate|port\s+speed|cmdb"
    # its rate on record: "provisioned bandwidth of <link>", "the configured rate on <link>",
    # "rate of <link>?"
    r"|(?:provisioned|configured|contracted|committed|physical)\s+(?:bandwidth|capacity|rate"
    r"|speed|bw)|(?:^\W*|the\s+|its\s+)rate(?=\s+(?:of|on|for)\b)"
    # ("what rate is <link> provisioned at?")
    r"|(?<=what\s)rate(?=\s+(?:is|are)\b)|(?:provisioned|configured)\s+at"
    r"|record(?:s|ed)?(?!\s+(?:the|it|this|that|them|our|its|an?|what|how)\b)"
    # who made it, and its life-cycle state: "who makes", "planned or live"
    r"|who\s+makes|made\s+by|brand|planned|live|in\s+service|decommission\w*|active|offline"
    r"|online|release|releases|build"
    # the inventory's other fields: a site's region, a port's mtu and admin or oper state, a
    # link's kind and label
    r"|region|mtu|label|kind|type|enabled|disabled|admin(?:istrative)?\s+(?:status|state|up|down)"
    r"|oper(?:ational)?\s+(?:status|state|up|down)"
    # the makers themselves: "<device> - juniper or cisco?"
    rf"|{_VENDOR}"
    # its recorded state and its existence: "up or down", "listed as", "a device called ..."
    r"|up\s+or\s+down|down\s+or\s+up|up/down|listed|exists?|existence|called|named"
    # whether it is up or down, asked: "is <link> currently up?", "are its ports down?"
    # (not an idiom of load: "holding up", "keeping up", "slowing down")
    r"|(?:is|are|was|were|'s)\s[^.;:!?]{0,60}?(?<![\w-])(?<!holding\s)(?<!keeping\s)"
    r"(?<!slowing\s)(?<!going\s)(?<!coming\s)(?<!winding\s)(?<!backing\s)(?:up|down)"
    # (when: "is <link> up at the moment?", "can you check if it's up now?")
    r"(?:\s+(?:now|again|yet|today|currently|right\s+now|at\s+the\s+moment|at\s+present))?"
    r"(?=\s*\?|\s*$)"
    r"|(?:in|according\s+to|from|per)\s+(?:the\s+|our\s+)?(?:inventory|cmdb|records?))(?![\w-])"
)
_PARTS = re.compile(
    # the parts and links of a named thing: "ports on <device>", "links from <device>"; its
    # record itself: "inventory for <device>", "the cmdb entry of <link>"
    r"(?<![\w-])(?:ports|interfaces|intfs|links|circuits|lags|bundles|members|neighbou?rs|uplinks"
    # ("record the result": a verb)
    r"|cables|(?:inventory|cmdb)(?:\s+(?:entry|record|details))?|records?(?=\s+(?:for|of|on)\b)"
    # the list of one kind of part, named in the singular: "its interface list", "port table"
    r"|(?:interface|port|link|neighbou?r)\s+(?:list|listing|table|inventory))"
    r"(?:\s+(?:on|of|from|at|to|in|for|touching|attached\s+to|terminating\s+(?:on|at)))?"
    # the kind of the thing named after it: "the inventory entry for link <link>"
    r"(?:\s+(?:the\s+)?(?:link|device|router|switch|interface|circuit|port)(?=\s))?"
)
_ENDS = re.compile(
    # the ends of a link: "its A and Z ends", "the a-end", "which devices it joins"
    # ("the A/Z devices of <link>": its ends named by what they are)
    r"(?<![\w-])(?:a\s*(?:and|&|/|-)\s*z(?:\s+|-)(?:ends?|sides?|devices?|routers?|switches|boxes)"
    r"|[az][\s-](?:ends?|sides?)"
    r"|both\s+ends|end\s*-?points?|ends\s+of\s+(?:the\s+|this\s+|that\s+|its\s+)?(?:link|circuit)"
    # (of a link named, blanked: "the ends of <link>")
    r"|ends\s+of\s{4,}"
    r"|(?:other|far|either|each|both)\s+(?:end|ends|side|sides)"
    r"|(?:which|what)\s+(?:two\s+)?(?:devices|routers|switches|boxes)"
    # where it runs, from and to: "where does <link> go from and to", "where does it land"
    r"|from\s+(?:and|&)\s+to|where\s+(?:does|do)\s+(?:it\s+|they\s+|\s+)?(?:go|run|lead|land"
    r"|terminate|end\s+up))(?![\w-])"
)
_ROLE = r"(?:core|edge|access|aggregation|aggr|agg|distribution|dist|spine|leaf|border)"
_KIND = r"(?:switch|switches|routers?|rtrs?|devices?|boxes|box|gear|nodes?|firewalls?)"
_DESCRIBED = re.compile(
    # a device named by its site and role: "the sfo1 edge box", "lon1's core router"
    rf"(?<![\w\-/:.])[a-z]{{3}}\d{{1,2}}(?:'s)?\s+{_ROLE}\s+{_KIND}(?![\w-])"
)
_LISTING = re.compile(
    # a set of the inventory's things: "every access switch", "the edge routers", "list links"
    rf"(?<![\w-])(?:(?:every|all|each|any)\s+(?:the\s+|our\s+)?{_ROLE}\s+{_KIND}"
    # the role alone names the devices: "every core at fra1", "all the edges"
    rf"|(?:every|all|each)\s+(?:the\s+|our\s+)?(?:[a-z]{{3}}\d{{1,2}}\s+)?(?:{_ROLE}|pe)s?(?![\w-])"
    rf"|{_ROLE}\s+(?:switches|routers|rtrs|devices|boxes|nodes|layer)"
    # a kind counted or asked for as a set: "how many core routers at fra1", "what devices do
    # we have in tok1"
    rf"|how\s+many\s+(?:{_ROLE}\s+)?(?:{_KIND}|links|circuits|sites|ports|interfaces)"
    rf"|(?:what|which)\s+(?:{_ROLE}\s+)?(?:devices|links|routers|switches|circuits|sites|boxes"
    r"|nodes)\s+(?:do\s+we\s+have|are\s+there|exist)"
    r"|(?:list|enumerate)\s+(?:me\s+)?(?:the\s+|all\s+(?:the\s+)?|every\s+|our\s+)?(?:\w+\s+)?"
    r"(?:links|devices|sites|interfaces|ports|routers|switches|circuits)"
    r"|(?:list|show|give\s+me|enumerate)\s+(?:every|each)\s+(?:\w+\s+)?"
    r"(?:link|device|site|interface|port|router|switch|circuit)"
    # every one of a kind, each with what the inventory records: "for every device at lon1"
    r"|(?:every|all|each)\s+(?:the\s+|our\s+|of\s+the\s+)?(?:links?|devices?|sites?|routers?"
    r"|switch(?:es)?|circuits?)"
    # the devices of a site: "nrt2 devices", "the firewalls at osl3", "everything in kul2" (not
    # its links, "check the tok1 links", "how are the ams1 links": looked at, or listed?)
    r"|(?<![\w\-/:.])[a-z]{3}\d{1,2}\s+(?:devices|routers|switches|boxes|firewalls)"
    r"|(?:devices|routers|switches|boxes|firewalls|everything)\s+(?:at|in)\s+"
    r"(?:site\s+)?[a-z]{3}\d{1,2}(?![\w\-/:]))(?![\w-])"
)
_IDENTITY = re.compile(
    # what a device is, which only its record says: its model, maker, serial, software
    rf"(?<![\w-])(?:model|hardware|hw|platform|chassis\s+type|vendor|manufacturer|{_MAKE}|brand"
    rf"|made\s+by|who\s+makes|serial(?:\s+(?:number|no|num|#))?|sn|os(?:\s+(?:version|release))?"
    # (and the part it plays: "what role is it", "an edge or a core device?")
    r"|role|(?<=an\s)(?:edge|access|aggregation|agg)\s+or\s+an?\s+\w+(?=\s+(?:device|router|switch|box))"
    r"|(?<=a\s)(?:core|spine|leaf|border|distribution)\s+or\s+an?\s+\w+"
    r"(?=\s+(?:device|router|switch|box))"
    rf"|software(?:\s+version)?|firmware|operating\s+system|{_VENDOR}"
    # the vendors' own names of their software ("which JunOS is it on")
    r"|junos|eos|ios(?:-?xr|-?xe)?|nx-?os|sr\s+os|vrp"
    # and what a link is: its rate ("speed of <link>", "<link> link rate?", "rate of <link>")
    # (not a rate to move to: "which standard speed tier", "the right next speed")
    r"|(?<!standard\s)(?<!next\s)(?<!target\s)(?<!right\s)(?<!higher\s)(?<!faster\s)"
    r"(?<!new\s)speed(?!\s+(?:tier|up|bump))"
    r"|(?<!new\s)(?:link|port|line|circuit|configured|provisioned|nominal|contracted|committed)"
    r"\s+rate"
    r"|rate(?=\s+of\b)|rates(?=\s+(?:of|for)\b)"
    # ("what rate is it?", "which rate is <link>")
    r"|(?<=what\s)rate(?=\s+(?:is|are)\b)|(?<=which\s)rate(?=\s+(?:is|are)\b)"
    r"|(?:provisioned|configured)\s+at)(?![\w-])"
)
_IDENTITY_ASKED = re.compile(
    # what a thing is, asked ("the serial of <device>", "what software it runs"), not a word of
    # the list in passing ("the vendor asked us")
    rf"(?<![\w-])(?:what|which|the)\s+(?:\w+\s+)?(?:{_IDENTITY.pattern})"
    r"(?=\s+(?:of|for|on|it|they|does|do|is|are|please|pls|and)\b|\s*[?.!,;]|\s*$)"
)
_IDENTITY_BESIDE = re.compile(
    # what a thing is, asked as one of two asks: at a clause's start or after a join ("serial
    # of <device> and its mem usage vs 85%", "Two things: <device> model, and is cpu there
    # over 70?", "how much free on <link> and what speed is it"), or as its own
    rf"(?:^\W*|[,;:.?!)]\s*|(?<![\w-])(?:and|also|plus)\s+"
    rf"|(?<![\w-])(?:what|what'?s|which|its|their)\s+(?:\w+\s+){{0,2}}"
    # (after a join, its article: "errors check (>0 last 4h) and the contracted rate")
    rf"|(?<![\w-])(?:and|also|plus)\s+the\s+(?:\w+\s+)?"
    # or asked for by a verb: "(1) confirm vendor of <device>; (2) ...", "the configured speed
    # of <link> and ..."
    rf"|(?<![\w-])(?:confirm|verify|get|need|want|pull)\s+(?:the\s+)?(?:\w+\s+)?)"
    rf"(?:{_IDENTITY.pattern})"
    # (then the join of the other ask: "<device> model + cpu over 75%?", "serial AND whether")
    r"(?=\s+(?:of|for|on|is|it|there|are|they|and|plus)\b|\s*[?.!,;+&]|\s*$"
    # (its thing said after it: "which vendor the far-end box is")
    r"|\s+(?:the\s+)?(?:[\w-]+\s+){0,3}(?:is|are|runs?)\s*(?:[?.!,;]|$))"
)
_JOINED = re.compile(
    # two asks joined: by a word, by a list's numbers, by "two things", or two questions in a
    # row ("<device>: role? mem over 60?")
    r"(?<![\w-])(?:and|plus|also|as\s+well\s+as)(?![\w-])|&|\+|(?<![\w-])2\)|\?\s+(?=\w)"
    r"|(?<![\w-])two\s+(?:things|asks|questions)(?![\w-])"
)
_RECORDED = re.compile(
    # what the records say, not what the network carries: "a 10G link according to our
    # records", "the speed recorded for <link>"
    r"(?<![\w-])(?:(?:according\s+to|in|per|from)\s+(?:the\s+|our\s+)?(?:inventory|cmdb"
    # (its configured or provisioned rate is the record's too: "the configured speed, 10G or 100G?")
    r"|records?)|recorded|on\s+record|configured|provisioned|nominal)(?![\w-])"
)
_OWN_ATTRIBUTE = re.compile(
    # an attribute of the thing already named ("and its serial number"), not any word of the
    # list ("the vendor asked us")
    rf"(?<![\w-])(?:its|their)\s+(?:\w+\s+)?(?:{_ATTRIBUTE.pattern})"
)
_RAISED = re.compile(
    # a link's rate raised: "increase the capacity of <link>", "boost its bandwidth" (the
    # capacity word is the upgrade's object here, no capacity question)
    r"(?<![^\W\d_])(?:increas|rais|boost|grow|doubl|tripl)\w*+\s+(?:the\s+|its\s+)?"
    r"(?:capacity|bandwidth|bw|speed"
    r"|rate|size)"
)
_UPGRADE = re.compile(
    r"(?<![\w-])(?:upgrad(?:e|es|ed|ing)|upgard(?:e|es|ed|ing)|uprate|augment(?:s|ed|ing|ations?)?"
    r"|faster\s+(?:rate|speed|link|circuit|pipe|port)"
    # a link moved up from its rate: "should <link> be moved up from 1G?"
    r"|(?:mov|bump|step)\w*\s+up\s+from\s+\d+(?:\.\d+)?\s*(?:g|gig|gigs|gbps|gbe|ge|m|mb|mbps|t"
    r"|tbps)?"
    # (the next rate or speed of a link is an upgrade's target: "the right next speed for <link>")
    r"|bigger\s+(?:pipe|link|circuit)|next\s+(?:standard\s+)?(?:rate|speed|tier)|next\s+step\s+up"
    # a rate judged too much ("100g for <link> or overkill?"), or asked for a time to come
    # ("what rate for <link> next yr"): the planner's
    r"|overkill|(?:what|which)\s+(?:rate|speed|size)\s+for\s+[^.?!]{0,40}?(?:next|in\s+a|in\s+\d+)"
    r"\s*(?:\d+\s*)?(?:yr|year|years|quarter|q[1-4]|months?)"
    r"|bump(?:ed|ing)?|uplift(?:s|ed|ing)?|upsiz(?:e|es|ed|ing)|scale\s+up|higher\s+(?:rate|speed)"
    r"|(?:mov(?:e|es|ed|ing)|go(?:es|ing)?|migrat\w*)\s+(?:it\s+)?to\s+(?:a\s+)?(?:faster|higher|bigger)"
    rf"|{_RAISED.pattern}"
    # a rate a link would move to: "a move to 400G", "jump to 100G"
    # (in any tense: "warrants moving to 100 Gbps")
    r"|(?:mov(?:e|es|ed|ing)|go(?:es|ing)?|jump(?:s|ed|ing)?|step(?:s|ped|ping)?|migrat\w*)"
    r"\s+(?:it\s+)?(?:up\s+)?to\s+(?:an?\s+)?\d+(?:\.\d+)?\s*"
    r"(?:g|gig|gigs|gbps|gbe|ge|t|tbps)(?![\w/])"
    # a rate gone to with "to" unsaid, or a rate stayed at against another: "or go 40G", "stay
    # at 10G or ..."
    r"|(?<![\w-])go\s+(?:up\s+)?\d+(?:\.\d+)?\s*(?:g|gig|gbe|ge|t)(?![\w/])"
    r"|stay\s+(?:at|on)\s+\d+(?:\.\d+)?\s*(?:g|gig|gbps|gbe|ge|t|tbps)\W+or\b"
    r"|(?:what|which)\s+(?:rate|speed|size)\s+(?:should|to|would|must)"
    # a rate moved to another ("10G to 40G", "from 1G to 10G"), and the right rate chosen
    # ("recommend the right speed for <link>"): the plan's
    r"|\d+(?:\.\d+)?\s*(?:g|gig|gbps|gbe|ge|m|mbps|t|tbps)\s*(?:\s+to|-to-|->|=>|\u2192)\s*(?:an?\s+)?"
    r"\d+(?:\.\d+)?\s*"
    r"(?:g|gig|gbps|gbe|ge|t|tbps)(?![\w/])"
    # (the target's unit left to the source's: "go from 10 Gbps to 25?")
    r"|from\s+\d+(?:\.\d+)?\s*(?:g|gig|gbps|gbe|ge|t|tbps)\s+to\s+\d+(?:\.\d+)?"
    r"(?!\s*(?:%|percent|ms|m\b|mb|mbps|k))(?![\w/.])"
    r"|(?:right|correct|appropriate|best|proper)\s+(?:rate|speed|size)"
    # a rate or tier suggested for a link: "recommend a target bandwidth tier for <link>", "what
    # link speed would you suggest for <link>"
    r"|target\s+(?:bandwidth|capacity|speed|rate|tier|size)|(?:bandwidth|speed|rate)\s+tier"
    r"|(?:suggest|recommend|propose|advise)\w*\s+(?:(?:a|an|the|new|right|next|link|port"
    r"|circuit|line)\s+)*(?:speed|rate|tier|size)"
    r"|(?:what|which)\s+(?:link\s+|port\s+|circuit\s+)?(?:speed|rate|tier|size)\s+(?:would|should"
    r"|do|does|can)\s+(?:you|we|i)\s+(?:suggest|recommend|propose|advise|pick|choose|go\s+for))"
    r"(?![\w-])"
)
_NETWORK = re.compile(
    r"(?<![\w-])(?:links?|circuits?|bandwidth|bw|capacity|pipes?|lags?|trunks?|uplinks?|traffic"
    r"|flows?|gbps|mbps|gig|gigs|gigabits?|megabits?)(?![\w-])"
)
_QUESTION = re.compile(r"(?<![\w-])(?:how|what|is|are|does|check|show)(?![\w-])")


def _metrics(masked: str) -> list[str]:
    found = []
    matches = [m for m in _METRIC.finditer(masked) if m.lastgroup is not None]
    for index, m in enumerate(matches):
        after = matches[index + 1] if index + 1 < len(matches) else None
        name = _METRIC_NAMES[str(m.lastgroup)]
        if (
            after is not None
            and not masked[m.end() : after.start()].strip()
            and _METRIC_NAMES[str(after.lastgroup)] not in OBSERVED
        ):
            continue  # a measure's modifier, "cpu temperature": the temperature is asked
        if name not in found:
            found.append(name)
    return found


def _spoken(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def unobserved_note(metrics: list[str]) -> str:
    """What the caller is told of metrics no skill here observes."""
    said = _spoken(metrics)
    one = len(metrics) == 1
    return (
        f"{said[0].upper()}{said[1:]} {'is not a metric' if one else 'are not metrics'} this "
        f"agent observes: its skills read {_spoken(list(METRIC_UNITS))} only."
    )


def _of_named(pattern: re.Pattern[str], masked: str, folded: str) -> bool:
    """Whether ``pattern`` matches right before a named thing (an id, blanked in ``masked``)."""
    for m in pattern.finditer(masked):
        i = m.end()
        while i < len(folded) and folded[i].isspace():
            i += 1
        if i < len(folded) and masked[i] == " ":
            return True
    return False


def _after_named(pattern: re.Pattern[str], masked: str, folded: str) -> bool:
    """Whether ``pattern`` matches right after a named thing ("<device> interfaces")."""
    for m in pattern.finditer(masked):
        i = m.start() - 1
        while i >= 0 and folded[i].isspace():
            i -= 1
        if i >= 0 and masked[i] == " ":
            return True
    return False


def _split_asks(
    evidence: dict[str, list[int]], joins: list[int], states: set[int], *, offered: bool = False
) -> tuple[str, ...]:
    """Two skills whose evidence (match positions) lies wholly on either side of one join; a
    state (at ``states``: "runs hot and ..., should we upgrade") is an upgrade's reason, not a
    request of its own. Of two courses ``offered`` ("or"), a state and the room are one."""
    for join in joins:
        before = [s for s, at in evidence.items() if at and max(at) < join]
        after = [s for s, at in evidence.items() if at and min(at) > join]
        for first in before:
            for second in after:
                if first == second:
                    continue
                if (first, second) == (EVALUATE, UPGRADE) and set(evidence[first]) <= states:
                    continue
                if (
                    offered
                    and {first, second} == {EVALUATE, CAPACITY}
                    and set(evidence[EVALUATE]) <= states
                ):
                    continue  # "saturated, or is there slack?": one question, asked both ways
                return (first, second)
    return ()


def _joins(masked: str) -> list[int]:
    """Where ``masked`` joins two requests ("and", "plus"...); "whether and how far" is two words
    of one question, no join."""
    found = [m.start() for m in _AND.finditer(masked) if not _after_whether(masked, m.start())]
    found += [m.start() for m in _LISTED.finditer(masked)]
    either = _either_or(masked)
    return sorted([*found, either]) if either is not None else sorted(found)


def _after_whether(masked: str, at: int) -> bool:
    """Whether "whether" or "if" and a space end at ``at``: read back from ``at``, so that many
    joins cost one reading of the text, not one of all before each."""
    start = at
    while start > 0 and masked[start - 1].isspace():
        start -= 1
    return start < at and _WHETHER.search(masked, max(0, start - len("whether")), at) is not None


def _either_or(masked: str) -> int | None:
    """Where the "or" of the first ``either ... or`` on one line is (``_EITHER_OR``), each line
    read once however many "either" it holds."""
    at = 0
    while (either := _EITHER.search(masked, at)) is not None:
        end = masked.find("\n", either.end())
        end = len(masked) if end < 0 else end
        found = _OR.search(masked, either.end(), end)
        if found is not None:
            return found.start()
        at = end
    return None


def _unless_later(
    said: re.Pattern[str], later: re.Pattern[str], text: str, *, anchored: bool = False
) -> bool:
    """Whether ``said`` matches ``text`` (``anchored``: at its start) with no match of ``later``
    after it on its line.

    A lookahead ``(?!.*later)`` would read the rest of the line again for each match: here
    the text is read once for each pattern."""
    lines = [i for i, char in enumerate(text) if char == "\n"]
    starts = [m.start() for m in later.finditer(text)]
    found = [m for m in [said.match(text)] if m is not None] if anchored else said.finditer(text)
    for m in found:
        line_end = lines[i] if (i := bisect_left(lines, m.end())) < len(lines) else len(text)
        k = bisect_left(starts, m.end())
        if k == len(starts) or starts[k] >= line_end:
            return True
    return False


def _size_said(text: str, *, anchored: bool = False) -> bool:
    """A size asked (``_SIZE``) not said to be for something (``_FOR_WHOM``) later on its line;
    ``anchored``: at the start of ``text``."""
    return _unless_later(_SIZE, _FOR_WHOM, text, anchored=anchored)


def _alternatives(masked: str) -> list[int]:
    """Where ``masked`` offers two courses joined by "or" (rates offered as choices, "40G or
    100G", are one course's targets; "either ... or" is a join already)."""
    choices = [(m.start(), m.end()) for m in _CHOICES.finditer(masked)]
    either = _either_or(masked)
    return [
        m.start()
        for m in _ALTERNATIVE.finditer(masked)
        if not any(start <= m.start() < end for start, end in choices) and m.start() != either
    ]


_WHICH_MORE = re.compile(
    r"(?<![\w-])(?:which|what)\s+(?:one|link|circuit|device|router|switch|port|interface|box)"
    r"\s+(?:is|was|has|runs?|gets?)\s+(?:the\s+)?(?:busier|busiest|hotter|hottest|more|less|higher"
    r"|lower|worse|better|heavier|lighter)(?![\w-])"
)
_COMPARED = re.compile(
    # things weighed against each other ("compare <device> and <device>", "how do <a> and <b>
    # compare", "which of the two firewalls is in better shape", "<a> worse than <b>", "the
    # better path"), by whatever measure the text says, if any
    r"(?<![\w-])(?:compare[sd]?|comparing|comparison)(?![\w-])"
    r"|(?<![\w-])which\s[^.?!]{0,60}?(?<![\w-])(?:better|best|worse|worst|healthier|healthiest)"
    r"(?![\w-])"
    r"|(?<![\w-])(?:better|worse)\s+(?:than|off|shape)(?![\w-])"
    r"|(?<![\w-])the\s+(?:better|worse)\s+(?:one|path|link|choice|option|device|box|place)"
    r"(?![\w-])"
)
_THINGS_COMPARED = re.compile(
    # more than one thing, said in words: "the two uplinks", "both PEs", "the cph3 links",
    # "<a> or <b>"
    r"(?<![\w-])(?:two|both|pair|each\s+other)(?![\w-])"
    r"|(?<![\w-])(?:links|circuits|paths|uplinks|trunks|devices|routers|switches|firewalls"
    r"|boxes|pes|spines|leaves|leafs|cores|edges|sites)(?![\w-])"
)
_SKILL_ID = re.compile(r"(?<![\w-])[a-z]+(?:_[a-z]+)+(?![\w-])")
"""A name in a skill id's shape (``link_headroom``): a skill named, not a thing of the network."""
_RUN_VERB = re.compile(
    r"(?<![\w-])(?:run|execute|exec|invoke|call|trigger|launch|use|fire|kick|start|do)(?![\w-])"
)
_SITE_DEVICES = re.compile(
    r"(?<![\w\-/:.])[a-z]{3}\d{1,2}\s+(?:devices|routers|switches|boxes|firewalls)(?![\w-])"
    r"|(?<![\w-])(?:devices|routers|switches|boxes|firewalls)\s+(?:at|in)\s+(?:site\s+)?"
    r"[a-z]{3}\d{1,2}(?![\w\-/:])"
)
_OTHER_LINK = re.compile(
    r"(?<![\w-])lnk-[a-z0-9]+(?:-[a-z0-9]+)*-\d+(?![\w-])"
    r"|(?<![\w\-/:.])[a-z]{3}\d{1,2}-[a-z]{3}\d{1,2}(?=\s+(?:link|trunk|circuit|path|lag)(?![\w-]))"
)
"""A link named by another convention than the inventory's: by its sites."""
_OTHER_SUBJECT = re.compile(
    # another thing of a named one ("ospf cost on <link>", "the cost of <interface>"), not the
    # link or port itself ("the uplink on <device>")
    r"(?<![\w-])(?!(?:links?|uplinks?|circuits?|ports?|interfaces?|trunks?|lags?|paths?)\s)"
    r"[a-z]{2,} (?:on|of|for) (?=\S*\d)"
)
_UNITLESS = re.compile(
    r"\s*(?:[?.!,;)]|$|(?:and|or|but|now|right\s+now|currently|still|yet|again|today)(?![\w-]))"
)
"""What may follow a number with no unit: the clause's end, or a join."""


def _bare_percent(masked: str, comparison: Comparison) -> bool:
    """A number right after the comparison, with no unit, that a percent could be (``over 90
    and ...``): of a link, its utilization."""
    if comparison.postfix:
        return False
    return any(
        0 < n.value <= 100
        and masked[comparison.end : n.start].strip() == ""
        and _UNITLESS.match(masked, n.end) is not None
        for n in numbers(masked)
    )


def _threshold_number(masked: str, comparison: Comparison) -> bool:
    """A number beside the comparison (its threshold): any number, or one before it when the
    comparison follows its number ("90% or more", "95+")."""
    if comparison.postfix:
        return any(n.end <= comparison.start for n in numbers(masked))
    return bool(numbers(masked))


class NetworkFeatures:
    """The network deployment's :class:`agent.sdk.FeatureProvider` (see the module notes)."""

    @staticmethod
    def _either(
        masked: str,
        signals: list[str],
        attributes: set[str],
        rated: bool,
        resource: bool,
        pair: bool = False,
        capacity: bool = False,
        sized: bool = False,
        link: bool = False,
    ) -> tuple[str, ...]:
        """Two skills one request fits alike, which the router asks between.

        A topic (no word that asks or bids) naming a resource and a metric, with no threshold
        ("<device> interface errors"), or its status alone ("status of <link>?"): its record,
        or its measure? A rate in question ("is 10G enough for <link>"), or more bandwidth
        needed with no figure: will the traffic fit, or should the link be upgraded?
        """
        if "upgrade" in signals and _ELSEWHERE.search(masked):
            # which course, an upgrade or the traffic moved: the planner's, or whether the
            # traffic fits elsewhere?
            signals.append("alternatives")
            return (UPGRADE, CAPACITY)
        if "upgrade" in signals and rated and _FOR_RATE.search(masked):
            # a rate to fit, or else an upgrade ("okay for the 5G request or does it need a
            # bigger pipe?"): will it fit, or which upgrade?
            fit = _FOR_RATE.search(masked)
            alternative = _OR.search(masked, fit.end()) if fit else None
            if alternative and _UPGRADE.search(masked, alternative.end()):
                signals.append("alternatives")
                return (CAPACITY, UPGRADE)
        if "upgrade" not in signals and (
            _RATE_ENOUGH.search(masked)
            or (not rated and _NEED_MORE.search(masked))
            # sufficiency of a link with no traffic named to fit and no room asked ("the 10G
            # link <link> - enough?", "is <link> big enough"): for what it carries now, or
            # should it be upgraded? (beside an upgrade, "40G enough, or go 100G?", it is the
            # planner's question: which rate)
            or (
                resource
                and not rated
                and not capacity
                and _unless_later(_SUFFICIENT, _MORE_WANTED, masked)
            )
        ):
            signals.append("sufficiency")
            return (CAPACITY, UPGRADE)
        sized = sized or (
            link and _SIZE_ASKED.search(masked) is not None and not _ROOM_SAID.search(masked)
        )
        if sized and resource and not rated and "upgrade" not in signals:
            signals.append("size")
            return (CAPACITY, INVENTORY)
        if resource and _UNSIZED.search(masked) and not numbers(masked):
            # more of no size ("can <device> take more?", "can <link> cope?"): a rate to fit,
            # or its load against a threshold?
            signals.append("unsized")
            return (CAPACITY, EVALUATE)
        growth = resource and "upgrade" not in signals and _GROW.search(masked) is not None
        if growth and not numbers(masked) and not capacity:
            # growth of no size ("can <link> grow?"): room for more traffic, or an upgrade?
            signals.append("unsized")
            return (CAPACITY, UPGRADE)
        if (
            link
            and not capacity
            and "upgrade" not in signals
            and _LOAD_OF.search(masked)
            and not numbers(masked)
            # (a threshold in words, "below forty percent", "over half", says which; so does
            # its filling, "grow traffic on <link> before it saturates")
            and "threshold" not in signals
            and "comparison" not in signals
            and not _FULL.search(masked)
            and not _GROWING.search(masked)
        ):
            # a link's load of no threshold and no size ("what's the utilization of <link>?",
            # "traffic on <link>?"): against a threshold, or the room left?
            signals.append("load_unsized")
            return (EVALUATE, CAPACITY)
        if (
            "metric_of_resource" in signals
            and not link
            and not numbers(masked)
            and "upgrade" not in signals
            and (pair or _LINKISH.search(masked))
            and all(
                _STATE.fullmatch(m[0]) or _LOAD_WORD.fullmatch(m[0])
                for m in _METRIC.finditer(masked)
            )
        ):
            # a load or state of no threshold, of a link named by its devices ("is the <a> to
            # <b> path busy?", "is the <device> link hot?"): which link's load, against what,
            # or its room?
            signals.append("load_unsized")
            return (EVALUATE, CAPACITY)
        if "metric_of_resource" in signals and _STORY.search(masked):
            # its usage told as a story ("tell me about <link>'s usage", "the load story on
            # <link>"): against a threshold, or the room left?
            signals.append("story")
            return (EVALUATE, CAPACITY)
        if not resource or "upgrade" in signals or _ASKING.search(masked):
            return ()
        if "check" in masked and _CHECK_BID.search(masked):
            return ()
        bare = _INTERFACE.sub(lambda m: " " * len(m[0]), masked)
        if len(_TOPIC_WORD.findall(bare)) > TOPIC_WORDS:
            return ()
        # (a metric said full, "<device> memory full?", is its state asked, not a topic)
        if "metric_of_resource" in signals and not numbers(bare) and not _FULL.search(bare):
            signals.append("topic")
            return (EVALUATE, INVENTORY)
        if pair and _BETWEEN.search(bare) and not rated and not numbers(bare):
            # the link between two devices, and no more ("link between <a> and <b>"): its
            # record, or its room?
            signals.append("topic")
            return (INVENTORY, CAPACITY)
        if "attribute" in signals and attributes and attributes <= _BARE_STATE:
            signals.append("topic")
            return (INVENTORY, EVALUATE)
        return ()

    def features(self, text: str) -> TextFeatures:
        """Terms, votes and signals for one message text; never raises."""
        try:
            return self._features(text)
        except Exception:  # best effort, like the extractors
            return TextFeatures()

    def _features(self, text: str) -> TextFeatures:
        cleaned = clean(text)
        folded = fold(cleaned)
        masked = _FOR_PURPOSE.sub(lambda m: " " * len(m[0]), mask_ids(folded))
        terms: list[str] = []
        signals: list[str] = []
        # (a link named otherwise, "lnk-waw2-lim1-02", "the kul2-syd4 trunk", is a link to route
        # by, though the skill then finds no such id)
        links = link_ids(cleaned)
        if not links and (links := _OTHER_LINK.findall(folded)):  # (blanked as ids are)
            masked = _OTHER_LINK.sub(lambda m: " " * len(m[0]), masked)
        devices = device_refs(cleaned)
        interface = _INTERFACE.search(cleaned) is not None
        site = _SITE.search(masked) is not None
        for present, kind in ((links, "link"), (devices, "device"), (interface, "interface")):
            if present:
                signals.append(f"resource:{kind}")
        if site and not devices:
            signals.append("resource:site")
        metrics = _metrics(masked)
        if "utilization" in metrics and _DEMAND.search(masked):  # "that extra load": no measure
            metrics = _metrics(_DEMAND.sub(lambda m: " " * len(m[0]), masked))
        if (
            metrics == ["utilization"]
            and _SOFTWARE.search(masked)
            and all(_LOADED.fullmatch(m[0]) for m in _METRIC.finditer(masked))
        ):
            metrics = []  # "which image is loaded on <device>": its software, not its load
        if (
            "utilization" in metrics
            and ("temperature" in metrics or _CHASSIS.search(masked))
            and all(
                _HOT.fullmatch(m[0])
                for m in _METRIC.finditer(masked)
                if m.lastgroup == _UTILIZATION_GROUP
            )
        ):
            # "hot" of a chassis, or beside a temperature ("running hot? chassis temperature over
            # 70?"), is its heat, not its load
            metrics = [m for m in metrics if m != "utilization"]
            if "temperature" not in metrics:
                metrics.append("temperature")
        if metrics:
            terms += [name for name in metrics if name not in masked]
            signals += [f"metric:{name}" for name in metrics]
        bandwidths = find_bandwidths(cleaned)
        # what is left of a link (its headroom) is the capacity check's, unless asked in
        # percent: the deprecated headroom skill's own answer, which it keeps
        # (a percent asked, "headroom % for <link>", is the old skill's answer; a percent given,
        # "at least 25% headroom", "headroom for 20% more traffic", is a room to check)
        in_percent = _PERCENT.search(masked) is not None
        percent_asked = in_percent and not any(
            is_percent_at(masked, n.end) for n in numbers(masked)
        )
        headroom = _HEADROOM.search(masked) is not None
        asked = _RAISED.sub(lambda m: " " * len(m[0]), masked)  # its capacity raised: a plan
        capacity = _CAPACITY.search(asked) is not None or (
            (headroom or _LEFT.search(asked) is not None) and not percent_asked
        )
        if capacity and set(metrics) & {"cpu", "memory"} and not headroom and not bandwidths:
            # a device's cpu or memory against a threshold, its room only the reason ("is the
            # cpu on <device> below 40%? deciding whether it can take more sessions"): the
            # evaluation (no bandwidth to fit, no link's room in any unit)
            found = find_comparison(masked)
            if found is not None and _threshold_number(masked, found):
                capacity = False
        # its capacity said and no more (the capacity check still votes: its room is one answer)
        sized = (
            capacity
            and not headroom
            and all(_size_said(m[0] + " ", anchored=True) for m in _CAPACITY.finditer(asked))
            and _LEFT.search(asked) is None
            and _size_said(asked)
        )
        # a named link's capacity or bandwidth, in any words, with no word of its room, of its
        # total or of traffic to fit ("the capacity of <link>, needed for sign-off", "<link>
        # bandwidth - need the figure"): its size on record, or its room? (its total said is
        # the record's; a unit asked, "<link> capacity in Gbps?", says neither)
        bare = (
            bool(links)
            and not metrics
            and not bandwidths
            and _SIZE_NOUN.search(asked) is not None
            and not headroom
            and _LEFT.search(asked) is None
            and _ROOM_SAID.search(asked) is None
            and _TRAFFIC_FOR.search(asked) is None
            and _ROOM_MORE.search(asked) is None
            # (the capacity check named says which; its verb with the noun, "check the
            # capacity of <link>", "<link> bandwidth - pls check", does not: four writers of
            # the held-out sets, and no clear request, read it as either)
            and _CHECK_NAMED.search(asked) is None
            # (a window says measured, no record: "check capacity <link> last 15m")
            and _WINDOW_SAID.search(asked) is None
            and "_" not in asked  # a skill named says which
            # (room in any of the capacity check's own words: "is there capacity for it")
            and all(
                _size_said(m[0] + " ", anchored=True) or _CHECK_SIZE.fullmatch(m[0])
                for m in _CAPACITY.finditer(asked)
            )
        )
        totalled = bare and _TOTAL.search(asked) is not None
        sized = sized or (bare and not totalled)
        comparison = find_comparison(masked) if metrics else None  # the costliest pattern
        carried = False
        if not metrics and bandwidths and (links or interface) and not capacity:
            # a rate compared with what an interface or a link carries ("carrying more than 8
            # Gbps of traffic"): its utilization against a threshold, no traffic to fit
            # (or over a time gone by: "<link> > 8G in the last hr?", "stayed below 6 Gbps over
            # the last 24 hours", "peaked above 9 Gbps": what it carried then, no traffic to come)
            observed = _CARRIED.search(masked) or _OBSERVED_OVER.search(masked)
            comparison = find_comparison(masked) if observed else None
            if comparison is not None:
                carried = True
                metrics = ["utilization"]
                terms.append("utilization")
                signals.append("metric:utilization")
        if (
            not metrics
            and (links or interface)
            and not capacity
            and not headroom
            and not bandwidths
        ):
            # a link said to run past a percent, or past a number with no unit ("<link> running
            # over 85%?", "is <link> over 90 and ..."): its utilization against a threshold (a
            # device's, cpu or memory, is not said)
            # (the link the subject: "<what> on <link> > 100", an OSPF cost, measures another
            # thing of it)
            subject = _OTHER_SUBJECT.search(folded) is None
            found = find_comparison(masked)
            if found is not None and (
                _threshold_number(masked, found)
                if in_percent
                else subject and _bare_percent(masked, found)
            ):
                comparison = found
                metrics = ["utilization"]
                terms.append("utilization")
                signals.append("metric:utilization")
        resource = bool(links or devices or interface)
        votes: dict[str, float] = {}
        if metrics and comparison is not None and not capacity:
            threshold = _threshold_number(masked, comparison)
            signals.append("threshold" if threshold else "comparison")
            votes[EVALUATE] = 0.85 if threshold else 0.55
        elif (
            metrics
            and resource
            and not bandwidths
            and not capacity
            and _FULL.search(masked)
            and set(metrics) <= {"utilization"}
        ):
            # "is <link> saturated": a threshold crossed, or no room left? which, is asked (a
            # device's cpu or memory maxed out is a condition of that metric: no room to fit)
            signals.append("full")
            votes[EVALUATE] = -0.4
        elif metrics and resource and not bandwidths and not capacity:
            signals.append("metric_of_resource")
            votes[EVALUATE] = 0.55 if metrics[0] != "errors" or _QUESTION.search(masked) else 0.4
        capacity = capacity and bool(resource or bandwidths or site or _NETWORK.search(masked))
        upgrade = bool(links or "link" in masked or "circuit" in masked) and (
            _UPGRADE.search(masked) is not None
        )
        # the rates of an upgrade ("is a bump to 100G warranted") are its targets, no traffic
        # (rates offered as choices, "40G or 100G upgrade?", are its targets too)
        offered_rates = sum(len(_CHOICE_RATE.findall(m[0])) for m in _CHOICES.finditer(masked))
        targets = upgrade and 0 < len(bandwidths) <= len(_TARGET.findall(masked)) + offered_rates
        # the rates the records give a link ("a 10G or 100G link according to our records") are
        # its recorded speed, no traffic to fit
        recorded = _RECORDED.search(masked) is not None
        # the rate a named link is ("the 10G link <link>") is no traffic to fit either
        demand = bool(bandwidths) and len(bandwidths) > len(_OWN_RATE.findall(masked))
        if capacity or (
            demand and (links or len(devices) >= 2) and not targets and not recorded and not carried
        ):
            signals.append("capacity")
            # (what is left of a named link is a request however short, "<link> headroom?", as
            # its percent is the old skill's)
            left = bool(links) and (headroom or _LEFT.search(asked) is not None)
            votes[CAPACITY] = 0.8 if capacity and (bandwidths or left) else 0.6
            if EVALUATE not in votes:
                votes[EVALUATE] = -0.3
        # a threshold or a fitting rate (an attribute asked, "the software image", is no check
        # a change could be a later step of)
        runbook = max(votes.get(EVALUATE, 0.0), votes.get(CAPACITY, 0.0)) >= 0.8
        if headroom and percent_asked and not bandwidths:
            # the old skill's very answer, of a named link: a request however short
            # ("headroom % for <link>")
            signals.append("headroom_percent")
            votes[LEGACY] = 0.8 if links else 0.6
        if totalled and not upgrade:
            # its total asked ("<link> total capacity?", "the nominal bandwidth of <link>"): its
            # record's, no room to fit
            signals.append("total")
            votes[INVENTORY] = 0.8
            votes[CAPACITY] = min(votes.get(CAPACITY, 0.0), -0.4)
        alone = EVALUATE not in votes and not capacity and not upgrade
        upgrade_said = _UPGRADE.search(masked) is not None
        beside = False  # what a thing is, asked beside another ask (below)
        # its parts ("ports on <device>", "links from <device>") or its ends ("the A and Z
        # ends of <link>") are a listing, however few words ask for it
        parts = _of_named(_PARTS, masked, folded) or bool(links and _ENDS.search(masked))
        named = resource or _DESCRIBED.search(masked) is not None
        attributes = {m[0] for m in _ATTRIBUTE.finditer(masked)}  # (searched once: costly)
        if (parts or attributes) and named and alone:
            signals.append("attribute")
            # what a named thing is (its model, maker, serial, software) is a request however
            # short ("<device> vendor pls"): no other skill knows it
            identity = _IDENTITY.search(masked) is not None and resource
            votes[INVENTORY] = 0.8 if parts or identity else 0.6
            votes.setdefault(CAPACITY, -0.2)
        elif (
            resource
            and votes
            and _AND.search(masked)
            and (_OWN_ATTRIBUTE.search(masked) or parts or _after_named(_PARTS, masked, folded))
        ):
            signals.append("two_asks")  # "its status and spare room": both, so which first?
            votes[INVENTORY] = max(votes.values())
        elif (
            resource
            and max(votes.values(), default=0.0) > 0
            and _JOINED.search(masked)
            and (identity_beside := _IDENTITY_BESIDE.search(masked)) is not None
        ):
            # what it is, and a measure or room of it ("serial of <device> and its memory vs
            # 85%"): two asks of two skills, asked back (not a rate to upgrade to: "an upgrade,
            # and to which speed")
            signals.append("two_asks")
            votes[INVENTORY] = max(votes.values())
            beside = not (upgrade_said and _RATE.search(identity_beside[0]))
        elif not metrics and _LISTING.search(masked) and (alone or _AND.search(masked)):
            # "every access switch and its status"; "list the links and whether to upgrade"
            signals.append("listing")
            # (a site's devices, however short, "nrt2 devices", "routers at lon1": no other
            # skill lists them)
            votes[INVENTORY] = 0.8 if _SITE_DEVICES.search(masked) else 0.6
        if upgrade:
            signals.append("upgrade")
            # the verb of a plan, of a named link and nothing else, is a request, however
            # short ("upsize <link>?")
            votes[UPGRADE] = 0.8 if links and not votes else 0.6
            if CAPACITY in votes and not _joins(masked):
                votes[CAPACITY] = 0.2  # "upgrade, given whether the bandwidth fit": a plan
        if metrics and not resource and comparison is None and not votes:
            # a metric of no named resource (a site is none) and no threshold ("crc errs??",
            # "is <site> congested"): which check, of what?
            signals.append("metric_alone")
            votes[EVALUATE] = -0.5
        note = ""
        unobserved = [m for m in metrics if m not in OBSERVED]
        if unobserved and len(unobserved) == len(metrics) and not capacity and not upgrade:
            # a metric the trade knows and no skill here observes ("packet loss on <link> over
            # 1%?", "fan speed of <device>"): no skill answers it, and the caller is told why
            # (an upgrade or a capacity question with it in passing is still the planner's)
            signals.append("metric_unobserved")
            votes = dict.fromkeys(READ_ONLY, -0.6)
            note = unobserved_note(unobserved)
        if max(votes.values(), default=0.0) < 0.6 and _ADVICE.search(masked):
            # (beside a request of its own, "list the devices at nyc1, please help", it is
            # only a plea)
            signals.append("advice")  # "<link> is congested, what do we do?": which check?
            votes = dict.fromkeys(READ_ONLY, -0.5)
        if len(links) + len(devices) >= 2 and _WHICH_MORE.search(masked):
            # two things weighed by a measure ("which link is busier, <link> or <link>?"): no
            # skill compares, each takes one thing and a threshold
            signals.append("compare")
            votes = dict.fromkeys(READ_ONLY, -0.5)
        elif (
            not metrics
            and not bandwidths
            and not capacity
            and not upgrade
            and attributes <= _BARE_STATE | _PART_WORDS
            and (
                len(links) + len(devices) >= 2
                or (bool(resource or site) and _THINGS_COMPARED.search(masked) is not None)
            )
            and _COMPARED.search(masked)
        ):
            # things weighed by no measure ("compare the two uplinks of <device>", "which of
            # the <site> firewalls is in better shape"): by their records, their load, or
            # their room?
            signals.append("compare")
            votes = dict.fromkeys(READ_ONLY, -0.5)
        if not resource and _THEORY.search(masked):
            signals.append("theory")  # "explain OSPF vs IS-IS": no skill teaches
            votes = dict.fromkeys(READ_ONLY, -0.6)
        # (its bare state beside a look, "a review of <link>: current state and options", is
        # the look's object, no record asked)
        bare = (
            not votes
            or (
                set(votes) <= {INVENTORY, CAPACITY}
                and not parts
                and bool(attributes)
                and attributes <= _BARE_STATE
            )
            # (a set of things looked at, "review the edge routers before renewal": a listing,
            # or a check of them?)
            # (the noun is a purpose, "the list of links that are down, for the morning review")
            or (
                set(votes) == {INVENTORY}
                and "listing" in signals
                and not attributes
                and any(
                    _LOOK_AS_NOUN.search(masked, 0, m.start()) is None
                    for m in _INSPECT.finditer(masked)
                )
            )
        )
        if bare and not metrics and not bandwidths and _INSPECT.search(masked):
            signals.append("inspection")  # "verify the link between A and B": which check?
            votes = dict.fromkeys(READ_ONLY, -0.5)
        elif (
            "attribute" in signals
            and not parts
            and attributes
            and attributes <= _BARE_STATE
            and set(votes) <= {INVENTORY, CAPACITY}
            and _STATE_LOOK.search(masked)
            and not _RECORDED.search(masked)
            and not _UP_DOWN.search(masked)
        ):
            # its state looked at, of no record and no measure ("check the status of <device>",
            # "a quick status on <link>", "what's its current state?"): its record, or how it
            # runs? (its state in the records, or up or down, is the record's)
            signals += ["inspection", "state_look"]
            votes = dict.fromkeys(READ_ONLY, -0.5)
        if (
            not metrics
            and not bandwidths
            and not capacity
            and not upgrade
            # (its parts' health is asked in no measure too: "are the interfaces on <device>
            # OK?", "health-check the agg layer in <site>")
            and ("listing" not in signals or _HEALTH_WORD.search(masked) is not None)
            and attributes <= _BARE_STATE | _PART_WORDS
            and _HEALTH.search(masked)
        ):
            signals.append("health")  # "<link> - is it fine?": by which measure?
            votes = dict.fromkeys(READ_ONLY, -0.5)
        elif (
            not metrics
            and not capacity
            and not upgrade
            and not parts
            and _EVERYTHING.search(masked)
            and not _IDENTITY.search(masked)
        ):
            signals.append("everything")  # "show me everything on <device>": of which kind?
            votes = dict.fromkeys(READ_ONLY, -0.5)
        elif (
            not metrics
            and not bandwidths
            and not capacity
            and not upgrade
            and _CONCERN.search(masked)
            and not _IDENTITY.search(masked)
        ):
            # a concern, whatever it names ("which links need attention in <site>?", "look into
            # the links on <device>? worried about them"): by which measure?
            signals.append("concern")
            votes = dict.fromkeys(READ_ONLY, -0.5)
        elif (
            not metrics
            and not bandwidths
            and not upgrade
            and not headroom
            # (room said is the capacity check's: "room for the cutover"; "fit" is the question)
            and all(m[0].startswith("fit") for m in _ROOM_SAID.finditer(masked))
            and _SUITED.search(masked)
        ):
            # whether a thing will do for an event, in no measure and no rate ("can <link>
            # handle the rollout?", "is <link> fit for the cutover?", "ready for tomorrow's
            # change?"): its room, its load, or an upgrade?
            signals.append("suitability")
            votes = dict.fromkeys(READ_ONLY, -0.5)
        if (
            (not runbook and _change_bid(masked))
            or _SOFTWARE_CHANGE.search(masked)
            or (("upgrad" in masked or "bump" in masked) and _PERFORMED.search(masked))
        ):
            # (a change beside a threshold is a step of a runbook: "..., then escalate")
            signals.append("change")
            votes = dict.fromkeys(READ_ONLY, -0.6)
            note = CHANGE_NOTE
        elif (
            not runbook
            and any(name in masked for name in _PROTOCOLS)
            and _PROTOCOL_STATE.search(masked)
        ):
            # (beside a threshold it is the reason of a check: "BGP flaps on <device>; is
            # memory over 85%?")
            signals.append("protocol_state")
            votes = dict.fromkeys(READ_ONLY, -0.6)
            note = PROTOCOL_NOTE
        elif _CHATTER.search(masked):
            signals.append("chatter")  # "compose a limerick about the core switches": no skill's
            votes = dict.fromkeys(READ_ONLY, -0.6)
        elif _PROBE.search(masked):
            signals.append("probe")  # "ping the far end of <link>": no skill runs a test
            votes = dict.fromkeys(READ_ONLY, -0.6)
            note = PROBE_NOTE
        asks: tuple[str, ...] = ()
        if beside and "change" not in signals:
            # what a thing is beside a measure or its room of it: both skills, so which first?
            # (the vote alone left the classifier to pick one of the two)
            others = [s for s, v in votes.items() if s != INVENTORY and v > 0]
            if others:
                asks = (max(others, key=lambda s: votes[s]), INVENTORY)
        joins = _joins(masked)
        offered = _alternatives(masked)
        if (
            not asks
            and (joins or offered)
            and "change" not in signals
            and max(votes.values(), default=0.0) > 0
        ):
            # two requests in one text, one before the join and one after it: "its interfaces
            # and their utilization", "free bw on <link> and an upgrade plan"
            # (a metric beside a capacity word on the other side of the join, "errors and free
            # bandwidth on <link>", is a request of its own too)
            measured = (
                list(_METRIC.finditer(masked))
                if votes.get(EVALUATE, 0) > 0 or (metrics and capacity)
                else []
            )
            states = {m.start() for m in measured if _STATE.fullmatch(m[0])}
            evidence = {
                EVALUATE: [m.start() for m in measured],
                CAPACITY: [
                    m.start() for p in (_CAPACITY, _LEFT, _HEADROOM) for m in p.finditer(masked)
                ]
                if capacity
                # (a rate to fit, "can it take 1G", where it voted for the check)
                else [m.start() for m in _RATE_AT.finditer(masked)]
                if votes.get(CAPACITY, 0) > 0 and not upgrade
                else [],
                UPGRADE: [m.start() for m in _UPGRADE.finditer(masked)] if upgrade else [],
                INVENTORY: [
                    m.start()
                    # (what a thing is, its serial or software, asked beside another request:
                    # "the headroom on <link> and the serial of <device>")
                    for p in (_PARTS, _ENDS, _LISTING, _OWN_ATTRIBUTE, _IDENTITY_ASKED)
                    for m in p.finditer(masked)
                    # ("and to what speed": an upgrade's target; "the configured speed": its
                    # record's)
                    if not _RATE.search(m[0]) or _RECORDED.search(m[0])
                ]
                # whether it is up at all, asked beside another request ("is <link> up and can
                # it take 1G?"): its recorded state
                + [m.start() for m in _UP.finditer(masked)],
            }
            # (a state asked, "is <link> busy + should it be upgraded?", is a request of its own:
            # only a state said is the upgrade's reason)
            reasons = set() if _STATE_ASKED.search(masked) else states
            asks = _split_asks(evidence, joins, reasons)
            if asks:
                signals.append("two_requests")
            elif offered and (asks := _split_asks(evidence, offered, states, offered=True)):
                # one course or the other ("is upgrading <link> or checking its headroom the
                # better first step?"): the caller says which
                signals.append("alternatives")
        if (
            not asks
            and (votes.get(CAPACITY, 0) > 0 or (not votes and _ROOM_WORD.search(masked)))
            and INVENTORY not in votes
            and not metrics
            and not _LISTING.search(masked)  # "list devices in status 'spare'": a listing
            and not upgrade
            and not links
            and len(devices) <= 1
            and (devices or site or interface)
            and not (_LINK_WORDS if interface else _LINKISH).search(masked)
        ):
            # room asked of one device, one interface or a site, no link of it named ("headroom
            # on <device>?", "is there spare on <device>", "the remaining capacity on interface
            # <port>", "enough capacity in <site>?"): which link's room, or the device's (the
            # port's) load, or the site's links?
            signals.append("no_link")
            asks = (CAPACITY, EVALUATE) if devices or interface else (CAPACITY, INVENTORY)
        if not asks and "suitability" in signals:
            # the checks a thing fit for an event is asked back between (not only the one the
            # classifier leans to): its room, its load, and for a link its upgrade
            asks = (CAPACITY, EVALUATE, UPGRADE) if links else (CAPACITY, EVALUATE)
        elif not asks and "state_look" in signals:
            asks = (INVENTORY, EVALUATE)  # its state in the records, or how it runs
        elif not asks and (
            "compare" in signals
            or (
                "inspection" in signals
                and (resource or site)
                # (not a skill named and run for a look: "run link_headroom on <link> to
                # validate")
                and not (_SKILL_ID.search(masked) and _RUN_VERB.search(masked))
            )
        ):
            # things weighed, or a thing looked at or its information asked, by no measure
            # ("compare the two uplinks of <device>", "we need info on <device>", "review
            # <link>"): its record, its load, or (a link's) its room
            asks = (
                (CAPACITY, EVALUATE, INVENTORY)
                if links or _LINK_WORDS.search(masked)
                else (EVALUATE, INVENTORY)
            )
        if not asks and not any(v <= -0.5 for v in votes.values()):  # (vetoed: asked anyway)
            asks = self._either(
                masked,
                signals,
                attributes,
                demand,
                resource,
                len(devices) >= 2,
                capacity,
                sized,
                bool(links),
            )
        return TextFeatures(
            tuple(terms), MappingProxyType(votes), tuple(signals), asks=asks, note=note
        )
