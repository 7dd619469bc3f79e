"""An installed distribution's version, read from the name of its ``.dist-info`` folder.

``importlib.metadata.version`` imports its package (``csv``, ``email``, ``zipfile``, ...) and
parses the distribution's ``METADATA`` headers: 60 million instructions in a process that has
imported none of it (callgrind), for the two or three versions the schema checks' memo key and
the card's version ask for; nothing else in a command needs that package, and every command
that needs no model answer should answer within 0.5 s (docs/operations.md).

A wheel installs its metadata in a folder named ``{name}-{version}.dist-info``, both parts
normalized (the "Recording installed projects" specification), and ``importlib.metadata``
answers from the first ``sys.path`` folder that holds the distribution. So this lists the
``sys.path`` folders in the same order and reads the version from the first folder's name that
matches. Anything it cannot answer exactly as ``importlib.metadata`` would (an ``.egg-info``
or an egg, a zip on the path, two candidates in one folder) is left to ``importlib.metadata``;
``tests/core/test_installed.py`` holds the two equal for every installed distribution.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from agent.errors import ConfigurationError

_SEPARATORS = re.compile(r"[-_.]+")


class NotInstalledError(ConfigurationError, LookupError):
    """No distribution of that name is installed (``importlib.metadata``'s own error, without
    importing it to say so)."""


def version(distribution: str) -> str:
    """The version of the installed ``distribution``, as the first one on ``sys.path`` has it."""
    found = _from_folder_names(_normalized(distribution))
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as metadata_version

    try:
        return metadata_version(distribution)
    except PackageNotFoundError:
        raise NotInstalledError(distribution) from None


def _normalized(name: str) -> str:
    return _SEPARATORS.sub("_", name).lower()


def _from_folder_names(wanted: str) -> str | None:
    """The version in the first matching ``.dist-info`` name; None when only importlib.metadata
    can tell (or when nothing is found: it then says that it is not installed)."""
    for entry in sys.path:
        if not isinstance(entry, str):
            return None  # bytes or a path object: whatever importlib.metadata makes of it
        folder = entry or "."
        try:
            names = [child.name for child in Path(folder).iterdir()]
        except NotADirectoryError:
            return None  # a zip on the path: importlib.metadata reads inside it
        except OSError:
            continue  # missing or unreadable: importlib.metadata finds nothing there either
        candidates = [
            name
            for name in names
            if name.lower().endswith((".dist-info", ".egg-info", ".egg"))
            and _normalized(name.rpartition(".")[0].partition("-")[0]) == wanted
        ]
        if not candidates:
            continue
        if len(candidates) != 1 or not candidates[0].lower().endswith(".dist-info"):
            return None
        stem = candidates[0][: -len(".dist-info")]
        _, separator, found = stem.partition("-")
        return found if separator and found and "-" not in found else None
    return None
