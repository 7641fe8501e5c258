"""``perun-core fuzz`` and ``deltadebugging`` as a user runs them: bad input, a short real run, the rules."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from perun_core.errors import InvalidParameter, UnknownUnit
from perun_core.fuzz.rules import parse_rule_specs, rules
from perun_core.fuzz.aftersearch import ANALYSIS_SHARE

from .programs import REGEX, SORT, sort_seed, write_program

PERUN = [sys.executable, "-m", "perun_core.cli.main"]


def perun(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*PERUN, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def one_error(done: subprocess.CompletedProcess, *needles: str, code: int = 1) -> None:
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    assert all(n in lines[0] for n in needles), lines[0]


@pytest.fixture
def program(tmp_path) -> Path:
    return write_program(tmp_path, "sort.py", SORT)


@pytest.fixture
def seed(tmp_path) -> Path:
    path = tmp_path / "seed.txt"
    path.write_text(sort_seed())
    return path


def test_a_missing_seed_is_one_error_before_fuzzing(tmp_path, program):
    done = perun("fuzz", "-b", str(program), "-w", "nope.txt", "-o", "out", cwd=tmp_path)
    one_error(done, "nope.txt", "does not exist")
    assert not (tmp_path / "out").exists()


def test_an_empty_corpus_is_one_error(tmp_path, program):
    (tmp_path / "corpus").mkdir()
    one_error(perun("fuzz", "-b", str(program), "-w", "corpus", "-o", "out", cwd=tmp_path), "corpus", "no files")
    (tmp_path / "corpus" / "a.txt").write_text("x")
    one_error(perun("fuzz", "-b", str(program), "-w", "corpus", "-wf", r"\.json$", "-o", "out", cwd=tmp_path),
              "no files matching")
    assert not (tmp_path / "out").exists()


def test_a_program_failing_on_the_seed_is_one_error(tmp_path, seed):
    failing = write_program(tmp_path, "fail.py", "import sys\nsys.stderr.write('bad header\\n')\nsys.exit(3)\n")
    done = perun("fuzz", "-b", str(failing), "-w", str(seed), "-o", "out", cwd=tmp_path)
    one_error(done, "fails on seed", "status 3", "bad header")
    assert not (tmp_path / "out").exists()


def test_timeouts_too_short_for_one_run_of_the_seed_are_one_error(tmp_path, seed):
    slow = write_program(tmp_path, "slow.py", "import time\ntime.sleep(0.5)\n")
    one_error(perun("fuzz", "-b", str(slow), "-w", str(seed), "-o", "out", "-ht", "0.1", cwd=tmp_path),
              "hang timeout 0.1 s", "too short")
    one_error(perun("fuzz", "-b", str(slow), "-w", str(seed), "-o", "out", "-t", "0.2", cwd=tmp_path),
              "time budget 0.2 s", "too short")
    assert not (tmp_path / "out").exists()


def test_an_output_directory_that_is_not_empty_is_one_error(tmp_path, program, seed):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    one_error(perun("fuzz", "-b", str(program), "-w", str(seed), "-o", "out", cwd=tmp_path), "out", "not empty")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["keep.txt"]


def test_bad_options_are_one_error(tmp_path, program, seed):
    base = ["fuzz", "-b", str(program), "-w", str(seed), "-o", "out"]
    # a missing or contradictory option is a wrong command line (exit 2), as for every command
    one_error(perun(*base, "-N", "100", "-mp", "2", cwd=tmp_path), "-N and -mp", code=2)
    one_error(perun(*base, "-r", "no-such-rule", cwd=tmp_path), "no-such-rule")
    one_error(perun(*base, "-r", "repeat-word:times=zero", cwd=tmp_path), "times", "zero")
    one_error(perun("fuzz", "-w", str(seed), "-o", "out", cwd=tmp_path), "-b/--cmd", code=2)
    one_error(perun(*base[:-2], "-o", "out", "-b", "no-such-program-here", cwd=tmp_path), "no-such-program-here")


def test_fuzzing_from_the_command_line_writes_every_output(tmp_path, seed, program):
    done = perun("fuzz", "-b", str(program), "-w", str(seed), "-o", "out", "--seed", "3", "--stop-at", "2",
                 "-t", "60", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "best slow-down" in done.stdout and "fuzzing with" in done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["stopped"] == "slowdown reached" and results["best_slowdown"] >= 2
    # a search stopped early leaves the analysis its 30 % of -t, not the unused rest of the budget
    assert 0 < results["searched"] < results["elapsed"]
    assert results["elapsed"] - results["searched"] <= ANALYSIS_SHARE * 60 + 5, results
    for finding in results["findings"]:
        assert (tmp_path / "out" / finding["file"]).is_file() and finding["rules"]
    assert "note: no perun repository here" in done.stdout
    assert (tmp_path / "out" / "results.md").read_text().count("\n| ") >= 2


def test_deltadebugging_from_the_command_line(tmp_path):
    script = write_program(tmp_path, "regex.py", REGEX)
    (tmp_path / "slow.txt").write_text("\n".join(["java.lang.Object"] * 10 + ["javalan " * 5 + ",javalan g.String"]))
    # -t is the time budget, a safety net: on a busy machine each run is slower and shrinking must still end;
    # the backtracking input is hundreds of times slower than the rest, so a generous tolerance keeps it whatever
    # the machine's noise (the default, three times the noise, is refused where that exceeds a half)
    done = perun("deltadebugging", str(script), "slow.txt", "-o", "dd", "-t", "900", "--tolerance", "0.9",
                 cwd=tmp_path, timeout=1200)
    assert done.returncode == 0, done.stderr
    assert "lines:" in done.stderr and "smallest slow input" in done.stdout
    assert len((tmp_path / "dd" / "slow.min.txt").read_bytes()) < 60
    one_error(perun("deltadebugging", str(script), "gone.txt", "-o", "dd2", cwd=tmp_path), "gone.txt")


@pytest.mark.parametrize("name", sorted(rules.names()))
def test_every_rule_changes_its_input_and_is_repeatable(name):
    [choice] = parse_rule_specs([name], binary=False)
    data = b"alpha beta 12 gamma\n  delta 7 epsilon\nzeta eta theta 3"
    first = [choice.apply(data, random.Random(5)) for _ in range(2)]
    assert first[0] == first[1] and first[0] is not None and first[0] != data


def test_rules_take_their_parameters_and_refuse_bad_ones():
    [choice] = parse_rule_specs(["repeat-word:times=1"], binary=False)
    assert choice.params == {"times": 1}
    out = choice.apply(b"word", random.Random(1))
    assert out == b"word word"
    with pytest.raises(InvalidParameter):
        parse_rule_specs(["repeat-word:times=0"], binary=False)
    with pytest.raises(UnknownUnit):
        parse_rule_specs(["bogus"], binary=False)
    assert {c.rule.kind for c in parse_rule_specs(None, binary=True)} == {"bytes"}
    assert {"double-line", "repeat-word", "sort-line", "prepend-whitespace"} <= {
        c.name for c in parse_rule_specs(None, binary=False)}
