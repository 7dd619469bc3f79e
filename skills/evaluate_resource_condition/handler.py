"""The draft's worked example: does a resource's latest metric observation meet a threshold?"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agent.sdk import ErrorCode, SkillContext, SkillError, rfc3339
from db.errors import InventoryError
from db.records import LinkRecord
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


@dataclass(frozen=True)
class Resource:
    """What a reference named: a device's or interface's resource id, or a link."""

    resource_id: str
    link: LinkRecord | None = None


async def _resource(reference: str, ctx: SkillContext) -> Resource | None:
    """The caller's tenant's resource for a resource id, a device name or a link id, else None.

    Looked up once per invocation: ``authorize`` asks first and ``handle`` reuses the answer.
    A link is tried last, so a device or interface never pays for it.
    """
    if reference in ctx.found:
        cached = ctx.found[reference]  # the Resource or None stored below
        return cached if isinstance(cached, Resource) else None
    inventory = ctx.tool("inventory")
    resolved: Resource | None = None
    if await inventory.resource_exists(reference):
        resolved = Resource(reference)
    else:
        try:
            device = await inventory.device(reference)
        except InventoryError:  # a name that matches several devices names none
            device = None
        if device:
            resolved = Resource(device["resource_id"])
        elif link := await inventory.link(reference):
            resolved = Resource(link["link_id"], link)
    ctx.found[reference] = resolved
    return resolved


async def authorize(arguments: dict[str, Any], ctx: SkillContext) -> None:
    """The resource must exist in the caller's tenant (same answer when it exists elsewhere)."""
    if await _resource(arguments["resource_id"], ctx) is None:
        raise SkillError(ErrorCode.AUTHORIZATION_FAILED, NOT_ACCESSIBLE)


async def handle(arguments: dict[str, Any], ctx: SkillContext) -> dict[str, Any]:
    """Compare the latest observation with the threshold; the observation is the evidence."""
    condition = arguments["condition"]
    resource = await _resource(arguments["resource_id"], ctx)
    if resource is None:
        raise SkillError(ErrorCode.EXECUTION_FAILED, NOT_ACCESSIBLE)
    observation = await _observation(resource, condition["metric"], ctx)
    value = observation["value"]
    record_id = observation["record_id"]
    await ctx.emit_record(
        RECORD_KIND,
        {
            "record_id": record_id,
            "resource_id": resource.resource_id,
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


async def _observation(resource: Resource, metric: str, ctx: SkillContext) -> dict[str, Any]:
    """The newest observation of ``metric`` on the resource, with its evidence record's id."""
    if resource.link is not None:
        return await _link_observation(resource.link, metric, ctx)
    observation = await ctx.tool("inventory").latest_metric(resource.resource_id, metric)
    if observation is None:
        raise SkillError(
            ErrorCode.EXECUTION_FAILED, f"no {metric} observation is available for this resource"
        )
    return {**observation, "record_id": f"observation-{observation['id']}"}


async def _link_observation(link: LinkRecord, metric: str, ctx: SkillContext) -> dict[str, Any]:
    """A link's utilisation as an observation: its newest sample's busier direction, in percent.

    A link carries traffic but has no processor, memory or error counters of its own; those
    are its ends' (named in the error, so the caller can ask again).
    """
    if metric != "utilization":
        raise SkillError(
            ErrorCode.EXECUTION_FAILED,
            f"link {link['link_id']} is observed for utilization only; ask about {metric} on "
            f"its ends {link['a_device']} {link['a_interface']} or "
            f"{link['b_device']} {link['b_interface']}",
        )
    sample = await ctx.tool("inventory").latest_link_utilization(link["link_id"])
    if sample is None:
        raise SkillError(
            ErrorCode.EXECUTION_FAILED, "no utilization observation is available for this link"
        )
    observed_at = sample["observed_at"]
    return {
        "record_id": f"utilization-{link['link_id']}-{sample['direction']}-"
        f"{observed_at.strftime('%Y%m%dT%H%M%SZ')}",
        "value": round(float(sample["utilization_ratio"]) * 100, 2),
        "unit": "percent",
        "observed_at": observed_at,
    }
