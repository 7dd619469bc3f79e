"""The exit codes of every ``netagent`` command: one table, shown by ``--help`` and in
docs/operations.md, so that a script can tell "the answer is no" from "nobody answered" from
"you are in the wrong folder" without reading the message."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What a command's exit status means, whichever command it is."""

    OK = 0
    FAILED = 1
    USAGE = 2
    REFUSED_LOCALLY = 3
    UNREACHABLE = 4
    TOKEN_REFUSED = 5


MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "done",
    ExitCode.FAILED: "the command ran and the answer is no: a check failed (check, validate, "
    "card diff, demo) or the agent ended the task with an error",
    ExitCode.USAGE: "nothing was done: an option, a setting or the home cannot work (no "
    "signing key or no database in NETAGENT_HOME, a bad --args, a busy port)",
    ExitCode.REFUSED_LOCALLY: "this client refused what the agent published or returned (an "
    "interface that fails verification, schemas that do not compose)",
    ExitCode.UNREACHABLE: "nothing answered at the URL (connection refused, unknown host, "
    "timeout): nothing was checked or sent",
    ExitCode.TOKEN_REFUSED: "the bearer token was refused, by the agent (HTTP 401/403) or "
    "here (mcp, card --extended)",
}


def exit_codes_help() -> str:
    """The table as ``--help`` shows it (one paragraph per code: click rewraps paragraphs)."""
    return "Exit codes:\n\n" + "\n\n".join(f"{int(code)} {MEANINGS[code]}." for code in ExitCode)
