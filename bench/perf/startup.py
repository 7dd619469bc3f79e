"""Start-up, component by component, in a fresh process: what `netagent serve` does before it
listens (without the database: migrations and seeding depend on the disk, not the registry).

Each component is timed the way create_app runs it, in its order, so the sum is the cost of
the first call: imports, reading and validating the manifests, importing the handlers,
building the interface documents (schemas embedded, JCS + SHA-256 digests, compiled
validators, checked against the trusted Skill Interface Schema), the cross-reference checks,
the cards, the router's classifier, and the whole app (create_app, registry included).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROUNDS = 3


def _timed(results: list[tuple[str, float]], name: str, work: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    value = work()
    results.append((name, time.perf_counter() - started))
    return value


def components() -> list[tuple[str, float]]:
    """One cold pass (run in a fresh interpreter)."""
    results: list[tuple[str, float]] = []

    def imports() -> None:
        import agent.app  # noqa: F401  (FastAPI, a2a-sdk, SQLAlchemy, scikit-learn, ...)

    _timed(results, "imports (agent.app and what it pulls in)", imports)
    from agent.registry import loader as reg
    from agent.registry import manifests as read
    from agent.registry.cards import CardFactory
    from agent.registry.loader import Capability, Registry
    from agent.registry.manifest import Manifest, State
    from agent.routing.router import Router
    from netops.deployment import IDENTITY, SKILLS_DIR

    root, paths = read.manifest_paths(SKILLS_DIR, builtin=True)
    validator = _timed(results, "manifest schema (compile)", read.manifest_validator)

    def manifests() -> list[tuple[Path, Any]]:
        found = []
        for path in paths:
            data = read.read_json(path, str(path))
            assert not read.manifest_problems(path, data, validator)
            found.append((path, data))
        return found

    loaded = _timed(results, f"manifests: read + validate ({len(paths)})", manifests)
    parsed = [(path, Manifest.from_json(data, path.parent)) for path, data in loaded]
    live = [(path, m) for path, m in parsed if m.state is not State.REMOVED]
    handlers = _timed(
        results,
        f"handlers: import ({len(live)})",
        lambda: {m.id: reg._load_handler(m, str(p)) for p, m in live},
    )
    interfaces = _timed(
        results,
        "interfaces: documents, digests, validators",
        lambda: {m.id: reg._load_interface(m, str(p)) for p, m in live},
    )
    capabilities = [
        Capability(m, handlers.get(m.id), interfaces.get(m.id))
        for _, m in parsed  # removed skills carry neither handler nor interface
    ]
    _timed(
        results,
        "cross-reference checks",
        lambda: reg._cross_reference_problems(capabilities, root),
    )
    registry = Registry(capabilities)
    _timed(
        results,
        "cards (public card, extension params)",
        lambda: CardFactory(registry, "http://127.0.0.1:8000", identity=IDENTITY),
    )
    router = Router(registry)
    _timed(results, "router: classifier training (warm)", router.warm)
    _timed(
        results,
        "load_registry(SKILLS_DIR) again (imports cached)",
        lambda: reg.load_registry(SKILLS_DIR),
    )

    def app() -> None:
        from agent.base.settings import Settings
        from netops.app import create_app

        with tempfile.TemporaryDirectory(prefix="netagent-startup-") as tmp:
            create_app(Settings(home=Path(tmp), seed_on_start=False), live_telemetry=False)

    _timed(results, "create_app() (registry again, keys, routes)", app)
    return results


def run_startup() -> None:
    """Several fresh interpreters, so every figure is a cold start; prints the median."""
    runs: list[list[tuple[str, float]]] = []
    for _ in range(ROUNDS):
        out = subprocess.run(
            [sys.executable, "-c", "from bench.perf.startup import _child; _child()"],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        runs.append([(n, float(s)) for n, s in (r.split("\t") for r in out.stdout.splitlines())])
    print(f"start-up, in-process, median of {ROUNDS} fresh interpreters (ms):")
    names = [name for name, _ in runs[0]]
    medians = []
    for index, name in enumerate(names):
        values = sorted(run[index][1] for run in runs)
        medians.append(values[len(values) // 2] * 1000)
        print(f"  {name:<46}{medians[-1]:9.1f}")
    registry = sum(medians[1:7])  # manifest schema .. cards
    print(f"  {'= registry, digests, validators, cards':<46}{registry:9.1f}")
    print(f"  {'= the same + classifier':<46}{registry + medians[7]:9.1f}")
    print(f"  {'= all of it, imports included':<46}{medians[0] + registry + medians[7]:9.1f}")
    run_felt()


ROOT = Path(__file__).resolve().parents[2]
NETAGENT = [sys.executable, "-c", "from netops.cli import main; main()"]
CLI_COMMANDS = (
    ("netagent --help", ["--help"]),
    ("netagent token", ["token", "--subject", "alice", "--tenant", "acme", "--scope", "x.read"]),
    ("netagent card", ["card"]),
    ("netagent card --extended", ["card", "--extended", "--token", "{token}"]),
    ("netagent card diff", ["card", "diff"]),
    ("netagent validate", ["validate"]),
    ("netagent audit", ["audit", "--limit", "5"]),
    ("netagent usage", ["usage"]),
    ("netagent chain list", ["chain", "list"]),
)
"""Commands that need no model answer nor an agent."""
BEARER = ["--token", "{token}"]
SITES = ["--args", '{"kind": "sites"}']
CHAIN_TO = ["--args", '{"link_id": "acme-lnk-00001"}', "--to", "plan_link_upgrade"]
CLIENT_COMMANDS = (
    ("netagent describe", ["describe", "{url}", "lookup_inventory", *BEARER]),
    ("netagent invoke", ["invoke", "{url}", "lookup_inventory", *SITES, *BEARER]),
    ("netagent check", ["check", "{url}", *BEARER]),
    ("netagent chain", ["chain", "{url}", "--from", "check_link_capacity", *CHAIN_TO, *BEARER]),
)
"""The client commands, against the agent served from the same home;
``{url}`` and ``{token}`` are replaced by its URL and a token minted there."""
SCOPES = ("inventory.read", "assurance.read", "capacity.read", "capacity.plan", "preview")
"""The client commands' caller: paula's scopes (chain's downstream skill is a preview)."""
CARD_PATH = "/.well-known/agent-card.json"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a running process so far (Linux /proc; 0.0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _settle(pid: int, timeout_s: float = 120.0) -> None:
    """Wait until a process stops using the CPU (serve trains its classifier after start-up,
    on both cores of a small machine: a command timed meanwhile would pay for it)."""
    deadline = time.monotonic() + timeout_s
    used = _cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = _cpu_seconds(pid)
        if now - used < 0.05:
            return
        used = now


@contextlib.contextmanager
def _served(env: dict[str, str], *, settled: bool = False) -> Iterator[tuple[str, float, float]]:
    """``netagent serve`` on free ports, stopped on leaving: its base URL, and the wall-clock
    and CPU seconds from spawning it to its first served card (``settled``: yielded once it
    has stopped using the CPU)."""
    port = _free_port()
    env = {**env, "NETAGENT_PORT": str(port), "NETAGENT_GRPC_PORT": str(_free_port())}
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    process = subprocess.Popen(
        [*NETAGENT, "serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{base}{CARD_PATH}", timeout=5) as answer:
                    if answer.status == 200:
                        wall, cpu = time.perf_counter() - started, _cpu_seconds(process.pid)
                        break
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError("netagent serve exited before serving its card") from None
                time.sleep(0.01)
        if settled:
            _settle(process.pid)
        yield base, wall, cpu
    finally:
        process.terminate()
        process.wait(timeout=60)


def _first_card(env: dict[str, str]) -> tuple[float, float]:
    """Wall-clock and CPU seconds from spawning ``netagent serve`` to its first served card."""
    with _served(env) as (_, wall, cpu):
        return wall, cpu


def _command(name: str, args: list[str], env: dict[str, str]) -> None:
    """Run one command ROUNDS times, each a fresh process; print its median."""
    times = []
    for _ in range(ROUNDS):
        before = os.times()
        started = time.perf_counter()
        subprocess.run([*NETAGENT, *args], cwd=ROOT, env=env, capture_output=True, check=True)
        after = os.times()
        cpu = after.children_user + after.children_system
        cpu -= before.children_user + before.children_system
        times.append((time.perf_counter() - started, cpu))
    wall, cpu = sorted(times)[len(times) // 2]
    print(f"  {name:<46}{wall * 1000:9.1f}{cpu * 1000:9.1f}")


PACKAGES = ("agent", "netops", "skills", "db")
"""The tree's packages, compiled before the figures (``_compile_tree``)."""


def _compile_tree() -> None:
    """Compile the tree's modules first, as a person's Python has them from the second run on
    (it writes the bytecode as it imports; a wheel's installer compiles at install). Where
    ``PYTHONDONTWRITEBYTECODE`` is set, as on the shared machines, every process would
    otherwise compile every module of ours it imports: 5 % of ``netagent check``'s
    instructions, more of a restart."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *PACKAGES],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        stdout=subprocess.DEVNULL,
        check=True,
    )
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("(PYTHONDONTWRITEBYTECODE is set here: the tree was compiled first)")


def run_felt() -> None:
    """What a person feels, wall clock, as processes: ``netagent serve`` to its first served
    card (the first start on a fresh home, then restarts on it), and the commands that need
    no model answer: on their own, then the client ones against the agent of that home."""
    _compile_tree()
    with tempfile.TemporaryDirectory(prefix="netagent-felt-") as home:
        env = {**os.environ, "NETAGENT_HOME": home, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
        env.pop("NETAGENT_DATABASE_URL", None)
        first = _first_card(env)
        restarts = sorted(_first_card(env) for _ in range(ROUNDS))
        print(f"as a person feels it, median of {ROUNDS} processes (ms): wall clock, CPU")
        name = "serve: first start to first card"
        print(f"  {name:<46}{first[0] * 1000:9.1f}{first[1] * 1000:9.1f}")
        wall, cpu = restarts[len(restarts) // 2]
        target = "serve: restart to first card"
        print(f"  {target:<46}{wall * 1000:9.1f}{cpu * 1000:9.1f}")
        mint = ["token", "--subject", "paula", "--tenant", "acme"]
        mint += [word for scope in SCOPES for word in ("--scope", scope)]
        token = subprocess.run(
            [*NETAGENT, *mint], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        for name, args in CLI_COMMANDS:
            _command(name, [a.replace("{token}", token) for a in args], env)
        with _served(env, settled=True) as (url, _, _):
            for name, args in CLIENT_COMMANDS:
                words = [a.replace("{url}", url).replace("{token}", token) for a in args]
                _command(name, words, env)


def _child() -> None:
    for name, seconds in components():
        print(f"{name}\t{seconds}")


if __name__ == "__main__":
    run_felt() if "--felt" in sys.argv else run_startup()
