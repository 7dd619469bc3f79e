"""Records at any terminal width (agent/cli/layout.py): no line wider than the terminal, no
identifier broken, whatever the cells hold."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console

from agent.cli.layout import Column, print_records

WORDS = [
    "evaluate_resource_condition",
    "sha256:" + "ab" * 32,
    "urn:netops-agent:schema:check-link-capacity:output",
    "deny:",
    "ok",
    "\u00e9t\u00e9",
    "x",
    "[bold]not-markup[/]",
]


def rendered(width: int, columns: list[Column], rows: list[tuple[str, ...]], lead: int) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, force_terminal=False)
    print_records(console, "records", columns, rows, lead=lead)
    return out.getvalue()


@pytest.mark.parametrize("width", [24, 40, 80, 120, 200])
def test_every_line_fits_and_every_word_that_can_fit_is_whole(width: int) -> None:
    rng = random.Random(width)
    columns = [Column("id", identifier=True), Column("state"), Column("n", label=True)]
    columns.append(Column("why"))
    rows = [
        tuple(" ".join(rng.choices(WORDS, k=rng.randint(0, 4))) for _ in columns) for _ in range(12)
    ]
    text = rendered(width, columns, rows, lead=2)
    assert all(len(line) <= width for line in text.splitlines()), text
    words = {word for row in rows for cell in row for word in cell.split()}
    broken = [w for w in words if len(w) <= width - 2 and w not in text.split()]
    assert not broken, text
    assert "[bold]not-markup[/]" in text  # a cell is text, never markup


def test_a_table_when_it_fits_blocks_when_not() -> None:
    columns = [Column("skill", identifier=True), Column("calls", label=True)]
    rows = [("evaluate_resource_condition", "3"), ("\u3000odd\u3000spaces\u3000", "0")]
    wide = rendered(80, columns, rows, lead=1)
    assert "skill" in wide.splitlines()[1] and "calls" in wide.splitlines()[1]
    narrow = rendered(25, columns, rows, lead=1)
    assert "evaluate_resource_conditi\non" in narrow  # wider than 25: folds, the one exception
    assert "  calls 3" in narrow
    assert rendered(80, columns, [], lead=1).startswith("records")
