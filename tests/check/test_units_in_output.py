"""Amounts in check output carry their unit, scaled, never rounded to 0: tree, -v, Markdown, JSON, JUnit."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import run_cli

from .helpers import timed

#: a program of about 0.4 ms that got about 50 % slower
BASELINE = [0.00040, 0.00041, 0.00039, 0.00040, 0.00042, 0.00040, 0.00041, 0.00039, 0.00040, 0.00041]
TARGET = [0.00060, 0.00061, 0.00059, 0.00060, 0.00062, 0.00060, 0.00061, 0.00059, 0.00060, 0.00061]
_MICROSECONDS = re.compile(r"from: (\d+\.\d) µs -> to: (\d+\.\d) µs \(x1\.\d+, \+(\d+\.\d)%")


@pytest.fixture
def where(tmp_path):
    (tmp_path / "old.perf").write_text(json.dumps(timed(BASELINE)))
    (tmp_path / "new.perf").write_text(json.dumps(timed(TARGET)))
    return tmp_path


def test_tree_shows_amounts_with_units(where):
    result = run_cli("check", "profiles", "old.perf", "new.perf", "-v", cwd=where, env={"NO_COLOR": "1"})
    assert result.returncode == 3, result.stderr
    found = _MICROSECONDS.search(result.stdout)
    assert found, result.stdout
    before, after, percent = map(float, found.groups())
    assert 390 <= before <= 420 and 590 <= after <= 620 and 40 <= percent <= 60
    # max_rss is in bytes: about 1.9 MiB, not 2e+06
    assert re.search(r"\[max_rss\]\n\|\s+from: 1\.91 MiB -> to: 1\.91 MiB", result.stdout), result.stdout
    assert " 0 -> " not in result.stdout and "e+0" not in result.stdout


def test_markdown_and_junit_show_units(where, tmp_path):
    markdown = run_cli("check", "profiles", "old.perf", "new.perf", "-f", "markdown", cwd=where)
    assert markdown.returncode == 3, markdown.stderr
    row = next(line for line in markdown.stdout.splitlines() if "[real]" in line and "Degradation" in line)
    assert re.search(r"\| \d+\.\d µs \| \d+\.\d µs \| \+\d+\.\d% \(\+\d+\.\d µs\) \|", row), row
    out = tmp_path / "report.xml"
    run_cli("check", "profiles", "old.perf", "new.perf", "-f", "junit", "-o", str(out), cwd=where)
    failure = ET.parse(out).getroot().find(".//testcase[@name='./app [real]']/failure")
    assert failure is not None and _MICROSECONDS.search(failure.get("message", "")), ET.tostring(failure)


def test_json_keeps_raw_numbers_with_their_unit(where):
    result = run_cli("check", "profiles", "old.perf", "new.perf", "-f", "json", cwd=where)
    records = {r["uid"]: r for r in json.loads(result.stdout)}
    real, rss = records["./app [real]"], records["./app [max_rss]"]
    assert real["unit"] == "s" and rss["unit"] == "B"
    assert real["from"] == pytest.approx(0.0004, rel=0.05) and real["to"] == pytest.approx(0.0006, rel=0.05)


def _with_sys(amounts: list[float], sys_times: list[float]) -> dict:
    """A time profile whose runs spent ``sys_times`` in the kernel (0: less than the clock tick)."""
    profile = timed(amounts)
    runs = iter(sys_times)
    for resource in profile["global"]["resources"]:
        if resource["subtype"] == "sys":
            resource["amount"] = next(runs)
    return profile


def test_a_change_from_a_baseline_below_resolution_has_a_level_but_no_percentage(tmp_path):
    """sys times counted in clock ticks: the baseline's median is 0, the target's about 3.4 ms.

    The target's level is its own (not 0 moved by a factor), and no percentage of 0 is printed.
    """
    real = [0.28, 0.31, 0.29, 0.28, 0.28, 0.27, 0.28]
    (tmp_path / "old.perf").write_text(json.dumps(_with_sys(real, [0.0] * 7)))
    (tmp_path / "new.perf").write_text(json.dumps(_with_sys(real, [0.0, 0.003445, 0.003524, 0.0, 0.003437,
                                                                    0.004136, 0.0])))
    tree = run_cli("check", "profiles", "old.perf", "new.perf", "-v", cwd=tmp_path, env={"NO_COLOR": "1"})
    line = tree.stdout.split("[sys]", 1)[1].splitlines()[1]
    assert re.search(r"from: 0 s -> to: 3\.\d\d ms \(below resolution, confidence", line), tree.stdout
    markdown = run_cli("check", "profiles", "old.perf", "new.perf", "-f", "markdown", cwd=tmp_path)
    row = next(line for line in markdown.stdout.splitlines() if "[sys]" in line)
    assert re.search(r"\| 0 s \| 3\.\d\d ms \| below resolution \(\+3\.\d\d ms\) \|", row), row
    assert "%" not in tree.stdout.split("[sys]", 1)[1].splitlines()[1] and "%" not in row.split("|")[7]


def test_a_check_stored_before_findings_had_units_shows_the_time_collectors_units():
    """A stored change record of a time profile whose findings carry no ``unit`` (written before they did):
    seconds for real, user and sys, bytes for max_rss; other profile types stay as stored."""
    from perun_core.check.report import PairReport

    def record(profile_type):
        ref = {"source": "a.perf", "kind": "index", "minor": "0" * 40, "type": profile_type}
        findings = [{"method": "m", "uid": f"./app [{sub}]", "result": "Degradation", "type": "ratio",
                     "from": 1.0, "to": 2.0} for sub in ("real", "user", "sys", "max_rss")]
        return {"baseline": ref, "target": ref, "methods": ["m"], "findings": findings}

    units = [f.unit for f in PairReport.from_record(record("time")).findings]
    assert units == ["s", "s", "s", "B"]
    assert [f.unit for f in PairReport.from_record(record("mixed")).findings] == ["", "", "", ""]
