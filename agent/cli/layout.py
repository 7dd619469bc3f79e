"""Rows of records for a terminal of any width, never breaking an identifier in the middle.

A table is the easiest thing to scan when it fits; squeezed into a narrow terminal, rich wraps
or cuts its cells, and an id split as ``evaluate_resource_c`` / ``ondition`` or cut to
``check_lin…`` can no longer be read, searched for or pasted. So a column says whether its cells
are identifiers (shown whole, on one line) or prose (wrapped between words). When every
identifier and every word of prose fits at once, the records print as a table; when not, each
record prints as a block of its own: its leading fields on one line, the others indented under
it, wrapped between fields. A single word wider than the whole terminal is the one thing that
still folds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

COLUMN_GAP = 2
"""Characters between two columns of the table drawn here: right padding, rule."""
FIELD_GAP = "  "
"""Between two fields of a block."""


@dataclass(frozen=True)
class Column:
    """One field of the records: its header, and how its cells may break.

    Every cell breaks only between words, so an identifier (one word) is never broken; an
    ``identifier`` column keeps each line of its cells whole (``skill_id version``).
    """

    header: str
    identifier: bool = False
    justify: str = "left"
    style: str | None = None
    label: bool = False
    """In a block, the value follows its header (a bare number says nothing on its own)."""


def _widths(column: Column, cells: Sequence[str]) -> tuple[int, int]:
    """The column's narrowest width (every identifier, every word whole) and its natural one
    (every line on one line)."""
    lines = [line for cell in [column.header, *cells] for line in cell.splitlines() or [""]]
    units = lines if column.identifier else [word for line in lines for word in line.split()]
    return max(len(unit) for unit in units), max(len(line) for line in lines)


def table_width(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> int:
    """The narrowest width at which the table shows every identifier whole and breaks prose
    only between words."""
    narrowest = [_widths(c, [row[i] for row in rows])[0] for i, c in enumerate(columns)]
    return sum(narrowest) + COLUMN_GAP * (len(columns) - 1)


def column_widths(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> list[int]:
    """Each column's width in a table ``width`` wide: its natural width, the widest columns
    narrowed first, none below its narrowest (the caller checked that the narrowest fit)."""
    measured = [_widths(c, [row[i] for row in rows]) for i, c in enumerate(columns)]
    narrowest = [low for low, _ in measured]
    widths = [high for _, high in measured]
    excess = sum(widths) + COLUMN_GAP * (len(columns) - 1) - width
    while excess > 0:
        shrinkable = [i for i, w in enumerate(widths) if w > narrowest[i]]
        if not shrinkable:
            break
        widest = max(shrinkable, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1
    return widths


def print_records(
    console: Console,
    title: str,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    lead: int = 1,
) -> None:
    """``rows`` as a table when it fits ``console``, else as one block per record whose first
    line holds the first ``lead`` fields."""
    if table_width(columns, rows) <= console.width:
        console.print(_table(title, columns, rows, column_widths(columns, rows, console.width)))
        return
    console.print(Text(title, style="bold"), highlight=False)
    head = FIELD_GAP.join(c.header for c in columns[:lead] if c.header)
    rest = FIELD_GAP.join(c.header for c in columns[lead:] if c.header and not c.label)
    console.print(Text(f"{head}\n  {rest}" if rest else head, style="dim"), highlight=False)
    for row in rows:
        console.print(_block(columns, row, lead), highlight=False, overflow="fold")


def _table(
    title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]], widths: list[int]
) -> Table:
    table = Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )
    for index, column in enumerate(columns):
        table.add_column(
            column.header,
            justify=column.justify,  # type: ignore[arg-type]
            style=column.style,
            no_wrap=column.identifier,
            width=widths[index],
            overflow="fold",
        )
    for row in rows:
        table.add_row(*row)
    return table


def _block(columns: Sequence[Column], row: Sequence[str], lead: int) -> Text:
    """One record: the lead fields on a line, the others indented below."""

    def fields(indexes: range) -> Text:
        text = Text()
        for index in indexes:
            value = " ".join(row[index].split())  # a cell's own lines, as one
            if not value:
                continue
            if text:
                text.append(FIELD_GAP)
            if columns[index].label:
                text.append(f"{columns[index].header} ", style="dim")
            text.append(value, style=columns[index].style)
        return text

    block = fields(range(min(lead, len(columns))))
    rest = fields(range(lead, len(columns)))
    if rest:
        block.append("\n  ")
        block.append_text(rest)
    return block
