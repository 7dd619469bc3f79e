"""Settings from the environment (agent/base/settings.py): every field has its variable, every flag
reads every word in any case, and a value that cannot work is refused naming the variable.
The command line's one-line refusals (which run ``netagent``) are in tests/unit/test_settings.py."""

from __future__ import annotations

from dataclasses import fields
from typing import get_type_hints

import pytest

from agent.base.config import FLAG_WORDS, flag
from agent.base.settings import DEFAULT_ROUTE_THRESHOLD as DEFAULT_THRESHOLD
from agent.base.settings import VARIABLES, Limits, Settings


def test_numbers_are_read_and_blank_means_the_default() -> None:
    settings = Settings.from_env({"NETAGENT_PORT": " 9001 ", "NETAGENT_ROUTE_THRESHOLD": ""})
    assert settings.port == 9001
    assert settings.route_threshold == Settings.from_env({}).route_threshold


# -- flags: one parser, every variable -------------------------------------------------------

FLAGS = [(name, variable) for name, (variable, read) in VARIABLES.items() if read is flag]
WORDS = "1, 0, true, false, yes, no, on or off"
WORDS_OR_AUTO = "1, 0, true, false, yes, no, on, off or auto"


def _mixed(word: str) -> list[str]:
    """The spellings an operator may write: any case, padded."""
    return [
        word,
        word.upper(),
        word.title(),
        f"  {word.swapcase()}\t",
        f" {word[:1].upper()}{word[1:]} ",
    ]


def test_every_field_has_its_variable_and_every_switch_is_read_as_a_flag() -> None:
    hints = get_type_hints(Settings)
    assert set(VARIABLES) == {f.name for f in fields(Settings)} - {"limits"}
    switches = {name for name, hint in hints.items() if hint in (bool, bool | None)}
    assert switches == {name for name, _ in FLAGS}
    assert len({variable for variable, _ in VARIABLES.values()}) == len(VARIABLES)


@pytest.mark.parametrize(("name", "variable"), FLAGS)
@pytest.mark.parametrize(("word", "value"), FLAG_WORDS.items())
def test_every_flag_reads_every_word_in_any_case(
    name: str, variable: str, word: str, value: bool
) -> None:
    for spelling in _mixed(word):
        assert getattr(Settings.from_env({variable: spelling}), name) is value, spelling


@pytest.mark.parametrize(("name", "variable"), FLAGS)
def test_an_unset_or_blank_flag_keeps_the_default(name: str, variable: str) -> None:
    default = getattr(Settings(), name)
    assert getattr(Settings.from_env({}), name) is default
    assert getattr(Settings.from_env({variable: ""}), name) is default
    assert getattr(Settings.from_env({variable: "   "}), name) is default


@pytest.mark.parametrize(("name", "variable"), FLAGS)
@pytest.mark.parametrize("junk", ["maybe", "2", "enabled", "o n", "-1", "tru"])
def test_a_flag_that_is_no_word_is_refused_naming_the_words(
    name: str, variable: str, junk: str
) -> None:
    words = WORDS_OR_AUTO if getattr(Settings(), name) is None else WORDS
    with pytest.raises(ValueError) as refused:
        Settings.from_env({variable: junk})
    assert str(refused.value) == f"{variable} must be one of {words}"


def test_the_defaults_are_the_documented_ones() -> None:
    defaults = Settings.from_env({})
    assert (defaults.seed_on_start, defaults.metrics) == (True,) * 2
    assert (defaults.otel, defaults.conformance, defaults.cluster) == (False, False, None)
    assert defaults.route_threshold == DEFAULT_THRESHOLD == 0.55


@pytest.mark.parametrize("spelling", ["auto", " AUTO ", "Auto", ""])
def test_cluster_auto_decides_from_the_database(spelling: str) -> None:
    sqlite = Settings.from_env({"NETAGENT_CLUSTER": spelling})
    postgres = Settings.from_env(
        {"NETAGENT_CLUSTER": spelling, "NETAGENT_DATABASE_URL": "postgresql+asyncpg://h/db"}
    )
    assert (sqlite.cluster, sqlite.cluster_stores, postgres.cluster_stores) == (None, False, True)


@pytest.mark.parametrize("variable", [v for _, v in FLAGS if v != "NETAGENT_CLUSTER"])
def test_auto_is_a_word_only_for_the_cluster(variable: str) -> None:
    with pytest.raises(ValueError, match=variable):
        Settings.from_env({variable: "auto"})


def test_every_blank_variable_means_its_default() -> None:
    blank = {variable: "" for variable, _ in VARIABLES.values()}
    blank |= {variable: "" for variable in Limits.ENV.values()}
    assert Settings.from_env(blank) == Settings()


# -- the gRPC port: a port, or off ------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "port"), [("", 50051), ("9090", 9090), ("0", 0), ("off", 0), ("No", 0)]
)
def test_the_grpc_port_is_a_port_or_off(value: str, port: int) -> None:
    settings = Settings.from_env({"NETAGENT_GRPC_PORT": value})
    assert settings.grpc_port == port
    assert settings.resolved_grpc_url == (f"127.0.0.1:{port}" if port else None)


@pytest.mark.parametrize("value", ["grpc", "-1", "70000", "on"])
def test_a_grpc_port_that_is_none_is_refused(value: str) -> None:
    with pytest.raises(ValueError, match="NETAGENT_GRPC_PORT must be"):
        Settings.from_env({"NETAGENT_GRPC_PORT": value})


def test_the_card_advertises_grpc_on_the_public_host() -> None:
    behind = Settings(public_url="https://agent.example.com/base", grpc_port=443)
    assert behind.resolved_grpc_url == "agent.example.com:443"
    assert Settings(host="::1", grpc_port=50051).resolved_grpc_url == "[::1]:50051"
