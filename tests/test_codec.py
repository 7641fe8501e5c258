"""Profile model validation and both serializations (documented JSON, columnar)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perun_core.errors import InvalidProfile, UnsupportedFormatVersion
from perun_core.profile import Profile
from perun_core.profile.codec import COLUMNAR_VERSION, decode_content, encode_columnar, from_json_bytes, to_json_bytes


def memory_profile() -> dict:
    trace = [{"source": "unreachable", "function": "malloc", "line": 0},
             {"source": "test.c", "function": "main", "line": 22}]
    return {
        "origin": "f7f3dcea69b97f2b03c421a223a770917149cfaf",
        "header": {"type": "memory", "units": {"memory": "B"}, "cmd": "./a.out", "params": "", "workload": ""},
        "collector_info": {"name": "memory", "params": {"sampling": 0.025}},
        "postprocessors": [],
        "snapshots": [
            {"time": "0.025000", "resources": [
                {"type": "memory", "subtype": "malloc", "address": 19284560, "amount": 4, "trace": trace,
                 "uid": {"source": "test.c", "function": "main", "line": 22}}], "models": []},
            {"time": "0.050000", "resources": [
                {"type": "memory", "subtype": "free", "address": 19284560, "amount": 0, "trace": trace,
                 "uid": {"source": "test.c", "function": "main", "line": 22}}], "models": []},
        ],
        "chunks": {"future": [1, 2]},
    }


def test_documented_json_round_trip_is_lossless():
    data = memory_profile()
    profile = Profile.from_dict(data)
    assert profile.to_dict() == data
    assert json.loads(to_json_bytes(profile)) == data
    assert from_json_bytes(to_json_bytes(profile, indent=2)).to_dict() == data


def test_columnar_round_trip_drops_only_origin():
    data = memory_profile()
    decoded = decode_content(encode_columnar(Profile.from_dict(data)))
    expected = dict(data)
    del expected["origin"]
    assert decoded.to_dict() == expected


def test_columnar_keeps_types_and_absent_keys():
    resources = [{"a": 1, "b": "x"}, {"a": 1.0}, {"a": True, "c": None}, {"b": [1, {"k": 2}]}, {}]
    data = {"header": {"type": "mixed"}, "snapshots": [{"time": 0, "resources": resources}],
            "global": {"timestamp": 0.5, "resources": [{"amount": 3}], "models": [{"model": "linear"}]}}
    decoded = decode_content(encode_columnar(Profile.from_dict(data)))
    out = decoded.to_dict()
    assert out["snapshots"][0]["resources"] == resources
    assert [type(r.get("a")) for r in out["snapshots"][0]["resources"]] == [int, float, bool, type(None), type(None)]
    assert "a" not in out["snapshots"][0]["resources"][3]
    assert out["global"] == data["global"]
    assert "models" not in out["snapshots"][0]  # it was absent and stays absent


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)), max_leaves=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["amount", "uid", "type", "trace", "x"]), json_values, max_size=5),
                max_size=80))
def test_columnar_round_trip_property(resources):
    data = {"header": {"type": "time"}, "collector_info": {}, "postprocessors": [],
            "snapshots": [{"time": 1, "resources": resources, "models": []}]}
    decoded = decode_content(encode_columnar(Profile.from_dict(data)))
    assert json.dumps(decoded.to_dict(), sort_keys=True) == json.dumps(data, sort_keys=True)


def test_many_repeated_values_use_dictionary_coding():
    resources = [{"uid": f"f{i % 3}", "amount": i} for i in range(5000)]
    data = {"header": {"type": "mixed"}, "snapshots": [{"resources": resources, "models": []}]}
    content = encode_columnar(Profile.from_dict(data))
    assert len(content) < len(json.dumps(data)) / 3
    assert decode_content(content).snapshots[0].resources.rows() == resources


@pytest.mark.parametrize("data, key", [
    ({}, "header"),
    ({"header": {}}, "header.type"),
    ({"header": {"type": 3}}, "header.type"),
    ({"header": {"type": "time", "units": []}}, "header.units"),
    ({"header": {"type": "time"}, "snapshots": {}}, "snapshots"),
    ({"header": {"type": "time"}, "snapshots": [{"resources": [1]}]}, "snapshots[0].resources[0]"),
    ({"header": {"type": "time"}, "postprocessors": [3]}, "postprocessors[0]"),
    ({"header": {"type": "time"}, "origin": 5}, "origin"),
])
def test_validation_names_the_key(data, key):
    with pytest.raises(InvalidProfile) as info:
        Profile.from_dict(data, path="p.perf")
    assert info.value.key == key
    assert "p.perf" in str(info.value) and key in str(info.value)


def test_malformed_json_names_file_and_position():
    with pytest.raises(InvalidProfile) as info:
        from_json_bytes(b'{"header": ', path="broken.perf")
    assert "broken.perf" in str(info.value) and "line 1" in str(info.value)


def test_newer_columnar_version_is_refused():
    content = encode_columnar(Profile.from_dict({"header": {"type": "time"}})).replace(
        b'"perun-columnar":%d' % COLUMNAR_VERSION, b'"perun-columnar":99')
    with pytest.raises(UnsupportedFormatVersion):
        decode_content(content)


def test_summary_properties_accept_params_and_args():
    old = Profile.from_dict({"header": {"type": "time", "cmd": "ls", "params": "-l"}})
    new = Profile.from_dict({"header": {"type": "time", "cmd": "ls", "args": "-a"}})
    assert (old.args, new.args) == ("-l", "-a")


def one_shot_columnar(profile: Profile) -> bytes:
    """The columnar encoding as one json.dumps of the whole document: what iter_columnar must reproduce."""
    from perun_core.profile import codec

    def region(snapshot):
        table = snapshot.resources
        keys, columns = table.columns()
        return {"meta": snapshot.meta, "models": snapshot.models, "has_models": snapshot.has_models_key,
                "n": len(table), "keys": keys, "cols": [codec._encode_column(c, table.sparse) for c in columns]}

    doc = {"perun-columnar": codec.COLUMNAR_VERSION, "origin": None, "header": profile.header,
           "collector_info": profile.collector_info, "postprocessors": profile.postprocessors,
           "snapshots": [region(s) for s in profile.snapshots],
           "global": region(profile.global_region) if profile.global_region is not None else None,
           "extra": profile.extra}
    return json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("ascii")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["amount", "uid", "type", "trace", "x"]), json_values, max_size=5),
                max_size=60), st.booleans(), st.integers(0, 3))
def test_columnar_pieces_are_the_one_shot_encoding(resources, with_global, snapshots):
    from perun_core.profile.codec import iter_columnar

    data = {"header": {"type": "time", "units": {"time": "s"}}, "collector_info": {"name": "time"},
            "postprocessors": [{"name": "filter", "params": {}}],
            "snapshots": [{"time": i, "resources": resources, "models": [{"uid": "f", "coeffs": []}] * i}
                          for i in range(snapshots)], "chunks": {"x": 1}}
    if with_global:
        data["global"] = {"timestamp": 2.5, "resources": resources}
    profile = Profile.from_dict(data)
    pieces = list(iter_columnar(profile))
    assert b"".join(pieces) == encode_columnar(profile) == one_shot_columnar(profile)
    assert len(pieces) >= 3 + 2 * snapshots


def _sparse_profile(rows: list[dict]) -> Profile:
    return Profile.from_dict({"header": {"type": "time", "units": {"time": "s"}},
                              "global": {"timestamp": 1, "resources": rows}})


def test_one_run_of_absent_rows_is_written_as_a_run_and_read_back():
    rows = [{"uid": f"f{i}", "amount": i} for i in range(5)] + [{"uid": "g", "amount": 1, "x": 2.5}] * 2
    profile = _sparse_profile(rows)
    encoded = encode_columnar(profile)
    column = json.loads(encoded)["global"]["cols"][json.loads(encoded)["global"]["keys"].index("x")]
    assert column["absent_runs"] == [[0, 5]] and "absent" not in column
    assert decode_content(encoded).to_dict() == profile.to_dict()


@pytest.mark.parametrize("runs", [[[3, 9]], [[2, 1]], [[0, 2], [1, 3]], [[0, 1.5]], "0-2", [[-1, 2]]])
def test_bad_absent_runs_are_refused(runs):
    profile = _sparse_profile([{"uid": "a", "amount": 1}, {"uid": "b", "amount": 2, "x": 1}] * 3)
    doc = json.loads(encode_columnar(profile))
    doc["global"]["cols"][doc["global"]["keys"].index("x")]["absent_runs"] = runs
    with pytest.raises(InvalidProfile, match="damaged columnar encoding"):
        decode_content(json.dumps(doc).encode(), path="p.perf")


def test_absent_rows_read_out_of_order_are_written_back_as_they_were():
    # duplicates and a gap that span as many rows as they list: not a run
    from array import array
    import base64

    profile = _sparse_profile([{"uid": f"f{i}", "amount": i, "x": 1} for i in range(5)])
    doc = json.loads(encode_columnar(profile))
    column = doc["global"]["cols"][doc["global"]["keys"].index("x")]
    column["absent"] = base64.b64encode(array("q", [1, 1, 3]).tobytes()).decode()
    again = decode_content(json.dumps(doc).encode())
    rewritten = json.loads(encode_columnar(again))["global"]["cols"][doc["global"]["keys"].index("x")]
    assert "absent_runs" not in rewritten and rewritten["absent"] == column["absent"]


def _packed_texts(document: dict) -> list[str]:
    return [column[member] for region in [document["global"], *document["snapshots"]] if region
            for column in region["cols"] for member in ("b", "c") if member in column]


@pytest.mark.parametrize("respell", ["none", "stray bits", "line breaks"])
def test_packed_columns_are_written_back_as_canonical_base64(respell):
    """A column read from the columnar layout is written back from its text when that text is what encoding
    its bytes gives; text spelled otherwise (stray bits in the last group, line breaks) is encoded afresh."""
    import base64

    resources = [{"amount": float(i) / 3, "uid": f"f{i % 4}", "structure-unit-size": 7 * i} for i in range(1, 51)]
    data = {"header": {"type": "mixed"}, "collector_info": {}, "postprocessors": [], "snapshots": [],
            "global": {"timestamp": 1.0, "resources": resources, "models": []}}
    written = json.loads(encode_columnar(Profile.from_dict(data)))
    canonical = _packed_texts(written)
    assert canonical and all(text.endswith("=") for text in canonical)  # 50 values of 1, 2 or 8 bytes: padded
    read = json.loads(json.dumps(written))
    for column in read["global"]["cols"]:
        member = "b" if "b" in column else "c"
        text = column[member]
        if respell == "stray bits":
            # the character before the padding with its lowest bit set: the same bytes, another spelling
            position = text.rstrip("=")[-1]
            alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
            text = text.rstrip("=")[:-1] + alphabet[alphabet.index(position) | 1] + "=" * (len(text) - len(text.rstrip("=")))
        elif respell == "line breaks":
            text = base64.encodebytes(base64.b64decode(text)).decode("ascii")
        column[member] = text
    decoded = decode_content(json.dumps(read).encode())
    assert decoded.to_dict()["global"]["resources"] == resources
    assert _packed_texts(json.loads(encode_columnar(decoded))) == canonical


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 299), max_size=6), min_size=1, max_size=30), st.integers(1, 300),
       st.integers(0, 3))
def test_stack_columns_are_written_as_json_writes_their_base64_text(stacks, frame_count, missing):
    """A stack column's numbers go out as ASCII bytes (no str made): the file is what json.dumps of the
    document with the base64 as text gives, and reads back to the same traces."""
    import numpy as np

    from perun_core.profile.codec import iter_columnar
    from perun_core.profile.model import Snapshot
    from perun_core.profile.packing import int_kind, pack
    from perun_core.profile.resources import ResourceTable, StackColumn

    frame_count = max(frame_count, 1 + max((f for s in stacks for f in s), default=0))
    frames = [{"function": f"f{i}", "source": "a.c", "line": i} for i in range(frame_count)]
    flat = [f for s in stacks for f in s]
    ends = np.cumsum([len(s) for s in stacks])
    starts = ends - [len(s) for s in stacks]
    rows = len(stacks) + missing
    column = StackColumn(frames, np.array(flat, dtype=np.int32), starts, ends, rows)
    table = ResourceTable.from_columns(rows, ["amount", "trace"], [list(range(rows)), column], sparse=missing > 0)
    profile = Profile(header={"type": "time", "units": {"time": "s"}}, collector_info={"name": "folded"},
                      postprocessors=[], snapshots=[], global_region=Snapshot(table, [], {"timestamp": 1}))
    width, span = int_kind(0, frame_count - 1), int_kind(0, max(int(ends.max()), 0))
    stacks_doc = {"t": "stacks", "frames": frames, "w": width, "flat": pack(width, flat), "sw": span,
                  "starts": pack(span, starts.tolist()), "ends": pack(span, ends.tolist())}
    if missing:
        stacks_doc["absent_runs"] = [[len(stacks), rows]]
    doc = {"perun-columnar": COLUMNAR_VERSION, "origin": None, "header": profile.header,
           "collector_info": profile.collector_info, "postprocessors": [], "snapshots": [],
           "global": {"meta": {"timestamp": 1}, "models": [], "has_models": True, "n": rows,
                      "keys": ["amount", "trace"],
                      "cols": [{"t": "int", "w": int_kind(0, rows - 1), "b": pack(int_kind(0, rows - 1),
                                                                                   range(rows))}, stacks_doc]},
           "extra": {}}
    written = b"".join(iter_columnar(profile))
    assert written == json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("ascii")
    traces = decode_content(written).global_region.resources.column("trace")
    assert traces[:len(stacks)] == [[frames[f] for f in s] for s in stacks]


@pytest.mark.parametrize("rows", [1, 2, 3, 4, 50, 301])
def test_a_column_of_one_value_reads_as_its_codes_and_a_damaged_one_is_refused(rows):
    """A dictionary column of one value (codes all zero, base64 all 'A') is read without decoding its text: what
    it reads as, and what is written back, is what decoding gave; a code changed anywhere in it is refused."""
    import base64

    from perun_core.profile.packing import packed_bytes_and_text

    resources = [{"amount": i + 0.5, "uid": "f", "type": "mixed", "structure-unit-size": 0} for i in range(rows)]
    data = {"header": {"type": "mixed"}, "collector_info": {}, "postprocessors": [], "snapshots": [],
            "global": {"timestamp": 1.0, "resources": resources, "models": []}}
    encoded = encode_columnar(Profile.from_dict(data))
    document = json.loads(encoded)
    columns = dict(zip(document["global"]["keys"], document["global"]["cols"]))
    for key, member in (("type", "c"), ("uid", "c"), ("structure-unit-size", "b")):
        text = columns[key][member]
        width = columns[key]["w"]
        assert packed_bytes_and_text(width, text, rows) == (base64.b64decode(text), text)
    decoded = decode_content(encoded)
    assert decoded.to_dict()["global"]["resources"] == resources
    assert encode_columnar(decoded) == encoded
    text = columns["type"]["c"]
    for position in {0, len(text.rstrip("=")) // 2, len(text.rstrip("=")) - 1}:
        # 'Q' is 010000: the byte it falls in becomes a code past the one value of the column
        columns["type"]["c"] = text[:position] + "Q" + text[position + 1:]
        with pytest.raises(InvalidProfile, match="damaged columnar encoding"):
            decode_content(json.dumps(document).encode(), path="p.perf")
