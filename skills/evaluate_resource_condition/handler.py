"""The draft's worked example: does a resource's latest metric observation meet a threshold?"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError, rfc3339
from db.errors import InventoryError
from skills.evaluate_resource_condition.extract import extract as extract

RECORD_KIND = "resource-observation"
NOT_ACCESSIBLE = "resource not found or not accessible"
METRIC_UNITS: Mapping[str, str] = {
    "utilization": "percent",
    "cpu": "percent",
    "memory": "percent",
    "errors": "count",
}
OPERATORS: Mapping[str, Callable[[float, float], bool]] = {
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
}


def check_constraints(arguments: dict[str, Any], limits: Mapping[str, Any]) -> None:
    """Only metrics we observe, in the unit we observe them in, can be compared."""
    condition = arguments["condition"]
    unit = METRIC_UNITS.get(condition["metric"])
    if unit is None:
        raise SkillError(
            ErrorCode.CONSTRAINT_REJECTED,
            "metric is not observed; use one of: " + ", ".join(sorted(METRIC_UNITS)),
        )
    if condition["unit"] != unit:
        raise SkillError(
            ErrorCode.CONSTRAINT_REJECTED,
            f"metric {condition['metric']!r} is observed in {unit!r}; give the threshold in it",
        )


async def _resource_id(reference: str, ctx: SkillContext) -> str | None:
    """The caller's tenant's resource id for a resource id or a device name, else None.

    Looked up once per invocation: ``authorize`` asks first and ``handle`` reuses the answer.
    """
    if reference in ctx.found:
        cached = ctx.found[reference]  # the str or None stored below
        return cached if isinstance(cached, str) else None
    inventory = ctx.tool("inventory")
    resolved: str | None
    if await inventory.resource_exists(reference):
        resolved = reference
    else:
        try:
            device = await inventory.device(reference)
        except InventoryError:  # a name that matches several devices names none
            device = None
        resolved = device["resource_id"] if device else None
    ctx.found[reference] = resolved
    return resolved


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """The resource must exist in the caller's tenant (same answer when it exists elsewhere)."""
    if await _resource_id(arguments["resource_id"], ctx) is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Compare the latest observation with the threshold; the observation is the evidence."""
    condition = arguments["condition"]
    resource_id = await _resource_id(arguments["resource_id"], ctx)
    if resource_id is None:
        raise SkillError(ErrorCode.EXECUTION_FAILED, NOT_ACCESSIBLE)
    observation = await ctx.tool("inventory").latest_metric(resource_id, condition["metric"])
    if observation is None:
        raise SkillError(
            ErrorCode.EXECUTION_FAILED,
            f"no {condition['metric']} observation is available for this resource",
        )
    value = observation["value"]
    record_id = f"observation-{observation['id']}"
    await ctx.emit_record(
        RECORD_KIND,
        {
            "record_id": record_id,
            "resource_id": resource_id,
            "metric": condition["metric"],
            "value": value,
            "unit": observation["unit"],
            "observed_at": rfc3339(observation["observed_at"]),
        },
        artifact_id=record_id,
    )
    met = OPERATORS[condition["operator"]](value, condition["threshold"])
    return {
        "result": "condition_met" if met else "condition_not_met",
        "observed_value": value,
        "unit": observation["unit"],
        "supporting_record_refs": [record_id],
    }
