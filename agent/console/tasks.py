"""The console's tasks page: the caller's tasks as a person reads them, and its filters.

A task row leads with its answer (:func:`agent.console.results.summarize`) and folds the rest:
the result, the records it names and any error object. The filters are ListTasks' own where
it has them (state, status time, page token), so the agent's task store does the work; the
skill, which ListTasks cannot filter by, is matched on the pages it returns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agent.console.results import error_summary, summarize
from agent.interfaces.order import in_schema_order

TASK_PAGE_SIZE = 25
SKILL_PAGES = 4
"""With a skill filter, how many pages of ListTasks one page of the console reads at most."""
STATES = (
    "SUBMITTED",
    "WORKING",
    "INPUT_REQUIRED",
    "AUTH_REQUIRED",
    "COMPLETED",
    "CANCELED",
    "FAILED",
    "REJECTED",
)
"""The A2A task states a caller may filter by (``TASK_STATE_`` left out)."""
MAX_PAGE_TOKEN = 512


def references(result: Any, record_ids: set[str], path: str = "") -> list[tuple[str, str]]:
    """Where the result names a record artifact: (JSON Pointer in the result, artifactId)."""
    if isinstance(result, dict):
        return [
            ref
            for key, value in result.items()
            for ref in references(value, record_ids, f"{path}/{key}")
        ]
    if isinstance(result, list):
        return [
            ref
            for i, value in enumerate(result)
            for ref in references(value, record_ids, f"{path}/{i}")
        ]
    return [(path, result)] if isinstance(result, str) and result in record_ids else []


def part_data(parts: list[dict[str, Any]]) -> Any:
    """A message's or artifact's Data Part, else its text parts joined; None if neither."""
    for part in parts:
        if "data" in part:
            return part["data"]
    texts = [p["text"] for p in parts if "text" in p]
    return "\n".join(texts) if texts else None


SchemaOf = Callable[[str, str], Mapping[str, Any] | None]
"""The schema of a skill's artifact, by skill id and artifact name (``result`` or a record
kind), when the registry knows it."""


def _as_json(value: Any, schema: Mapping[str, Any] | None) -> str:
    """``value`` printed in its schema's member order (a Struct keeps none), or by name."""
    if schema is None:
        return json.dumps(value, indent=2, sort_keys=True)
    return json.dumps(in_schema_order(value, schema), indent=2)


def _kind(artifact: Mapping[str, Any]) -> str:
    """``result`` for the result artifact, else the record kind its name gives."""
    return "result" if artifact.get("artifactId") == "result" else str(artifact.get("name") or "")


def task_view(task: dict[str, Any], schema_of: SchemaOf | None = None) -> dict[str, Any]:
    """A task as the tasks page shows it: its answer in one line first, then state, skill,
    the result, the records it names and the error object, if any, to unfold; results and
    records in their schemas' order (``schema_of``)."""
    status = task.get("status", {})
    state = str(status.get("state", "")).removeprefix("TASK_STATE_")
    message = status.get("message") or {}
    error = part_data(message.get("parts", [])) if state in ("REJECTED", "FAILED") else None
    routing = (task.get("metadata") or {}).get("routing") or {}
    skill = str(routing.get("skill_id") or "")
    artifacts = [
        {
            "id": a.get("artifactId", ""),
            "name": a.get("name", ""),
            "data": _as_json(
                part_data(a.get("parts", [])),
                schema_of(skill, _kind(a)) if schema_of and skill else None,
            ),
        }
        for a in task.get("artifacts", [])
    ]
    record_ids = {a["id"] for a in artifacts if a["id"] != "result"}
    result = next((a for a in task.get("artifacts", []) if a.get("artifactId") == "result"), None)
    value = part_data(result.get("parts", [])) if result else None
    return {
        "id": task.get("id", ""),
        "context": task.get("contextId", ""),
        "state": state,
        "timestamp": status.get("timestamp", ""),
        "skill": skill,
        "summary": error_summary(error) if error is not None else summarize(value),
        "result": next((a for a in artifacts if a["id"] == "result"), None),
        "records": [a for a in artifacts if a["id"] != "result"],
        "artifacts": artifacts,
        "references": references(value, record_ids) if result else [],
        "error": json.dumps(error, indent=2, sort_keys=True) if error is not None else None,
    }


@dataclass(frozen=True)
class TaskFilters:
    """What the tasks page was asked to show; ``problem`` says what could not be read."""

    state: str = ""
    skill: str = ""
    since_text: str = ""
    since: datetime | None = None
    page_token: str = ""
    problem: str = ""

    def params(self, page_token: str = "") -> dict[str, Any]:
        """ListTasks params for one page (the skill is matched on what comes back)."""
        params: dict[str, Any] = {
            "pageSize": TASK_PAGE_SIZE,
            "includeArtifacts": True,
            "historyLength": 0,
        }
        if self.state:
            params["status"] = f"TASK_STATE_{self.state}"
        if self.since is not None:
            stamp = self.since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            params["statusTimestampAfter"] = stamp
        if page_token or self.page_token:
            params["pageToken"] = page_token or self.page_token
        return params

    def query(self, **changes: str) -> dict[str, str]:
        """The page's query for a link (a next page, or the first again)."""
        current = {
            "state": self.state,
            "skill": self.skill,
            "since": self.since_text,
            "page": self.page_token,
        }
        return {k: v for k, v in (current | changes).items() if v}


def read_filters(
    query: Mapping[str, str], skills: set[str], since: datetime | None, since_text: str
) -> TaskFilters:
    """The filters in ``query``; an unknown state or skill, a bad time or token is dropped
    and named in ``problem`` (the page still shows the rest)."""
    problems = []
    state = query.get("state", "").strip().upper()
    if state and state not in STATES:
        problems.append(f"No task state {state[:40]!r}; one of {', '.join(STATES)}.")
        state = ""
    skill = query.get("skill", "").strip()
    if skill and skill not in skills:
        problems.append(f"No skill {skill[:80]!r} you may see.")
        skill = ""
    if since_text and since is None:
        problems.append("Since takes an ISO time or a look-back like 30m, 24h, 7d.")
    token = query.get("page", "").strip()
    if len(token) > MAX_PAGE_TOKEN or not token.isascii():
        problems.append("That page link is not one this page made; showing the first page.")
        token = ""
    return TaskFilters(state, skill, since_text if since else "", since, token, " ".join(problems))
