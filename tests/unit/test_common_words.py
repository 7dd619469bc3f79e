"""The parsers' word tables: ``skills/common/words.json`` loads into the shapes ``text.py`` reads.

The file is a deployment's to replace, so its shapes are checked twice: here, against the file as
shipped (every phrase means an operator the skills take, every count is positive, every table is
wired to the parser that reads it), and at import, where a misshapen table fails with its name.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from skills.common import text as t
from skills.common import words as w


def _raw() -> dict[str, Any]:
    text = resources.files("skills.common").joinpath("words.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def test_every_operator_phrase_means_one_operator_the_skills_take() -> None:
    before, after = w.OPERATOR_PHRASES_BEFORE, w.OPERATOR_PHRASES_AFTER
    assert before and after
    assert set(before.values()) == set(w.OPERATORS)
    assert set(after.values()) <= set(w.OPERATORS)
    assert not set(before) & set(after), "a phrase both before and after the number"
    assert {**before, **after} == t._OPERATOR_PHRASES
    assert frozenset(after) == t._POSTFIX
    assert all(phrase == phrase.strip() and "  " not in phrase for phrase in t._OPERATOR_PHRASES)


BEFORE = sorted(w.OPERATOR_PHRASES_BEFORE)


@pytest.mark.parametrize("phrase", BEFORE)
def test_each_phrase_before_the_number_is_read_as_its_operator(phrase: str) -> None:
    assert t.comparison(f"alert when cpu {phrase} 80%") == w.OPERATOR_PHRASES_BEFORE[phrase]


@pytest.mark.parametrize("phrase", sorted(w.OPERATOR_PHRASES_AFTER))
def test_each_phrase_after_the_number_is_read_as_its_operator(phrase: str) -> None:
    glue = "" if phrase == "+" else " "
    found = t.find_comparison(t.fold(f"alert when cpu is 80%{glue}{phrase}"))
    assert found is not None and found.postfix
    assert found.op == w.OPERATOR_PHRASES_AFTER[phrase]


def test_number_words_are_positive_numbers_in_the_files_order() -> None:
    raw = {k: v for k, v in _raw()["number_words"].items() if not k.startswith("_")}
    assert list(w.NUMBER_WORDS.items()) == list(raw.items())
    assert all(type(v) in (int, float) and v > 0 for v in w.NUMBER_WORDS.values())


@pytest.mark.parametrize("word", sorted(w.NUMBER_WORDS))
def test_each_number_word_counts_the_unit_after_it(word: str) -> None:
    assert t.duration_seconds(f"errors over {word} hours") == round(w.NUMBER_WORDS[word] * 3600)


def test_keywords_and_not_typos_are_lower_case_words_apart() -> None:
    groups = {k: v for k, v in _raw()["keywords"].items() if not k.startswith("_")}
    assert frozenset(word for group in groups.values() for word in group) == w.KEYWORDS
    assert all(word.isalpha() and word.islower() for word in w.KEYWORDS | w.NOT_TYPOS)
    assert not w.KEYWORDS & w.NOT_TYPOS
    assert all(t.correct_word(word) == word for word in w.NOT_TYPOS)


def test_bandwidth_words_are_read_as_rates() -> None:
    prefixes = w.BANDWIDTH_WORD_PREFIXES
    assert list(prefixes) == list(_raw()["bandwidth"]["word_prefixes"])  # order: giga before gig
    assert set(prefixes) >= w.BANDWIDTH_PREFIXES_ALONE
    assert w.BYTE_RATE_WORDS <= w.BYTE_WORDS
    for prefix, factor in prefixes.items():
        assert type(factor) is int and factor > 0
        assert t.bandwidth_bps(f"add 3 {prefix}bits") == 3 * factor
        assert t.bandwidth_bps(f"add 3 {prefix}bytes/s") == 24 * factor
    for prefix in w.BANDWIDTH_PREFIXES_ALONE:
        assert t.bandwidth_bps(f"add 3 {prefix}") == 3 * prefixes[prefix]


@pytest.mark.parametrize(
    ("table", "reader", "message"),
    [
        ({"gte": ["at least"], "eq": ["equals"]}, w._phrases, "eq is not one of"),
        ({"gt": ["over"], "lt": ["over"]}, w._phrases, "listed twice"),
        ({"gt": "over"}, w._phrases, "non-empty strings"),
        ({"gt": [""]}, w._phrases, "non-empty strings"),
        (["over"], w._phrases, "must be an object"),
        ({"half": 0}, w._positive_numbers, "positive number"),
        ({"two": "2"}, w._positive_numbers, "positive number"),
        ({"two": True}, w._positive_numbers, "positive number"),
        ({"giga": 1e9}, w._positive_integers, "positive whole number"),
        ({"kilo": -1000}, w._positive_integers, "positive whole number"),
    ],
)
def test_a_misshapen_table_fails_naming_it(table: Any, reader: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        reader(table, "the_table")
    assert "words.json: the_table" in str(raised.value)


def test_comments_are_not_words() -> None:
    assert "_comment" in _raw()["operator_phrases"]
    assert not any(key.startswith("_") for key in (*w.NUMBER_WORDS, *t._OPERATOR_PHRASES))
