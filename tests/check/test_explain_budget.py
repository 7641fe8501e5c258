"""check --explain chooses its collector by expected cost, says the estimate first and keeps within
--explain-budget: a smaller generated workload, perf sampling, or one line saying why nothing ran."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from gitrepo import make_repo
from runhelpers import needs_cc, perf_refused, run_env  # noqa: F401

from check.owned_programs import MAKE_C, WORDS_FAST, WORDS_SLOW
from check.test_explain import _configure
from perun_core import api
from perun_core.check.explain_cost import CALLGRIND_FACTOR, PERF_ENOUGH, expected, native_seconds, plan

callgrind = pytest.mark.tools("valgrind")
SIZES = {"id": "sizes", "type": "integer", "min": 200, "max": 3200, "step": 1000}


def _words(root, workload, generator=None):
    files = {"Makefile": MAKE_C, ".gitignore": "app\n"}
    make_repo(root, [{"files": {**files, "app.c": WORDS_FAST}, "message": "v1"},
                     {"files": {**files, "app.c": WORDS_SLOW}, "message": "v2: copies the rest"}])
    _configure(root, "./app", workload, pre_run=["make"])
    if generator:
        api.config_set("generators.workload", [generator], scope="local", cwd=root)


def test_the_collector_follows_the_expected_cost():
    # Python: cProfile, whatever the budget
    assert plan(True, None, (0.1, 0.5), 1.0, True, True).collector == "pytrace"
    # a change big enough to show in perf's samples: perf, saying what callgrind would have cost
    big = (0.2, 0.2 + 2 * PERF_ENOUGH / 999 / 3)
    chosen = plan(False, None, big, 240, True, True)
    assert chosen.collector == "perf" and "callgrind would take about" in chosen.notes[0]
    # a small change: callgrind, with its estimate, within the budget
    small = (0.01, 0.03)
    chosen = plan(False, None, small, 240, True, True)
    assert chosen.collector == "callgrind" and not chosen.over
    assert chosen.estimate == pytest.approx(expected("callgrind", small)) and chosen.estimate > CALLGRIND_FACTOR * 0.04
    # callgrind over the budget: perf where it may sample enough, else callgrind marked over the budget
    assert plan(False, None, (0.3, 0.4), 5, True, True).collector == "perf"
    over = plan(False, None, (0.3, 0.4), 5, True, False)
    assert over.collector == "callgrind" and over.over
    # without valgrind or perf there is nothing to run; a collector asked for is kept
    assert plan(False, None, small, 240, False, False) == ""
    assert plan(False, "callgrind", (0.3, 0.4), 5, True, True).over


@needs_cc
def test_a_budget_too_small_for_callgrind_is_said_and_nothing_is_collected(tmp_path, run_env):
    root = tmp_path / "words"
    _words(root, "1500")
    result = run_cli("check", "--compute-missing", "head", "--explain-with", "callgrind", "--explain-budget", "1",
                     "--format", "json", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    record = next(r for r in json.loads(result.stdout) if r["result"] == "Degradation")
    message = record["explanation"]["message"]
    assert message.startswith("callgrind would take about ") and "s left of the explain budget of 1 s" in message \
        and "--explain-budget" in message, message
    assert not [p for p in (root / ".perun" / "jobs").iterdir() if "callgrind" in p.name]


@pytest.mark.parametrize("value", ["0", "-3", "soon"])
def test_a_budget_that_is_not_a_positive_number_is_a_command_line_error(tmp_path, value):
    result = run_cli("check", "head", "--explain-budget", value, cwd=tmp_path)
    assert result.returncode == 2 and "--explain-budget" in result.stderr and "Traceback" not in result.stderr


@needs_cc
@callgrind
def test_callgrind_over_the_budget_runs_a_smaller_generated_workload_and_says_so(tmp_path, run_env):
    root = tmp_path / "words"
    _words(root, "sizes", SIZES)
    first = run_cli("check", "--compute-missing", "head", "--format", "json", cwd=root)
    assert first.returncode == 3, first.stdout + first.stderr
    # The budget follows the machine's speed as the profiles just measured it: at least 3 s (more than callgrind
    # on the smallest size needs on an idle machine), and half of what callgrind would take on the largest size,
    # so the explanation must run a smaller size whatever the load (a fixed 3 s left no size on a loaded machine).
    largest = [native_seconds(api.load_profile("0@i", minor=rev, cwd=root).profile) for rev in ("HEAD~1", "HEAD")]
    budget = max(3.0, expected("callgrind", tuple(largest)) / 2)
    result = run_cli("check", "head", "--explain-with", "callgrind", "--explain-budget", f"{budget:.1f}",
                     "--format", "json", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    # said before collecting, with the estimate
    assert "workload reduced from 3200 to " in result.stderr and "s left of the explain budget" in result.stderr
    record = next(r for r in json.loads(result.stdout) if r["result"] == "Degradation")
    explanation = record["explanation"]
    notes = " ".join(explanation["notes"])
    if "was stopped after" in (explanation["message"] or "") + notes:  # the load grew between the two commands
        return
    assert not explanation["message"], explanation
    assert "workload reduced from 3200 to " in notes and "explain budget" in notes, explanation
    assert record["explained_by"][0]["function"] == "starts_word", record["explained_by"]
    tree = run_cli("check", "head", cwd=root, env={"NO_COLOR": "1", "COLUMNS": "400"})  # a line per result
    assert "workload reduced from 3200 to " in tree.stdout, tree.stdout


# a program far slower under callgrind than its plain runs predict: it waits when valgrind preloads its core
UNDER_VALGRIND = ("int main(int argc, char **argv) {\n"
                  "    const char *preload = getenv(\"LD_PRELOAD\");\n"
                  "    if (preload && strstr(preload, \"vgpreload\")) sleep(600);\n")


@needs_cc
@callgrind
@pytest.mark.tools("perf")
@pytest.mark.skipif(perf_refused() is not None, reason=f"machine cannot: sampling with perf: {perf_refused()}")
def test_callgrind_killed_by_the_budget_gives_way_to_perf_sampling_and_says_so(tmp_path, run_env):
    root = tmp_path / "words"
    files = {"Makefile": MAKE_C, ".gitignore": "app\n"}
    fast, slow = ("#include <unistd.h>\n" + source.replace("int main(int argc, char **argv) {\n", UNDER_VALGRIND)
                  for source in (WORDS_FAST, WORDS_SLOW))
    make_repo(root, [{"files": {**files, "app.c": fast}, "message": "v1"},
                     {"files": {**files, "app.c": slow}, "message": "v2: copies the rest"}])
    _configure(root, "./app", "600 3000", pre_run=["make"])
    # callgrind's estimate (from the plain runs) fits in 80 s, its first run is killed at its share, 40 s; perf
    # has the other 40 s, which a busy machine needs (with four busy sessions its runs took more than 20 s)
    result = run_cli("check", "--compute-missing", "head", "--explain-with", "callgrind", "--explain-budget", "80",
                     "--format", "json", cwd=root)
    assert result.returncode == 3, result.stdout + result.stderr
    record = next(r for r in json.loads(result.stdout) if r["result"] == "Degradation")
    explanation = record["explanation"]
    assert not explanation["message"], explanation
    assert explanation["collector"] == "perf", explanation
    said = [note for note in explanation["notes"] if note.startswith("callgrind was stopped after ")]
    assert said and said[0].endswith("by the explain budget of 80 s; sampled with perf instead"), explanation
    assert said[0] in result.stderr, result.stderr  # one line, said when perf starts
    assert record["explained_by"][0]["function"] == "starts_word", record["explained_by"]
    tree = run_cli("check", "head", cwd=root, env={"NO_COLOR": "1", "COLUMNS": "400"})  # a line per result
    assert said[0] in tree.stdout, tree.stdout


def test_what_stopped_the_collection_and_what_was_reduced_is_said_when_nothing_fits(monkeypatch):
    from perun_core.check import explain
    from perun_core.check.explain_cost import Budget, BudgetKilled, Plan

    budget = Budget(10.0)
    budget.spent = 4.0
    stopped = BudgetKilled("callgrind", 3.0, 10.0)
    reduced = Plan("callgrind", {}, None, ("workload reduced from 3200 to 1200: ...",), reduced="3200 to 1200")
    monkeypatch.setattr(explain, "perf_allowed", lambda: (False, "perf_event_paranoid = 3"))
    assert explain._instead(stopped, reduced, ((0.1, 0.2), None), budget) == (
        "callgrind was stopped after 3.0 s by the explain budget of 10 s, with the workload reduced from 3200 to "
        "1200: raise --explain-budget or explain a smaller workload, or allow perf sampling")
    # perf where it may sample: the whole workload, the reduction forgotten, one note saying why
    monkeypatch.setattr(explain, "perf_allowed", lambda: (True, ""))
    instead = explain._instead(stopped, reduced, ((0.1, 0.2), None), budget)
    assert instead.collector == "perf" and instead.params["call_graph"] == "dwarf" and not instead.reduced
    assert instead.notes == ("callgrind was stopped after 3.0 s by the explain budget of 10 s; sampled with perf "
                             "instead",)
    # perf stopped too: both are said
    message = explain._instead(BudgetKilled("perf", 1.0, 10.0), instead, ((0.1, 0.2), None), budget)
    assert message == ("callgrind was stopped after 3.0 s by the explain budget of 10 s; perf was stopped after "
                       "1.0 s by the explain budget of 10 s, on the whole workload: raise --explain-budget or explain "
                       "a smaller workload")
