"""Pumping (a unit repeated thousands of times at a punctuation mark) and the fuzzer finding a quadratic
program with it, its growth fitted above the start-up, within the time budget."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from perun_core.fuzz.growth import WHOLE_INPUT
from perun_core.fuzz.pump import Pump, pump_plan, pump_sites
from perun_core.fuzz.rules import parse_rule_specs

from .programs import write_program

#: quadratic in the number of "(": for each one, the ones before it are counted one by one
QUADRATIC = r'''
import sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
pairs = 0
for i, char in enumerate(text):
    if char == "(":
        pairs += sum(1 for c in text[:i] if c == "(")
print(pairs)
'''


#: an address whose user part ends at some "@": each "@" is tried from the last one back, and the host after it is
#: checked in full; only a host with a bracket after every "@" makes it quadratic (a near miss after a run of "@")
NEAR_MISS = r'''
import sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
authority = text.split("//", 1)[-1].split("/", 1)[0]
for at in reversed([i for i, c in enumerate(authority) if c == "@"]):
    if not any(c in "[]" for c in authority[at + 1:]):
        break
'''


def test_sites_are_punctuation_and_word_starts_spread_over_the_input():
    data = "ab, cd(é)".encode()
    assert [data[s:s + 1] for s in pump_sites(data)] == [b"a", b",", b" ", b"c", b"(", "é".encode()[:1], b")"]
    many = b"x." * 500
    sites = pump_sites(many, 24)
    assert len(sites) == 24 and sites[0] < 10 and sites[-1] > len(many) * 0.9


def test_the_plan_pumps_in_place_then_cuts_and_tails_with_an_escape_first():
    seed = b'a="b c";'
    plan = list(pump_plan(seed, 10_000))
    kinds = [kind for kind, _ in plan]
    in_place = [data for kind, data in plan if kind[0] == "in place"]
    assert len(in_place) == len(pump_sites(seed)) and all(4000 <= len(d) <= 4096 for d in in_place)
    assert b"a=" + b'"' * 4088 + b'"b c";' in in_place
    first_cut = next(data for kind, data in plan if kind[0] == "cut")
    assert first_cut == b"\\" * 4088  # the escape first, cut at the first site (4096 bytes less the seed's 8)
    assert kinds.index(("cut", b"\\")) < kinds.index(("cut", b"(")) < kinds.index(("cut", b"@"))
    assert b'a="' + b"b" * 4088 + b'\\' in [data for kind, data in plan if kind == ("tail", b"\\")]
    assert all(len(data) <= 100 for _, data in pump_plan(seed, 100))


def test_the_plan_tries_each_context_before_the_same_one_elsewhere_and_drops_nothing():
    seed = b'p=1&q=2&r=3&s="t u"&v=4&w=5#top'
    plan = list(pump_plan(seed, 10_000))
    units = {kind[1] for kind, _ in plan if kind[0] == "cut"}
    sites = pump_sites(seed)
    chars = {seed[at:at + 1] for at in sites}
    # a reordering: every cut at every site and every tail after every distinct character, once
    cuts = {seed[:at] + unit * ((4096 - len(seed)) // len(unit)) for unit in units for at in sites}
    assert sorted(data for kind, data in plan if kind[0] == "cut") == sorted(cuts)
    assert len([kind for kind, _ in plan if kind[0] == "tail"]) == sum(1 for u in units for c in chars if u != c)
    # the first round: one cut per context, so the cut inside the open quote comes before the cuts at the
    # other "&" and letters, and every unit is tailed after each punctuation mark before any run of a letter
    run = 4096 - len(seed)
    first_round = plan[:plan.index((("cut", b"\\"), b"p=1" + b"\\" * run))]
    assert (("cut", b"\\"), b'p=1&q=2&r=3&s="t' + b"\\" * run) in first_round
    assert (("tail", b"["), b'p=1&q=2&r=3&s="t u"&v=4&w=5' + b"#" * run + b"[") in first_round
    assert not any(kind[0] == "tail" and data[-2:-1].isalnum() for kind, data in first_round)


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=1, max_size=40).filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t)),
       st.integers(0, 2**32 - 1))
def test_pumping_keeps_utf8_valid(text, seed):
    data = text.encode()
    rule = next(r for r in parse_rule_specs(["pump"], False))
    out = rule.apply(data, random.Random(seed))
    assert out is not None and out != data
    out.decode("utf-8")
    for _, pumped in list(pump_plan(data, 512))[:40]:
        pumped.decode("utf-8")


def test_the_pump_rule_is_a_default_text_rule():
    assert "pump" in [r.name for r in parse_rule_specs(None, False)]
    assert "pump" not in [r.name for r in parse_rule_specs(None, True)]
    assert Pump.kind == "text"


def test_the_cli_finds_a_quadratic_program_and_fits_its_order_within_the_budget(tmp_path: Path):
    program = write_program(tmp_path, "quadratic.py", QUADRATIC)
    (tmp_path / "seed.txt").write_text("f(a, (b)) + g(c)\n")
    budget = 60
    done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "fuzz", "-b", str(program), "-w", "seed.txt",
                           "-o", "out", "-t", str(budget), "--seed", "3", "-np", "--profiles", "0",
                           "--metric", "cpu", "-ht", "2", "--stop-at", "10"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "COLUMNS": "400"})  # one summary line per input, unwrapped
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    # the whole run, search and analysis, within the budget (the analysis' runs are killed at its end)
    assert results["elapsed"] <= budget + 3, results["elapsed"]
    assert results["reported"], (done.stdout, results["analysed"])
    # the first finding that names a part of the input is the run of "(": findings rank by growth order, so one
    # of copies of the whole input, whose fit a loaded machine can push past n^2.5 (named cubic), may come first
    best = next((r for r in results["reported"] if r["growth"]["part"] != WHOLE_INPUT), None)
    assert best is not None, results["reported"]
    assert all(r["growth"]["part"] == WHOLE_INPUT for r in results["reported"][:results["reported"].index(best)])
    growth = best["growth"]
    # quadratic; a loaded machine (the suite's own parallel workers) inflates the largest runs' CPU time, and
    # with few points in the budget the fit may then lean to cubic, never to linear
    assert growth["superlinear"] and growth["order"] in ("quadratic", "cubic"), growth
    assert 1.6 <= growth["exponent"] <= 3.5, growth
    assert "'('" in growth["part"] and best["ratio_at_equal_size"] >= 1.5
    assert "quadratic" in done.stdout
    # the worst input the growth analysis measured is kept beside the compared one, and so is the kept input
    largest = best["largest"]
    assert largest["cost"] == max(growth["costs"]) and largest["size"] >= best["size"], (largest, best)
    assert (tmp_path / "out" / largest["file"]).stat().st_size == largest["size"]
    assert (tmp_path / "out" / best["kept_file"]).is_file()
    assert f"]({largest['file']})" in (tmp_path / "out" / "results.md").read_text()
    # the summary names it when it is not the compared input
    named = any("largest measured: " in line and f"{largest['file']} (" in line for line in done.stdout.splitlines())
    assert named == (largest["file"] != best["file"]), done.stdout
    assert f"{largest['file']} ({largest['size']} B" in done.stdout


def test_the_cli_finds_a_near_miss_after_a_run_within_a_few_hundred_runs(tmp_path: Path):
    """The plan tails the run of "@" with "[" within its first fifty pumpings of this address (it once cut the
    input at every "/" with every unit first: 136 pumpings, and the search of a real address parser ended before)."""
    program = write_program(tmp_path, "near_miss.py", NEAR_MISS)
    (tmp_path / "seed.txt").write_text("me@host/a/b/c/d/e/f/g/h/i/j\n")
    done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "fuzz", "-b", str(program), "-w", "seed.txt",
                           "-o", "out", "-t", "90", "-e", "150", "-r", "pump", "--stop-at", "5", "--seed", "1",
                           "-np", "--profiles", "0", "--metric", "cpu", "-ht", "5"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    kept = [(tmp_path / "out" / f["file"]).read_bytes() for f in results["findings"]]
    assert any(data.rstrip(b"[]").endswith(b"@" * 100) and data[-1:] in b"[]" for data in kept), \
        (results["executions"], [data[:40] for data in kept])


def test_grow_number_passes_over_a_run_of_digits_longer_than_a_number():
    """A run of thousands of digits (other rules grow them) made int() raise past Python's 4,300-digit limit and
    stopped the whole fuzzing; it is left alone, and the numbers beside it still grow."""
    rule = next(r for r in parse_rule_specs(["grow-number"], False))
    long_run = b"017" * 2000
    assert rule.apply(long_run, random.Random(1)) is None
    grown = rule.apply(long_run + b" 12", random.Random(1))
    assert grown is not None and grown.startswith(long_run + b" ") and int(grown.split()[-1]) > 12
