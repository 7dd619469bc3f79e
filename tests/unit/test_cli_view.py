"""The command line builds only the command a process runs (``agent/cli_view.py``), and that
command behaves exactly as in the whole app: same help, same refusals, same exit codes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

import netops.cli  # noqa: F401  (registers the deployment's commands on the app)
from agent.cli import app
from agent.cli_view import command_view

_TOP = sorted(
    command.name or typer.main.get_command_name(command.callback.__name__)
    for command in app.registered_commands
    if command.callback is not None
)
_GROUPS = sorted(str(group.name) for group in app.registered_groups)


def _outcome(typer_app: typer.Typer, args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(typer_app, args, prog_name="netagent", env={"COLUMNS": "120"})
    return result.exit_code, result.output


def test_the_app_has_the_commands_this_test_walks() -> None:
    assert {"check", "chain", "token", "serve", "seed", "demo"} <= set(_TOP)
    assert _GROUPS == ["card"]


@pytest.mark.parametrize("name", _TOP)
def test_a_command_alone_is_built_and_nothing_else_at_top_level(name: str) -> None:
    view = command_view(app, [name, "--help"])
    assert view is not app
    built = get_command(view)
    assert isinstance(built, typer.core.TyperGroup)
    assert sorted(built.commands) == sorted([name, *_GROUPS])
    assert len(app.registered_commands) == len(_TOP)  # the app itself is left whole


_TAILS = {
    "help": ["--help"],
    "unknown-option": ["--no-such-option"],
    "extra-arguments": ["a", "b", "c", "d", "e"],
    "option-without-value": ["--token"],
    "bare": [],
}
_RUNS_BARE = {"serve", "mcp", "demo", "seed"}
"""Commands that, given nothing, start a server or write a database: not run bare here."""


@pytest.fixture(autouse=True)
def _own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NETAGENT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NETAGENT_HOME", str(tmp_path))


@pytest.mark.parametrize(
    ("name", "tail"),
    [
        pytest.param(name, tail, id=f"{name}-{label}")
        for name in _TOP + _GROUPS
        for label, tail in _TAILS.items()
        if tail or name not in _RUNS_BARE
    ],
)
def test_a_command_answers_as_in_the_whole_app(name: str, tail: list[str]) -> None:
    args = [name, *tail]
    assert _outcome(command_view(app, args), args) == _outcome(app, args)


@pytest.mark.parametrize(
    "args",
    [[], ["--help"], ["chek"], ["CHECK"], ["--install-completion"], ["check\x00"], [""], ["-"]],
)
def test_anything_but_a_command_word_first_gets_the_whole_app(args: list[str]) -> None:
    assert command_view(app, args) is app


def test_the_sub_app_is_kept_whole_and_the_top_level_commands_dropped() -> None:
    view = command_view(app, ["card", "diff"])
    assert view.registered_commands == []
    assert sorted(get_command(view).commands) == ["card"]
    assert _outcome(view, ["card", "diff", "--help"]) == _outcome(app, ["card", "diff", "--help"])


def test_a_lone_command_is_never_left_to_become_the_program() -> None:
    """Typer makes an app of one command and no group the command itself: a view of one
    command of an app without a callback or a sub-app would change the command line."""
    plain = typer.Typer()

    @plain.command()
    def first() -> None: ...

    @plain.command()
    def second() -> None: ...

    assert command_view(plain, ["first"]) is plain
    with_callback = typer.Typer()
    with_callback.callback()(lambda: None)
    with_callback.command()(first)
    with_callback.command()(second)
    view = command_view(with_callback, ["second"])
    assert [c.callback for c in view.registered_commands] == [second]
    assert _outcome(view, ["second"]) == _outcome(with_callback, ["second"]) == (0, "")


def test_two_commands_of_one_name_get_the_whole_app() -> None:
    """Click keeps the last one registered: the view does not guess which."""
    doubled = typer.Typer()
    doubled.callback()(lambda: None)
    doubled.command("same")(lambda: None)
    doubled.command("same")(lambda: None)
    assert command_view(doubled, ["same"]) is doubled
