"""perun_core.profile.fastjson gives json's values exactly, with orjson and without it."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from perun_core.profile import codec, fastjson

EDGE_CASES = [
    b"-9223372036854775809",  # below int64: orjson alone would give a float
    b"18446744073709551616",  # above uint64
    b"[1, 123456789012345678901234567890]",
    b"1e400",
    b"NaN",
    b"[Infinity, -Infinity]",
    b'"\\ud800"',  # a lone surrogate escape
    b"-0",
    b"-0.0",
    b'{"a": 1, "a": 2}',
    b"123456789012345678901234.5",
    b'{"amount": 1.5, "uid": "f\\u00e9", "structure-unit-size": 12}',
]


@pytest.fixture(params=["orjson", "json only"])
def parser(request, monkeypatch):
    if request.param == "json only":
        monkeypatch.setattr(fastjson, "_orjson", None)
    else:
        assert fastjson.available(), "orjson is a dependency (pyproject.toml): it must be importable"
    return fastjson


def same(a, b) -> bool:
    """Equal values of equal types, NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, list):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.parametrize("text", EDGE_CASES)
def test_loads_gives_what_json_gives(parser, text):
    assert same(parser.loads(text), json.loads(text))
    assert same(parser.loads(text.decode("utf-8")), json.loads(text))
    # a stored object's content is a view past its header: read in place, with the same answers
    assert same(parser.loads(memoryview(b"profile x 1\0" + text)[12:]), json.loads(text))


@pytest.mark.parametrize("text", [b"[1, 2,]", b"{", b'{"a" 1}', b"\xff\xfe", b""])
def test_bad_text_raises_what_json_raises(parser, text):
    with pytest.raises(ValueError) as expected:
        json.loads(text)
    with pytest.raises(type(expected.value)):
        parser.loads(text)
    with pytest.raises(type(expected.value)):
        parser.loads(memoryview(text))


numbers = st.one_of(st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=False, allow_infinity=False))


@given(st.lists(numbers, max_size=50))
def test_number_tokens_parse_back_to_the_same_numbers(values):
    for module_has_orjson in (True, False):
        saved = fastjson._orjson
        if not module_has_orjson:
            fastjson._orjson = None
        try:
            tokens = fastjson.number_tokens(values)
        finally:
            fastjson._orjson = saved
        assert len(tokens) == len(values)
        assert same(json.loads("[" + ",".join(tokens) + "]"), values)


def test_a_written_profile_reads_back_the_same_with_and_without_orjson(tmp_path, monkeypatch):
    rows = [{"amount": a, "uid": f"f{i % 3}", "structure-unit-size": i, "big": 2**64 + i}
            for i, a in enumerate([1e-05, 1e16, 0.1 + 0.2, -0.0, 5e-324, 1.7976931348623157e308] * 10)]
    data = {"header": {"type": "mixed", "units": {"mixed(time delta)": "us"}}, "collector_info": {},
            "postprocessors": [], "snapshots": [{"time": "0", "resources": rows, "models": []}]}
    profile = codec.Profile.from_dict(data)
    codec.store_profile_at(profile, tmp_path / "a.perf")
    fast = codec.load_profile_from_file(tmp_path / "a.perf")
    monkeypatch.setattr(fastjson, "_orjson", None)
    codec.store_profile_at(profile, tmp_path / "b.perf")
    plain = codec.load_profile_from_file(tmp_path / "b.perf")
    assert same(fast.to_dict(), data) and same(plain.to_dict(), data)


# Long texts with few values (the columnar layout's shape: its bulk is a few base64 strings): orjson's result
# is judged by its values, not by a scan of the text; an integer beyond 64 bits still comes out exact.
FEW_VALUES_LONG_TEXT = [
    {"pad": "0123456789" * 500, "n": 123456789012345678901234567890},
    {"pad": "A" * 5000, "nested": [{"n": -(2**63) - 1}]},
    {"pad": "A" * 5000, "n": 2**64, "m": 2**63},
    {"pad": "A" * 5000, "f": 1e300, "g": -1.5e19, "h": 9.2e18},
    {"pad": "1" * 5000, "ok": [1, 2.5, -(2**63), 2**64 - 1]},
]


@pytest.mark.parametrize("value", FEW_VALUES_LONG_TEXT)
def test_long_texts_with_few_values_give_what_json_gives(parser, value):
    text = json.dumps(value).encode()
    assert len(text) >= 5000
    assert same(parser.loads(text), json.loads(text))
    assert same(parser.loads(memoryview(text)), json.loads(text))


@given(st.lists(st.one_of(numbers, st.text(max_size=5)), max_size=30), st.integers(min_value=0, max_value=6000))
def test_texts_of_any_length_and_number_of_values_give_what_json_gives(values, padding):
    text = json.dumps({"pad": "x" * padding, "values": values}).encode()
    assert same(fastjson.loads(text), json.loads(text))
