"""Run the A2A TCK against this agent on loopback, one binding at a time; print the counts.

    .venv/bin/python scripts/tck.py /path/to/a2a-tck [--transports jsonrpc,http_json,grpc]

The TCK is an exported checkout of a2aproject/a2a-tck (branch 1.0-dev) with its own virtual
environment (``python3 -m venv .venv && .venv/bin/pip install -e .`` there); it is never part
of this repository. The script starts ``netagent serve --conformance`` with a temporary home on
a free loopback port (its gRPC binding on another), mints a bearer token for it, runs the TCK
once per binding (the token is added by ``scripts/tck_bearer_plugin.py``, as an HTTP header or
gRPC metadata), prints per-level counts and the failures, keeps each run's
``compatibility.json`` and stops the agent. docs/tck.md explains the results.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
TRANSPORTS = ("jsonrpc", "http_json", "grpc")
LEVELS = ("MUST", "SHOULD", "MAY")
STATUSES = ("PASS", "FAIL", "SKIPPED", "NOT TESTED")
TOKEN_SCOPES = ("inventory.read", "assurance.read", "capacity.read")
START_SECONDS = 120


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_agent(home: Path, port: int, grpc_port: int, log: Path) -> subprocess.Popen[bytes]:
    """``netagent serve --conformance`` from this checkout's environment, until it is healthy."""
    env = {
        **os.environ,
        "NETAGENT_HOME": str(home),
        "NETAGENT_LIVE_TELEMETRY": "0",
        "NETAGENT_GRPC_PORT": str(grpc_port),
        # the TCK's delivery checks run their webhook receiver on this host; its config checks
        # store https://example.com/... (never posted to: those tasks have ended), which the
        # screening resolves and refuses where the machine has no DNS: trusted by name instead
        "NETAGENT_PUSH_ALLOW": "127.0.0.1,::1,localhost,example.com",
    }
    command = [str(Path(sys.executable).with_name("netagent")), "serve", "--conformance"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the agent exited ({process.returncode}); see {log}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.terminate()
    raise SystemExit(f"the agent did not start within {START_SECONDS} s; see {log}")


def mint_token(home: Path) -> str:
    """A token the agent accepts: signed with the key it just created in its home."""
    from agent.base.settings import Settings
    from agent.security.auth import issue_token, load_or_create_signing_key

    settings = Settings(home=home)
    key = load_or_create_signing_key(home)
    return issue_token(
        key, settings, subject="tck", tenant="acme", scopes=list(TOKEN_SCOPES), ttl_seconds=7200
    )


def run_tck(
    tck: Path, python: Path, base_url: str, transport: str, token: str, log: Path
) -> dict[str, Any]:
    """One TCK run restricted to one binding (its output to ``log``); returns its report."""
    report = tck / "reports" / "compatibility.json"
    report.unlink(missing_ok=True)
    env = {
        **os.environ,
        "TCK_BEARER_TOKEN": token,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT / "scripts"), os.getenv("PYTHONPATH")])
        ),
    }
    command = [str(python), "run_tck.py", "--sut-host", base_url, "--transport", transport]
    command += ["--", "-p", "tck_bearer_plugin"]
    with log.open("wb") as out:
        subprocess.run(command, cwd=tck, env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
    if not report.is_file():
        raise SystemExit(f"the TCK wrote no {report} for {transport}")
    return json.loads(report.read_text())


def counts(report: dict[str, Any]) -> dict[str, Counter[str]]:
    """Requirements per level and status, as the TCK aggregates them."""
    table: dict[str, Counter[str]] = {level: Counter() for level in LEVELS}
    for result in report["per_requirement"].values():
        table[result["level"]][result["status"]] += 1
    return table


def failures(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(level, requirement id, first error) of every failed requirement."""
    found = []
    for requirement, result in report["per_requirement"].items():
        if result["status"] == "FAIL":
            first = (result["errors"] or ["(no message)"])[0]
            found.append((result["level"], requirement, first[:160]))
    return sorted(found, key=lambda f: (LEVELS.index(f[0]), f[1]))


def print_report(transport: str, report: dict[str, Any]) -> None:
    table = counts(report)
    print(f"\n== {transport}")
    print(f"{'level':<8}{'passed':>8}{'failed':>8}{'skipped':>9}{'not tested':>12}")
    for level in LEVELS:
        row = table[level]
        print(
            f"{level:<8}{row['PASS']:>8}{row['FAIL']:>8}{row['SKIPPED']:>9}{row['NOT TESTED']:>12}"
        )
    for level, requirement, error in failures(report):
        print(f"  FAIL {level:<6} {requirement}: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tck", type=Path, help="an exported a2a-tck checkout (branch 1.0-dev)")
    parser.add_argument(
        "--python", type=Path, help="the TCK's interpreter (default: TCK/.venv/bin/python)"
    )
    parser.add_argument("--transports", default=",".join(TRANSPORTS), help="jsonrpc,http_json,grpc")
    parser.add_argument(
        "--reports", type=Path, help="where reports are kept (default: TCK/reports/netagent)"
    )
    args = parser.parse_args()
    tck = args.tck.resolve()
    python = (args.python or tck / ".venv" / "bin" / "python").absolute()  # keep the venv
    if not (tck / "run_tck.py").is_file() or not python.is_file():
        parser.error(f"{tck} is not a TCK checkout with {python}")
    transports = [t for t in args.transports.split(",") if t]
    unknown = set(transports) - set(TRANSPORTS)
    if unknown:
        parser.error(f"unknown transports {sorted(unknown)}; the agent serves {TRANSPORTS}")
    commit = subprocess.run(
        ["git", "-C", str(tck), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    print(f"TCK {tck} at {commit or 'unknown commit'}")
    args.reports = args.reports or tck / "reports" / "netagent"  # outside this repository
    args.reports.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="netagent-tck-"))
    port, grpc_port = free_port(), free_port()
    agent = start_agent(home, port, grpc_port, args.reports / "agent.log")
    try:
        token = mint_token(home)
        base_url = f"http://127.0.0.1:{port}"
        for transport in transports:
            log = args.reports / f"tck-{transport}.log"
            report = run_tck(tck, python, base_url, transport, token, log)
            (args.reports / f"compatibility-{transport}.json").write_text(json.dumps(report))
            print_report(transport, report)
    finally:
        agent.terminate()
        agent.wait(timeout=30)
        shutil.rmtree(home, ignore_errors=True)
    print(f"\nreports: {args.reports.resolve()}")


if __name__ == "__main__":
    main()
