"""The difference report and SVG in a real browser: headless Chromium loads them and runs their script without errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from perun_core import api

from views.test_chromium import BROWSER, console_errors, open_in_chromium  # tests/ is on sys.path
from tools import require

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "import"

@pytest.fixture(autouse=True)
def needs_browser():
    require(BROWSER is not None, "a headless Chromium to open the report in (Debian: chromium)")


@pytest.fixture(scope="module")
def comparison():
    a = api.read_imported("perf-script", [FIXTURES / "perf.script"])
    b = api.read_imported("perf-script", [FIXTURES / "perf_slow.script"])
    return api.compare_profiles(a, b, baseline_name="perf.script", target_name="perf_slow.script")


def test_report_opens_without_errors_and_its_flame_graph_runs(comparison, tmp_path):
    path = tmp_path / "report.html"
    path.write_text(api.render_diff(comparison, "report"), encoding="utf-8")
    dom, log = open_in_chromium(path)
    assert console_errors(log) == []
    assert 'data-ready="true"' in dom  # the embedded flame graph's init() ran to its end
    assert dom.count('class="frame"') == 5
    assert '<table id="changes">' in dom and "other" in dom


def test_difference_svg_search_and_zoom(comparison, tmp_path):
    path = tmp_path / "diff.svg"
    path.write_text(api.render_diff(comparison, "flamegraph", fmt="svg"), encoding="utf-8")
    dom, log = open_in_chromium(path, "#s=other&z=f4")
    assert console_errors(log) == []
    assert 'data-ready="true"' in dom
    assert "Matched: 51.5%" in dom  # other() holds 67 of the target's 130 samples
