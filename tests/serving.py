"""``netagent serve`` as a child process for a test: started, waited for, always stopped."""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest


@contextmanager
def serving(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    log_path: Path,
    ready_url: str,
    timeout_s: float,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command`` until ``ready_url`` answers 200; terminate it (kill if it lingers) after.

    A child that exits, or does not answer within ``timeout_s``, fails the test with its log.
    """
    with log_path.open("w", encoding="utf-8") as log:
        process = subprocess.Popen(
            list(command), cwd=cwd, env=dict(env), stdout=log, stderr=subprocess.STDOUT
        )
        try:
            _wait(ready_url, process, log_path, timeout_s)
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)


def _wait(url: str, process: subprocess.Popen[bytes], log_path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"netagent serve exited {process.returncode}:\n{log_path.read_text()}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    pytest.fail(f"netagent serve did not answer within {timeout_s} s:\n{log_path.read_text()}")


@contextmanager
def json_server(document: Any) -> Iterator[str]:
    """A plain HTTP server on loopback answering every GET with ``document`` as JSON (another
    agent's card, another origin's keys); yields its base URL."""
    body = json.dumps(document).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
