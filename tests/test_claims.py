"""Every figure the READMEs state is one the benchmark report holds (``make bench-report``).

Nothing is measured here: the report (``benchmarks/report.json``) is what
``benchmarks/report.py`` last wrote, and these tests compare the READMEs'
marked figures with it and check that it is whole.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from figures import BENCHES, FIGURE_TEXT, FIGURES, MARKER, READMES, Figure, pick, render  # noqa: E402
from report import rewrite_readme  # noqa: E402

REPORT = json.loads((ROOT / "benchmarks" / "report.json").read_text(encoding="utf-8"))


def marked(text: str) -> list[tuple[int, str, str]]:
    """(line, key, the text right before the marker) of every marked figure of ``text``."""
    return [(text.count("\n", 0, found.start()) + 1, found.group("key"), text[max(0, found.start() - 40):found.start()])
            for found in MARKER.finditer(text)]


@pytest.mark.parametrize("readme", READMES)
def test_every_marked_figure_is_the_reports(readme):
    wrong = []
    for line, key, before in marked((ROOT / readme).read_text(encoding="utf-8")):
        if key not in FIGURES:
            wrong.append(f"{readme}:{line}: {key} is no figure of benchmarks/figures.py")
        elif key not in REPORT["figures"]:
            wrong.append(f"{readme}:{line}: the report holds no {key} (benchmarks/report.py --only {key})")
        else:
            stated = FIGURE_TEXT.search(before)
            if stated is None or stated.group(0) != REPORT["figures"][key]["text"]:
                wrong.append(f"{readme}:{line}: states {stated.group(0) if stated else '(no figure)'!r} for {key}; "
                             f"the report says {REPORT['figures'][key]['text']!r} (benchmarks/report.py --readmes)")
    assert wrong == []


def test_the_readmes_cite_the_report():
    for readme in READMES:
        assert "benchmarks/REPORT.md" in (ROOT / readme).read_text(encoding="utf-8") or \
            "(REPORT.md)" in (ROOT / readme).read_text(encoding="utf-8"), readme


def test_every_registered_figure_is_stated_and_measured():
    stated = {key for readme in READMES for _, key, _ in marked((ROOT / readme).read_text(encoding="utf-8"))}
    assert sorted(set(FIGURES) - stated) == [], "registered figures no README states"
    assert sorted(set(FIGURES) ^ set(REPORT["figures"])) == [], "report and registry disagree: rerun the report"


def test_the_report_is_a_full_run_with_commit_date_and_load():
    assert set(REPORT["runs"]) == set(BENCHES)
    for name, run in REPORT["runs"].items():
        assert run["quick"] is False, f"{name}: smoke-test sizes are not the stated figures"
        assert run["commit"] and run["date"].endswith("UTC") and run["cores"] >= 1, run
        assert len(run["loadavg_start"]) == 3 and len(run["loadavg_end"]) == 3, run
    for key, figure in REPORT["figures"].items():
        assert figure["bench"] == FIGURES[key].bench and figure["text"] == render(FIGURES[key], figure["value"]), key
    markdown = (ROOT / "benchmarks" / "REPORT.md").read_text(encoding="utf-8")
    assert all(f"| `{key}` | {figure['text']} |" in markdown for key, figure in REPORT["figures"].items())


def test_rendering_and_picking():
    seconds, share, flag = Figure("b", "a/b", "x"), Figure("b", "p", "x", " %", 1, 100.0), Figure("b", "f", "x", "")
    assert render(seconds, 0.40123) == "0.40 s" and render(share, 0.0058) == "0.6 %"
    assert render(flag, True) == "found" and render(flag, False) == "did not find"
    assert pick({"a": [{"b": 3}]}, "a/0/b") == 3
    with pytest.raises(KeyError, match="a/1/b"):
        pick({"a": [{"b": 3}]}, "a/1/b")
    with pytest.raises(KeyError):
        pick({"a": None}, "a")


def test_rewriting_puts_each_figures_text_before_its_marker(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("push 13.07 s<!-- report: remote.push -->, the bisect did not find<!-- report: remote.bisect_found "
                      "--> it; F1 0.21<!-- report: accuracy.bmoe.f1 --> and 1<!-- report: nothing.here -->\n")
    figures = {"remote.push": {"text": "2.50 s"}, "remote.bisect_found": {"text": "found"},
               "accuracy.bmoe.f1": {"text": "0.340"}}
    assert rewrite_readme(readme, figures) == ["nothing.here"]
    assert readme.read_text() == ("push 2.50 s<!-- report: remote.push -->, the bisect found<!-- report: "
                                  "remote.bisect_found --> it; F1 0.340<!-- report: accuracy.bmoe.f1 --> and "
                                  "1<!-- report: nothing.here -->\n")
