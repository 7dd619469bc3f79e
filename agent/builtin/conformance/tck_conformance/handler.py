"""The A2A TCK's scenario behaviours, as scripts of A2A events keyed by messageId prefix.

The TCK (a2aproject/a2a-tck, 1.0-dev) drives some behaviours in-band: the messageId's prefix
names what the agent should do (``scenarios/*.feature`` there). This skill only says what to
do; the conformance layer in the request handler plays the script, so the skill stays a
plain ``handle(arguments, ctx) -> dict`` whose output is validated like any other.
"""

from __future__ import annotations

import base64
from typing import Any

FILE_CONTENT = base64.b64encode(b"tck").decode("ascii")
FILE_PART = {"raw_base64": FILE_CONTENT, "media_type": "text/plain", "filename": "output.txt"}
URL_PART = {
    "url": "https://example.com/output.txt",
    "media_type": "text/plain",
    "filename": "output.txt",
}
STREAMING_TIMEOUT_SECONDS = 2.0  # the TCK's streaming timeout; resubscription waits twice that


def _text(text: str) -> dict[str, str]:
    return {"text": text}


def _task(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"reply": "task", "steps": list(steps)}


def _artifact(*parts: dict[str, Any], append: bool = False, last: bool = False) -> dict[str, Any]:
    return {"artifact": {"parts": list(parts), "append": append, "last_chunk": last}}


WORKING: dict[str, Any] = {"status": "working"}
COMPLETED: dict[str, Any] = {"status": "completed"}

# Longest prefix first: "tck-artifact-file-url" must win over "tck-artifact-file".
SCENARIOS: dict[str, dict[str, Any]] = {
    "tck-complete-task": _task({"status": "completed", "message": [_text("Hello from TCK")]}),
    "tck-artifact-text": _task(_artifact(_text("Generated text content")), COMPLETED),
    "tck-artifact-file-url": _task(_artifact(URL_PART), COMPLETED),
    "tck-artifact-file": _task(_artifact(FILE_PART), COMPLETED),
    "tck-artifact-data": _task(_artifact({"data": {"key": "value", "count": 42}}), COMPLETED),
    "tck-message-response": {"reply": "message", "message": [_text("Direct message response")]},
    "tck-input-required": _task(
        {"status": "input_required", "message": [_text("TCK scenario: input required")]}
    ),
    "tck-reject-task": _task({"status": "rejected", "message": [_text("rejected")]}),
    "tck-stream-001": _task(WORKING, _artifact(_text("Stream hello from TCK")), COMPLETED),
    "tck-stream-002": _task(COMPLETED),
    "tck-stream-003": _task(WORKING, _artifact(_text("Stream task lifecycle")), COMPLETED),
    "tck-stream-ordering-001": _task(WORKING, _artifact(_text("Ordered output")), COMPLETED),
    "tck-stream-artifact-text": _task(
        WORKING, _artifact(_text("Streamed text content")), COMPLETED
    ),
    "tck-stream-artifact-file": _task(WORKING, _artifact(FILE_PART), COMPLETED),
    "tck-stream-artifact-chunked": _task(
        WORKING,
        _artifact(_text("chunk-1 ")),
        _artifact(_text("chunk-2"), append=True, last=True),
        COMPLETED,
    ),
    "test-resubscribe-message-id": _task(
        WORKING, {"sleep_seconds": 2 * STREAMING_TIMEOUT_SECONDS}, COMPLETED
    ),
}
_BY_LENGTH = sorted(SCENARIOS, key=len, reverse=True)


async def handle(arguments: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The script for this message's scenario (the input schema admits only known prefixes)."""
    message_id = arguments["message_id"]
    prefix = next((p for p in _BY_LENGTH if message_id.startswith(p)), None)
    if prefix is None:  # the input schema's pattern and SCENARIOS disagree: a defect here
        raise ValueError(f"no TCK scenario for messageId {message_id!r}")
    return {"scenario": prefix, **SCENARIOS[prefix]}
