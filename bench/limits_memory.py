"""Memory while the agent refuses bad input: server RSS before and after floods of it.

Starts `netagent serve` as a subprocess on a temporary NETAGENT_HOME (embedded SQLite, demo
inventory), warms it up with valid requests, then sends, phase by phase:

* bodies declaring a huge Content-Length (raw socket; refused before a byte is read),
* chunked bodies past NETAGENT_MAX_BODY_BYTES (counted while streaming, dropped at the limit),
* requests within the body limit whose message breaks a message limit (a 64 KiB+ string,
  too many parts, too many items, Data Parts nested too deep),
* bodies nested far deeper than the JSON parsers survive,

reading the server's VmRSS and VmHWM (peak) from /proc/<pid>/status after each phase. Prints
figures; asserts nothing (figures, not tests).

    .venv/bin/python -m bench.limits_memory [--rounds 300] [--declared-mib 512]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx

from agent.base.settings import Limits, Settings
from agent.security.auth import issue_token, load_or_create_signing_key


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def memory_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


def start(home: Path, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "NETAGENT_HOME": str(home),
        "NETAGENT_PORT": str(port),
        "NETAGENT_LIVE_TELEMETRY": "0",
        "NETAGENT_LOG_LEVEL": "error",
    }
    netagent = Path(sys.executable).with_name("netagent")
    process = subprocess.Popen(
        [str(netagent), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the agent did not start")


def send(parts: list[dict], message_id: str = "bench") -> bytes:
    message = {"messageId": message_id, "role": "ROLE_USER", "parts": parts}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    return json.dumps(body).encode()


def declared_huge(port: int, token: str, mib: int) -> str:
    """Headers promising ``mib`` MiB, then 64 KiB of it; the answer comes before the rest."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = (
            "POST /a2a/jsonrpc HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {token}\r\nA2A-Version: 1.0\r\n"
            f"Content-Length: {mib * 1024 * 1024}\r\n\r\n"
        )
        sock.sendall(head.encode() + b" " * 65536)
        status_line = sock.recv(4096).split(b"\r\n", 1)[0].decode()
    return status_line.split(" ")[1]


def chunked(total: int) -> Iterator[bytes]:
    for _ in range(total // 65536):
        yield b" " * 65536


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="requests per phase")
    parser.add_argument("--declared-mib", type=int, default=512)
    args = parser.parse_args()
    limits = Limits.from_env()
    with tempfile.TemporaryDirectory() as tmp:
        home, port = Path(tmp) / "home", free_port()
        process = start(home, port)
        try:
            settings = Settings(home=home)
            key = load_or_create_signing_key(home)
            token = issue_token(
                key, settings, subject="alice", tenant="acme", scopes=["inventory.read"]
            )
            client = httpx.Client(
                base_url=f"http://127.0.0.1:{port}",
                headers={"Authorization": f"Bearer {token}", "A2A-Version": "1.0"},
                timeout=60,
            )
            describe = {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}
            deep: object = 1
            for _ in range(limits.max_depth + 4):
                deep = [deep]
            phases = {
                "warm-up (valid describe_skill)": lambda i: (
                    client.post(
                        "/a2a/jsonrpc", content=send([{"data": describe}], f"w{i}")
                    ).status_code
                ),
                f"declared {args.declared_mib} MiB bodies": lambda i: declared_huge(
                    port, token, args.declared_mib
                ),
                f"chunked {2 * limits.max_body_bytes >> 20} MiB bodies": lambda i: (
                    client.post(
                        "/a2a/jsonrpc", content=chunked(2 * limits.max_body_bytes)
                    ).status_code
                ),
                "message limits (string, parts, items, depth)": lambda i: client.post(
                    "/a2a/jsonrpc",
                    content=send(
                        [
                            [{"text": "x" * (limits.max_string_length + 1)}],
                            [{"text": "hi"}] * (limits.max_parts + 1),
                            [{"data": list(range(limits.max_items + 1))}],
                            [{"data": deep}],
                        ][i % 4]
                    ),
                ).json()["error"]["code"],
                "bodies nested 500,000 deep": lambda i: client.post(
                    "/a2a/jsonrpc", content=b"[" * 500_000
                ).json()["error"]["code"],
            }
            print(f"limits: {limits}")
            print(f"{'phase':<48}{'requests':>9}{'RSS MiB':>9}{'peak MiB':>9}  answers")
            rss, peak = memory_kib(process.pid)
            print(f"{'started':<48}{0:>9}{rss / 1024:>9.1f}{peak / 1024:>9.1f}")
            for name, call in phases.items():
                answers: Counter[str] = Counter()
                for i in range(args.rounds):
                    try:
                        answers[str(call(i))] += 1
                    except httpx.HTTPError as exc:  # the server may close mid-upload after 413
                        answers[type(exc).__name__] += 1
                rss, peak = memory_kib(process.pid)
                print(
                    f"{name:<48}{args.rounds:>9}{rss / 1024:>9.1f}{peak / 1024:>9.1f}  "
                    + ", ".join(f"{k}x{v}" for k, v in sorted(answers.items()))
                )
        finally:
            process.terminate()
            process.wait(timeout=20)


if __name__ == "__main__":
    main()
