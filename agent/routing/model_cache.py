"""Trained routing models on disk, keyed by what they were trained on.

Training the classifier takes a few seconds (scikit-learn's import included); reading a trained
model back takes a fraction of that. A model is stored under the SHA-256 of its training texts,
labels, pipeline and scikit-learn version, so a changed manifest, utterance, synonym or
library release trains anew, and replicas or restarts with the same skills share one file.
Processes that start together train once: the first holds the key's lock file while it trains,
the others wait on it and then read what it stored.

The files are pickles, which run code when read: the directory must be writable only by the
agent's own user (the default, under the user's cache directory, is). A file that cannot be
read back (truncated, another library version) is ignored and replaced.

Every change of the routing data names a new model, and a model weighs tens of megabytes: when
the cache stores a model it removes those no process has used (stored or read) for ``IDLE``
seconds, beyond the ``KEEP`` used last, so the directory does not grow with every edit. A
model in use is never removed from under the processes that share it: one unused for a day
runs nowhere that will read it again soon.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

KEEP = 8
"""Models the cache keeps however old: the ones used last (a few deployments' models)."""
IDLE = 24 * 3600
"""Seconds unused after which a model beyond the ``KEEP`` used last is removed."""


def default_directory() -> Path:
    """``$XDG_CACHE_HOME/netagent/models``, or ``~/.cache/netagent/models``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "netagent" / "models"


def training_key(texts: Sequence[str], labels: Sequence[str], signature: str) -> str:
    """The digest that names a model: its training set and how it is trained."""
    payload = json.dumps([signature, list(texts), list(labels)], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ModelCache:
    """A directory of trained models, one file per training key."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, key: str) -> Path:
        """Where the model of ``key`` lives."""
        return self.directory / f"{key}.pickle"

    def load(self, key: str) -> Any | None:
        """The model stored under ``key``, or None (absent, or unreadable)."""
        path = self.path(key)
        try:
            with path.open("rb") as file:
                model = pickle.load(file)
        except (FileNotFoundError, NotADirectoryError):  # nothing kept (yet) at this path
            return None
        except Exception as error:  # a damaged or foreign file: train again, replace it
            log.warning("routing: ignoring the cached model %s: %s", path.name, error)
            return None
        with suppress(OSError):  # used now, so the last to be removed (a read-only cache: not)
            os.utime(path)
        return model

    @contextmanager
    def training(self, key: str) -> Iterator[None]:
        """Hold the lock of ``key`` across processes (``flock``) while its model is trained; a
        directory where no lock file can be made trains without one."""
        try:
            import fcntl
        except ImportError:  # no flock on this platform: each process trains its own
            yield
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle = os.open(self.directory / f".{key}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            log.warning("routing: training without the cache's lock: %s", error)
            yield
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)  # closing lets the lock go

    def store(self, key: str, model: Any) -> None:
        """Keep ``model`` under ``key``, whole or not at all (a reader never sees half a file);
        a cache that cannot be written costs the next start a training, nothing else."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temporary = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
        except OSError as error:
            log.warning("routing: could not keep the trained model: %s", error)
            return
        try:
            with os.fdopen(handle, "wb") as file:
                pickle.dump(model, file, protocol=pickle.HIGHEST_PROTOCOL)
            Path(temporary).replace(self.path(key))
        except OSError as error:
            log.warning("routing: could not keep the trained model: %s", error)
            Path(temporary).unlink(missing_ok=True)
            return
        self.prune()

    def prune(self, keep: int = KEEP, idle: float = IDLE) -> None:
        """Remove, with its lock file, every model unused for ``idle`` seconds but the ``keep``
        used last."""
        by_use = sorted(self.directory.glob("*.pickle"), key=_last_use, reverse=True)
        unused_since = time.time() - idle
        for old in (path for path in by_use[keep:] if _last_use(path) < unused_since):
            for path in (old, self.directory / f".{old.stem}.lock"):
                try:
                    path.unlink(missing_ok=True)
                except OSError as error:
                    log.warning("routing: could not remove the old model %s: %s", path.name, error)


def _last_use(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # removed meanwhile by another process's pruning
        return 0.0
