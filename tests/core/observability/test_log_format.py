"""The JSON log formatter: one parseable object per record, with the correlation ids."""

from __future__ import annotations

import contextvars
import json
import logging
import sys

import pytest

from agent.observability.log_format import (
    JsonFormatter,
    TaskIds,
    bind_task,
    configure_logging,
    new_request_id,
    request_id_var,
)


def record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord(
        "agent.server.executor", logging.WARNING, __file__, 1, message, args, None
    )
    for key, value in extra.items():
        setattr(made, key, value)
    return made


def formatted(made: logging.LogRecord) -> dict[str, object]:
    line = JsonFormatter().format(made)
    assert "\n" not in line
    return json.loads(line)


def test_a_plain_record_has_time_level_logger_and_message() -> None:
    entry = formatted(record("tool %s refused", "inventory"))
    assert entry["level"] == "warning" and entry["logger"] == "agent.server.executor"
    assert entry["message"] == "tool inventory refused"
    assert str(entry["ts"]).endswith("+00:00")
    assert "task_id" not in entry and "request_id" not in entry


def test_the_correlation_ids_come_from_the_context() -> None:
    def inside() -> dict[str, object]:
        request_id_var.set("req-1")
        bind_task(TaskIds("task-1", "ctx-1", "check_link_capacity", "alice", "acme"))
        return formatted(record("done"))

    entry = contextvars.copy_context().run(inside)
    assert entry["request_id"] == "req-1"
    assert (entry["task_id"], entry["context_id"], entry["skill_id"]) == (
        "task-1",
        "ctx-1",
        "check_link_capacity",
    )
    assert (entry["principal"], entry["tenant"]) == ("alice", "acme")
    # Nothing leaked out of the context the ids were bound in.
    assert "task_id" not in formatted(record("after"))


def test_extra_fields_exceptions_and_odd_values_still_make_one_json_line() -> None:
    try:
        raise RuntimeError("boom\nsecond line")
    except RuntimeError:
        made = record("failed", state="failed", when=object())
        made.exc_info = sys.exc_info()
    entry = formatted(made)
    assert entry["state"] == "failed"
    assert str(entry["when"]).startswith("<object object")
    assert "RuntimeError: boom" in str(entry["exception"])
    assert "color_message" not in formatted(record("x", color_message="\x1b[36mx\x1b[0m"))


def test_uvicorn_access_records_get_http_fields() -> None:
    made = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/healthz", "1.1", 200),
        None,
    )
    entry = formatted(made)
    assert entry["message"] == '127.0.0.1:5000 - "GET /healthz HTTP/1.1" 200'
    assert (entry["http_method"], entry["http_path"], entry["http_status"]) == (
        "GET",
        "/healthz",
        200,
    )


@pytest.mark.parametrize(
    ("incoming", "kept"),
    [
        (b"req-42.a_b:c", True),
        (b"a" * 64, True),
        (b"a" * 65, False),
        (b"two words", False),
        (b'{"json":1}', False),
        (b"", False),
        (None, False),
    ],
)
def test_a_callers_request_id_is_kept_only_when_it_is_a_short_plain_token(
    incoming: bytes | None, kept: bool
) -> None:
    made = new_request_id(incoming)
    assert (made == (incoming or b"").decode()) is kept
    if not kept:
        assert len(made) == 32 and int(made, 16) >= 0


def test_configure_logging_refuses_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="auto, text, json"):
        configure_logging("info", "xml")


def test_json_logging_routes_uvicorn_through_the_root_handler() -> None:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    try:
        config = configure_logging("warning", "json")
        assert config is not None
        assert all(
            config["loggers"][name] == {"handlers": [], "propagate": True}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        )
        (handler,) = root.handlers
        assert isinstance(handler.formatter, JsonFormatter)
        assert root.level == logging.WARNING
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])


def test_auto_is_text_on_a_terminal_and_json_anywhere_else(tmp_path) -> None:
    import os

    from agent.observability.log_format import resolved_format

    leader, follower = os.openpty()
    try:
        with os.fdopen(follower, "w", closefd=False) as terminal:
            assert resolved_format("auto", terminal) == "text"
        with (tmp_path / "log").open("w") as file:
            assert resolved_format("auto", file) == "json"
            assert resolved_format("text", file) == "text"  # asked for: as asked
        assert resolved_format("json", None) == "json"
        assert resolved_format("auto", object()) == "json"  # no isatty: not a terminal
    finally:
        os.close(leader)
        os.close(follower)


def test_a_terminal_line_is_short_and_names_the_caller_of_its_skill_run() -> None:
    from agent.observability.log_format import QuietBelowWarning, TextFormatter

    access = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "POST", "/a2a/jsonrpc", "1.1", 200),
        None,
    )
    assert TextFormatter().format(access).endswith(" POST /a2a/jsonrpc 200")

    def inside() -> str:
        bind_task(TaskIds("task-1", "ctx-1", "check_link_capacity", "alice", "acme"))
        made = logging.LogRecord("agent.tasks", logging.INFO, __file__, 1, "done", (), None)
        return TextFormatter().format(made)

    line = contextvars.copy_context().run(inside)
    assert line.endswith(" alice@acme done") and len(line) == len("00:00:00 alice@acme done")
    warned = TextFormatter().format(record("tool %s refused", "inventory"))
    assert warned.endswith(" WARNING agent.server.executor: tool inventory refused")
    quiet = QuietBelowWarning(("alembic",))
    plumbing = logging.LogRecord("alembic.runtime", logging.INFO, __file__, 1, "x", (), None)
    assert not quiet.filter(plumbing)
    plumbing.levelno = logging.ERROR
    assert quiet.filter(plumbing)
    assert quiet.filter(logging.LogRecord("alembicx", logging.INFO, __file__, 1, "x", (), None))
