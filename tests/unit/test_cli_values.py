"""The command line's values: Typer converts them, the integers and the report path through
agent/cli/values.py (``parser=``). A value that is not of its parameter's type is refused in
click's words, naming the option, with exit code 2 (a usage error), before the command runs;
one that is comes out as ``int()`` or ``Path()`` reads it."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from hypothesis import example, given
from hypothesis import strategies as st
from typer.testing import CliRunner

from agent import cli
from agent.cli.values import file_path, whole_number


def refusal(args: list[str], home: Path) -> str:
    result = CliRunner().invoke(cli.app, args, env={"NETAGENT_HOME": str(home), "COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    return result.output


@pytest.mark.parametrize(
    "value",
    ["sixty", "6\u0660", "1_000", "1.0", "", "0x10", "0\x1f", "9" * 5000, "\0"],
    ids=["word", "arabic-indic-digit", "underscore", "decimal", "empty", "hex", "separator",
         "huge", "nul"],
)  # fmt: skip
def test_an_integer_option_refuses_what_is_not_one_naming_the_option(
    value: str, tmp_path: Path
) -> None:
    output = refusal(["token", "--subject", "a", "--tenant", "acme", "--ttl", value], tmp_path)
    if len(value) < 100:
        assert f"Invalid value for '--ttl': {value!r} is not a valid integer." in output
    assert "Invalid value for '--ttl': " in output and "is not a valid integer." in output


def test_a_path_with_a_nul_character_is_refused_naming_the_option(tmp_path: Path) -> None:
    output = refusal(["check", "http://127.0.0.1:9", "--json", "a\0b"], tmp_path)
    assert "Invalid value for '--json': 'a\\x00b' is not a valid path" in output


def int_refuses(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return True
    return False


def typed_otherwise(text: str) -> bool:
    """What ``int()`` takes and a person does not type as an integer: ``1_000``, other
    scripts' digits, the separators \\x1c-\\x1f ``int()`` strips."""
    return any(c == "_" or "\x1c" <= c <= "\x1f" or (c.isdigit() and not c.isascii()) for c in text)


@given(st.one_of(st.integers(-(10**30), 10**30).map(str), st.text(max_size=12)))
@example(" 7\u3000")  # Unicode white space around: stripped
@example("+0042")
@example("0\x1f")
def test_an_integer_taken_is_int_of_its_ascii_digits(text: str) -> None:
    try:
        got = whole_number(text)
    except typer.BadParameter:
        assert int_refuses(text) or typed_otherwise(text), text
    else:
        assert got == int(text)


def test_a_path_taken_is_path_of_it() -> None:
    assert file_path("a b/~/ü.json") == Path("a b/~/ü.json")
    assert file_path(Path("x")) == Path("x")
    assert whole_number(28800) == 28800  # a default, as Typer hands it in
