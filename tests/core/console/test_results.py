"""A result in one line (agent/console/results.py) and the tasks page's filters
(agent/console/tasks.py), on the shapes skills return and on hostile ones."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent.console.results import MAX_SUMMARY, error_summary, summarize
from agent.console.tasks import TaskFilters, read_filters

SINCE = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (
            {"link_id": "l-1", "verdict": "5 Gbit/s fits: 6 Gbit/s available", "capacity_bps": 1},
            "l-1: 5 Gbit/s fits: 6 Gbit/s available",
        ),
        (
            {"result": "condition_not_met", "observed_value": 42, "unit": "percent"},
            "condition not met; observed 42 percent",
        ),
        (
            {
                "link_id": "l-2",
                "recommendation": "upgrade",
                "reason": "peak 94% is above 80%",
                "recommended_capacity_bps": 200_000_000_000,
                "current_capacity_bps": 100_000_000_000,
            },
            "l-2: upgrade; peak 94% is above 80%; recommended capacity 200 Gbit/s",
        ),
        ({"kind": "links", "count": 1203, "truncated": True}, "1,203 links (not all listed)"),
        (
            {"link_id": "l-3", "headroom_percent": 17.94, "capacity_bps": 10**11},
            "l-3: headroom 17.9 %, capacity 100 Gbit/s",
        ),
        ({"peak_utilization_ratio": 0.9412}, "peak utilization 94.1 %"),
        ({"ok": True, "items": [1, 2]}, ""),
        ({"flag_bps": True}, ""),  # a bool is no measure
        ([1, 2, 3], ""),
        (None, ""),
        ("plain text answer", "plain text answer"),
    ],
)
def test_a_result_reads_as_its_answer_with_units(result, expected) -> None:
    assert summarize(result) == expected


def test_a_long_or_deep_result_still_reads_in_one_bounded_line() -> None:
    deep: dict[str, object] = {"verdict": "x" * 10_000}
    for _ in range(500):
        deep = {"inner": deep}
    assert summarize(deep) == ""
    line = summarize({"verdict": "\u2003" + "é" * 10_000})
    assert len(line) == MAX_SUMMARY and line.endswith("…")


def test_an_error_reads_as_code_and_message() -> None:
    assert error_summary({"code": "authorization_failed", "message": "not yours"}) == (
        "authorization_failed: not yours"
    )
    assert error_summary("boom") == "boom"
    assert error_summary(None) == ""


def test_filters_keep_what_is_known_and_name_what_is_not() -> None:
    good = read_filters({"state": "rejected", "skill": "a", "page": "tok"}, {"a"}, SINCE, "2h")
    assert (good.state, good.skill, good.page_token, good.problem) == ("REJECTED", "a", "tok", "")
    assert good.params() == {
        "pageSize": 25,
        "includeArtifacts": True,
        "historyLength": 0,
        "status": "TASK_STATE_REJECTED",
        "statusTimestampAfter": "2026-11-29T10:00:00.000000Z",
        "pageToken": "tok",
    }
    bad = read_filters(
        {"state": "DONE", "skill": "hidden", "page": "é" * 10}, {"a"}, None, "yesterday"
    )
    assert (bad.state, bad.skill, bad.page_token, bad.since_text) == ("", "", "", "")
    assert "No task state 'DONE'" in bad.problem and "No skill 'hidden'" in bad.problem
    assert "Since takes" in bad.problem and "page link" in bad.problem
    assert TaskFilters(state="FAILED", skill="a").query(page="next") == {
        "state": "FAILED",
        "skill": "a",
        "page": "next",
    }
