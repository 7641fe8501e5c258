"""Filtering resources (perun_core.analysis.filtering)."""

from __future__ import annotations

import pytest

from perun_core.analysis.filtering import (
    Condition,
    filter_profile,
    filter_rows,
    filter_table,
    parse_condition,
    resource_mask,
)
from perun_core.errors import InvalidParameter
from perun_core.profile import Profile, ResourceTable

ROWS = [
    {"uid": "alloc", "type": "memory", "subtype": "malloc", "amount": 16, "meta": {"line": 3}},
    {"uid": "alloc", "type": "memory", "subtype": "free", "amount": 0, "meta": {"line": 4}},
    {"uid": {"function": "main", "line": 22}, "type": "memory", "subtype": "malloc", "amount": 64.5},
    {"uid": "user", "type": "time", "amount": "n/a"},
    {"uid": "sys", "type": "time", "amount": True},
]


def table() -> ResourceTable:
    return ResourceTable([dict(r) for r in ROWS])


def test_parse_condition():
    assert parse_condition("amount>=10") == Condition("amount", ">=", 10)
    assert parse_condition(" meta:line == 3 ") == Condition("meta:line", "==", 3)
    assert parse_condition("amount < 2.5e1") == Condition("amount", "<", 25.0)
    assert parse_condition("subtype != 'free'") == Condition("subtype", "!=", "free")
    assert parse_condition("uid == main:22") == Condition("uid", "==", "main:22")
    with pytest.raises(InvalidParameter):
        parse_condition("amount")
    with pytest.raises(InvalidParameter):
        parse_condition("uid < main")  # strings only compare for (in)equality
    with pytest.raises(InvalidParameter):
        parse_condition("== 3")


@pytest.mark.parametrize("condition,expected", [
    ("amount == 16", [True, False, False, False, False]),
    ("amount != 16", [False, True, True, False, False]),  # non-numbers never match
    ("amount < 16", [False, True, False, False, False]),
    ("amount <= 16", [True, True, False, False, False]),
    ("amount > 16", [False, False, True, False, False]),
    ("amount >= 0", [True, True, True, False, False]),
    ("meta:line > 3", [False, True, False, False, False]),  # flattened key; missing never matches
    ("uid:line == 22", [False, False, True, False, False]),
    ("subtype == malloc", [True, False, True, False, False]),
    ("subtype != malloc", [False, True, False, False, False]),
])
def test_conditions(condition, expected):
    assert resource_mask(table(), conditions=[condition]).tolist() == expected


def test_uid_type_and_subtype_selection():
    assert resource_mask(table(), uids="alloc").tolist() == [True, True, False, False, False]
    assert resource_mask(table(), uids=["main:22", "sys"]).tolist() == [False, False, True, False, True]
    assert resource_mask(table(), types="time").tolist() == [False, False, False, True, True]
    assert resource_mask(table(), types="memory", subtypes="malloc").tolist() == [True, False, True, False, False]


def test_criteria_combine_and_drop_inverts():
    keep = resource_mask(table(), types=["memory"], conditions=[("amount", ">", 1)])
    assert keep.tolist() == [True, False, True, False, False]
    drop = resource_mask(table(), types=["memory"], conditions=[("amount", ">", 1)], mode="drop")
    assert drop.tolist() == [False, True, False, True, True]
    assert resource_mask(table()).all()  # no criteria: everything matches
    with pytest.raises(InvalidParameter):
        resource_mask(table(), mode="maybe")
    with pytest.raises(InvalidParameter):
        resource_mask(table(), conditions=[("amount", "~", 1)])


def test_filter_table_rows_and_columns():
    kept = filter_table(table(), subtypes="free", mode="drop")
    assert [r["amount"] for r in kept.rows()] == [16, 64.5, "n/a", True]
    columnar = ResourceTable.from_columns(3, ["uid", "amount"], [["a", "b", "c"], [1, 2, 3]])
    assert filter_table(columnar, conditions=["amount >= 2"]).rows() == [{"uid": "b", "amount": 2},
                                                                         {"uid": "c", "amount": 3}]
    rows = filter_rows(table(), uids="user")
    assert rows == [ROWS[3]]


def test_filter_profile_keeps_models_and_other_regions():
    data = {
        "header": {"type": "memory"},
        "snapshots": [{"time": "1", "resources": [dict(r) for r in ROWS], "models": [{"model": "linear"}]}],
        "global": {"time": "2", "resources": [{"uid": "alloc", "type": "memory", "amount": 1}], "models": []},
    }
    original = Profile.from_dict(data)
    filtered = filter_profile(original, uids="alloc")
    assert [r["subtype"] for r in filtered.snapshots[0].resources.rows()] == ["malloc", "free"]
    assert filtered.snapshots[0].models == [{"model": "linear"}]
    assert filtered.snapshots[0].time == "1"
    assert len(filtered.global_region.resources) == 1
    assert len(original.snapshots[0].resources) == 5  # untouched
