"""Command-line values converted without pydantic, for the parameter types a call to the type
converts exactly.

Typer (0.29) converts every value a command receives, bool flags aside, through a pydantic
``TypeAdapter`` it builds on first use: pydantic is imported and a core schema generated for each
parameter. That is about a third of a simple command's CPU (cProfile) for values that are strings
and integers. Every command that needs no model answer should answer within 0.5 s
(docs/operations.md), so the ``netagent`` group (``typer.Typer(cls=...)``, the library's own way to
choose a group class) gives the parameters whose annotation is ``str``, ``int`` (with no bounds),
``bool`` or ``list[str]`` a conversion of ours. (A flag left unset is None, not a bool, and Typer
builds its adapter for that too.) Everything else (paths, dates, bounded integers, choices, files,
custom parsers) keeps Typer's.

Typer exposes no public hook for a parameter's conversion, so this sets the parameter's
``_runtime_param`` (``typer.core._TyperParameter.get_runtime_param`` builds it lazily and keeps
it there). If a Typer release moves it, nothing is changed and Typer converts as before;
``tests/unit/test_cli_coercion.py`` then fails on the cost (a plain command imports pydantic
again), not on behaviour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

try:
    from typer._coercion import RuntimeParam
except ImportError:  # a Typer that converts another way: leave it be
    RuntimeParam = None  # type: ignore[assignment,misc]

_INTEGER = re.compile(r"[+-]?[0-9]+")
"""ASCII digits only, as a person types a port or a count; ``int()`` would also take ``1_000``
and other scripts' digits."""
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Unicode's White_Space, which Typer's (pydantic's) integer strips; ``str.strip()`` also strips
the separators \\x1c-\\x1f, which Typer refuses (``"0\\x1f"``: found by the property test)."""
_BOOLEANS = {
    **dict.fromkeys(("1", "true", "t", "yes", "y", "on"), True),
    **dict.fromkeys(("0", "false", "f", "no", "n", "off"), False),
}
"""click's words for a boolean given as text (an environment variable's, say)."""


def _plain_kind(param: Any) -> str | None:
    """The kind of a parameter this module converts ("str", "int", "bool", "list"), or None."""
    descriptor = getattr(param, "type_descriptor", None)
    info = getattr(descriptor, "parameter_info", None)
    if descriptor is None or info is None or descriptor.file_annotation is not None:
        return None
    if info.parser is not None or getattr(param, "nargs", 1) not in (1, -1):
        return None
    annotation = descriptor.annotation
    if annotation is str:
        return "str"
    if annotation is int and info.min is None and info.max is None:
        return "int"
    if annotation is bool:
        return "bool"
    if annotation == list[str]:
        return "list"
    if annotation is Path:
        return "path"
    return None


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _PlainRuntimeParam(RuntimeParam):
        """``str``, ``int``, ``bool``, ``list[str]`` and ``Path`` values converted by a call; a
        value that is not one is refused in click's words, naming the option."""

        kind: str = "str"

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.kind == "list":
                return [str(item) for item in value]
            if self.kind == "path":
                if isinstance(value, Path):
                    return value
                if "\0" in str(value):  # no file system takes one (pydantic refuses it too)
                    raise typer.BadParameter(
                        f"{value!r} is not a valid path: it holds a NUL character.",
                        ctx=ctx,
                        param=param,
                    )
                return Path(value)
            if self.kind == "str":
                return value if type(value) is str else str(value)
            if self.kind == "bool":
                if type(value) is bool:
                    return value
                word = str(value).strip().lower()
                if word not in _BOOLEANS:
                    raise typer.BadParameter(
                        f"{value!r} is not a valid boolean.", ctx=ctx, param=param
                    )
                return _BOOLEANS[word]
            if type(value) is int:
                return value
            text = str(value).strip(_WHITE_SPACE)
            if not _INTEGER.fullmatch(text):
                raise typer.BadParameter(f"{value!r} is not a valid integer.", ctx=ctx, param=param)
            return int(text)


def _use_plain(param: Any) -> bool:
    """Give one parameter our conversion if it is a plain one; whether it was."""
    kind = _plain_kind(param)
    if kind is None or not hasattr(param, "_runtime_param"):
        return False
    descriptor = param.type_descriptor
    param._runtime_param = _PlainRuntimeParam(
        parameter_info=descriptor.parameter_info, annotation=descriptor.annotation, kind=kind
    )
    return True


def use_plain_coercion(command: Any) -> int:
    """Give ``command``'s and its subcommands' plain parameters our conversion; how many."""
    if RuntimeParam is None:
        return 0
    changed = sum(_use_plain(param) for param in getattr(command, "params", ()))
    for sub in (getattr(command, "commands", None) or {}).values():
        changed += use_plain_coercion(sub)
    return changed


def _help_option_of(command: Any, ctx: Any) -> None:
    """The ``--help`` option is made per command on its first context (a flag left unset: None,
    which Typer would convert through pydantic too); make it now, with the names the command's
    context inherits, unless the command names its own."""
    if RuntimeParam is None or "help_option_names" in (command.context_settings or {}):
        return
    option = command.get_help_option(ctx)
    if option is not None:
        _use_plain(option)


class PlainCoercionGroup(TyperGroup):
    """A ``netagent`` group: Typer's, with :func:`use_plain_coercion` applied to the whole
    command tree when it runs (Typer adds its completion options after building the group),
    and to each ``--help`` option as the command it belongs to is reached."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        use_plain_coercion(self)
        return super().main(*args, **kwargs)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        _help_option_of(self, ctx)
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not isinstance(command, PlainCoercionGroup):
            _help_option_of(command, ctx)
        return name, command, rest
