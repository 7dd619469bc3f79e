"""Issue 19 item 5: a link id is a resource for ``evaluate_resource_condition``.

A link's utilisation is the newest sample's busier direction, in percent; its other metrics
belong to its ends, and the refusal names them. Another tenant's link, and every near miss of a
link id, is refused exactly like a resource that does not exist.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import text

from agent.storage.engine import make_engine
from tests.a2a_helpers import Outcome, binding_of, invoke, send, text_message
from tests.conftest import RunningAgent

LINK = "acme-lnk-00010"
NOT_ACCESSIBLE = "resource not found or not accessible"


@pytest.fixture(scope="module")
async def newest(agent: RunningAgent) -> AsyncIterator[dict[str, Any]]:
    """The link's newest sample, busier direction, read from the database with plain SQL."""
    engine = make_engine(agent.settings.resolved_database_url)
    async with engine.connect() as connection:
        row = (
            await connection.execute(
                text(
                    "SELECT s.direction, s.utilization_ratio FROM link_utilization_sample s"
                    " JOIN link l ON l.id = s.link_id WHERE l.link_id = :link"
                    " ORDER BY s.observed_at DESC, s.utilization_ratio DESC LIMIT 1"
                ),
                {"link": LINK},
            )
        ).one()
    await engine.dispose()
    yield {"direction": row.direction, "percent": round(float(row.utilization_ratio) * 100, 2)}


async def evaluate(agent: RunningAgent, arguments: dict[str, Any], who: str = "alice") -> Outcome:
    token = agent.token(who)
    interface = await binding_of(agent.base_url, token, "evaluate_resource_condition")
    return await invoke(agent.base_url, token, "evaluate_resource_condition", arguments, interface)


def condition(metric: str = "utilization", operator: str = "gt", threshold: float = 80) -> dict:
    units = {"errors": "count"}
    return {
        "metric": metric,
        "operator": operator,
        "threshold": threshold,
        "unit": units.get(metric, "percent"),
    }


async def test_the_newcomers_text_request_completes_on_the_links_utilization(
    agent: RunningAgent, newest: dict[str, Any]
) -> None:
    outcome = await send(
        agent.base_url,
        agent.token("alice"),
        text_message(f"is {LINK} above 80 percent utilization?"),
    )
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    result = outcome.result("evaluate_resource_condition")
    assert result["observed_value"] == newest["percent"]
    assert result["unit"] == "percent"
    expected = "condition_met" if newest["percent"] > 80 else "condition_not_met"
    assert result["result"] == expected
    (record,) = outcome.artifacts("resource-observation")
    data = record["parts"][0]["data"]
    assert data["resource_id"] == LINK and data["metric"] == "utilization"
    assert data["value"] == newest["percent"]
    assert record["artifactId"] == data["record_id"] == result["supporting_record_refs"][0]
    assert data["record_id"].startswith(f"utilization-{LINK}-{newest['direction']}-")


@pytest.mark.parametrize("operator", ["gt", "gte", "lt", "lte"])
async def test_the_threshold_is_compared_with_the_links_percent(
    agent: RunningAgent, newest: dict[str, Any], operator: str
) -> None:
    at = newest["percent"]
    outcome = await evaluate(
        agent, {"resource_id": LINK, "condition": condition("utilization", operator, at)}
    )
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    met = operator in ("gte", "lte")  # equal to the threshold: only the inclusive ones hold
    expected = "condition_met" if met else "condition_not_met"
    assert outcome.result("evaluate_resource_condition")["result"] == expected


@pytest.mark.parametrize("metric", ["cpu", "memory", "errors"])
async def test_a_metric_of_the_links_ends_is_refused_naming_them(
    agent: RunningAgent, metric: str
) -> None:
    outcome = await evaluate(agent, {"resource_id": LINK, "condition": condition(metric)})
    assert outcome.state == "TASK_STATE_FAILED", outcome.task.status
    error = outcome.error
    assert error["code"] == "execution_failed", error
    assert f"link {LINK} is observed for utilization only" in error["message"]
    assert "ask about " + metric in error["message"]


@pytest.mark.parametrize(
    "reference",
    [
        "globex-lnk-00010",  # another tenant's link: the same answer as no link at all
        "acme-lnk-99999",
        "ACME-LNK-00010",
        "acme-lnk-0001%",
        "acme-lnk-0001_",
        "acme-lnk-00010 ",
        " acme-lnk-00010",
        "acme-lnk-00010' OR '1'='1",
        "acme-lnk-00010/../acme-lnk-00011",
        "acme-lnk-00010\u200b",
        "acme\u2011lnk\u201100010",
    ],
)
async def test_near_misses_and_other_tenants_links_look_absent(
    agent: RunningAgent, reference: str
) -> None:
    outcome = await evaluate(agent, {"resource_id": reference, "condition": condition()})
    assert outcome.state in ("TASK_STATE_REJECTED", "TASK_STATE_FAILED"), outcome.task.status
    error = outcome.error
    assert error["code"] == "authorization_failed", error
    assert error["message"] == NOT_ACCESSIBLE


async def test_the_other_tenant_reaches_its_own_link(agent: RunningAgent) -> None:
    outcome = await evaluate(
        agent, {"resource_id": "globex-lnk-00010", "condition": condition()}, who="gary"
    )
    assert outcome.state == "TASK_STATE_COMPLETED", outcome.task.status
    (record,) = outcome.artifacts("resource-observation")
    assert record["parts"][0]["data"]["resource_id"] == "globex-lnk-00010"
