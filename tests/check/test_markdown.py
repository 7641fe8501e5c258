"""check --format markdown: the table for pull requests; JSON and JUnit keep their shapes."""

from __future__ import annotations

import json

from conftest import run_cli, write_pending

from perun_core import api

from .helpers import timed


def _degraded_repo(perun_repo):
    root, shas = perun_repo
    for sha, amounts, name in ((shas[0], [1.0, 1.02, 0.99, 1.01, 1.0], "old"), (shas[1], [2.0, 2.05, 1.98, 2.02, 2.01], "new")):
        path = write_pending(root, f"{name}.perf", timed(amounts, cmd="./app|x", origin=sha))
        api.add([str(path)], minor=sha, cwd=root)
    return root, shas


def test_markdown_table_of_a_degradation(perun_repo):
    root, shas = _degraded_repo(perun_repo)
    out = run_cli("check", "head", "-f", "markdown", cwd=root)
    assert out.returncode == 3, out.stderr
    text = out.stdout
    assert text.startswith("### perun check: degradation found\n")
    header = "| | Result | Location | Baseline → Target | From | To | Change | Confidence | Method |"
    assert header in text
    rows = [line for line in text.splitlines() if "**" in line and "Degradation" in line]
    assert rows and all(line.count(" | ") >= 8 for line in rows)
    assert "`./app\\|x" in rows[0]  # a pipe in a location cannot break the table
    assert "%" in rows[0]
    assert "<details>" in text and "without change" in text


def test_markdown_without_changes_and_other_formats_keep_their_shape(perun_repo):
    root, shas = _degraded_repo(perun_repo)
    same = run_cli("check", "profiles", "0@i", "0@i", "-f", "markdown", cwd=root)
    assert same.returncode == 0 and "### perun check: no degradation" in same.stdout
    assert "| | Result |" not in same.stdout
    records = json.loads(run_cli("check", "head", "-f", "json", cwd=root).stdout)
    assert records and list(records[0]) == ["baseline", "target", "method", "uid", "result", "type", "from", "to",
                                            "delta_abs", "delta_rel", "unit", "confidence_type", "confidence_rate", "reason"]
    junit = run_cli("check", "head", "-f", "junit", cwd=root).stdout
    assert junit.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites') and "<failure" in junit
    written = root / "summary.md"
    assert run_cli("check", "head", "-f", "markdown", "-o", str(written), cwd=root).returncode == 3
    assert written.read_text().startswith("### perun check")
