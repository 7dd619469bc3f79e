"""Runs last in the fuzz folder: the bar the whole run must meet, so it cannot silently drop.

Hypothesis stops early when a strategy runs out of distinct examples, so the request counts,
not ``max_examples``, are what is held to the plan. Then the agent must still be healthy,
nothing it logged may be a crash, and a valid request must still work end to end.
"""

from __future__ import annotations

import sys

from tests.conftest import RunningAgent
from tests.fuzz.conftest import CrashLog
from tests.fuzz.harness import MINIMUM_TOTAL, PLANNED, Fuzzer


def test_every_target_sent_its_planned_requests(fuzzer: Fuzzer):
    """At least 10,000 generated requests, and each target at least its share."""
    counts = {target: fuzzer.counts[target] for target in PLANNED}
    total = sum(counts.values())
    print(f"\nfuzz requests: {counts} total={total}", file=sys.stderr)
    assert sum(PLANNED.values()) >= MINIMUM_TOTAL
    short = {t: (counts[t], PLANNED[t]) for t in PLANNED if counts[t] < PLANNED[t]}
    assert not short, f"targets below plan (sent, planned): {short}; run all of tests/fuzz"
    assert total >= MINIMUM_TOTAL, total


def test_nothing_crashed(crash_log: CrashLog):
    """No unexpected exception reached the agent's guards during the whole run."""
    crashes = [f"{r.name}: {r.getMessage()}" for r in crash_log.records]
    assert not crashes, crashes[:5]


def test_the_agent_is_still_well(fuzz_agent: RunningAgent, fuzzer: Fuzzer):
    """Healthy, and a valid request still runs to completion and can be read back."""
    health = fuzzer.client.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    data = {"skill": "describe_skill", "arguments": {"skill_id": "lookup_inventory"}}
    message = {
        "messageId": "after-fuzz",
        "role": "ROLE_USER",
        "parts": [{"mediaType": "application/json", "data": data}],
    }
    answer = fuzzer.rpc(
        "after",
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}},
    )
    assert answer.state == "TASK_STATE_COMPLETED", answer
    task_id = answer.body["result"]["task"]["id"]
    read = fuzzer.send("after", "GET", f"/a2a/rest/tasks/{task_id}", binding="rest")
    assert read.state == "TASK_STATE_COMPLETED", read


def test_no_task_was_lost(fuzzer: Fuzzer):
    """Every task the agent reported during the fuzz is stored, in the state it reported."""
    assert len(fuzzer.tasks) > 1000, len(fuzzer.tasks)
    for task_id, (token, state) in sorted(fuzzer.tasks.items())[:200]:
        headers = fuzzer.headers(Authorization=f"Bearer {token}")
        stored = fuzzer.send(
            "after", "GET", f"/a2a/rest/tasks/{task_id}", binding="rest", headers=headers
        )
        assert stored.state == state, (task_id, state, stored)
    tokens = {token for token, _ in fuzzer.tasks.values()}
    for token in tokens:
        mine = sum(1 for t, _ in fuzzer.tasks.values() if t == token)
        headers = fuzzer.headers(Authorization=f"Bearer {token}")
        listed = fuzzer.send(
            "after",
            "GET",
            "/a2a/rest/tasks",
            binding="rest",
            headers=headers,
            params={"pageSize": "1"},
        )
        assert listed.body["totalSize"] >= mine, (listed.body["totalSize"], mine)
