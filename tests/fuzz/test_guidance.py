"""Hit-count guidance, the dictionary (--dict, --source) and delta debugging that keeps a finding's growth."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perun_core.fuzz.deltadebug import _growth_to_keep
from perun_core.fuzz.dictionary import c_literals, python_literals, read_dictionary, regex_fragments, source_tokens
from perun_core.fuzz.guidance import HitMaxima, python_command, read_gcov_counts, start_guidance
from perun_core.fuzz.measure import Coverage, Measurement
from perun_core.fuzz.rules import parse_rule_specs
from perun_core.fuzz.textrules import seed_dictionary

from .programs import write_program

CLI = [sys.executable, "-m", "perun_core.cli.entry"]

#: one cheap step per character: an extra character adds far too little time to measure, but one loop count
COUNTING = r'''
import sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
steps = 0
for char in text:
    if char == "(":
        steps += 2
    else:
        steps += 1
print(steps)
'''

#: for every "(" a scan of all of them: quadratic in the number of "("
PAIRS = r'''
import sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
opened = [i for i, c in enumerate(text) if c == "("]
pairs = 0
for i in opened:
    for j in opened:
        if j < i:
            pairs += 1
print(pairs)
'''


def cli(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def one_error(done: subprocess.CompletedProcess, *needles: str, code: int = 1) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == code and lines[0].startswith("error: "), done.stderr
    assert all(line.startswith("hint: ") for line in lines[1:]), done.stderr  # one error, at most a hint
    assert all(n in lines[0] for n in needles), lines[0]
    return lines[0]


# -- hit counts ----------------------------------------------------------------------------------

def test_python_commands_are_recognised_by_interpreter_or_shebang(tmp_path):
    script = write_program(tmp_path, "count.py", COUNTING)
    interpreter, rest = python_command([str(script), "-v"], tmp_path)
    assert Path(interpreter[0]).name.startswith("python") and "-S" in interpreter and rest == [str(script), "-v"]
    assert python_command(["python3", "-X", "dev", "-S", "x.py", "a"], tmp_path) == (
        ["python3", "-X", "dev", "-S"], ["x.py", "a"])
    assert python_command(["python3", "-c", "pass"], tmp_path) is None
    assert python_command(["/bin/sh", "x.sh"], tmp_path) is None


def test_a_traced_run_counts_each_loop_iteration_and_one_more_raises_the_maximum(tmp_path):
    write_program(tmp_path, "count.py", COUNTING)
    with start_guidance("hits", ["./count.py"], cwd=tmp_path, input_name="in.txt", stdin=False, hang_timeout=60,
                        cancelled=None, coverage=None) as guide:
        assert guide.active, guide.note
        counts = guide.counts(b"ab(c")
        assert counts is not None and max(counts.values()) == 4  # the loop's header ran once per character
        guide.prime([b"ab(c"])
        assert not guide.raises(b"xy(z")  # the same counts on other characters: nothing new
        assert guide.raises(b"xy(zw")  # one more iteration: kept, however little time it adds
        assert not guide.raises(b"ab(c")
        assert guide.raises(b"((((")  # the "(" branch four times, never seen before
        assert guide.kept == 2 and "2 inputs kept" in guide.summary()


def test_guidance_is_off_with_a_reason_when_the_program_has_no_counts(tmp_path):
    with start_guidance("hits", ["/bin/cat"], cwd=tmp_path, input_name="in", stdin=False, hang_timeout=5,
                        cancelled=None, coverage=None) as guide:
        assert not guide.active and "neither a Python script nor built with gcov" in guide.note
    with start_guidance("off", ["/bin/cat"], cwd=tmp_path, input_name="in", stdin=False, hang_timeout=5,
                        cancelled=None, coverage=None) as guide:
        assert not guide.active and not guide.raises(b"x")


#: counts the "(" of its input file, a branch per character
C_COUNTER = r'''
#include <stdio.h>
int main(int argc, char **argv) {
    FILE *input = fopen(argv[1], "rb");
    int c, opened = 0;
    if (!input) return 1;
    while ((c = fgetc(input)) != EOF) {
        if (c == '(')
            opened++;
    }
    printf("%d\\n", opened);
    return 0;
}
'''


@pytest.mark.tools("gcc", "gcov")
def test_a_native_program_built_with_gcov_is_guided_by_its_line_counts(tmp_path):
    (tmp_path / "counter.c").write_text(C_COUNTER)
    subprocess.run(["gcc", "--coverage", "-O0", "-o", "counter", "counter.c"], cwd=tmp_path, check=True)
    coverage = Coverage(tmp_path, tmp_path, shutil.which("gcov") or "gcov")
    with start_guidance("hits", ["./counter"], cwd=tmp_path, input_name="in.txt", stdin=False, hang_timeout=60,
                        cancelled=None, coverage=coverage) as guide:
        assert guide.active and "gcov" in guide.note
        guide.prime([b"ab(c"])
        assert not guide.raises(b"xy(z") and guide.raises(b"xy(zw") and guide.raises(b"((")


def test_gcov_line_counts_are_read_per_file_and_line():
    text = ("        -:    0:Source:a.c\n        5:    3:  for (;;)\n    #####:    4:  never();\n"
            "        -:    0:Source:b.c\n       12*:    3:  x++;\n")
    assert read_gcov_counts(text) == {("a.c", 0, 3): 5, ("b.c", 0, 3): 12}
    maxima = HitMaxima()
    assert maxima.update({("a.c", 0, 3): 5}) and not maxima.update({("a.c", 0, 3): 4})
    assert maxima.update({("a.c", 0, 3): 4, ("a.c", 0, 9): 1}) == [("a.c", 0, 9)]


def test_fuzzing_with_guidance_keeps_inputs_whose_time_gain_is_below_the_noise(tmp_path):
    write_program(tmp_path, "count.py", COUNTING)
    (tmp_path / "seed.txt").write_text("f(a, b) + g(c)\n")
    done = cli("fuzz", "-b", "./count.py", "-w", "seed.txt", "-o", "out", "-t", "40", "-e", "40", "--seed", "3",
               "-j", "1", "-np", "--profiles", "0", "--guidance", "hits", "-r", "duplicate-char", "-r", "remove-char",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    [note] = [n for n in results["notes"] if n.startswith("hit-count guidance")]
    # a character more is one more iteration of the loop: the first such candidate raises its count
    kept = int(note.split(": ")[1].split()[0])
    assert kept >= 1 and "tracing the Python program" in note, note
    assert "kept w1" in done.stderr


# -- the dictionary ------------------------------------------------------------------------------

def test_a_dict_file_takes_plain_and_afl_quoted_lines(tmp_path):
    path = tmp_path / "tokens.dict"
    path.write_bytes(b'# a comment\nplain token\nkw_if="if"\n"back\\\\slash"\n"\\x00\\x01"\n"a \\"quote\\""\n\n')
    assert read_dictionary(str(path)) == [b"plain token", b"if", b"back\\slash", b"\x00\x01", b'a "quote"']


def test_the_source_gives_string_literals_and_the_literal_runs_of_regexes(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "parse.py").write_text(
        '"""Module docstring."""\nimport re\nKEY = "token-from-python"\n'
        'PATTERN = re.compile(r"^begin\\s+(\\w+)\\.end$")\n')
    (tmp_path / "main.c").write_bytes(b'/* "in a comment" */\nconst char *s = "<!--x\\x41\\n";\nchar c = \'@\';\n')
    (tmp_path / "broken.py").write_text("def (:\n")
    tokens = source_tokens(str(tmp_path))
    assert b"token-from-python" in tokens and b"<!--xA\n" in tokens and b"@" in tokens
    assert b"begin" in tokens and b".end" in tokens
    assert b"Module docstring." not in tokens and b"in a comment" not in tokens
    assert regex_fragments(r"java\.lang\.(Obj|Str)ing") == [b"java.lang.", b"Obj", b"Str", b"ing"]
    assert python_literals("x = b'\\xff'") == [b"\xff"] and c_literals(b"'\\''") == [b"'"]


def test_dictionary_tokens_appear_in_mutations():
    tokens = seed_dictionary([b"alpha beta\n"], [b"<<TOKEN>>"])
    for name in ("insert-token", "replace-token"):
        [rule] = parse_rule_specs([name], binary=False)
        rule.give_dictionary(tokens)
        rng = random.Random(7)
        outputs = [rule.apply(b"alpha beta\ngamma\n", rng) for _ in range(300)]
        assert any(o is not None and b"<<TOKEN>>" in o for o in outputs), name


def test_many_given_tokens_are_not_crowded_out_by_the_seeds():
    seed = " ".join(f"word{i}" for i in range(400)).encode()
    given = [f"given{i}".encode() for i in range(300)]
    tokens = seed_dictionary([seed], given)
    assert set(given) <= set(tokens)


def test_source_and_dict_reach_the_fuzzer_and_bad_ones_are_one_error(tmp_path):
    write_program(tmp_path, "count.py", COUNTING)
    (tmp_path / "seed.txt").write_text("f(a)\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lexer.py").write_text('WORD = "LITERALTOKEN"\n')
    # guidance keeps every input that makes the loop run longer, so the inserted tokens show in the kept inputs
    # (the 40 runs end the search; -t leaves them room on a busy machine, where guided runs are slow)
    done = cli("fuzz", "-b", "./count.py", "-w", "seed.txt", "-o", "out", "-t", "40", "-e", "40", "--seed", "1",
               "-j", "1", "-np", "--profiles", "0", "--source", "src", "-r", "insert-token", "--guidance", "hits",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    kept = [p.read_bytes() for p in (tmp_path / "out" / "inputs").glob("*")]
    assert any(b"LITERALTOKEN" in data for data in kept), kept
    one_error(cli("fuzz", "-b", "./count.py", "-w", "seed.txt", "-o", "o2", "--source", "nowhere", cwd=tmp_path),
              "nowhere", "--source")
    (tmp_path / "empty").mkdir()
    one_error(cli("fuzz", "-b", "./count.py", "-w", "seed.txt", "-o", "o3", "--source", "empty", cwd=tmp_path),
              "empty", "no .py, C or C++ files")
    (tmp_path / "bad.dict").write_text('good\n"unterminated \\q"\n')
    one_error(cli("fuzz", "-b", "./count.py", "-w", "seed.txt", "-o", "o4", "--dict", "bad.dict", cwd=tmp_path),
              "bad.dict", "line 2")
    one_error(cli("fuzz", "-b", "./count.py", "-w", "seed.txt", "-o", "o5", "--guidance", "maybe", cwd=tmp_path),
              "maybe", code=2)
    assert not any((tmp_path / d).exists() for d in ("o2", "o3", "o4", "o5"))


# -- delta debugging that keeps the growth -----------------------------------------------------

def test_deltadebugging_keeps_the_growth_of_a_quadratic_input(tmp_path):
    write_program(tmp_path, "pairs.py", PAIRS)
    lines = [f"noise {i}, (one) bracket" for i in range(10)]
    lines.insert(6, "start " + "(" * 1200 + " end")
    (tmp_path / "slow.txt").write_text("\n".join(lines) + "\n")
    done = cli("deltadebugging", "./pairs.py", "slow.txt", "-o", "dd", "--keep", "growth", "--tolerance", "0.6",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "dd" / "deltadebugging.json").read_text())
    shrunk = (tmp_path / "dd" / "slow.min.txt").read_bytes()
    assert len(shrunk) < 40 and b"((((((((" in shrunk, shrunk
    # the shrunk input grown back is superlinear like the original (the fitted exponents vary with the load)
    exponent = report["growth"]["exponent"] or report["growth"]["exponent_at_least"]
    assert report["growth"]["superlinear"] and exponent >= 1.5, report
    assert report["growth_kept"] and "growth with the run of '('" in done.stdout


class _CostOfX:
    """Stands in for the runner: a run costs ``cost(n)`` CPU seconds for an input holding n "x"."""

    def __init__(self, cost) -> None:
        self.cost = cost

    def measure(self, data: bytes) -> Measurement:
        seconds = self.cost(data.count(b"x"))
        return Measurement(seconds, seconds, 0, False)


@pytest.mark.parametrize("cost, order", [(lambda n: 0.05 + 1e-3 * 1.5 ** n, "exponential"),
                                         (lambda n: 0.05 + 1e-4 * n ** 2, "quadratic")])
def test_keep_growth_takes_an_exponential_and_names_a_quadratic(cost, order):
    """--keep growth refused an exponential (no power exponent) as a cost that does not grow; and a quadratic from a
    run of 2000 is measured from a sixteenth of it up, wide enough a range to name its order."""
    original = b"start " + b"x" * (24 if order == "exponential" else 2000) + b" end\n"
    growth = _growth_to_keep(_CostOfX(cost), original, Path("slow.txt"), "cpu", 0.01)
    assert growth.order == order and growth.superlinear, growth
    assert max(growth.counts) >= 16 * min(growth.counts) - 16, growth.counts


def test_deltadebugging_refuses_what_it_cannot_honour(tmp_path):
    write_program(tmp_path, "pairs.py", PAIRS)
    (tmp_path / "slow.txt").write_text("start " + "(" * 500 + " end\n")
    # the run of "(" blanked out costs more than a tenth of the original: a tolerance of 0.9 would let an ordinary
    # input pass, and keep nothing of the ratio at equal size (should the runs vary by more, it is below the noise)
    error = one_error(cli("deltadebugging", "./pairs.py", "slow.txt", "-o", "dd", "--keep", "growth", "--tolerance",
                          "0.9", cwd=tmp_path), "--tolerance 0.9")
    assert "ordinary" in error or "noise" in error
    (tmp_path / "short.txt").write_text("abc\n")
    one_error(cli("deltadebugging", "./pairs.py", "short.txt", "-o", "dd", "--keep", "growth", "--tolerance", "0.5",
                  cwd=tmp_path), "short.txt", "repeated part")
    assert not (tmp_path / "dd").exists()


@pytest.mark.parametrize("option", ["--guidance", "--source", "--dict"])
def test_the_new_options_are_in_the_help(tmp_path, option):
    done = cli("fuzz", "--help", cwd=tmp_path)
    assert done.returncode == 0 and option in done.stdout
