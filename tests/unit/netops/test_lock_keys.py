"""The network agent's advisory-lock keys are the ones its earlier releases took: replicas of
two releases share them while they run side by side (``agent/storage/engine.py``)."""

from __future__ import annotations

from agent.storage.engine import lock_key
from db.live import LOCK_NAMESPACE
from netops.identity import IDENTITY

EARLIER_KEYS = {
    f"{IDENTITY.slug}:prepare-storage": -1564376415,
    f"{LOCK_NAMESPACE}:replay:link_utilization_sample": 628683560,
    f"{LOCK_NAMESPACE}:replay:metric_sample": 1813511381,
}
"""The keys as the releases before the core took its namespace from the deployment computed
them (``crc32("netops-agent:" + name) - 2**31``)."""


def test_the_network_agents_locks_keep_their_keys() -> None:
    assert {name: lock_key(name) for name in EARLIER_KEYS} == EARLIER_KEYS
