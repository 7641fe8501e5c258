"""Grouping and aggregation of resource columns (bars and flow)."""

from __future__ import annotations

import math
import random
import statistics

import numpy as np
import pytest

from perun_core.views import AGGREGATIONS
from perun_core.views.aggregate import aggregate, factorize, grouped, values_of


def test_factorize_orders_numbers_then_text_and_skips_missing():
    codes, distinct = factorize(["b", 3, None, 1.5, "a", 3])
    assert distinct == [1.5, 3, "a", "b"]
    assert codes.tolist() == [3, 1, -1, 0, 2, 1]


@pytest.mark.parametrize("values", [[3, 1, 2, 1], [2.5, float("nan"), 0.5], [2**60, 1, 2**60], [1, 2.5, 1]])
def test_factorize_numbers(values):
    codes, distinct = factorize(values)
    present = [v for v in values if not (isinstance(v, float) and math.isnan(v))]
    assert distinct == sorted(set(present))
    assert [distinct[c] if c >= 0 else None for c in codes.tolist()] == [
        v if v in present else None for v in values]
    if all(type(v) is int for v in values):
        assert all(type(v) is int for v in distinct)


def reference(func, values):
    if func == "count":
        return len(values)
    if not values:
        return math.nan
    return {"sum": sum, "mean": statistics.fmean, "median": statistics.median, "min": min, "max": max}[func](values)


@pytest.mark.parametrize("func", AGGREGATIONS)
def test_aggregate_matches_a_plain_python_reference(func):
    rng = random.Random(7)
    groups = 6
    per = [rng.choice([0, 1, 2, 3, 4, None]) for _ in range(500)]
    of = [rng.choice([rng.uniform(-5, 50), None, "x"]) for _ in range(500)]
    codes, distinct = factorize(per)
    result = aggregate(values_of(of, func), codes, len(distinct), func)
    for code, key in enumerate(distinct):
        if func == "count":
            members = [v for p, v in zip(per, of) if p == key and v is not None]
        else:
            members = [v for p, v in zip(per, of) if p == key and isinstance(v, float)]
        expected = reference(func, members)
        assert result[code] == pytest.approx(expected, nan_ok=True)
    assert len(result) == len(distinct) < groups


def test_grouped_builds_a_matrix_by_group_and_key():
    table = {"amount": [1, 2, 3, 4, 5], "subtype": ["m", "f", "m", "m", None], "snapshots": [0, 0, 1, 1, 1]}
    per, by, matrix = grouped(table, "amount", "snapshots", "subtype", "sum")
    assert per == [0, 1] and by == ["f", "m"]
    assert np.array_equal(matrix, np.array([[2.0, np.nan], [1.0, 7.0]]), equal_nan=True)
    per, by, matrix = grouped(table, "amount", "snapshots", None, "count")
    assert by == [None] and matrix.tolist() == [[2.0, 3.0]]
