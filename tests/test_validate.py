"""The one profile validation: every reader, writer and register refuses what commands could not handle."""

from __future__ import annotations

import copy
import json
import math

import pytest

from perun_core.errors import CorruptObject, InvalidProfile
from perun_core.profile.codec import decode_content, encode_columnar, load_profile_from_file
from perun_core.profile.model import Profile
from perun_core.profile.validate import MAX_DEPTH, validate_profile
from perun_core.runner.naming import write_new_profile
from perun_core.storage.objects import ObjectStore


def good() -> dict:
    return {
        "header": {"type": "time", "units": {"time": "s"}, "cmd": "ls", "args": "-l", "workload": "w"},
        "collector_info": {"name": "time", "params": {}},
        "postprocessors": [],
        "global": {"time": 1.5, "resources": [
            {"amount": 0.5, "uid": "main", "type": "time", "subtype": "real"},
            {"amount": 2, "uid": "f", "type": "time"},
        ], "models": []},
    }


def memory() -> dict:
    return {"header": {"type": "memory", "units": {"memory": "B"}}, "snapshots": [{"time": "0.1", "resources": [
        {"amount": 4, "uid": {"function": "main", "line": 3}, "type": "memory", "subtype": "malloc",
         "address": 1024, "trace": [{"function": "main", "line": 3}]}]}]}


def deep(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = [value]
    return value


def edit(base, path, value):
    data = copy.deepcopy(base())
    node = data
    for step in path[:-1]:
        node = node[step]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


R = ("global", "resources")
#: name -> (profile, key named, words in the reason)
BAD = {
    "string amount": (edit(good, (*R, 1, "amount"), "2"), "global.resources[1].amount", "expected a finite number, got a string"),
    "list amount": (edit(good, (*R, 1, "amount"), [2]), "global.resources[1].amount", "got a list"),
    "null amount": (edit(good, (*R, 0, "amount"), None), "global.resources[0].amount", "got null"),
    "bool amount": (edit(good, (*R, 0, "amount"), True), "global.resources[0].amount", "got a boolean"),
    "nan amount": (edit(good, (*R, 1, "amount"), math.nan), "global.resources[1].amount", "nan is not a finite number"),
    "inf amount": (edit(good, (*R, 1, "amount"), math.inf), "global.resources[1].amount", "inf is not a finite number"),
    "no amount": (edit(good, (*R, 1, "amount"), KeyError), "global.resources[1].amount", "is missing"),
    "no uid": (edit(good, (*R, 1, "uid"), KeyError), "global.resources[1].uid", "is missing"),
    "numeric uid": (edit(good, (*R, 1, "uid"), 7), "global.resources[1].uid", "expected a string or an object, got a number"),
    "empty uid": (edit(good, (*R, 0, "uid"), ""), "global.resources[0].uid", "is empty"),
    "surrogate uid": (edit(good, (*R, 1, "uid"), "f\udc80"), "global.resources[1].uid", "lone surrogate"),
    "surrogate in header": (edit(good, ("header", "cmd"), "l\ud800s"), "header.cmd", "lone surrogate"),
    "numeric type": (edit(good, (*R, 1, "type"), 3), "global.resources[1].type", "expected a string"),
    "banana type": (edit(good, ("header", "type"), "banana"), "header.type", "'banana' is not a profile type"),
    "no type": (edit(good, ("header", "type"), KeyError), "header.type", "is missing"),
    "no regions": (edit(good, ("global",), KeyError), "global", "no resource region"),
    "nan in a model": (edit(good, ("global", "models"), [{"model": "linear", "r_square": math.nan}]),
                       "global.models[0].r_square", "not a finite number"),
    "inf in params": (edit(good, ("collector_info", "params"), {"x": -math.inf}), "collector_info.params.x", "not a finite"),
    "deep header": (edit(good, ("header", "extra"), deep(MAX_DEPTH + 5)), "header.extra", f"deeper than {MAX_DEPTH}"),
    "deep resource": (edit(good, (*R, 0, "note"), deep(MAX_DEPTH + 5)), "global.resources[0].note", "deeper than"),
    "nan nested in a resource": (edit(good, (*R, 1, "extra"), {"a": [1, math.nan]}), "global.resources[1].extra.a[1]", "nan"),
    "unnamed postprocessor": (edit(good, ("postprocessors",), [{"params": {}}]), "postprocessors[0].name", "expected a string"),
    "units not strings": (edit(good, ("header", "units"), {"time": 1}), "header.units.time", "expected a string"),
    "negative address": (edit(memory, ("snapshots", 0, "resources", 0, "address"), -5),
                         "snapshots[0].resources[0].address", "negative"),
    "string address": (edit(memory, ("snapshots", 0, "resources", 0, "address"), "0x10"),
                       "snapshots[0].resources[0].address", "non-negative integer"),
    "trace not a list": (edit(memory, ("snapshots", 0, "resources", 0, "trace"), "main"),
                         "snapshots[0].resources[0].trace", "a list of objects"),
    "trace of strings": (edit(memory, ("snapshots", 0, "resources", 0, "trace"), ["main"]),
                         "snapshots[0].resources[0].trace", "a list of objects"),
    "snapshot time a list": (edit(memory, ("snapshots", 0, "time"), [1]), "snapshots[0].time", "a number or a string"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_defects_are_refused_naming_the_key(case):
    data, key, words = BAD[case]
    with pytest.raises(InvalidProfile) as caught:
        validate_profile(Profile.from_dict(data), path="p.perf")
    assert caught.value.key == key
    assert words in caught.value.reason


#: Cases the columnar encoder cannot write at all, so no object can hold them: the encoder's own refusal.
NOT_ENCODED = {
    "no type": (InvalidProfile, "is missing"),  # the columns are grouped by the header's type
    "nan in a model": (ValueError, "not JSON compliant"),  # models and parameters are JSON inside the object
    "inf in params": (ValueError, "not JSON compliant"),
    "nan nested in a resource": (ValueError, "not JSON compliant"),  # a nested value is kept as JSON
}


@pytest.mark.parametrize("case", list(BAD))
def test_the_store_encoding_refuses_the_same(case):
    """What the encoder writes keeps the defect, and reading it back refuses it naming the same key."""
    data, key, words = BAD[case]
    if case in NOT_ENCODED:
        error, message = NOT_ENCODED[case]
        with pytest.raises(error, match=message) as refused:
            encode_columnar(Profile.from_dict(data))
        assert not isinstance(refused.value, InvalidProfile) or refused.value.key == key
        return
    content = encode_columnar(Profile.from_dict(data))
    with pytest.raises(InvalidProfile) as caught:
        validate_profile(decode_content(content), path="o")
    assert caught.value.key == key and words in caught.value.reason


@pytest.mark.parametrize("base", [good, memory])
def test_valid_profiles_pass_in_every_layout(base, tmp_path):
    profile = Profile.from_dict(base())
    assert validate_profile(profile) is profile
    validate_profile(decode_content(encode_columnar(profile)))
    written = write_new_profile(profile, tmp_path, "ok.perf")
    assert load_profile_from_file(written) == profile


def test_custom_types_are_known_when_every_resource_has_them():
    data = edit(good, ("header", "type"), "throughput")
    for row in data["global"]["resources"]:
        row["type"] = "throughput"
    validate_profile(Profile.from_dict(data))


def test_files_and_writers_refuse_before_anything_is_written(tmp_path):
    data, _, _ = BAD["numeric uid"]
    path = tmp_path / "bad.perf"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidProfile, match=r"bad.perf: key 'global.resources\[1\].uid'"):
        load_profile_from_file(path)
    with pytest.raises(InvalidProfile):
        write_new_profile(Profile.from_dict(data), tmp_path, "out.perf")
    assert not (tmp_path / "out.perf").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.perf"]


def test_deep_json_is_a_clean_error(tmp_path):
    path = tmp_path / "deep.perf"
    path.write_text('{"header": {"type": "time"}, "global": {"resources": [], "x": ' + "[" * 200000 + "]" * 200000 + "}}")
    with pytest.raises(InvalidProfile, match="nests deeper|malformed JSON"):
        load_profile_from_file(path)


def test_a_stored_object_that_fails_validation_is_reported_corrupt(tmp_path):
    import hashlib
    import zlib

    content = json.dumps(BAD["nan amount"][0]).encode()
    raw = b"profile time %d\0" % len(content) + content
    sha = hashlib.sha1(raw).hexdigest()
    (tmp_path / sha[:2]).mkdir()
    (tmp_path / sha[:2] / sha[2:]).write_bytes(zlib.compress(raw))
    with pytest.raises(CorruptObject, match="not a finite number"):
        ObjectStore(tmp_path).read_profile(sha)


def test_packed_resources_are_validated_column_by_column(monkeypatch):
    """No row and no list is built from packed columns (benchmarks/validate.py times a million of them)."""
    from perun_core.profile.resources import PackedColumn, ResourceTable

    n = 20_000
    rows = [{"amount": i * 0.5, "uid": f"f{i % 100}", "type": "time"} for i in range(n)]
    rows[n - 7]["amount"] = math.nan
    bad = decode_content(encode_columnar(Profile.from_dict({"header": {"type": "time"}, "global": {"resources": rows}})))
    rows[n - 7]["amount"] = 1.0
    fine = decode_content(encode_columnar(Profile.from_dict({"header": {"type": "time"}, "global": {"resources": rows}})))

    def refused(*_):
        raise AssertionError("validation built rows or lists of a packed table")

    for name in ("rows", "__iter__"):
        monkeypatch.setattr(ResourceTable, name, refused)
    monkeypatch.setattr(PackedColumn, "to_list", refused)
    assert validate_profile(fine) is fine
    with pytest.raises(InvalidProfile) as caught:
        validate_profile(bad)
    assert caught.value.key == f"global.resources[{n - 7}].amount" and "nan is not a finite number" in caught.value.reason


def _packed_memory_profile(addresses: list[int], codes_shift: int = 0) -> Profile:
    from perun_core.profile.model import Snapshot
    from perun_core.profile.resources import PackedColumn, ResourceTable

    n = len(addresses)
    uids = [{"function": f"f{i}", "source": "a.c", "line": i} for i in range(3)]
    codes = bytes((i % 3 + codes_shift) % 256 for i in range(n))
    columns = [
        PackedColumn("dict", "b", bytes(n), n, ["memory"]),
        PackedColumn("int", "q", b"".join(a.to_bytes(8, "little", signed=True) for a in addresses), n),
        PackedColumn("int", "b", bytes([8]) * n, n),
        PackedColumn("dict", "b", codes, n, uids),
    ]
    table = ResourceTable.from_columns(n, ["type", "address", "amount", "uid"], columns)
    return Profile(header={"type": "memory", "units": {"memory": "B"}}, snapshots=[Snapshot(table, [], {"time": "1"})])


@pytest.mark.parametrize("numpy_loaded", [False, True])
def test_long_packed_columns_give_the_same_verdicts_with_or_without_numpy(monkeypatch, numpy_loaded):
    import sys

    import numpy  # noqa: F401

    if not numpy_loaded:
        monkeypatch.delitem(sys.modules, "numpy")
    n = 10_000
    validate_profile(_packed_memory_profile(list(range(16, 16 + n))))
    negative = [16 + i for i in range(n)]
    negative[7777] = -5
    with pytest.raises(InvalidProfile) as caught:
        validate_profile(_packed_memory_profile(negative))
    assert caught.value.key == "snapshots[0].resources[7777].address" and "negative" in caught.value.reason
    with pytest.raises(InvalidProfile) as caught:
        validate_profile(_packed_memory_profile(list(range(16, 16 + n)), codes_shift=1))
    assert "refers to a value the column does not hold" in caught.value.reason


@pytest.mark.parametrize("numpy_loaded", [False, True])
def test_packed_float_columns_are_checked_for_nan_and_infinity_with_or_without_numpy(monkeypatch, numpy_loaded):
    import struct
    import sys

    import numpy  # noqa: F401

    from perun_core.profile.model import Snapshot
    from perun_core.profile.resources import PackedColumn, ResourceTable

    if not numpy_loaded:
        monkeypatch.delitem(sys.modules, "numpy")
    n = 10_000

    def profile(amounts: list[float]) -> Profile:
        columns = [PackedColumn("f64", "d", struct.pack(f"<{n}d", *amounts), n),
                   PackedColumn("dict", "b", bytes(n), n, ["f"])]
        table = ResourceTable.from_columns(n, ["amount", "uid"], columns)
        return Profile(header={"type": "time"}, snapshots=[Snapshot(table, [], {"time": "1"})])

    amounts = [i * 0.5 for i in range(n)]
    amounts[10] = 1.7e308       # finite, but its last byte is the 0x7f that NaN and infinity have too
    amounts[11] = -1.7e308
    validate_profile(profile(amounts))
    for bad in (math.nan, math.inf, -math.inf):
        amounts[4321] = bad
        with pytest.raises(InvalidProfile) as caught:
            validate_profile(profile(amounts))
        assert caught.value.key == "snapshots[0].resources[4321].amount" and "not a finite number" in caught.value.reason


def test_stack_columns_are_judged_by_the_frames_their_traces_use():
    # a frame entry no trace uses may be anything; one a trace uses is checked like a trace list's entry
    import numpy as np

    from perun_core.profile.model import Snapshot
    from perun_core.profile.resources import ResourceTable, StackColumn

    def profile(frames: list) -> Profile:
        column = StackColumn(frames, np.array([0, 1, 1]), np.array([0, 2]), np.array([2, 3]), 2)
        table = ResourceTable.from_columns(2, ["type", "uid", "amount", "trace"],
                                           [["time", "time"], ["f", "g"], [1, 2], column])
        return Profile(header={"type": "time", "units": {"time": "samples"}}, global_region=Snapshot(table, [], {}))

    good = [{"function": "leaf"}, {"function": "main"}]
    validate_profile(profile(good))
    validate_profile(profile([*good, {"function": float("nan")}]))  # not used by any trace
    with pytest.raises(InvalidProfile, match="trace"):
        validate_profile(profile([good[0], {"function": float("nan")}]))


def test_resources_kept_only_for_the_same_packed_tables_judged_by_the_same_rules():
    from perun_core.postprocess.common import store_models
    from perun_core.profile.validate import resources_kept

    checked = decode_content(encode_columnar(Profile.from_dict(good())))
    with_models = store_models(checked, [{"uid": "main", "model": "constant"}])
    assert resources_kept(checked, with_models)  # models added, the packed tables shared
    from_rows = Profile.from_dict(good())  # tables of rows: anyone may have changed them
    assert not resources_kept(from_rows, store_models(from_rows, []))
    assert not resources_kept(checked, decode_content(encode_columnar(checked)))  # equal, not the same
    as_memory = store_models(checked, [])
    as_memory.header = {**as_memory.header, "type": "memory"}  # memory resources are judged differently
    assert not resources_kept(checked, as_memory)
    checked.global_region.resources.column("amount")[0] = "x"  # unpacked (and changed): checked again
    assert not resources_kept(checked, store_models(checked, []))


def test_without_resources_the_regions_models_and_metadata_are_still_checked():
    data = good()
    data["global"]["models"] = [{"uid": "main"}]  # no kind
    with pytest.raises(InvalidProfile, match=r"global\.models\[0\]\.model"):
        validate_profile(Profile.from_dict(data), resources=False)
    data = good()
    data["global"]["resources"][0]["amount"] = "x"  # the tables alone are left out
    validate_profile(Profile.from_dict(data), resources=False)


def test_postprocessby_still_refuses_a_profile_whose_resources_a_unit_broke(perun_repo, monkeypatch):
    """The resources a unit leaves alone are not checked twice; a unit that changes the very table it was given
    (unpacking a column to do so) has it checked again."""
    from perun_core.api.postprocessing import postprocess
    from perun_core.postprocess import regression_analysis

    root, _shas = perun_repo
    data = good()
    data["global"]["resources"] = [{"amount": 2.0 * size, "uid": "f", "type": "time", "structure-unit-size": size}
                                   for size in range(1, 9)]
    source = root / "in.perf"
    source.write_bytes(encode_columnar(Profile.from_dict(data)))
    written = postprocess(str(source), "regression_analysis", cwd=root).path
    assert load_profile_from_file(written).global_region.models
    unit = regression_analysis.RegressionAnalysis
    original = unit.postprocess

    def breaking(self, ctx, kwargs):
        result = original(self, ctx, kwargs)
        result.kwargs["profile"].global_region.resources.column("amount")[0] = "x"
        return result

    monkeypatch.setattr(unit, "postprocess", breaking)
    with pytest.raises(InvalidProfile, match=r"amount"):
        postprocess(str(source), "regression_analysis", cwd=root)
