"""What every client command (``describe``, ``invoke``, ``chain``, ``check``) shares: its
options, the reading of ``--binding`` and ``--args``, and how an expected failure becomes an
exit code and one message, never a traceback."""

from __future__ import annotations

import json
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from agent.cli.common import fail, run_async
from agent.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    from agent.client import CredentialRefusedError, GovernedClient, SkillNotAdvertisedError

T = TypeVar("T")


Url = Annotated[str, typer.Argument(help="Base URL of the target agent (its card is under it).")]
Bearer = Annotated[str | None, typer.Option("--token", help="Bearer token of the caller.")]
BindingOption = Annotated[
    str, typer.Option("--binding", help="A2A binding: JSONRPC, HTTP+JSON or GRPC (any case).")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
RequireSignature = Annotated[
    bool,
    typer.Option(
        "--require-signature",
        help="Refuse an unsigned agent card (a signed one is always verified).",
    ),
]
Arguments = Annotated[str, typer.Option("--args", help="The skill's arguments: JSON, or @file.")]


def _client_errors() -> tuple[type[Exception], ...]:
    """What a client command expects to fail with (imported when a client command runs)."""
    import httpx
    from a2a.utils.errors import A2AError

    from agent.client import (
        CompositionRefusedError,
        CredentialRefusedError,
        GovernedClientError,
        RemoteTaskError,
    )

    return (
        CredentialRefusedError,
        GovernedClientError,
        RemoteTaskError,
        CompositionRefusedError,
        A2AError,
        httpx.HTTPError,
    )


def binding_named(value: str) -> str:
    """``--binding``, checked (any case). Nothing of the a2a-sdk's client is imported here: a
    unary JSON-RPC call needs none of it, and the calls that do import it themselves."""
    from agent.client import BINDINGS

    for name in BINDINGS:
        if value.upper() == name:
            return name
    raise fail(f"--binding must be one of {', '.join(BINDINGS)}, not {value!r}")


def parse_arguments(value: str) -> dict[str, Any]:
    """``--args``: a JSON object, inline or as ``@path``."""
    text = value
    if value.startswith("@"):
        try:
            text = Path(value[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise fail(f"--args: cannot read {value[1:]}: {exc.strerror}") from None
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise fail(f"--args is not JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise fail("--args must be a JSON object")
    return parsed


async def explained(
    client: GovernedClient, skill: str, exc: SkillNotAdvertisedError
) -> SkillNotAdvertisedError:
    """The local refusal, with the agent's own words when the card leaves the skill out (a
    removed skill's answer names its replacement)."""
    from agent.client import SkillNotAdvertisedError

    if exc.message != f"the card does not advertise {skill!r}":
        return exc
    said = await client.why_not(skill)
    if said is None:
        return exc
    return SkillNotAdvertisedError(exc.message, [f"the agent says: {said}"])


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


CLAIM_VALUE = r"[A-Za-z0-9._@:-]{1,128}"
"""A claim value the advice repeats as it is (anything else becomes a placeholder)."""


def _token_claims(token: str | None) -> dict[str, Any]:
    """A JWT's claims, read without verifying it: only to word the advice after a refusal."""
    import base64
    import binascii

    parts = (token or "").split(".")
    if len(parts) != 3:
        return {}
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, binascii.Error):
        return {}
    return claims if isinstance(claims, dict) else {}


def mint_command(token: str | None) -> str:
    """The ``netagent token`` line that mints a token like ``token`` (its subject, tenant and
    scopes when they can be read from it; placeholders otherwise)."""
    import re
    import shlex

    claims = _token_claims(token)

    def claim(name: str) -> str | None:
        value = claims.get(name)
        return value if isinstance(value, str) and re.fullmatch(CLAIM_VALUE, value) else None

    subject, tenant = claim("sub"), claim("tenant")
    scope = claims.get("scope")
    words = scope.split(" ") if isinstance(scope, str) else []  # RFC 6749: U+0020 only
    scopes = [s for s in words if re.fullmatch(CLAIM_VALUE, s)]
    if subject is None or tenant is None or subject.startswith("agent:"):
        return "netagent token --subject NAME --tenant TENANT --scope SCOPE"
    words = ["netagent", "token", "--subject", subject, "--tenant", tenant]
    for item in scopes:
        words += ["--scope", item]
    return shlex.join(words)


def refusal_lines(refusal: CredentialRefusedError, token: str | None) -> list[str]:
    """The agent's own reason for a 401/403, and the command that mints a token it accepts."""
    reason = f" {refusal.reason}" if refusal.reason else ""
    what = "refused the token" if token else "needs a bearer token"
    return [
        f"the agent {what} (HTTP {refusal.status}{reason}): {refusal.message}",
        "mint a new token where the agent's NETAGENT_HOME is (its signing key), "
        "and pass it with --token:",
        f"  {mint_command(token)}",
    ]


def _client_error(
    exc: Exception, token: str | None = None
) -> tuple[int, dict[str, Any], list[str]]:
    """Exit code, JSON error object and message lines for an expected client-side error."""
    import httpx

    from agent.client import (
        CompositionRefusedError,
        GovernedClientError,
        RemoteTaskError,
        refusal_in,
    )

    refusal = refusal_in(exc)
    if refusal is not None:
        error = {
            "where": "remote",
            "code": "credential_refused",
            "status": refusal.status,
            "reason": refusal.reason,
            "message": refusal.message,
            "metadata": refusal.metadata,
            "mint": mint_command(token),
        }
        return ExitCode.TOKEN_REFUSED, error, refusal_lines(refusal, token)
    if isinstance(exc, RemoteTaskError):
        message = str(exc.error.get("message", ""))
        error = {
            "where": "remote",
            "task_id": exc.task_id,
            "state": exc.state,
            "code": exc.code,
            "message": message,
            "details": exc.error.get("details", []),
        }
        return (
            ExitCode.FAILED,
            error,
            [f"task {exc.task_id} ended {exc.state}: {exc.code}: {message}"],
        )
    if isinstance(exc, CompositionRefusedError):
        fields = [d.split(":", 1)[0] for d in exc.differences if ":" in d]
        error = {
            "where": "local",
            "code": "composition_refused",
            "fields": fields,
            "differences": exc.differences,
        }
        return (
            ExitCode.REFUSED_LOCALLY,
            error,
            ["no direct composition: " + ", ".join(fields) + " differ"],
        )
    unreachable = _unreachable(exc)
    if unreachable is not None:
        return ExitCode.UNREACHABLE, {"where": "remote", **unreachable}, [unreachable["message"]]
    if isinstance(exc, GovernedClientError):
        # The client folds "could not fetch the card" into interface_invalid: that is remote.
        remote = isinstance(exc.__cause__, httpx.HTTPError)
        cause = f" ({_first_line(exc.__cause__)})" if remote and exc.__cause__ else ""
        error = {
            "where": "remote" if remote else "local",
            "code": exc.code.value,
            "message": exc.message + cause,
            "details": exc.details,
        }
        code = ExitCode.FAILED if remote else ExitCode.REFUSED_LOCALLY
        return code, error, [f"{exc.code.value}: {exc.message}{cause}"]
    error = {"where": "remote", "code": type(exc).__name__, "message": _first_line(exc)}
    return ExitCode.FAILED, error, [f"{type(exc).__name__}: {_first_line(exc)}"]


UNREACHABLE = "unreachable"
"""The error code a client command reports when nothing answered (exit 4)."""


def _unreachable(exc: BaseException) -> dict[str, str] | None:
    """``{"code", "message"}`` when ``exc`` (or what caused it) is a connection that never
    carried an answer: refused, unknown host, timed out. An agent that answered badly is not
    this: that is a failed check or an invalid interface."""
    import httpx

    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, httpx.TransportError):
        cause = cause.__cause__
    if cause is None:
        return None
    import contextlib

    where = ""
    with contextlib.suppress(RuntimeError):  # an error raised before a request has none
        where = f" at {cause.request.url}"
    return {
        "code": UNREACHABLE,
        "message": f"{UNREACHABLE}: nothing answered{where} ({_first_line(cause)}); "
        "is the agent running, is the URL right?",
    }


def _client_exit(exc: Exception, as_json: bool, token: str | None = None) -> typer.Exit:
    """Report the error unwrapped on stderr (and as JSON with --json); never a traceback."""
    code, error, lines = _client_error(exc, token)
    for item in error.get("differences") or error.get("details") or []:
        if isinstance(item, dict):
            rest = ", ".join(f"{k}={v}" for k, v in item.items() if k != "instance_path")
            lines.append(f"  {item.get('instance_path', '')!s:<24} {rest}")
        else:
            lines.append(f"  {item}")
    print("error: " + "\n".join(lines), file=sys.stderr, flush=True)
    if as_json:
        print(json.dumps({"error": error}, default=str), flush=True)
    return typer.Exit(code=code)


def run_client(work: Coroutine[Any, Any, T], as_json: bool, token: str | None = None) -> T:
    """Run a client coroutine; expected failures become an exit code, not a traceback."""
    try:
        return run_checking(work)
    except _client_errors() as exc:
        raise _client_exit(exc, as_json, token) from None


def run_checking(work: Coroutine[Any, Any, T]) -> T:
    """``run_async`` for a command that verifies interface documents."""
    return run_async(work)
