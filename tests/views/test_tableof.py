"""Tables of resources and models in every format."""

from __future__ import annotations

import csv
import io
import json

import pytest

from perun_core.errors import EmptyProfile
from perun_core.views import DEFAULT_THEME, get_view

from .profiles import INSERT, complexity_profile, memory_profile, time_profile

TABLE = get_view("tableof")


def render(profile, params=None, fmt=None, width=80):
    return TABLE.render(TABLE.run(profile, params or {}), fmt=fmt, width=width, height=24)


def test_csv_reads_back_with_full_precision():
    rows = list(csv.reader(io.StringIO(render(complexity_profile(), {"keys": ("uid", "amount")}, "csv"))))
    assert rows[0] == ["uid", "amount", "unit"]
    assert rows[1] == [INSERT, "1.4", "us"] and len(rows) == 43


def test_json_keeps_types():
    records = json.loads(render(memory_profile(), {"keys": ("snapshots", "amount", "uid:line"), "limit": 2}, "json"))
    assert records == [{"snapshots": 0, "amount": 256, "unit": "B", "uid:line": 12},
                       {"snapshots": 0, "amount": 64, "unit": "B", "uid:line": 7}]


def test_markdown_escapes_pipes():
    profile = time_profile()
    profile["snapshots"][0]["resources"][0]["uid"] = "a|b"
    text = render(profile, {"keys": ("uid",), "limit": 1}, "markdown")
    assert text.splitlines() == ["| uid |", "|---|", "| a\\|b |"]


def test_models_table_sorted_and_filtered():
    text = render(complexity_profile(), {"what": "models", "keys": ("model", "r_square"), "sort_by": "r_square",
                                          "filters": ("model=linear",)})
    assert text.splitlines() == [
        "model   r_square",
        "──────  ────────",
        "linear  0.931173",
        "linear  0.994887",
        "2 models",
    ]


def test_terminal_table_squeezes_to_the_width_and_colours_the_header():
    text = render(memory_profile(), width=40)
    assert all(len(line) <= 40 for line in text.splitlines())
    coloured = TABLE.render(TABLE.run(time_profile()), width=60, theme=DEFAULT_THEME)
    assert coloured.startswith("\x1b[1m")


def test_no_models_to_list():
    with pytest.raises(EmptyProfile, match="view 'tableof': the profile has no models to show"):
        TABLE.run(time_profile(), {"what": "models"})


def test_a_narrow_models_table_cuts_long_names_before_values_and_keeps_the_names_apart():
    # at 80 columns 'coeffs' was cut ('b0=1346.31…') while the two interval columns, holding a few digits, kept
    # room for names that both read 'x_interval…'
    text = render(complexity_profile(), {"what": "models", "keys": ("model", "coeffs", "x_interval_start",
                                                                   "x_interval_end")}, width=56)
    header, _rule, *rows = text.splitlines()
    names = header.split()
    assert names[-2] != names[-1] and names[-2].endswith("start") and names[-1].endswith("end"), names
    assert all(len(line) <= 56 for line in text.splitlines())
    assert "b0=0.950368, b1=0.0200908" in text and "…" not in "".join(rows), text
