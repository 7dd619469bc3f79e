"""Database round trips of one governed request, counted in-process (SQLite, demo data).

Runs the real app (create_app, its lifespan, the ASGI stack) under httpx's ASGI transport and
counts, per request after a warm-up, the statements the engine sends (by kind) and the
transactions it commits: the task store's, the audit trail's, the bindings' and the
inventory's alike, since they share the engine.

    .venv/bin/python -m bench.perf.roundtrips [--agent-tree PATH] [--postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REQUESTS = 20


async def _count() -> None:
    import httpx
    from sqlalchemy import event

    from agent.base.settings import Settings
    from bench.perf.scenarios import governed_targets
    from bench.perf.servers import tokens
    from netops.app import create_app

    with tempfile.TemporaryDirectory(prefix="netagent-roundtrips-") as tmp:
        home = Path(tmp)
        settings = Settings(home=home, database_url=_DATABASE_URL, log_level="warning")
        bearers = tokens(home, "paula", 1)
        app = create_app(settings, live_telemetry=False)
        engine = app.state.runtime.engine
        statements: Counter[str] = Counter()
        commits = [0]
        checkouts = [0]

        def on_checkout(*_: Any) -> None:  # on PostgreSQL each one is also a pre-ping
            checkouts[0] += 1

        tables: Counter[str] = Counter()

        def on_statement(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
            words = statement.split()
            kind = words[0].upper()
            statements[kind] += 1
            after = {"INSERT": "INTO", "UPDATE": "UPDATE", "SELECT": "FROM", "DELETE": "FROM"}
            marker = after.get(kind)
            upper = [w.upper() for w in words]
            table = (
                words[upper.index(marker) + 1] if marker in upper[1:] or kind == "UPDATE" else ""
            )
            tables[f"{kind} {table.strip('()')}"] += 1

        def on_commit(_c: Any) -> None:
            commits[0] += 1

        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
                targets = await _targets(client, bearers, governed_targets)
                event.listen(engine.sync_engine, "before_cursor_execute", on_statement)
                event.listen(engine.sync_engine, "commit", on_commit)
                event.listen(engine.sync_engine.pool, "checkout", on_checkout)
                backend = engine.dialect.name
                print(f"per request, mean of {REQUESTS} after 5 warm-up requests ({backend}):")
                for key in ("describe", "evaluate", "text", "capacity"):
                    target = targets[key]
                    for n in range(5):
                        await _send(client, target, n)
                    statements.clear()
                    tables.clear()
                    commits[0] = checkouts[0] = 0
                    for n in range(REQUESTS):
                        await _send(client, target, 100 + n)
                    await asyncio.sleep(0.2)  # the executor's last audit flush
                    kinds = ", ".join(
                        f"{k} {v / REQUESTS:.1f}" for k, v in sorted(statements.items())
                    )
                    total = sum(statements.values()) / REQUESTS
                    print(
                        f"  {target.name:<26} {total:5.1f} statements ({kinds}); "
                        f"{commits[0] / REQUESTS:4.1f} commits, "
                        f"{checkouts[0] / REQUESTS:4.1f} connection checkouts"
                    )
                    for name, n in sorted(tables.items()):
                        print(f"      {n / REQUESTS:5.1f}  {name}")


async def _targets(client: Any, bearers: tuple[str, ...], build: Any) -> Any:
    """governed_targets() asks describe_skill over HTTP; answer it through the ASGI client."""
    import httpx

    original = httpx.post

    def post(url: str, **kwargs: Any) -> Any:
        path = url.split("://", 1)[1].split("/", 1)[1]
        return _sync(client.post("/" + path, **kwargs))

    httpx.post = post  # type: ignore[assignment]
    try:
        return await asyncio.to_thread(build, 0, "http://agent", bearers)
    finally:
        httpx.post = original  # type: ignore[assignment]


_LOOP: asyncio.AbstractEventLoop | None = None
_DATABASE_URL: str | None = None  # None: SQLite in a temporary NETAGENT_HOME


def _sync(coroutine: Any) -> Any:
    assert _LOOP is not None
    return asyncio.run_coroutine_threadsafe(coroutine, _LOOP).result()


async def _send(client: Any, target: Any, n: int) -> None:
    raw = target.request(n)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")[1:]
    headers = dict(line.split(": ", 1) for line in lines if not line.startswith("Host"))
    headers.pop("Content-Length", None)
    answer = await client.post(target.path, content=body, headers=headers)
    refused = f"HTTP {answer.status_code}" if answer.status_code != 200 else None
    refused = refused or target.check(answer.content)
    if refused is not None:
        raise RuntimeError(f"{target.name}: {refused}: {answer.content[:300]!r}")


async def _main() -> None:
    global _LOOP
    _LOOP = asyncio.get_running_loop()
    await _count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent-tree", type=Path, help="count with the agent from this tree")
    parser.add_argument("--postgresql", action="store_true", help="on a private PostgreSQL")
    args = parser.parse_args()
    if args.postgresql:
        global _DATABASE_URL
        from tests.pg_cluster import PostgresCluster

        cluster = PostgresCluster()
        try:
            _DATABASE_URL = cluster.database("roundtrips")
            asyncio.run(_main())
        finally:
            cluster.stop()
        return
    if args.agent_tree is None:
        asyncio.run(_main())
        return
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{args.agent_tree}{os.pathsep}{root}"}
    command = [sys.executable, "-c", "from bench.perf.roundtrips import main; main()"]
    subprocess.run(command, env=env, check=True, cwd=args.agent_tree)


if __name__ == "__main__":
    main()
