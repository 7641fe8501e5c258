"""The fuzzer on real programs with known performance bugs, and delta debugging on what it finds.

Each search stops as soon as the required slow-down is reached (an event
handler sets the cancel event); the 600-second budget is only a safety
net, generous so that a busy machine, which makes every run slower, cannot
end a search before it gets there.  Slow-downs compare CPU time (user + system of the run), which a busy
machine disturbs far less than wall time.  Seeds of the random choices are
fixed.
"""

from __future__ import annotations

import json
import threading

import pytest

from perun_core import api

from .programs import HASH, REGEX, SORT, hash_seed, sort_seed, write_program


def fuzz_until(tmp_path, program: str, seed_text: str, target: float, beats: dict | None = None, **extra):
    """Fuzz ``program`` until an input ``target`` times slower is kept; ``beats`` gets, by kept input, its
    slow-down and its parent's as measured when it was kept."""
    script = write_program(tmp_path, "program.py", program)
    seed = tmp_path / "seed.txt"
    seed.write_text(seed_text)
    cancel = threading.Event()
    events = []

    kept = {}

    def on_event(event):
        events.append(event)
        if isinstance(event, api.InputKept):
            finding = event.finding
            # what it beat when it was kept: its parent as measured by then (a parent measured again later can
            # only come out lower, so the lineage's later values are no invariant)
            parent = kept.get(finding.parent)
            if beats is not None:
                beats[finding.id] = (finding.slowdown, parent.slowdown if parent is not None else 1.0)
            kept[finding.id] = finding
            if finding.slowdown >= target:
                cancel.set()

    values = {"cmd": str(script), "seeds": [str(seed)], "output_dir": str(tmp_path / "out"), "timeout": 600,
              "hang_timeout": 10, "seed": 7, "profiles": 0, **extra}
    result = api.run_fuzzing(values, on_event=on_event, cancel=cancel, cwd=tmp_path)
    return result, events


def test_the_regex_of_java_class_names_is_found_50_times_slower(tmp_path):
    result, events = fuzz_until(tmp_path, REGEX, "java.lang.String", 50, hang_timeout=3)
    assert result.best_slowdown >= 50, _story(result)
    best = result.best[0]
    assert best.rules and (tmp_path / "out" / best.file).read_bytes() == best.data
    assert isinstance(events[0], api.FuzzStarted) and isinstance(events[-1], api.FuzzFinished)
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["best_slowdown"] == pytest.approx(result.best_slowdown)
    assert saved["findings"][0]["rules"] == best.rules
    table = (tmp_path / "out" / "results.md").read_text()
    assert "| Input | Size [B] |" in table and best.id in table
    assert (tmp_path / "out" / "slowdown.svg").read_text().startswith("<svg")


def _story(result) -> str:
    """Why a search ended where it did, for a failure message."""
    return (f"stopped: {result.stopped} after {result.elapsed:.0f} s, {result.executions} runs, "
            f"{len(result.findings)} kept, noise {result.noise:.2f}, threshold {result.threshold:.2f}, "
            f"timeline {[(round(t, 1), round(s, 2)) for t, s in result.timeline]}")


def test_a_hash_table_with_a_weak_hash_is_found_5_times_slower(tmp_path):
    result, _ = fuzz_until(tmp_path, HASH, hash_seed(), 5)
    assert result.best_slowdown >= 5, _story(result)


def test_a_quadratic_sort_is_found_5_times_slower(tmp_path):
    beats = {}
    result, _ = fuzz_until(tmp_path, SORT, sort_seed(), 5, beats)
    assert result.best_slowdown >= 5, _story(result)
    # every kept input beat its parent as measured when it was kept
    for finding in result.findings:
        if not finding.hang:
            child, parent = beats[finding.id]
            assert child > parent, finding


def test_delta_debugging_shrinks_a_slow_input_and_keeps_its_slowdown(tmp_path):
    script = write_program(tmp_path, "regex.py", REGEX)
    slow = "javalan " * 5 + ",javalan g.String"
    lines = [f"java.lang.Object{i}" for i in range(20)] + [slow] + [f"org.example.Name{i}" for i in range(20)]
    found = tmp_path / "found.txt"
    found.write_text("\n".join(lines) + "\n")
    steps = []
    # half the cost may go: the backtracking line is hundreds of times slower than the rest, and the default
    # (three times the noise) is refused on a machine whose runs vary by more than a sixth.  Not more: with 0.9
    # shrinking could end on three bytes that cost only the interpreter's start-up (a quarter of the original)
    result = api.deltadebug(str(script), found, {"output_dir": str(tmp_path / "dd"), "timeout": 900, "tolerance": 0.5},
                            on_event=steps.append, cwd=tmp_path)
    shrunk = (tmp_path / "dd" / "found.min.txt").read_bytes()
    # the budget is a safety net: a busy machine makes every run slower, and shrinking must still finish
    assert result.stopped == "done", result
    assert len(shrunk) == result.size < len(slow) + 2 < result.original_size / 10
    assert steps and steps[0].phase == "lines" and [s.size for s in steps] == sorted((s.size for s in steps), reverse=True)
    # still as slow (within the tolerance the noise allows)
    assert result.value >= (1 - result.tolerance) * result.original_value * 0.9
    report = json.loads((tmp_path / "dd" / "deltadebugging.json").read_text())
    assert report["size"] == len(shrunk) and len(report["steps"]) == len(steps)
