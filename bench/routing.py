"""Routing benchmark: latency of the classifier layer and of the whole router, and the
confusion matrix of the evaluation set. Prints figures; asserts nothing.

    .venv/bin/python -m bench.routing [--repeat 20]
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
from netops.deployment import SKILLS_DIR
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
    args = parser.parse_args()
    evaluation = json.loads(EVAL.read_text())
    texts = [e["text"] for e in evaluation["clear"]] + [e["text"] for e in evaluation["ambiguous"]]

    started = time.perf_counter()
    router = Router(load_registry(SKILLS_DIR))
    router.warm()
    print(f"registry + classifier training: {(time.perf_counter() - started) * 1000:.0f} ms")
    candidates = {c.id for c in router.candidates(CALLER)}
    messages = [text_message(t) for t in texts]

    classifier_ms, router_ms = [], []
    for _ in range(args.repeat):
        for text, message in zip(texts, messages, strict=True):
            t0 = time.perf_counter()
            router.classifier.predict(text, candidates)
            t1 = time.perf_counter()
            router.route(message, CALLER)
            t2 = time.perf_counter()
            classifier_ms.append((t1 - t0) * 1000)
            router_ms.append((t2 - t1) * 1000)
    print(f"\n{len(classifier_ms)} routings ({len(texts)} messages x {args.repeat})")
    print(f"{'layer':<22}{'p50 ms':>10}{'p99 ms':>10}{'mean ms':>10}")
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
    print(f"\nclear accuracy: {sum(t == p for t, p in clear)}/{len(clear)}")
    print(f"ambiguous clarified: {sum(p == 'clarify' for _, p in ambiguous)}/{len(ambiguous)}")
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
