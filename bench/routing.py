"""Routing benchmark: CPU time of the classifier layer and of the whole router (the
deployment's, network routing features included), and how an evaluation set routes
(accuracy per skill, clarifications, out-of-scope handling, the confusion matrix and every
miss). Prints figures; asserts nothing.

    .venv/bin/python -m bench.routing [--set eval|heldout|heldout_vN|strangers/NAME|dev|PATH]
        [--deployment MODULE:FUNCTION] [--repeat 20] [--no-misses]

``--set eval`` (the default) is ``tests/routing/eval_set.json``; ``--set heldout`` is
``tests/routing/heldout.json``, written without reading the training text and checked against
it (``tests/routing/test_heldout.py``), so it measures phrasing the router has not seen;
``--set heldout_vN`` (N = 2, 3, ...) is ``tests/routing/heldout_vN.json``, the N-th held-out set,
written blind after the one before it was spent (looked at while the router was changed) and
checked to share no text with every earlier held-out set, ``dev`` and ``eval``;
``--set strangers/NAME`` is ``tests/routing/strangers/NAME.json``: sets written by writers who saw
nothing of the project (not the router, its training text, nor any earlier set), from a brief
naming only what each skill does; ``invoices`` is for ``--deployment
examples.invoices.deployment:invoice_deployment``, the others for the network deployment.
``--set dev`` is ``tests/routing/dev_set.json``, which the router's weights were chosen on.
Clear requests should run their skill; ambiguous and out-of-scope ones should be clarified
(the router has no other answer for text no skill fits: it asks which skill was meant). A skill
run where another was expected, or where the request should have been asked back, is counted on
its own line ("ran a skill that was not expected"): a confident wrong run is the worst outcome.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.ports import Deployment
from agent.registry.loader import load_registry
from agent.routing.data import RoutingData
from agent.routing.decision import Action, Decision
from agent.routing.router import Router
from agent.security.principal import Principal
from tests.a2a_helpers import text_message

ROUTING_TESTS = Path(__file__).resolve().parents[1] / "tests" / "routing"
SETS = {
    "eval": ROUTING_TESTS / "eval_set.json",
    # every held-out set by its file's name (heldout, heldout_v2 ...): a new one needs no entry
    **{path.stem: path for path in sorted(ROUTING_TESTS.glob("heldout*.json"))},
    **{f"strangers/{p.stem}": p for p in sorted((ROUTING_TESTS / "strangers").glob("*.json"))},
    "dev": ROUTING_TESTS / "dev_set.json",
}
NETWORK = "netops.deployment:network_deployment"
CLARIFY = "clarify"
AMBIGUOUS = "(ambiguous)"
OUT_OF_SCOPE = "(out of scope)"


@dataclass(frozen=True)
class Outcome:
    """One request of the set, what it should get and what the router did."""

    text: str
    expected: str  # a skill id, AMBIGUOUS or OUT_OF_SCOPE
    got: str  # a skill id, "clarify", or another action's name
    stage: str
    confidence: float | None
    top: str  # the classifier's best skill and its probability
    ran: bool = False  # the router ran a skill (Action.RUN), not asked back
    offered: tuple[str, ...] = ()  # the close candidates a clarification offered
    source: str = ""  # the writer's style tag, where the set gives one

    @property
    def wrong_run(self) -> bool:
        """A skill ran that was not the one expected: the worst outcome, counted on its own."""
        return self.ran and self.got != self.expected

    @property
    def right(self) -> bool:
        if self.expected in (AMBIGUOUS, OUT_OF_SCOPE):
            return self.got == CLARIFY
        return self.got == self.expected


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def label_of(decision: Decision) -> str:
    if decision.action in (Action.RUN, Action.ASK) and decision.capability:
        return decision.capability.id
    return CLARIFY if decision.action is Action.CLARIFY else decision.action.value


def load_deployment(factory: str) -> Deployment:
    """The deployment ``module:function`` returns."""
    module, _, function = factory.partition(":")
    built: Deployment = getattr(importlib.import_module(module), function)()
    return built


def caller_of(deployment: Deployment) -> Principal:
    """A caller of the deployment's first tenant holding every scope its manifests name (so
    that every skill, previews included, is a candidate)."""
    registry = load_registry(deployment.skills_dir)
    scopes = {s for c in registry for s in c.manifest.requires_scopes} | {"preview"}
    tenant = deployment.demo_callers[0].tenant if deployment.demo_callers else "acme"
    return Principal("bench", tenant, frozenset(scopes))


def outcome(
    router: Router,
    caller: Principal,
    candidates: set[str],
    text: str,
    expected: str,
    source: str = "",
) -> Outcome:
    decision = router.route(text_message(text), caller)
    close = decision.action is Action.CLARIFY and decision.matched
    ranking = router.classifier.predict(text, candidates).ranking
    top = f"{ranking[0][0]} {ranking[0][1]:.2f}" if ranking else "-"
    return Outcome(
        text,
        expected,
        label_of(decision),
        decision.stage.value,
        decision.confidence,
        top,
        ran=decision.action is Action.RUN,
        offered=tuple(c.id for c in decision.candidates) if close else (),
        source=source,
    )


def expectations(evaluation: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(text, expected, the writer's source tag or "") for every request, clear first."""
    rows = [(e["text"], e["skill"], e.get("source", "")) for e in evaluation["clear"]]
    for section, expected in (("ambiguous", AMBIGUOUS), ("out_of_scope", OUT_OF_SCOPE)):
        rows += [(e["text"], expected, e.get("source", "")) for e in evaluation.get(section, [])]
    return rows


def latency(
    router: Router, caller: Principal, candidates: set[str], texts: list[str], repeat: int
) -> None:
    messages = [text_message(t) for t in texts]
    classifier_ms, router_ms = [], []
    for _ in range(repeat):
        for text, message in zip(texts, messages, strict=True):
            t0 = time.process_time()
            router.classifier.predict(text, candidates)
            t1 = time.process_time()
            router.route(message, caller)
            t2 = time.process_time()
            classifier_ms.append((t1 - t0) * 1000)
            router_ms.append((t2 - t1) * 1000)
    print(f"\n{len(classifier_ms)} routings ({len(texts)} messages x {repeat})")
    print(f"{'CPU time':<22}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}")
    for name, samples in (("classifier", classifier_ms), ("whole router", router_ms)):
        print(
            f"{name:<22}{percentile(samples, 0.5):>10.3f}{percentile(samples, 0.99):>10.3f}"
            f"{statistics.fmean(samples):>10.3f}"
        )


def confusion(outcomes: list[Outcome]) -> None:
    truth = sorted({o.expected for o in outcomes})
    predicted = sorted({o.got for o in outcomes})
    counts = Counter((o.expected, o.got) for o in outcomes)
    print("\nconfusion matrix (rows: expected; columns: routed to, numbered below)")
    print(" " * 30 + "".join(f"{i:>6}" for i in range(1, len(predicted) + 1)))
    for t in truth:
        print(f"{t:<30}" + "".join(f"{counts[(t, p)]:>6}" for p in predicted))
    for i, p in enumerate(predicted, start=1):
        print(f"  {i}: {p}")


def by_source(clear: list[Outcome]) -> None:
    """Clear requests routed right per the writer's source tag (style or language), most
    frequent first: where the misses gather (a language the data holds few texts of)."""
    tags = Counter(o.source for o in clear if o.source)
    if not tags:
        return
    print(f"\n{'clear requests, per source tag':<30}{'right':>8}{'of':>6}{'accuracy':>10}")
    for tag, n in tags.most_common():
        right = sum(o.right for o in clear if o.source == tag)
        print(f"  {tag:<28}{right:>8}{n:>6}{right / n:>10.1%}")


def summary(outcomes: list[Outcome], *, misses_too: bool = True) -> None:
    clear = [o for o in outcomes if o.expected not in (AMBIGUOUS, OUT_OF_SCOPE)]
    print(f"\n{'clear requests, per skill':<30}{'right':>8}{'of':>6}{'accuracy':>10}")
    for skill in sorted({o.expected for o in clear}):
        rows = [o for o in clear if o.expected == skill]
        right = sum(o.right for o in rows)
        print(f"  {skill:<28}{right:>8}{len(rows):>6}{right / len(rows):>10.1%}")
    right = sum(o.right for o in clear)
    print(f"  {'all clear':<28}{right:>8}{len(clear):>6}{right / max(len(clear), 1):>10.1%}")
    asked_back = [o for o in clear if o.got == CLARIFY]
    offered = sum(o.expected in o.offered for o in asked_back)
    print(
        f"clear requests asked back: {len(asked_back)}; the right skill among the close candidates "
        f"offered: {offered}"
    )
    by_source(clear)
    for kind, name in ((AMBIGUOUS, "ambiguous clarified"), (OUT_OF_SCOPE, "out of scope")):
        rows = [o for o in outcomes if o.expected == kind]
        if not rows:
            continue
        asked = sum(o.got == CLARIFY for o in rows)
        ran = Counter(o.got for o in rows if o.got != CLARIFY)
        elsewhere = ", ".join(f"{skill} {n}" for skill, n in sorted(ran.items())) or "none"
        print(
            f"{name}: {asked}/{len(rows)} ({asked / len(rows):.1%}) clarified; "
            f"routed to a skill instead: {elsewhere}"
        )
    wrong = [o for o in outcomes if o.wrong_run]
    print(
        f"ran a skill that was not expected: {len(wrong)}/{len(outcomes)} "
        f"({len(wrong) / max(len(outcomes), 1):.1%}; clear "
        f"{sum(o in clear for o in wrong)}, ambiguous or out of scope "
        f"{sum(o not in clear for o in wrong)})"
    )
    misses = [o for o in outcomes if not o.right]
    if not misses_too:
        print(f"\nmisses: {len(misses)}")
        return
    print(f"\nmisses ({len(misses)}): [expected -> got | layer, confidence | classifier top]")
    for o in misses:
        confidence = "-" if o.confidence is None else f"{o.confidence:.2f}"
        print(f"  [{o.expected} -> {o.got} | {o.stage}, {confidence} | {o.top}] {o.text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--set", default="eval", dest="which", help=f"{sorted(SETS)} or a path")
    parser.add_argument("--deployment", default=NETWORK, help="module:function of the deployment")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--no-misses", action="store_true", help="count the misses only")
    args = parser.parse_args()
    path = SETS.get(args.which) or Path(args.which).resolve()
    rows = expectations(json.loads(path.read_text(encoding="utf-8")))
    print(f"set: {path} ({len(rows)} requests)")

    started = time.perf_counter()
    deployment = load_deployment(args.deployment)
    caller = caller_of(deployment)
    router = Router(
        load_registry(deployment.skills_dir),
        data=RoutingData.load(deployment.routing_data),
    )
    router.warm()
    print(f"registry + classifier training: {(time.perf_counter() - started) * 1000:.0f} ms")
    candidates = {c.id for c in router.candidates(caller)}
    latency(router, caller, candidates, [text for text, _, _ in rows], args.repeat)

    outcomes = [outcome(router, caller, candidates, *row) for row in rows]
    confusion(outcomes)
    summary(outcomes, misses_too=not args.no_misses)


if __name__ == "__main__":
    main()
