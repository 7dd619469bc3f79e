"""The command line as the one command a process runs needs it.

Typer turns every registered command into a click command each time the program starts: it reads
each callback's signature, evaluates each annotation (strings, under ``from __future__ import
annotations``), and builds each parameter. ``netagent check`` would pay for the sixteen commands it
does not run, about 5 % of its instructions (callgrind), and every command that needs no model
answer should answer within 0.5 s (docs/operations.md). A process runs one command, so
``command_view`` gives Typer a copy of the app that holds only the top-level command the arguments
name (sub-apps, such as ``card``, are kept whole: they are small).

Anything else (no arguments, an option first, ``--help``, a word no command has, shell
completion) gets the whole app, so the group's help, its suggestions for a mistyped command
and completion are Typer's own. A command runs the same either way: its click command is built
from the same ``CommandInfo``; ``tests/unit/test_cli_view.py`` holds each command's help and
errors equal to the whole app's.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import typer
from typer.main import get_command_name


def command_view(app: typer.Typer, args: Sequence[str]) -> typer.Typer:
    """``app`` with only the top-level command ``args`` starts with, or ``app`` itself."""
    if not args:
        return app
    word = args[0]
    if any(group.name == word for group in app.registered_groups):
        chosen = []
    else:
        chosen = [
            command
            for command in app.registered_commands
            if command.callback is not None and _name(command) == word
        ]
        if len(chosen) != 1:
            return app
    # Typer makes a lone command the program itself (no group, no command word); a group stays
    # a group only with a callback, a sub-app or a second command.
    stays_a_group = app.registered_callback or app.info.callback or app.registered_groups
    if not stays_a_group:
        return app
    view = copy.copy(app)
    view.registered_commands = chosen
    return view


def _name(command: typer.models.CommandInfo) -> str:
    assert command.callback is not None
    return command.name or get_command_name(command.callback.__name__)
