"""Arguments of ``describe_skill`` from plain text: which skill the caller wants described.

The skill is named by its id (``check_link_capacity``, also ``check-link-capacity`` or
``checkLinkCapacity``) or by an obvious name (``link capacity``, ``headroom``, ``upgrade
planner``). An id anywhere in the text beats a name; among ids, and then among names, the
first mentioned wins. Skills added later must be added to ``SKILL_IDS`` (and ``ALIASES``).
"""

from __future__ import annotations

import re
from typing import Any

from skills.common.text import fold, total

SKILL_IDS: tuple[str, ...] = (
    "check_link_capacity",
    "describe_skill",
    "evaluate_resource_condition",
    "link_headroom",
    "lookup_inventory",
    "plan_link_upgrade",
    "port_report",
)
"""Every skill id this agent has ever had (removed ones too: describing them explains why)."""

ALIASES: dict[str, tuple[str, ...]] = {
    "check_link_capacity": (
        "check link capacity",
        "link capacity",
        "capacity check",
        "capacity checker",
        "check capacity",
        "link capacity check",
    ),
    "evaluate_resource_condition": (
        "evaluate resource condition",
        "resource condition",
        "evaluate condition",
        "condition evaluation",
        "condition evaluator",
        "condition check",
        "threshold check",
        "threshold",
        "condition",
    ),
    "link_headroom": ("link headroom", "headroom"),
    "lookup_inventory": (
        "lookup inventory",
        "look up inventory",
        "inventory lookup",
        "inventory",
    ),
    "plan_link_upgrade": (
        "plan link upgrade",
        "plan link upgrades",
        "link upgrade planner",
        "link upgrade",
        "link upgrades",
        "upgrade planner",
        "upgrade planning",
        "upgrade plan",
        "plan upgrades",
        "upgrade",
        "upgrades",
    ),
    "port_report": ("port report",),
}
"""Plain names a caller may use for a skill (never for describe_skill: every request says it)."""


def _id_forms(skill_id: str) -> list[str]:
    return [skill_id, skill_id.replace("_", "-"), skill_id.replace("_", "")]


_ID = re.compile(
    "|".join(
        f"(?P<{skill_id}>(?<![a-z0-9])(?:"
        + "|".join(re.escape(form) for form in _id_forms(skill_id))
        + ")(?![a-z0-9]))"
        for skill_id in SKILL_IDS
    )
)
_ALIAS_PHRASES = sorted(
    ((phrase, skill_id) for skill_id, phrases in ALIASES.items() for phrase in phrases),
    key=lambda item: len(item[0]),
    reverse=True,
)
_ALIAS = re.compile(
    "|".join(
        f"(?P<a{i}>(?<![a-z0-9_-])"
        + r"[\s_-]+".join(map(re.escape, phrase.split(" ")))
        + "(?![a-z0-9_-]))"
        for i, (phrase, _) in enumerate(_ALIAS_PHRASES)
    )
)


@total
def extract(text: str) -> dict[str, Any]:
    """``{"skill_id": ...}`` for the skill ``text`` asks about, else ``{}``."""
    folded = fold(text)
    found = _ID.search(folded)
    if found is not None and found.lastgroup is not None:
        return {"skill_id": found.lastgroup}
    alias = _ALIAS.search(folded)
    if alias is not None and alias.lastgroup is not None:
        return {"skill_id": _ALIAS_PHRASES[int(alias.lastgroup[1:])][1]}
    return {}
