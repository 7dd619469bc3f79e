"""The command line's own readings of integers and paths, given to Typer as ``parser=`` (its
public hook for a parameter's conversion), so that a wrong value is refused in click's words.

Typer's default conversion (pydantic's) would take ``1_000`` and other scripts' digits as
integers and refuse in pydantic's words ("Input should be a valid integer, unable to parse
string as an integer"); these keep the command line's refusals as they are documented:
``Invalid value for '--ttl': 'sixty' is not a valid integer.``, exit code 2.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer

_INTEGER = re.compile(r"[+-]?[0-9]+")
"""ASCII digits only, as a person types a port or a count; ``int()`` would also take ``1_000``
and other scripts' digits."""
_WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
"""Unicode's White_Space, stripped around an integer (``str.strip()`` would also strip the
separators \\x1c-\\x1f)."""
_DIGITS = 4300
"""Python's default limit on the digits ``int()`` converts; a longer number is refused as not
an integer rather than raising from ``int()``."""


def whole_number(value: str | int) -> int:
    """An integer option's value: optional sign and ASCII digits, white space around ignored."""
    if type(value) is int:  # the default
        return value
    text = str(value).strip(_WHITE_SPACE)
    if len(text) > _DIGITS or not _INTEGER.fullmatch(text):
        raise typer.BadParameter(f"{value!r} is not a valid integer.")
    return int(text)


def file_path(value: str | Path) -> Path:
    """A path option's value; one holding a NUL character, which no file system takes, is
    refused."""
    if isinstance(value, Path):
        return value
    if "\0" in value:
        raise typer.BadParameter(f"{value!r} is not a valid path: it holds a NUL character.")
    return Path(value)
