"""CSV downloads of the console's tables (the links table, the audit trail).

A cell that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``, a
tab or a carriage return) is written with a leading apostrophe, as OWASP advises against CSV
injection: the file is for reading, never for running.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence

from starlette.responses import Response

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> str:
    """One value as a CSV cell a spreadsheet shows and never evaluates."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """RFC 4180 text: the header, then one line per row (CRLF line ends)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([cell(h) for h in header])
    writer.writerows([cell(v) for v in row] for row in rows)
    return out.getvalue()


def csv_response(
    header: Sequence[str], rows: Iterable[Sequence[object]], filename: str
) -> Response:
    """A download named ``filename`` (ASCII letters, digits, ``-``, ``.`` only)."""
    safe = "".join(c for c in filename if c.isascii() and (c.isalnum() or c in "-.")) or "export"
    return Response(
        csv_text(header, rows),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{safe}"'},
    )
