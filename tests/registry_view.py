"""What the registry offers each test identity, read from the registry, not written down.

The repository is a template: a fork adds skills. Tests about the agent itself (its cards,
``/healthz``, the conformance run) compare what the agent serves with what the registry holds,
and check the demo skills' share of it separately, against expectations that name only demo
skills. So a fork's new skill breaks only the deliberate guards: the public-card snapshot
(``netagent card diff --update``) and the interface lock (``netagent validate --update-lock``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from agent.registry.loader import Registry, load_registry
from agent.registry.policy import publicly_visible, visible
from agent.security.principal import Principal
from netops.deployment import SKILLS_DIR
from tests.conftest import IDENTITIES

DEMO_SKILLS = frozenset(
    {
        "check_link_capacity",
        "describe_skill",
        "evaluate_resource_condition",
        "link_headroom",
        "lookup_inventory",
        "plan_link_upgrade",
        "port_report",
    }
)
"""The skills this repository ships; a fork's own are anything else in the registry."""


def identity(name: str) -> Principal:
    """The principal behind ``RunningAgent.token(name)`` (``tests.conftest.IDENTITIES``)."""
    tenant, scopes = IDENTITIES[name]
    return Principal(subject=name, tenant=tenant, scopes=frozenset(scopes))


def card_ids(who: str | Principal | None, registry: Registry | None = None) -> list[str]:
    """Sorted ids the card lists: the public card for None, else that caller's extended card."""
    registry = registry if registry is not None else load_registry(SKILLS_DIR)
    if who is None:
        return sorted(m.id for m in registry.manifests if publicly_visible(m))
    principal = identity(who) if isinstance(who, str) else who
    return sorted(m.id for m in registry.manifests if visible(m, principal))


def demo_only(ids: Iterable[str]) -> list[str]:
    """The demo skills among ``ids``, in their order."""
    return [i for i in ids if i in DEMO_SKILLS]


def copy_demo_skills(source: Path, target: Path) -> Path:
    """``target``: a copy of skills folder ``source`` holding only the demo skills.

    Tests of what the demo skills look like (card projections, their versions) load this, so a
    fork's own skills neither appear in them nor shift them.
    """

    def fork_skills(folder: str, names: list[str]) -> set[str]:
        ignored = {"__pycache__"} & set(names)
        if Path(folder) == source:
            ignored |= {
                n
                for n in names
                if (source / n / "manifest.json").is_file() and n not in DEMO_SKILLS
            }
        return ignored

    shutil.copytree(source, target, ignore=fork_skills)
    return target
