"""Routing benchmark: CPU time of the classifier layer and of the whole router, and the
confusion matrix of an evaluation set (default ``tests/routing/eval_set.json``; ``--set`` for
another, e.g. ``tests/routing/dev_set.json`` or a held-out set). Prints figures; asserts
nothing. The router is the deployment's: the network's routing features included.

    .venv/bin/python -m bench.routing [--repeat 20] [--set PATH] [--no-misses]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter
from pathlib import Path

from agent.registry.loader import load_registry
from agent.routing.router import Action, Router
from agent.security.principal import Principal
from netops.deployment import SKILLS_DIR, network_deployment
from tests.a2a_helpers import text_message

EVAL = Path(__file__).resolve().parents[1] / "tests" / "routing" / "eval_set.json"
CALLER = Principal(
    "paula",
    "acme",
    frozenset({"inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview"}),
)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def label(router: Router, text: str) -> str:
    decision = router.route(text_message(text), CALLER)
    if decision.action in (Action.RUN, Action.ASK) and decision.capability:
        return decision.capability.id
    return "clarify" if decision.action is Action.CLARIFY else decision.action.value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--set", type=Path, default=EVAL, help="evaluation set (JSON)")
    parser.add_argument("--no-misses", action="store_true", help="do not list the misses")
    args = parser.parse_args()
    evaluation = json.loads(args.set.read_text())
    texts = [e["text"] for e in evaluation["clear"]] + [e["text"] for e in evaluation["ambiguous"]]

    started = time.perf_counter()
    router = Router(load_registry(SKILLS_DIR), features=network_deployment().routing_features)
    router.warm()
    print(f"registry + classifier training: {(time.perf_counter() - started) * 1000:.0f} ms")
    candidates = {c.id for c in router.candidates(CALLER)}
    messages = [text_message(t) for t in texts]

    classifier_ms, router_ms = [], []
    for _ in range(args.repeat):
        for text, message in zip(texts, messages, strict=True):
            t0 = time.process_time()
            router.classifier.predict(text, candidates)
            t1 = time.process_time()
            router.route(message, CALLER)
            t2 = time.process_time()
            classifier_ms.append((t1 - t0) * 1000)
            router_ms.append((t2 - t1) * 1000)
    print(f"\n{len(classifier_ms)} routings ({len(texts)} messages x {args.repeat})")
    print(f"{'CPU time':<22}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}")
    for name, samples in (("classifier", classifier_ms), ("whole router", router_ms)):
        print(
            f"{name:<22}{percentile(samples, 0.5):>10.3f}{percentile(samples, 0.99):>10.3f}"
            f"{statistics.fmean(samples):>10.3f}"
        )

    rows = [(e["skill"], label(router, e["text"])) for e in evaluation["clear"]]
    rows += [("(ambiguous)", label(router, e["text"])) for e in evaluation["ambiguous"]]
    truth = sorted({t for t, _ in rows})
    predicted = sorted({p for _, p in rows})
    counts = Counter(rows)
    print("\nconfusion matrix (rows: expected; columns: routed to, numbered below)")
    print(" " * 30 + "".join(f"{i:>6}" for i in range(1, len(predicted) + 1)))
    for t in truth:
        print(f"{t:<30}" + "".join(f"{counts[(t, p)]:>6}" for p in predicted))
    for i, p in enumerate(predicted, start=1):
        print(f"  {i}: {p}")
    clear = [r for r in rows if r[0] != "(ambiguous)"]
    ambiguous = [r for r in rows if r[0] == "(ambiguous)"]
    print("\nper skill (clear requests routed right / asked)")
    for t in truth:
        if t != "(ambiguous)":
            print(
                f"  {t:<30}{counts[(t, t)]:>4}/{sum(n for (e, _), n in counts.items() if e == t)}"
            )
    print(f"\nclear accuracy: {sum(t == p for t, p in clear)}/{len(clear)}")
    print(f"ambiguous clarified: {sum(p == 'clarify' for _, p in ambiguous)}/{len(ambiguous)}")
    if args.no_misses:
        return
    print("wrong:")
    for entry in evaluation["clear"]:
        got = label(router, entry["text"])
        if got != entry["skill"]:
            print(f"  [{entry['skill']} -> {got}] {entry['text']}")
    for entry in evaluation["ambiguous"]:
        got = label(router, entry["text"])
        if got != "clarify":
            print(f"  [ambiguous -> {got}] {entry['text']}")


if __name__ == "__main__":
    main()
