"""Direct composition: one skill's output as another skill's input, only on an exact match.

The upstream output's Schema Reference and the downstream input's must agree on
``schema_uri``, ``version``, ``dialect`` and ``digest``, and each embedded schema must verify
against its digest. Structural similarity is not enough. The instance is validated against
the downstream input before sending (the client does that), and the downstream task is new:
its correlation with the upstream task is recorded.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from agent.client.cache import VerifiedInterface
from agent.client.correlation import Correlations
from agent.client.correlation import CorrelationStore as CorrelationStore
from agent.client.errors import CompositionRefusedError
from agent.client.governed import GovernedClient, Invocation
from agent.interfaces import reference_identity, verify_reference

if TYPE_CHECKING:
    from agent.client.governed import _Advertised

    _Described = tuple[_Advertised, VerifiedInterface]

COMPARED = ("schema_uri", "version", "dialect", "digest")


def composition_differences(
    upstream: VerifiedInterface, downstream: VerifiedInterface
) -> list[str]:
    """Why ``upstream``'s output cannot feed ``downstream``'s input; empty when it can."""
    produced = upstream.document["output_schema"]
    accepted = downstream.document["input_schema"]
    differences = [
        f"{name}: {produced.get(name)!r} != {accepted.get(name)!r}"
        for name, ours, theirs in zip(
            COMPARED, reference_identity(produced), reference_identity(accepted), strict=True
        )
        if ours != theirs
    ]
    differences += [f"upstream output: {p}" for p in verify_reference(produced)]
    differences += [f"downstream input: {p}" for p in verify_reference(accepted)]
    return differences


@dataclass(frozen=True)
class ChainResult:
    """Both invocations, linked by one workflow id."""

    workflow_id: str
    upstream: Invocation
    downstream: Invocation


async def chain(
    upstream: GovernedClient,
    upstream_skill: str,
    arguments: dict[str, Any],
    downstream: GovernedClient,
    downstream_skill: str,
    correlations: Correlations | None = None,
    workflow_id: str | None = None,
) -> ChainResult:
    """Invoke upstream, then downstream with upstream's output, after checking they compose."""
    import uuid

    # Both described at the same time (each answer is read while the other is on its way);
    # a failure is raised as if they had been described in turn, upstream's first.
    described = await asyncio.gather(
        upstream.describe_on_card(upstream_skill),
        downstream.describe_on_card(downstream_skill),
        return_exceptions=True,
    )
    for outcome in described:
        if isinstance(outcome, BaseException):
            raise outcome
    (up_card, up_interface), (_, down_interface) = cast("list[_Described]", described)
    differences = composition_differences(up_interface, down_interface)
    if differences:
        raise CompositionRefusedError(differences)
    # Sent on the reading of the card the check used, made a moment ago.
    first = await upstream.invoke(upstream_skill, arguments, card=up_card)
    # The downstream card may have changed since the check: read it again, compare what was
    # actually used upstream with what it advertises now, and send on that same reading.
    down_card, down_interface = await downstream.describe_on_card(downstream_skill)
    differences = composition_differences(first.interface, down_interface)
    if differences:
        raise CompositionRefusedError(differences)
    second = await downstream.invoke(downstream_skill, first.output, card=down_card)
    workflow = workflow_id or uuid.uuid4().hex
    if correlations is not None:
        await correlations.record(workflow, first, upstream.base_url, second, downstream.base_url)
    return ChainResult(workflow, first, second)
