"""Column-wise profile I/O: the documented-JSON writer and reader, packed columns, and the shared pieces the analyses use."""

from __future__ import annotations

import json
import os
import re
import math
import random
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perun_core import units
from perun_core.analysis.points import count_numbers, points_by_uid, read_points
from perun_core.errors import InvalidParameter, InvalidProfile
from perun_core import atomic
from perun_core.atomic import TEMPORARY_NAME, atomic_write, temporary_writer_alive, writer_tag
from perun_core.profile import writer
from perun_core.profile.codec import decode_content, encode_columnar, load_profile_from_file, to_json_bytes
from perun_core.profile.model import Profile
from perun_core.profile.resources import PackedColumn, ResourceTable
from perun_core.runner.jobs import UnitConfig
from perun_core.runner.run import apply_postprocessor
from perun_core.units import Param, PhaseResult, UnitContext


def mixed_rows(n: int, seed: int = 3) -> list[dict]:
    rnd = random.Random(seed)
    return [
        {
            "amount": rnd.random() * 1000.0,
            "size": rnd.randrange(50),
            "uid": f"f{i % 9}(\"q\", ü)",
            "flag": i % 3 == 0,
            "nested": {"function": f"g{i % 4}", "line": i % 4},
            "trace": [{"f": "main"}, None, 2.5],
            "rounded": float(i % 7),
            "big": 2**70 + i % 3,
            "none": None,
        }
        for i in range(n)
    ]


def profile_of(rows: list[dict], **extra) -> Profile:
    return Profile.from_dict({
        "origin": "ab" * 20, "header": {"type": "mixed", "näme": "x\ny"}, "collector_info": {"name": "c"},
        "postprocessors": [{"name": "p", "params": {}}],
        "snapshots": [{"time": "1", "resources": rows, "models": [{"model": "constant", "uid": "f"}]},
                      {"time": "2", "resources": []}],
        "global": {"timestamp": 3, "resources": rows[:5]}, "chunks": {"a": 1}, **extra,
    })


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("source", ["rows", "columnar"])
def test_the_column_writer_gives_what_json_dumps_gives(indent, source, monkeypatch):
    monkeypatch.setattr(writer, "BLOCK_ROWS", 7)  # many blocks, and a last one cut short
    profile = profile_of(mixed_rows(60))
    if source == "columnar":
        decoded = decode_content(encode_columnar(profile))
        decoded.origin = profile.origin
        assert decoded.snapshots[0].resources.packed("amount") is not None
        profile = decoded
    text = to_json_bytes(profile, indent=indent)
    assert json.loads(text) == profile.to_dict()
    if indent is not None:
        lines = text.decode().splitlines()
        resource_lines = [line for line in lines if line.lstrip().startswith('{"amount"')]
        assert len(resource_lines) == 65 and all(line.startswith(" " * 8) for line in resource_lines[:60])
        assert text.decode().startswith('{\n  "origin": "' + "ab" * 20)


def test_number_columns_with_repeats_zeros_and_huge_values():
    rows = [{"i": i % 10, "f": float(i % 5) * 0.5, "z": (0.0, -0.0, 1.5)[i % 3], "w": 10**30 * (i % 2)}
            for i in range(20000)]
    text = to_json_bytes(profile_of(rows, chunks={}), indent=None)
    got = json.loads(text)["snapshots"][0]["resources"]
    assert got == rows
    assert [math.copysign(1.0, r["z"]) for r in got[:3]] == [1.0, -1.0, 1.0]


def test_sparse_tables_and_odd_keys_are_written_row_by_row():
    rows = [{"a": 1}, {"b": "x", "a\"q": [1]}, {}]
    profile = profile_of(rows)
    assert json.loads(to_json_bytes(profile, indent=2)) == profile.to_dict()
    decoded = decode_content(encode_columnar(profile))
    decoded.origin = profile.origin
    assert json.loads(to_json_bytes(decoded)) == profile.to_dict()


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused_like_json_dumps(bad):
    rows = [{"amount": 1.0}] * 10 + [{"amount": bad}]
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        to_json_bytes(profile_of(rows))
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        to_json_bytes(decode_content(encode_columnar(profile_of(rows))))


def test_packed_columns_decode_on_demand_and_encode_back_unchanged():
    profile = profile_of(mixed_rows(300))
    encoded = encode_columnar(profile)
    decoded = decode_content(encoded)
    table = decoded.snapshots[0].resources
    assert isinstance(table.packed("amount"), PackedColumn) and table.packed("uid").kind == "dict"
    assert table.keys() == list(mixed_rows(1)[0]) and table.packed("amount") is not None
    assert encode_columnar(decoded) == encoded  # packed columns are written back as they are
    assert table.column("size") == [r["size"] for r in mixed_rows(300)]
    assert table.rows() == mixed_rows(300)
    assert decoded.to_dict() == profile.to_dict(with_origin=False)
    # a changed table forgets its packed columns
    table.append({"amount": 1.0})
    assert table.packed("amount") is None


def test_sparse_packed_columns_keep_their_absent_cells():
    rows = [{"amount": float(i), "size": i} if i % 3 else {"size": i, "uid": "u"} for i in range(30)]
    decoded = decode_content(encode_columnar(profile_of(rows)))
    table = decoded.snapshots[0].resources
    assert table.packed("amount").absent and table.rows() == rows
    assert count_numbers(decoded.snapshots[0], "amount") == (20, 0)


@pytest.mark.parametrize("damage", [
    lambda col: col.update(c="AAAA"),  # codes past the dictionary, or too few of them
    lambda col: col.update(w="d"),
    lambda col: col.update(v="not a list"),
])
def test_damaged_packed_columns_are_refused_when_decoded(damage):
    doc = json.loads(encode_columnar(profile_of([{"uid": f"u{i % 3}"} for i in range(10)])))
    damage(doc["snapshots"][0]["cols"][0])
    with pytest.raises(InvalidProfile, match="damaged columnar encoding"):
        decode_content(json.dumps(doc).encode())


def test_bad_codes_are_caught_for_every_width():
    for count, width in ((3, "b"), (300, "h")):
        rows = [{"uid": f"u{i % count}"} for i in range(2 * count)]
        doc = json.loads(encode_columnar(profile_of(rows)))
        column = doc["snapshots"][0]["cols"][0]
        assert column["w"] == width
        column["v"] = column["v"][:-1]
        with pytest.raises(InvalidProfile, match="a code points past the dictionary"):
            decode_content(json.dumps(doc).encode())


def test_points_from_packed_columns_equal_points_from_rows():
    rng = np.random.default_rng(1)
    rows = [{"uid": ("a", "b", {"f": "c"})[i % 3], "x": int(rng.integers(0, 50)), "y": float(rng.random())}
            for i in range(500)]
    rows[7]["y"] = math.nan
    rows[8]["x"] = "text"
    rows[9] = {"x": 1, "y": 2.0}
    profile = profile_of(rows)
    decoded = decode_content(encode_columnar(profile))
    from_rows = read_points(profile, "x", "y")
    from_packed = read_points(decoded, "x", "y")
    assert (from_rows.numbers_x, from_rows.nonfinite_y) == (from_packed.numbers_x, from_packed.nonfinite_y)
    assert from_packed.nonfinite_y == 1 and from_packed.numbers_x == 504  # "text" is no number
    assert list(from_rows.by_uid) == list(from_packed.by_uid) == ["a", "b", "c"]
    for uid in from_rows.by_uid:
        for got, expected in zip(from_packed.by_uid[uid], from_rows.by_uid[uid]):
            assert np.array_equal(got, expected)
    assert decoded.snapshots[0].resources.packed("x") is not None  # reading points left it packed
    assert points_by_uid(ResourceTable([]), "x", "y") == {}



@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["f", "g", "h"]), st.sampled_from(["time", "memory", None]),
                          st.sampled_from(["real", "user", "", None]), st.integers(0, 9)), min_size=1, max_size=40))
def test_points_split_by_kind_from_packed_columns_equal_those_from_rows(cells):
    """The packed type and subtype codes are unpacked only when a uid is split: the groups, their labels and
    their points are those read from plain rows (absent types and subtypes included)."""
    rows = []
    for uid, kind, subtype, x in cells:
        row = {"uid": uid, "x": x, "y": float(x * x + len(rows))}
        if kind is not None:
            row["type"] = kind
        if subtype is not None:
            row["subtype"] = subtype
        rows.append(row)
    profile = profile_of(rows)
    decoded = decode_content(encode_columnar(profile))
    assert decoded.snapshots[0].resources.packed("uid") is not None
    from_rows = read_points(profile, "x", "y", split_kinds=True)
    from_packed = read_points(decoded, "x", "y", split_kinds=True)
    assert from_packed.kinds == from_rows.kinds
    assert list(from_packed.by_uid) == list(from_rows.by_uid)
    for label, (x, y) in from_rows.by_uid.items():
        assert np.array_equal(from_packed.by_uid[label][0], x) and np.array_equal(from_packed.by_uid[label][1], y)

def test_load_profile_from_file_reads_what_the_writer_wrote(tmp_path):
    profile = profile_of(mixed_rows(50))
    path = tmp_path / "p.perf"
    atomic_write(path, (chunk for chunk in [to_json_bytes(profile, indent=2)]))
    assert load_profile_from_file(path) == profile
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InvalidProfile):
        load_profile_from_file(path)


def test_atomic_write_of_chunks_leaves_nothing_when_producing_them_fails(tmp_path):
    def chunks():
        yield b"{"
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        atomic_write(tmp_path / "x.perf", chunks())
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_names_its_temporary_file_for_fsck_and_never_takes_an_existing_one(tmp_path, monkeypatch):
    def chunks():
        [temporary] = tmp_path.iterdir()  # while the data is being written
        found = TEMPORARY_NAME.match(temporary.name)
        assert found and found["target"] == "x.perf" and found["pid"] == str(os.getpid())
        assert found["tag"] == writer_tag() and temporary_writer_alive(temporary) is True
        yield b"{}"

    atomic_write(tmp_path / "x.perf", chunks())
    assert [p.name for p in tmp_path.iterdir()] == ["x.perf"] and (tmp_path / "x.perf").read_bytes() == b"{}"
    # a random part drawn twice: the second file takes the next draw, the first file is left alone
    draws = iter([b"\x00\x00\x00\x01", b"\x00\x00\x00\x01", b"\x00\x00\x00\x02"])
    monkeypatch.setattr(atomic.os, "urandom", lambda size: next(draws))
    first, first_name = atomic._create_temporary(tmp_path, ".y.perf.")
    os.write(first, b"kept")
    os.close(first)
    second, second_name = atomic._create_temporary(tmp_path, ".y.perf.")
    os.close(second)
    assert os.path.basename(first_name) == ".y.perf.00000001.tmp"
    assert os.path.basename(second_name) == ".y.perf.00000002.tmp"
    assert open(first_name, "rb").read() == b"kept"
    assert stat.S_IMODE(os.stat(second_name).st_mode) == 0o600  # private until atomic_write sets the mode


def test_param_check_hooks_convert_and_refuse():
    def even(value: int) -> int:
        if value % 2:
            raise ValueError("an even number")
        return value // 2

    param = Param("n", "int", check=even)
    assert param.convert("8", "unit") == 4 and param.convert(None, "unit") is None
    with pytest.raises(InvalidParameter, match=r"unit: parameter 'n' = '7': expected an even number"):
        param.convert("7", "unit")
    listed = Param("items", "list", check=lambda v: sorted(v))
    assert listed.convert(("b", "a"), "u") == ["a", "b"]


class Noter:
    name = "noter"
    kind = "postprocessor"
    summary = "adds info"
    params = ()

    def postprocess(self, ctx, kwargs):
        kwargs["info"] = {"skipped": [{"uid": "f"}], "name": "hijack", "params": {"x": 1}}
        return PhaseResult.ok(kwargs)


def test_units_may_add_keys_to_their_postprocessors_entry_but_not_rename_it():
    units.postprocessors.register(Noter())
    try:
        out = apply_postprocessor(UnitConfig("noter", {}), profile_of([{"a": 1}]), UnitContext(cwd=None))
        assert out.postprocessors[-1] == {"name": "noter", "params": {}, "skipped": [{"uid": "f"}]}
        assert out.origin == "ab" * 20
    finally:
        units.postprocessors.unregister("noter")


# -- reading big documented JSON into columns ------------------------------------------------

from perun_core.profile import reader  # noqa: E402


@pytest.fixture
def small_blocks(monkeypatch):
    """Make the column-wise reader take small files and small blocks, so tests exercise every path."""
    monkeypatch.setattr(reader, "MINIMUM_SIZE", 0)
    monkeypatch.setattr(reader, "CHUNK", 300)
    monkeypatch.setattr(reader, "_BLOCK", 128)


def tricky_rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        row = {"amount": i * 0.5, "uid": f"f{i % 4}", "type": "mixed"}
        if i % 5 == 0:
            row["note"] = '},{"amount": 1, "x": "ü€𝄞"'  # looks like a boundary, inside a string
        if i % 7 == 0:
            row["trace"] = [{"amount": 1}, {"amount": 2}]  # nested dicts with the same first key
        if i % 11 == 0:
            row["big"] = 12345678901234567890
        rows.append(row)
    return rows


@pytest.mark.parametrize("layout", ["compact", "pretty", "spaced"])
def test_the_column_reader_gives_what_json_loads_gives(small_blocks, tmp_path, layout):
    data = {"origin": "ab" * 20, "header": {"type": "mixed", "units": {}},
            "collector_info": {"name": "c", "params": {"x": [1, {"y": None}]}}, "postprocessors": [],
            "snapshots": [{"time": "1", "resources": tricky_rows(200), "models": [{"model": "m", "x": [1.5] * 50}]},
                          {"time": "2", "resources": []}, {"time": "3"},
                          {"resources": [{"amount": 1, "uid": "a"}, {"other": 2, "uid": "b", "amount": 0}], "time": "4"}],
            "global": {"timestamp": 5, "resources": tricky_rows(30)}, "extra": {"k": "v"}}
    if layout == "compact":
        text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    elif layout == "pretty":
        text = json.dumps(data, indent=3)
    else:
        text = "\r\n " + json.dumps(data, indent="\t", separators=(" ,", " : ")) + " \n"
    path = tmp_path / "p.perf"
    path.write_text(text, encoding="utf-8")
    got = reader.load_columnwise(path)
    assert got is not None
    expected = Profile.from_dict(json.loads(text))
    assert got.to_dict() == expected.to_dict() and got.origin == "ab" * 20
    assert got.snapshots[0].resources.sparse and not got.snapshots[1].resources
    assert got.snapshots[3].resources.rows() == [{"amount": 1, "uid": "a"}, {"other": 2, "uid": "b", "amount": 0}]
    assert load_profile_from_file(path) == expected


def test_repeated_strings_are_shared_after_reading(small_blocks, tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "CHUNK", 4000)
    path = tmp_path / "p.perf"
    path.write_text(json.dumps({"header": {"type": "t"}, "snapshots": [{"resources": tricky_rows(400)}]}))
    table = reader.load_columnwise(path).snapshots[0].resources
    assert len({id(uid) for uid in table.column("uid")}) == 4


@pytest.mark.parametrize("text, message", [
    ('{"header": {"type": "t"}, "snapshots": [{"resources": [{"a": 1}, 2]}]}',
     "key 'snapshots[0].resources[1]' expected an object, got a number"),
    ('{"header": {"type": "t"}, "snapshots": [{"resources": [{"a": 1}, {"a": ]}]}', "malformed JSON"),
    ('{"header": {"type": "t"}, "snapshots": []} extra', "malformed JSON: Extra data"),
    ('{"snapshots": []}', "key 'header' is missing"),
    ('{"header": {"type": "t"}, "global": 3}', "key 'global' expected an object"),
])
def test_whatever_the_column_reader_does_not_expect_is_parsed_and_reported_as_usual(small_blocks, tmp_path,
                                                                                    text, message):
    path = tmp_path / "bad.perf"
    path.write_text(text)
    assert reader.load_columnwise(path) is None
    with pytest.raises(InvalidProfile, match=re.escape(message)):
        load_profile_from_file(path)


def test_byte_order_marks_and_other_encodings_are_left_to_the_ordinary_parser(small_blocks, tmp_path):
    path = tmp_path / "bom.perf"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"header": {"type": "time"}, "global": {"resources": []}}')
    assert reader.load_columnwise(path) is None
    path.write_bytes('{"header": {"type": "time"}, "global": {"resources": []}}'.encode("utf-16"))
    assert reader.load_columnwise(path) is None
    assert load_profile_from_file(path).type == "time"  # json itself detects UTF-16


def test_nan_literals_are_read_like_json_loads_reads_them(small_blocks, tmp_path):
    path = tmp_path / "nan.perf"
    path.write_text('{"header": {"type": "t"}, "snapshots": [{"resources": [{"a": NaN}, {"a": -Infinity}, {"a": 1}]}]}')
    values = reader.load_columnwise(path).snapshots[0].resources.column("a")
    assert math.isnan(values[0]) and values[1] == -math.inf and values[2] == 1


@pytest.mark.parametrize("content", [b"\0" * (2 << 20), b"\n  " + b"[1, " * (1 << 19) + b"1]"], ids=["NULs", "a list"])
def test_a_large_file_that_is_not_a_json_object_is_refused_from_its_first_bytes(tmp_path, monkeypatch, content):
    # a gigabyte of NULs once cost five times its size in memory before its error line
    path = tmp_path / "big.perf"
    path.write_bytes(content)

    def read_whole(self):
        raise AssertionError(f"{self} was read whole")

    monkeypatch.setattr(Path, "read_bytes", read_whole)
    with pytest.raises(InvalidProfile, match="malformed JSON: expected a JSON object"):
        load_profile_from_file(path)
