"""How far two people labelling the same requests agree: the ceiling a router can reach.

A stranger set's writer labelled each request clear (one skill), ambiguous (several fit) or
out of scope. A second labeller, who saw only the skills' plain descriptions and the requests
shuffled (``tests/routing/strangers/second_labels/NAME.md`` is the brief), labelled them again
without the first labels. Where the two disagree, no router satisfies both: the share of the
writer's ambiguous requests the second labeller calls clear bounds "ambiguous asked back" from
above, as seen by that writer. Prints figures; asserts nothing.

    .venv/bin/python -m bench.routing_agreement
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

STRANGERS = Path(__file__).resolve().parents[1] / "tests" / "routing" / "strangers"
SECOND = STRANGERS / "second_labels"
WRITTEN_BY = {"netops_i_j": ("netops_i", "netops_j"), "invoices_e": ("invoices_e",)}
"""Each second labelling, by the stranger sets whose requests it labels again."""


def first_labels(sets: tuple[str, ...]) -> dict[str, tuple[str, Any]]:
    """The writers' labels by text: (section, the skill or the sorted skills or None)."""
    labels: dict[str, tuple[str, Any]] = {}
    for name in sets:
        written = json.loads((STRANGERS / f"{name}.json").read_text(encoding="utf-8"))
        labels |= {e["text"]: ("clear", e["skill"]) for e in written["clear"]}
        labels |= {
            e["text"]: ("ambiguous", tuple(sorted(e["could_be"]))) for e in written["ambiguous"]
        }
        labels |= {e["text"]: ("out_of_scope", None) for e in written["out_of_scope"]}
    return labels


def second_label(row: dict[str, Any]) -> tuple[str, Any]:
    """A second labeller's row in the writers' form."""
    if row["label"] == "clear":
        return "clear", row["skill"]
    if row["label"] == "ambiguous":
        return "ambiguous", tuple(sorted(row["could_be"]))
    return "out_of_scope", None


def agreement(name: str) -> Counter[tuple[str, str]]:
    """(the writer's section, what the second labeller said) -> how many requests."""
    first = first_labels(WRITTEN_BY[name])
    rows = json.loads((SECOND / f"{name}.json").read_text(encoding="utf-8"))["labels"]
    counts: Counter[tuple[str, str]] = Counter()
    for row in rows:
        section, skills = first[row["text"]]
        again = second_label(row)
        if again[0] != section:
            counts[section, again[0]] += 1
        elif section == "clear" and again[1] != skills:
            counts[section, "clear, another skill"] += 1
        else:
            counts[section, "the same"] += 1
    return counts


def main() -> None:
    for name in WRITTEN_BY:
        counts = agreement(name)
        print(f"{name}: the writer's label -> the second labeller's")
        for section in ("clear", "ambiguous", "out_of_scope"):
            total = sum(n for (s, _), n in counts.items() if s == section)
            for (s, said), n in sorted(counts.items()):
                if s == section:
                    print(f"  {section:<13} -> {said:<22} {n:4}/{total:<4} {n / total:6.1%}")


if __name__ == "__main__":
    main()
