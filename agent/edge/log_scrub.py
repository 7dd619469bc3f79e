"""The SDK's log lines about a request it could not parse, without the caller's input.

a2a-sdk's JSON-RPC dispatcher logs a request whose params do not parse with
``logger.exception``: a traceback ending in protobuf's ParseError text, which quotes the
offending value (``Failed to parse metadata field: Struct must be in a dict which is
<value>``); the WARNING line it then writes for the error answer repeats that text in its
``Data``; and the HTTP+JSON error handler logs ``Parse error: <the same text>``. An
``A2A-Version`` it does not support is quoted too (``Version mismatch: actual='<value>'``, and
on HTTP+JSON ``A2A version '<value>' is not supported``). Those lines are written inside the
SDK, before any hook of ours runs, so a filter on the SDK's loggers (the public ``logging`` way
to change a library's records) rewrites them to what the caller is answered
(:mod:`agent.edge.error_scrub`): the field is named, the value never is (a version only when it
is a plain short one, ``0.3``), and no traceback is kept (the error is the caller's, not the
agent's).
"""

from __future__ import annotations

import ast
import json
import logging
import re
from typing import Any

from agent.edge.error_scrub import VERSION_TEXT, parse_error_text, scrub_jsonrpc

SDK_LOGGERS = (
    "a2a.server.routes.jsonrpc_dispatcher",
    "a2a.utils.error_handlers",
    "a2a.utils.version_validator",
)
"""The loggers of the SDK's JSON-RPC dispatcher, of its HTTP+JSON error answers and of its
version check."""
PARSE_FAILURES = frozenset(
    {"Failed to parse request params", "Failed to validate base JSON-RPC request"}
)
"""The dispatcher's ``logger.exception`` messages for input it could not read."""
ERROR_ANSWER = "Request Error (ID: %s): Code=%s, Message='%s'%s"
REST_PARSE_ERROR = "Parse error: %s"
REST_ERROR_ANSWER = "Request error: Code=%s, Message='%s'%s"
VERSION_MISMATCH = "Version mismatch: actual='%s', expected='%s'"
VERSION_QUOTED = "A2A version "
"""How the SDK's VersionNotSupportedError message begins (it quotes the version next)."""
PLAIN_VERSION = re.compile(r"\d{1,3}(?:\.\d{1,3}){0,2}")
DATA_PREFIX = ", Data="
MAX_DATA_CHARS = 65536
"""A longer ``Data`` is not read back: it is withheld whole."""
WITHHELD = "<withheld: it may quote the request>"


class WithholdCallerInput(logging.Filter):
    """Rewrites the SDK's parse-failure records in place (see the module docstring); every
    record passes, so no line goes missing, only the caller's text in it."""

    def filter(self, record: logging.LogRecord) -> bool:
        """True always; a parse-failure record is rewritten first."""
        if not isinstance(record.msg, str):
            return True
        if record.msg in PARSE_FAILURES and record.exc_info is not None:
            raw = str(record.exc_info[1])
            record.msg, record.args = "%s: %s", (record.msg, parse_error_text(raw))
            record.exc_info, record.exc_text = None, None
        elif record.msg == ERROR_ANSWER and isinstance(record.args, tuple):
            record.args = _scrubbed_answer(record.args)
        elif record.msg == REST_PARSE_ERROR and isinstance(record.args, tuple):
            record.args = tuple(parse_error_text(str(a)) for a in record.args)
        elif record.msg == VERSION_MISMATCH and isinstance(record.args, tuple):
            record.args = tuple(_plain_version(a) for a in record.args)
        elif record.msg == REST_ERROR_ANSWER and isinstance(record.args, tuple):
            record.args = tuple(_version_text(a) for a in record.args)
        return True


def _scrubbed_answer(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The error answer's log arguments with its message and data as the caller gets them."""
    if len(args) != 4 or not str(args[3]).startswith(DATA_PREFIX):
        return args
    if "parseError" not in str(args[3]):  # the only member of Data that quotes a request
        return args
    request_id, code, message, data_text = args
    data = _literal(str(data_text)[len(DATA_PREFIX) :])
    if data is None:
        return (request_id, code, message, DATA_PREFIX + WITHHELD)
    answer = {"error": {"code": code, "message": message, "data": data}}
    scrubbed = scrub_jsonrpc(json.dumps(answer, ensure_ascii=False, default=str).encode())
    if scrubbed is None:
        return args
    error = json.loads(scrubbed)["error"]
    return (request_id, code, error["message"], f"{DATA_PREFIX}{error['data']}")


def _plain_version(value: Any) -> Any:
    """A version as the caller sent it when it is a plain short one, else withheld."""
    return value if PLAIN_VERSION.fullmatch(str(value)) else WITHHELD


def _version_text(value: Any) -> Any:
    """The SDK's version refusal as the caller is answered (it does not quote the version)."""
    return VERSION_TEXT if str(value).startswith(VERSION_QUOTED) else value


def _literal(text: str) -> Any:
    """The ``Data`` the SDK wrote with ``str`` (Python literals), or None when it cannot be
    read back safely (too long, too deep, not a literal)."""
    if len(text) > MAX_DATA_CHARS:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def withhold_caller_input() -> None:
    """Put the filter on the SDK's loggers, once per process (apps built later share it)."""
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, WithholdCallerInput) for f in logger.filters):
            logger.addFilter(WithholdCallerInput())
