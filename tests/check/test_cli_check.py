"""``perun-core check profiles`` as CI calls it: files, formats, exit statuses, bad input."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from conftest import run_cli

from .helpers import curve, mixed, timed

KEYS = ["baseline", "target", "method", "uid", "result", "type", "from", "to", "delta_abs", "delta_rel",
        "unit", "confidence_type", "confidence_rate", "reason"]


@pytest.fixture
def files(tmp_path):
    """Baseline and target files outside any perun repository: f doubles, g stays, h is new."""
    outside = tmp_path / "plain"
    outside.mkdir()
    base = outside / "BASELINE.perf"
    new = outside / "TARGET.perf"
    base.write_text(json.dumps(mixed({"f": curve("linear", 1), "g": curve("quadratic", 2)})))
    new.write_text(json.dumps(mixed({"f": curve("linear", 3, 2.0), "g": curve("quadratic", 4),
                                     "h": curve("linear", 5)})))
    return outside, base, new


def test_json_records_and_exit_status(files):
    where, base, new = files
    result = run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", "--format", "json", cwd=where)
    assert result.returncode == 3, result.stderr
    records = json.loads(result.stdout)
    assert all(list(record) == KEYS for record in records)
    by_uid = {r["uid"]: r for r in records}
    assert by_uid["f"]["result"] == "Degradation" and by_uid["f"]["delta_rel"] == pytest.approx(100, rel=0.1)
    assert by_uid["g"]["result"] == "NoChange"
    assert by_uid["h"]["result"] == "NotInBaseline"
    assert by_uid["f"]["baseline"] == "BASELINE.perf" and by_uid["f"]["target"] == "TARGET.perf"
    assert by_uid["f"]["method"] == "size_aware_rank_test"
    # raw numbers stay numbers; the unit the profile's header names sits next to them
    assert isinstance(by_uid["f"]["from"], float) and {r["unit"] for r in records} == {"us"}
    # the other direction is an optimization, and that is not a failure
    back = run_cli("check", "profiles", "TARGET.perf", "BASELINE.perf", "--format", "json", cwd=where)
    assert back.returncode == 0, back.stderr
    assert {r["uid"]: r["result"] for r in json.loads(back.stdout)}["f"] == "Optimization"
    never = run_cli("check", "profiles", str(base), str(new), "--fail-on", "never", cwd=where)
    assert never.returncode == 0


def test_tree_is_readable_without_colour(files):
    where, _base, _new = files
    plain = run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", cwd=where, env={"NO_COLOR": "1"})
    assert "\x1b[" not in plain.stdout
    assert "- Degradation" in plain.stdout and "at f" in plain.stdout and "* NotInBaseline" in plain.stdout
    assert "NoChange" not in plain.stdout and "no change at 1 location" in plain.stdout
    verbose = run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", "-v", cwd=where, env={"NO_COLOR": "1"})
    assert "= NoChange" in verbose.stdout
    coloured = run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", cwd=where, env={"FORCE_COLOR": "1"})
    assert "\x1b[1;31m- Degradation" in coloured.stdout


def test_junit_for_ci(files, tmp_path):
    where, _base, _new = files
    out = tmp_path / "report.xml"
    result = run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", "--format", "junit", "-o", str(out),
                     cwd=where)
    assert result.returncode == 3 and result.stdout == ""
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites" and root.get("failures") == "1" and root.get("tests") == "3"
    failure = root.find(".//testcase[@name='f']/failure")
    assert failure is not None and failure.get("type") == "Degradation"


def test_methods_by_option(files):
    where, _base, _new = files
    result = run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", "-M", "aat", "-M", "bmoe", "-f", "json",
                     cwd=where)
    assert result.returncode == 3, result.stderr
    methods = {r["method"] for r in json.loads(result.stdout)}
    assert methods == {"average_amount_threshold", "best_model_order_equality"}


def test_one_method_with_its_parameters(files):
    where, _base, _new = files
    # f doubles: a degradation for aat's default 2x threshold only when the threshold is lower
    found = run_cli("check", "method", "aat", "BASELINE.perf", "TARGET.perf", "-f", "json", "--threshold", "1.5",
                    cwd=where)
    assert found.returncode == 3, found.stderr
    by_uid = {r["uid"]: r for r in json.loads(found.stdout)}
    assert by_uid["f"]["result"] == "Degradation" and by_uid["f"]["method"] == "average_amount_threshold"
    strict = run_cli("check", "method", "average_amount_threshold", "BASELINE.perf", "TARGET.perf", "-f", "json",
                     "--threshold", "50", cwd=where)
    assert strict.returncode == 0, strict.stderr
    assert {r["uid"]: r["result"] for r in json.loads(strict.stdout)}["f"] == "NoChange"
    one_line_error(run_cli("check", "method", "aat", "BASELINE.perf", "TARGET.perf", "--threshold", "0.5", cwd=where),
                   "average_amount_threshold: parameter 'threshold' = 0.5: expected a number of at least 1")
    one_line_error(run_cli("check", "method", "nope", "BASELINE.perf", "TARGET.perf", cwd=where),
                   "unknown check method 'nope'", "bmoe")
    listing = run_cli("check", "method", "--help", cwd=where)
    assert listing.returncode == 0 and "size_aware_rank_test" in listing.stdout
    shared = where / "config"
    shared.mkdir()
    (shared / "shared.yml").write_text("degradation:\n  strategies:\n    - {method: aat, params: {threshold: 1.5}}\n")
    configured = run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", "-f", "json", cwd=where,
                         env={"PERUN_CONFIG_DIR": str(shared)})
    assert configured.returncode == 3, configured.stderr
    (shared / "shared.yml").write_text("degradation:\n  strategies:\n    - {method: aat, params: {treshold: 3}}\n")
    one_line_error(run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", cwd=where,
                           env={"PERUN_CONFIG_DIR": str(shared)}), "parameter 'treshold'", "has: threshold")


def one_line_error(result, *needles: str) -> None:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    for needle in needles:
        assert needle in errors[0]


def test_bad_input_is_a_clear_error(files, tmp_path):
    where, base, _new = files
    (where / "time.perf").write_text(json.dumps(timed([0.1, 0.11, 0.1])))
    one_line_error(run_cli("check", "profiles", "BASELINE.perf", "time.perf", cwd=where),
                   "cannot compare", "mixed", "time")
    (where / "other.perf").write_text(json.dumps(mixed({"zzz": curve("linear", 9)})))
    nothing = run_cli("check", "profiles", "BASELINE.perf", "other.perf", "-f", "json", cwd=where)
    one_line_error(nothing, "no uid in common")
    assert {r["result"] for r in json.loads(nothing.stdout)} == {"NotInBaseline", "NotInTarget"}
    one_line_error(run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", "-M", "nope", cwd=where),
                   "unknown check method 'nope'")
    one_line_error(run_cli("check", "profiles", "BASELINE.perf", "missing.perf", cwd=where), "missing.perf")
    (where / "broken.perf").write_text("{not json")
    one_line_error(run_cli("check", "profiles", "BASELINE.perf", "broken.perf", cwd=where), "malformed JSON")
    shared = tmp_path / "shared-config"
    shared.mkdir()
    (shared / "shared.yml").write_text("degradation:\n  strategies:\n    - {method: aat, colector: time}\n")
    one_line_error(run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", cwd=where,
                           env={"PERUN_CONFIG_DIR": str(shared)}), "unknown key 'colector'")
    (shared / "shared.yml").write_text("degradation:\n  strategies:\n    - {method: bmeo}\n")
    one_line_error(run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", cwd=where,
                           env={"PERUN_CONFIG_DIR": str(shared)}), "unknown check method 'bmeo'")


def test_one_process_and_two_agree(files):
    from perun_core.api import check as api_check

    where, base, new = files
    one = api_check.check_profiles(str(base), str(new), cwd=where)
    two = api_check.check_profiles(str(base), str(new), cwd=where, workers=2)
    assert [f for _v, _p, f in one.findings()] == [f for _v, _p, f in two.findings()]


@pytest.mark.parametrize("which", ["baseline", "target", "both"])
def test_an_invalid_profile_is_one_clean_error_never_a_broken_pipe(files, which):
    """The forked worker exits right after its baseline fails to load; the parent must not trip over the pipe."""
    where, base, new = files
    bad = json.loads(base.read_text())
    bad["snapshots"][0]["resources"][0]["amount"] = "NaN-ish"
    for path in {"baseline": [base], "target": [new], "both": [base, new]}[which]:
        path.write_text(json.dumps(bad))
    for _ in range(5):
        result = run_cli("check", "profiles", "BASELINE.perf", "TARGET.perf", cwd=where)
        assert result.returncode == 1, result.stderr
        assert result.stderr.startswith("error: ") and result.stderr.count("error:") == 1, result.stderr
        assert "BrokenPipe" not in result.stderr and "internal error" not in result.stderr
        assert "Traceback" not in result.stderr


def test_the_parent_survives_a_worker_that_is_already_gone():
    """A worker that failed and exited before the parent says "stop": a deterministic version of the race."""
    import os

    from perun_core.check import parallel

    read, write = os.pipe()
    os.close(read)  # no reader any more, as when the worker has exited
    assert parallel._tell(write, ("stop",)) is False
    os.close(write)
    read, write = os.pipe()
    os.close(write)  # the worker ended without a word
    assert parallel._ask(read)[0] == "failed"
    os.close(read)


def test_tree_lines_wrap_at_the_terminal_width_with_a_hanging_indent(tmp_path):
    """A result line wider than the terminal (80 columns on a pipe) goes on in lines under it, indented two
    more than its text and behind the graph's bar; an amount stays with its unit."""
    program = "./build/release/benchmarks/search-with-a-long-name"
    (tmp_path / "old.perf").write_text(json.dumps(timed([0.10, 0.11, 0.10, 0.09, 0.10, 0.10], cmd=program)))
    (tmp_path / "new.perf").write_text(json.dumps(timed([0.20, 0.21, 0.20, 0.19, 0.20, 0.20], cmd=program)))
    env = {"NO_COLOR": "1", "COLUMNS": ""}  # no COLUMNS and no terminal: 80
    for columns, width in (("", 80), ("60", 60)):
        result = run_cli("check", "profiles", "old.perf", "new.perf", cwd=tmp_path, env={**env, "COLUMNS": columns})
        assert result.returncode == 3, result.stderr
        lines = result.stdout.splitlines()
        assert max(len(line) for line in lines) <= width, result.stdout
        head = next(i for i, line in enumerate(lines) if "- Degradation" in line)
        # the name goes on under the result, two columns in from where the result's text began
        assert lines[head + 1].startswith("|     ") and lines[head + 1][6] != " "
        more = [line[6:] for line in lines[head + 1:head + 3] if line.startswith("|     ") and line[6] != " "]
        assert " ".join([lines[head], *more]).endswith(f"at {program} [real]")
        details = [line for line in lines if line.startswith("|       ")]
        assert any(line.startswith("|       from: ") for line in details)
        assert all(not line.endswith((" 100.0", " 200.0")) for line in lines)  # an amount keeps its unit


def test_the_confirmation_lines_name_the_commits_they_wait_for(capsys):
    # check all printed five times 'Confirming 1 change ... (1 pair of commits)' and never said which
    from perun_core.check.confirm import ConfirmationFinished, ConfirmationStarted
    from perun_core.cli.check_cmds import _collection_printer

    pair = (("e" * 40, "5" * 40),)
    printer = _collection_printer(0)
    printer(ConfirmationStarted(1, 1, 7, pair))
    printer(ConfirmationFinished(0, 1, 0, pair))
    printer(ConfirmationStarted(3, 2, 7, (pair[0], ("a" * 40, "b" * 40))))
    assert capsys.readouterr().err.splitlines() == [
        "Confirming 1 change of 5555555 against eeeeeee by interleaved runs (7 a side)",
        "Re-runs of 5555555 against eeeeeee: confirmed 0, not confirmed 1",
        "Confirming 3 changes of 2 pairs of commits by interleaved runs (7 a side)"]
