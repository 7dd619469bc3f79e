"""Agent replicas as real operating-system processes (`netagent serve`), for tests and bench.

Replicas must be separate processes: only then do they share nothing but the database, and
only then can one be killed with SIGKILL. They share NETAGENT_HOME for the embedded signing
key (an operator would share the key file, or use an external issuer).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

from agent.base.settings import Settings
from agent.security.auth import issue_token, load_or_create_signing_key
from tests.a2a_helpers import wait_trained
from tests.conftest import IDENTITIES, free_port, postgres_database, seed_database

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 300.0
"""As long as an agent started in process gets (``tests/conftest.py``). The router's model is
trained into the cache before the replica starts (``warm_model``), so this is start-up time."""


def warm_model(skills_dir: Path | None) -> None:
    """Train the model a replica of these skills will read, into the cache it reads, unless it
    is there: a cold training (over a minute of CPU for the network deployment's routing data,
    several times that while other tests load the machine) is not start-up time to time out on,
    and a replica killed by the timeout before it stores its model leaves the next run cold too.
    Processes warming the same model train it once (the cache's lock)."""
    from agent.registry.loader import load_registry
    from agent.routing.data import RoutingData
    from agent.routing.model_cache import ModelCache, default_directory
    from agent.routing.router import Router
    from netops.deployment import network_deployment

    deployment = network_deployment()
    directory = os.environ.get("NETAGENT_MODEL_CACHE")
    cache = ModelCache(Path(directory) if directory else default_directory())
    registry = load_registry(skills_dir or deployment.skills_dir)
    router = Router(registry, cache=cache, data=RoutingData.load(deployment.routing_data))
    if not cache.path(router.classifier.cache_key()).exists():
        router.warm()


def prepare_shared_database(url: str) -> None:
    """Migrate and seed once, up to now (replicas run on the real clock)."""
    seed_database(url, until=datetime.now(UTC))


@dataclass
class Replica:
    """One `netagent serve` process on a loopback port."""

    home: Path
    database_url: str
    name: str
    skills_dir: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    """Further NETAGENT_* settings of this replica."""
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.home / f"{self.name}.log"

    def start(self) -> Replica:
        warm_model(self.skills_dir)
        env = {
            **os.environ,
            "NETAGENT_HOME": str(self.home),
            "NETAGENT_DATABASE_URL": self.database_url,
            "NETAGENT_SEED": "0",
            "NETAGENT_LIVE_TELEMETRY": "0",
            "NETAGENT_LOG_LEVEL": "warning",
            "PYTHONPATH": str(ROOT),  # fixture skills live in the tests package
            **self.env,
        }
        if self.skills_dir is not None:
            env["NETAGENT_SKILLS_DIR"] = str(self.skills_dir)
        command = [str(Path(sys.executable).parent / "netagent"), "serve", "--port", str(self.port)]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.home
            )
        self.wait_ready()
        return self

    def wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"replica {self.name} exited:\n{self.log_path.read_text()}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()  # not left running (and its Popen collected while it runs) after the test
        raise RuntimeError(f"replica {self.name} did not start:\n{self.log_path.read_text()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown hooks, no flushing, exactly like a crashed host."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def token_for(home: Path, subject: str) -> str:
    """A bearer token signed with the replicas' shared embedded key."""
    tenant, scopes = IDENTITIES[subject]
    settings = Settings(home=home)
    key = load_or_create_signing_key(home)
    return issue_token(key, settings, subject=subject, tenant=tenant, scopes=scopes)


def skills_with_slow_probe(tmp: Path) -> Path:
    """The demo skills plus test-only skills that run for as long as they are asked."""
    target = tmp / "skills"
    shutil.copytree(ROOT / "skills", target, ignore=shutil.ignore_patterns("__pycache__"))
    for probe in ("slow_probe", "steady_probe"):  # cancelable, and not
        shutil.copytree(
            ROOT / "tests" / "fixture_skills" / probe,
            target / probe,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    return target


@dataclass
class Pair:
    """Replicas a and b on one database, and a token of alice's valid at both."""

    database_url: str
    token: str
    a: Replica
    b: Replica


@contextmanager
def running_pair(
    home: Path,
    database: str,
    *,
    skills_dir: Path | None = None,
    env: dict[str, str] | None = None,
    trained: bool = False,
) -> Iterator[Pair]:
    """Two replicas on a fresh, seeded database of the session's PostgreSQL, running until
    the block ends; ``trained``: each has its text classifier ready before the block runs."""
    url = postgres_database(database)
    assert url is not None
    prepare_shared_database(url)
    replicas = [
        Replica(home, url, name, skills_dir=skills_dir, env=dict(env or {})) for name in "ab"
    ]
    pair = Pair(url, token_for(home, "alice"), *replicas)
    try:
        for replica in replicas:
            replica.start()
        for replica in replicas if trained else []:
            wait_trained(replica.base_url)
        yield pair
    finally:
        for replica in replicas:
            replica.stop()
