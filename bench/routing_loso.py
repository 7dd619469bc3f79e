"""Leave one spent stranger set out at a time: how a change to the router is chosen without
spending an unseen set.

For each spent set of the deployment (``TRAINED_ON`` in ``tests/routing/test_strangers.py``),
the router is trained on the deployment's routing data with every stranger set's texts taken
out, plus every other spent set (clear requests as utterances, ambiguous ones as between-classes,
the rest as nothing-fits texts by reason), and then routes the set left out. The figures are
those of ``bench.routing``, pooled over the sets; a change is kept when it gains here, and then
measured once on sets nobody has read. A fold trains a model (about a minute of CPU for the
network agent): the whole run takes about half an hour. Prints figures; asserts nothing.

    .venv/bin/python -m bench.routing_loso [--deployment MODULE:FACTORY] [--only NAME ...]
        [--with NAME ...]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from agent.registry.loader import load_registry
from agent.routing.data import Between, NothingFits, RoutingData
from agent.routing.decision import Action
from agent.routing.router import Router
from agent.security.principal import Principal
from bench.routing import (
    AMBIGUOUS,
    CLARIFY,
    OUT_OF_SCOPE,
    caller_of,
    expectations,
    label_of,
    load_deployment,
)
from tests.a2a_helpers import text_message
from tests.routing.test_heldout import entries, normalized
from tests.routing.test_strangers import SETS, TRAINED_ON, load_set

REASONS = {
    "change": "change",
    "unobserved-metric": "unobserved",
    "other-domain": "other_domain",
    "chit-chat": "chit_chat",
}
"""A writer's reason nothing fits, as the deployments' routing data names it."""


@dataclass
class Counts:
    """Requests routed as their writer expected, by kind, and skills run unexpectedly."""

    clear: int = 0
    clear_right: int = 0
    ambiguous: int = 0
    ambiguous_asked: int = 0
    nothing_fits: int = 0
    nothing_fits_asked: int = 0
    requests: int = 0
    wrong_runs: int = 0

    def add(self, other: Counts) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)

    def line(self) -> str:
        def share(part: int, whole: int) -> str:
            return f"{part / whole:7.2%}" if whole else "      -"

        return (
            f"clear {share(self.clear_right, self.clear)}  "
            f"ambiguous {share(self.ambiguous_asked, self.ambiguous)}  "
            f"nothing fits {share(self.nothing_fits_asked, self.nothing_fits)}  "
            f"wrong runs {share(self.wrong_runs, self.requests)}  "
            f"({self.clear}, {self.ambiguous}, {self.nothing_fits} requests)"
        )


def without(data: RoutingData, texts: frozenset[str]) -> RoutingData:
    """``data`` with every text whose normalized form is in ``texts`` taken out."""

    def keep(values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(t for t in values if normalized(t) not in texts)

    utterances = {skill: keep(values) for skill, values in data.utterances.items()}
    reasons = {r: NothingFits(e.note, keep(e.texts)) for r, e in data.nothing_fits.items()}
    groups = [Between(g.skills, keep(g.texts)) for g in data.ambiguous]
    return RoutingData(
        MappingProxyType(utterances),
        MappingProxyType(reasons),
        keep(data.out_of_scope),
        tuple(g for g in groups if g.texts),
    )


def with_sets(data: RoutingData, names: list[str]) -> RoutingData:
    """``data`` plus the texts of the sets ``names``, each where its label puts it."""
    utterances = {skill: list(values) for skill, values in data.utterances.items()}
    reasons = {reason: list(entry.texts) for reason, entry in data.nothing_fits.items()}
    out_of_scope, groups = list(data.out_of_scope), list(data.ambiguous)
    for name in names:
        written = load_set(name)
        for e in written["clear"]:
            utterances.setdefault(e["skill"], []).append(e["text"])
        for e in written["ambiguous"]:
            groups.append(Between(tuple(sorted(set(e["could_be"]))), (e["text"],)))
        for e in written["out_of_scope"]:
            reason = REASONS.get(e.get("why", ""), "")
            reasons.get(reason, out_of_scope).append(e["text"])
    return RoutingData(
        MappingProxyType({skill: tuple(values) for skill, values in utterances.items()}),
        MappingProxyType(
            {r: NothingFits(data.nothing_fits[r].note, tuple(t)) for r, t in reasons.items()}
        ),
        tuple(out_of_scope),
        tuple(groups),
    )


def route_set(router: Router, caller: Principal, name: str) -> Counts:
    """The set ``name`` routed by ``router``, counted against its writer's labels."""
    counts = Counts()
    for text, expected, _ in expectations(load_set(name)):
        decision = router.route(text_message(text), caller)
        got = label_of(decision)
        counts.requests += 1
        counts.wrong_runs += decision.action is Action.RUN and got != expected
        if expected == AMBIGUOUS:
            counts.ambiguous += 1
            counts.ambiguous_asked += got == CLARIFY
        elif expected == OUT_OF_SCOPE:
            counts.nothing_fits += 1
            counts.nothing_fits_asked += got == CLARIFY
        else:
            counts.clear += 1
            counts.clear_right += got == expected
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deployment", default="netops.deployment:network_deployment")
    parser.add_argument("--only", nargs="*", help="leave out only these sets (default: all)")
    parser.add_argument(
        "--with",
        dest="also",
        nargs="*",
        default=[],
        help="spent sets not yet folded into the routing data, to count as spent too",
    )
    options = parser.parse_args()
    deployment = load_deployment(options.deployment)
    skills = Path(deployment.skills_dir).resolve()
    ours = [name for name, folder in SETS.items() if folder.resolve() == skills]
    spent = [name for name in ours if name in TRAINED_ON or name in options.also]
    written = frozenset(normalized(e["text"]) for n in ours for e in entries(load_set(n)))
    base = without(RoutingData.load(deployment.routing_data), written)
    caller, total = caller_of(deployment), Counts()
    for name in options.only or spent:
        data = with_sets(base, [other for other in spent if other != name])
        router = Router(load_registry(deployment.skills_dir), data=data)
        router.warm()
        counts = route_set(router, caller, name)
        total.add(counts)
        print(f"{name:<14} {counts.line()}", flush=True)
    print(f"{'all':<14} {total.line()}")


if __name__ == "__main__":
    main()
