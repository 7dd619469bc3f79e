"""Schemas that already passed a check, remembered by content, across processes.

Checking a schema against the JSON Schema 2020-12 metaschema is jsonschema's slowest path
(its ``$dynamicRef`` resolution): it was more than half of loading the registry, paid by every
start of ``serve``, ``card`` and ``validate`` for schemas that had not changed. Whether a
schema passes depends only on its content and on the checking code, so a pass is remembered
under a key made of both: the schema's JSON (sorted keys), the check's name, the bytes of the
module that checks, and the installed jsonschema and metaschema versions. Any change to one of
them is a new key, and the check runs again. A failure is never remembered (its message is
worked out each time).

In memory, a pass holds for the process. The registry loader also keeps the passes in a file
next to the skills' bytecode (``__pycache__``, which git ignores), read at its start and
written at its end; a file that cannot be read or written is ignored, as Python treats
bytecode. The client commands (``netagent describe``, ``invoke``, ``chain``, ``check``), each
a process of its own that verifies the same few documents again and again, keep theirs next
to this package's bytecode (``CLIENT_FOLDER``): the metaschema checks of a described skill's
schemas were a fifth of ``netagent describe``. Whoever can write that folder can change the
bytecode beside it, so the file trusts no one the code did not already trust.

Imports only the standard library: the manifest reader, which avoids the interface machinery,
uses it too.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

MEMO_FILE = "netagent-checked-schemas.json"
"""The file's name inside a ``__pycache__`` folder."""
MAX_KEYS = 4096
"""A file that would hold more keeps this run's passes only (it never grows without bound);
memory holds four times as many before it starts again (a client that verifies documents from
many agents)."""

_passed: set[str] = set()
_new: set[str] = set()


@functools.cache
def _salt() -> str:
    """The installed checker: jsonschema and its metaschemas, by version."""
    from agent.installed import NotInstalledError, version

    found = []
    for name in ("jsonschema", "jsonschema-specifications"):
        try:
            found.append(f"{name}={version(name)}")
        except NotInstalledError:
            found.append(f"{name}=?")
    return ";".join(found)


@functools.cache
def _code(path: str) -> str | None:
    """The checking module's bytes, hashed once per process; None when they cannot be read
    (a frozen or zipped install): nothing is remembered then."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def key(schema: Any, check: str, code: str) -> str | None:
    """The key of ``schema`` under ``check`` done by the module at ``code``; None when the
    schema has no canonical JSON text (it is then checked every time)."""
    try:
        text = json.dumps(
            schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError, RecursionError):
        return None
    module = _code(code)
    if module is None:
        return None
    material = "\0".join((_salt(), check, module, text))
    return hashlib.sha256(material.encode("utf-8", "surrogatepass")).hexdigest()


def passed(schema_key: str | None) -> bool:
    """Whether this exact schema passed this exact check before."""
    return schema_key is not None and schema_key in _passed


def record(schema_key: str | None) -> None:
    """Remember a pass."""
    if schema_key is not None and schema_key not in _passed:
        if len(_passed) >= 4 * MAX_KEYS:
            _passed.clear()
        _passed.add(schema_key)
        _new.add(schema_key)


MAX_FILE_BYTES = 1 << 20
"""A larger file is not this module's (MAX_KEYS keys take about 280 KB): it is not read."""


def _kept(path: Path) -> set[str]:
    """The keys in ``path``: none when it is missing, unreadable, too large or malformed."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return set()
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    keys = data.get("passed") if isinstance(data, dict) else None
    if not isinstance(keys, list):
        return set()
    return {k for k in keys if isinstance(k, str) and len(k) == 64}


def load(path: Path) -> None:
    """Add the passes kept in ``path`` (a missing or unreadable file adds none)."""
    _passed.update(_kept(path))


def save(path: Path) -> None:
    """Keep this process's new passes in ``path`` with the ones already there, atomically
    (concurrent starts each replace the file whole); never raises."""
    if not _new:
        return
    try:
        path.parent.mkdir(exist_ok=True)
        kept = _kept(path)
        keys = kept | _new if len(kept) + len(_new) <= MAX_KEYS else set(_new)
        descriptor, scratch = tempfile.mkstemp(dir=path.parent, prefix=".memo-", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump({"passed": sorted(keys)}, handle)
            Path(scratch).chmod(0o644)  # mkstemp's 0600 would hide it from other users' starts
            Path(scratch).replace(path)
        except BaseException:
            Path(scratch).unlink(missing_ok=True)
            raise
        _new.clear()
    except OSError:
        return


CLIENT_FOLDER = Path(__file__).resolve().parent
"""Where the client commands keep their passes (in its ``__pycache__``)."""


@contextmanager
def remembered(folder: Path) -> Iterator[None]:
    """Passes kept in ``folder/__pycache__`` by an earlier process added for this one, and
    this one's new passes kept there when it is done."""
    memo = folder / "__pycache__" / MEMO_FILE
    load(memo)
    try:
        yield
    finally:
        save(memo)


def forget() -> None:
    """Forget every pass held in memory (tests; a file is left as it is)."""
    _passed.clear()
    _new.clear()
