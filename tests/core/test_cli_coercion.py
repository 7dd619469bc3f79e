"""The command line's own conversion of plain values (agent/cli_coercion.py), on a sample
command group of every plain kind.

What must hold: every value Typer's pydantic conversion accepts for a ``str``, ``int``,
``bool``, ``list[str]`` or ``Path`` parameter that ours accepts comes out the same; ours
accepts nothing Typer's refuses; a refusal names the option and exits 2. Which parameters of
the network agent's command line get ours, and that its commands with plain values import no
pydantic, is in tests/unit/test_cli_coercion.py (it runs ``netagent``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
import typer.main
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer._coercion import AdapterRuntimeParam, build_runtime_param
from typer.testing import CliRunner

from agent import cli
from agent.cli_coercion import PlainCoercionGroup, use_plain_coercion


def typers(annotation: Any) -> Any:
    """Typer's own conversion of a parameter of ``annotation`` (pydantic's adapter)."""
    from typer._coercion import resolve_type_descriptor
    from typer.models import OptionInfo

    found = build_runtime_param(resolve_type_descriptor(annotation, OptionInfo()))
    assert isinstance(found, AdapterRuntimeParam)
    return found


SAMPLE = typer.Typer(cls=PlainCoercionGroup)


@SAMPLE.command()
def sample(
    text: str = "",
    number: int = 0,
    flag: bool = False,
    items: Annotated[list[str] | None, typer.Option()] = None,
    where: Annotated[Path | None, typer.Option()] = None,
) -> None:
    """Every kind of plain parameter, to convert values with."""


@SAMPLE.command()
def other() -> None:
    """A second command, so that the sample is a group as netagent is."""


def ours(annotation: Any) -> Any:
    group = typer.main.get_command(SAMPLE)
    assert use_plain_coercion(group) == 7  # and the two completion options Typer adds
    by_annotation = {
        p.type_descriptor.annotation: p
        for p in group.commands["sample"].params  # type: ignore[attr-defined]
    }
    param = by_annotation[annotation]
    assert type(param._runtime_param).__name__ == "_PlainRuntimeParam"
    return param


def outcome(convert: Any, value: Any, param: Any) -> tuple[str, Any]:
    try:
        return "ok", convert(value, param=param, ctx=None)
    except Exception as exc:  # BadParameter, in both
        return "refused", type(exc).__name__


INTEGER_TEXT = st.one_of(
    st.integers(-(10**30), 10**30).map(str),
    st.text(alphabet="0123456789+-_ .e\tx\u0661\u0662\u0663", max_size=12),  # Arabic-Indic too
    st.text(max_size=8),
)


@settings(max_examples=400, deadline=None)
@given(INTEGER_TEXT)
@example("0\x1f")  # a separator str.strip() strips and Typer refuses (found by this test)
@example("7\u3000")  # Unicode White_Space, which both strip
def test_an_integer_we_accept_is_typers_integer(text: str) -> None:
    param = ours(int)
    mine = outcome(param._runtime_param.coerce, text, param)
    theirs = outcome(typers(int).coerce, text, param)
    if mine[0] == "ok":
        assert theirs == mine, text
    else:
        assert mine == ("refused", "BadParameter"), text


@pytest.mark.parametrize(
    "value",
    ["1", "0", "true", "False", "YES", "no", "on", "Off", "t", "f", "y", "n", "maybe", "", "2"],
)
def test_a_boolean_word_we_accept_is_typers_boolean(value: str) -> None:
    param = ours(bool)
    mine = outcome(param._runtime_param.coerce, value, param)
    theirs = outcome(typers(bool).coerce, value, param)
    if mine[0] == "ok":
        assert theirs == mine, value
    else:
        assert mine == ("refused", "BadParameter") and value in ("maybe", "", "2")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=20), st.lists(st.text(max_size=10), max_size=4))
def test_strings_and_lists_of_strings_are_taken_as_given(text: str, items: list[str]) -> None:
    one, many = ours(str), ours(list[str])
    assert one._runtime_param.coerce(text, param=one, ctx=None) == text
    got = many._runtime_param.coerce(tuple(items), param=many, ctx=None)
    assert got == typers(list[str]).coerce(tuple(items), param=many, ctx=None) == items
    assert many._runtime_param.coerce(None, param=many, ctx=None) == ()


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=24), st.text(alphabet="/.~ \0a", max_size=8)))
def test_a_path_is_typers_path(text: str) -> None:
    """pydantic's ``Path`` of any text (empty, NUL, separators, spaces, ``~``) is ours."""
    param = ours(Path)
    assert outcome(param._runtime_param.coerce, text, param) == outcome(
        typers(Path).coerce, text, param
    )


def test_a_bad_integer_is_refused_naming_the_option(tmp_path: Path) -> None:
    home = {"NETAGENT_HOME": str(tmp_path)}
    result = CliRunner().invoke(
        cli.app, ["token", "--subject", "a", "--tenant", "acme", "--ttl", "sixty"], env=home
    )
    assert result.exit_code == 2
    assert "'--ttl'" in result.output and "'sixty' is not a valid integer" in result.output
