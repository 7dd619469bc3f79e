"""Logs for a person at a terminal, or one JSON object per line for a machine.

``text`` is for a terminal: one short line per request and per skill run (time, caller, what
happened), and none of the start-up plumbing (Alembic's plugin and migration lines, the MCP
session manager, uvicorn's own start lines: ``netagent serve`` says when it listens), nor the
audit rows (they are in the database: ``netagent audit``). ``json`` carries everything, with the
request's and task's correlation ids. ``auto`` (the default) is text on a terminal and JSON
anywhere else (a file, a pipe, a container's log).

The ids live in context variables: the request observer sets the request id per HTTP request,
the executor binds the task's ids when it starts a skill run (the SDK runs ``execute`` in a
task that copies the request's context, so neither leaks into another request). Formatting
happens only for records that pass the level check, so a disabled level costs nothing here.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import traceback
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, NamedTuple

LOG_FORMATS = ("auto", "text", "json")
QUIET_IN_TEXT = ("alembic", "mcp", "uvicorn.error", "netagent.audit")
"""Loggers a terminal hears only at WARNING and above (unless the level is DEBUG)."""
PLUMBING = ("alembic",)
"""Loggers heard only at WARNING and above in any format (unless the level is DEBUG)."""
REQUEST_ID_HEADER = b"x-request-id"
_INCOMING_ID = re.compile(rb"^[A-Za-z0-9._:-]{1,64}$")


class TaskIds(NamedTuple):
    """The ids a skill run's log lines carry (never a token, never arguments)."""

    task_id: str
    context_id: str
    skill_id: str | None
    subject: str | None
    tenant: str | None


request_id_var: ContextVar[str | None] = ContextVar("netagent_request_id", default=None)
task_ids_var: ContextVar[TaskIds | None] = ContextVar("netagent_task_ids", default=None)


def new_request_id(incoming: bytes | None) -> str:
    """The caller's ``X-Request-ID`` when it is a short plain token, else a fresh one."""
    if incoming is not None and _INCOMING_ID.match(incoming):
        return incoming.decode("ascii")
    return os.urandom(16).hex()  # a fresh 128-bit id; uuid4() costs twice as much


def bind_task(ids: TaskIds) -> None:
    """Make the current skill run's ids part of every log line written from here on."""
    task_ids_var.set(ids)


# Attributes every LogRecord has (and uvicorn's ANSI-coloured copy of the message); anything
# else on a record came from ``extra=``.
_STANDARD = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys()
    | {"message", "asctime", "color_message"}
)


class JsonFormatter(logging.Formatter):
    """Timestamp, level, logger, message, the correlation ids, ``extra`` fields, exception."""

    def format(self, record: logging.LogRecord) -> str:
        """One line of JSON; values JSON cannot hold are written with ``str``."""
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = request_id_var.get()
        if request_id is not None:
            entry["request_id"] = request_id
        ids = task_ids_var.get()
        if ids is not None:
            entry["task_id"] = ids.task_id
            entry["context_id"] = ids.context_id
            if ids.skill_id:
                entry["skill_id"] = ids.skill_id
            if ids.subject:
                entry["principal"] = ids.subject
            if ids.tenant:
                entry["tenant"] = ids.tenant
        if record.name == "uvicorn.access" and isinstance(record.args, tuple):
            entry.update(_access_fields(record.args))
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in entry and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        elif record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, default=str, ensure_ascii=False)


def _access_fields(args: tuple[Any, ...]) -> dict[str, Any]:
    """uvicorn's access record: (client, method, path, http version, status)."""
    if len(args) != 5:
        return {}
    _client, method, path, _version, status = args
    return {"http_method": method, "http_path": path, "http_status": status}


class TextFormatter(logging.Formatter):
    """One short line: the time, the level when it is not INFO, the caller of the skill run
    the line belongs to, the message (an HTTP request as ``METHOD path status``)."""

    def format(self, record: logging.LogRecord) -> str:
        """``HH:MM:SS [LEVEL logger:] [principal@tenant] message``."""
        when = datetime.fromtimestamp(record.created).strftime("%H:%M:%S")
        if record.name == "uvicorn.access" and isinstance(record.args, tuple):
            fields = _access_fields(record.args)
            if fields:
                method, path = fields["http_method"], fields["http_path"]
                return f"{when} {method} {path} {fields['http_status']}"
        level = "" if record.levelno == logging.INFO else f"{record.levelname} {record.name}: "
        ids = task_ids_var.get()
        caller = f"{ids.subject}@{ids.tenant} " if ids is not None and ids.subject else ""
        line = f"{when} {level}{caller}{record.getMessage()}"
        if record.exc_info:
            line += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
        return line


class QuietBelowWarning(logging.Filter):
    """Drops the records of the named loggers (and their children) below WARNING."""

    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__()
        self._names = names

    def filter(self, record: logging.LogRecord) -> bool:
        """False for an INFO or DEBUG record of a quiet logger."""
        if record.levelno >= logging.WARNING:
            return True
        return not any(record.name == n or record.name.startswith(n + ".") for n in self._names)


def resolved_format(log_format: str, stream: Any = None) -> str:
    """``text`` or ``json``: ``auto`` is text when ``stream`` (stderr) is a terminal."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}, not {log_format!r}")
    if log_format != "auto":
        return log_format
    stream = sys.stderr if stream is None else stream
    return "text" if callable(getattr(stream, "isatty", None)) and stream.isatty() else "json"


def configure_logging(level: str, log_format: str) -> dict[str, Any]:
    """Set up the root logger on stderr; returns the ``log_config`` to hand to uvicorn, which
    sends uvicorn's error and access loggers through the root handler (every line on stderr
    is in the one format)."""
    chosen = resolved_format(log_format)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if chosen == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    if root.level > logging.DEBUG:  # on the handler: uvicorn sets its loggers' levels itself
        handler.addFilter(
            QuietBelowWarning((*PLUMBING, *(QUIET_IN_TEXT if chosen == "text" else ())))
        )
    passthrough = {"handlers": [], "propagate": True}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "loggers": {
            "uvicorn": dict(passthrough),
            "uvicorn.error": dict(passthrough),
            "uvicorn.access": dict(passthrough),
        },
    }
