"""The command line's own conversion of plain values (agent/cli_coercion.py).

What must hold: every value Typer's pydantic conversion accepts for a ``str``, ``int``,
``bool``, ``list[str]`` or ``Path`` parameter that ours accepts comes out the same; ours
accepts nothing Typer's refuses; a refusal names the option and exits 2; the parameters it does
not handle keep Typer's; and the point of it, a command with plain values imports no pydantic.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
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
from tests.unit.test_cli_reads import migrate

ROOT = Path(__file__).resolve().parents[2]


def command_tree() -> Any:
    import netops.cli  # noqa: F401  (adds seed, demo, new-skill)

    group = typer.main.get_command(cli.app)
    assert isinstance(group, PlainCoercionGroup)
    use_plain_coercion(group)
    return group


def every_param(command: Any) -> list[Any]:
    found = list(command.params)
    for sub in (getattr(command, "commands", None) or {}).values():
        found += every_param(sub)
    return found


def test_plain_parameters_get_ours_and_the_rest_keep_typers() -> None:
    kinds = Counter()
    for param in every_param(command_tree()):
        annotation = param.type_descriptor.annotation
        ours = type(param._runtime_param).__name__ == "_PlainRuntimeParam"
        info = param.type_descriptor.parameter_info
        plain = annotation in (str, bool, list[str], Path) or (
            annotation is int and info.min is None and info.max is None
        )
        assert ours == plain, (param.name, annotation)
        kinds[(repr(annotation), ours)] += 1
    assert kinds[("<class 'str'>", True)] >= 40  # the commands' many strings
    assert kinds[("<class 'pathlib.Path'>", True)] >= 2  # click's path checks, then ours
    assert kinds[("<class 'datetime.datetime'>", False)] >= 1


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


def run(args: list[str], home: Path) -> tuple[int, str, list[str]]:
    """``netagent ARGS`` in a fresh interpreter: exit code, output, the modules it imported."""
    code = (
        "import json, sys, contextlib\n"
        "from netops.cli import main\n"
        f"sys.argv = ['netagent', *{args!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "else:\n"
        "    code = 0\n"
        "print('\\n' + json.dumps([code, sorted(sys.modules)]))\n"
    )
    env = {**os.environ, "NETAGENT_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    *output, last = done.stdout.rstrip("\n").split("\n")
    exit_code, modules = json.loads(last)
    return int(exit_code or 0), "\n".join(output) + done.stderr, modules


@pytest.mark.parametrize(
    "args",
    [
        ["token", "--subject", "alice", "--tenant", "acme", "--scope", "a.b", "--ttl", "60"],
        ["token", "--help"],
        ["--help"],
        ["card", "--help"],
        ["usage"],
        ["check", "http://127.0.0.1:9", "--json", "{tmp}/report.json"],
    ],
    ids=["token", "token-help", "help", "card-help", "usage", "check-json-path"],
)
def test_a_command_with_plain_values_imports_no_pydantic(args: list[str], tmp_path: Path) -> None:
    if args[0] == "token":
        assert run([*args, "--create-key"], tmp_path)[0] == 0  # a key to sign with
    if args[0] == "usage":
        migrate(tmp_path)  # a database to read: usage makes none
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    exit_code, output, modules = run(args, tmp_path)
    assert exit_code == (4 if args[0] == "check" else 0), output  # check: nothing listens
    assert "pydantic" not in modules, output
