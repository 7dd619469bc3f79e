"""CSV downloads (agent/console/export.py): cells a spreadsheet shows and never runs."""

from __future__ import annotations

import csv
import io

import pytest

from agent.console.export import cell, csv_response, csv_text


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+1", "'+1"),
        ("-2", "'-2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("acme-lnk-00002", "acme-lnk-00002"),
        (None, ""),
        (42, "42"),
    ],
)
def test_a_formula_is_written_as_text(value: object, written: str) -> None:
    assert cell(value) == written


def test_the_text_is_rfc_4180_and_reads_back() -> None:
    text = csv_text(("id", "ends"), [("a", 'x, "y"\nz'), ("b", "\u00e9\u2003")])
    assert text.endswith("\r\n")
    assert list(csv.reader(io.StringIO(text))) == [
        ["id", "ends"],
        ["a", 'x, "y"\nz'],
        ["b", "\u00e9\u2003"],
    ]


def test_the_download_name_keeps_only_safe_characters() -> None:
    response = csv_response(("a",), [], 'audit-"acme"\r\n/../x.csv')
    assert response.headers["content-disposition"] == 'attachment; filename="audit-acme..x.csv"'
    assert response.media_type == "text/csv; charset=utf-8"
