"""RFC 8785 known answers and the digest recipe (digest §3, project choice 11)."""

from __future__ import annotations

import hashlib
import json
import re
import struct

import pytest

from agent.interfaces import DIGEST_PATTERN, NotRepresentableError, canonical_json, digest_of

# RFC 8785 §3.2.2: the sample input and its canonical form, byte for byte.
RFC_SAMPLE = r"""{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"""
RFC_SAMPLE_CANONICAL = (
    r'{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
    r'"string":"€$\u000f\nA' + "'" + r'B\"\\\\\"/"}'
).encode()

# RFC 8785 §3.2.3: property sorting by UTF-16 code units.
RFC_SORTING = r"""{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}"""
RFC_SORTING_CANONICAL = (
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control",'
    '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",'
    '"\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}'
).encode()

# RFC 8785 Appendix B: IEEE-754 bit patterns and their JSON form.
APPENDIX_B = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


def test_rfc8785_sample_object() -> None:
    assert canonical_json(json.loads(RFC_SAMPLE)) == RFC_SAMPLE_CANONICAL


def test_rfc8785_property_sorting_uses_utf16_code_units() -> None:
    value = json.loads(RFC_SORTING)
    assert canonical_json(value) == RFC_SORTING_CANONICAL
    # Code-point order would put U+FB33 before the emoji; UTF-16 order puts it last.
    assert sorted(value)[-1] == "\U0001f600"


@pytest.mark.parametrize(("bits", "expected"), APPENDIX_B)
def test_rfc8785_appendix_b_numbers(bits: str, expected: str) -> None:
    (number,) = struct.unpack(">d", bytes.fromhex(bits))
    assert canonical_json(number) == expected.encode()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1E30", "1e+30"),
        ("4.50", "4.5"),
        ("2e-3", "0.002"),
        ("-0.0", "0"),
        ("1e21", "1e+21"),
        ("1e20", "100000000000000000000"),
        ("0.000001", "0.000001"),  # ECMAScript keeps 1e-6 in fixed notation
        ("1e-7", "1e-7"),
        ("80.0", "80"),
        ("8E1", "80"),
    ],
)
def test_number_text_forms(text: str, expected: str) -> None:
    assert canonical_json(json.loads(text)) == expected.encode()


def test_known_digest_and_format() -> None:
    assert digest_of({}) == (
        "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    )
    assert re.fullmatch(DIGEST_PATTERN, digest_of([1, "a"]))
    assert digest_of({"a": 1}) == "sha256:" + hashlib.sha256(b'{"a":1}').hexdigest()


def test_order_whitespace_and_escapes_do_not_change_the_digest() -> None:
    compact = json.loads('{"a":80,"b":"\u00e9/","c":[true,null]}')
    spaced = json.loads('{ "c" : [ true , null ] ,\n "b" : "\\u00e9\\/" , "a" : 8.0E1 }')
    assert digest_of(compact) == digest_of(spaced)
    assert digest_of(compact) != digest_of({**compact, "a": 81})
    assert digest_of(compact) != digest_of({**compact, "b": "e/"})


@pytest.mark.parametrize("number", [2**53, -(2**53), 2**64])
def test_integers_beyond_2_53_are_refused_with_their_pointer(number: int) -> None:
    with pytest.raises(NotRepresentableError) as caught:
        digest_of({"constraints": {"a/b": [1, number]}})
    assert caught.value.pointer == "/constraints/a~1b/1"
    assert "2^53" in str(caught.value)


def test_largest_safe_integer_and_large_floats_are_accepted() -> None:
    assert canonical_json(2**53 - 1) == b"9007199254740991"
    assert canonical_json(-(2**53) + 1) == b"-9007199254740991"
    assert canonical_json(float(2**53)) == b"9007199254740992"


@pytest.mark.parametrize(
    ("value", "pointer"),
    [
        ({"x": float("nan")}, "/x"),
        ({"x": [float("inf")]}, "/x/0"),
        ({"x": {1: "one"}}, "/x"),
        ({"x": ("a", "b")}, "/x"),
        ({"x": {"\ud800": 1}}, "/x/\ud800"),
        ({"x": "lone \udc00"}, "/x"),
    ],
)
def test_other_non_json_values_are_refused(value: object, pointer: str) -> None:
    with pytest.raises(NotRepresentableError) as caught:
        canonical_json(value)
    assert caught.value.pointer == pointer
