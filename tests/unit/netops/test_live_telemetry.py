"""NETAGENT_LIVE_TELEMETRY is the network deployment's own switch (the core's settings know no
telemetry), read as the core reads its flags: every flag word in any case, unset or blank on,
anything else refused naming the variable, and in one line by the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.base.config import FLAG_WORDS
from netops.deployment import LIVE_TELEMETRY_VARIABLE, live_telemetry_from, network_deployment

NETAGENT = str(Path(sys.executable).with_name("netagent"))
WORDS = "1, 0, true, false, yes, no, on or off"


@pytest.mark.parametrize(("word", "value"), FLAG_WORDS.items())
def test_every_flag_word_in_any_case(word: str, value: bool) -> None:
    for spelling in (word, word.upper(), f"  {word.title()}\t"):
        assert live_telemetry_from({LIVE_TELEMETRY_VARIABLE: spelling}) is value, spelling


@pytest.mark.parametrize("environ", [{}, {LIVE_TELEMETRY_VARIABLE: ""}, {"OTHER": "0"}])
def test_unset_or_blank_is_on(environ: dict[str, str]) -> None:
    assert live_telemetry_from(environ) is True


@pytest.mark.parametrize("junk", ["maybe", "2", "auto", "o n", "-1", "tru", "\x00"])
def test_a_value_that_is_no_flag_word_is_refused(
    junk: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = f"{LIVE_TELEMETRY_VARIABLE} must be one of {WORDS}"
    with pytest.raises(ValueError) as refused:
        live_telemetry_from({LIVE_TELEMETRY_VARIABLE: junk})
    assert str(refused.value) == expected
    monkeypatch.setenv(LIVE_TELEMETRY_VARIABLE, junk.replace("\x00", "nul"))
    with pytest.raises(ValueError, match=LIVE_TELEMETRY_VARIABLE):
        network_deployment()
    network_deployment(live_telemetry=False)  # given, the variable is not read


def test_the_command_line_refuses_it_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "netagent.db").touch()  # a home with a database: audit has one to read
    env = {**os.environ, "NETAGENT_HOME": str(tmp_path), LIVE_TELEMETRY_VARIABLE: "maybe"}
    run = subprocess.run(
        [NETAGENT, "audit"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    expected = f"error: settings: {LIVE_TELEMETRY_VARIABLE} must be one of {WORDS}"
    assert (run.returncode, run.stderr.strip()) == (2, expected)
