"""Pumping (a unit repeated thousands of times at a punctuation mark) and the fuzzer finding a quadratic
program with it, its growth fitted above the start-up, within the time budget."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

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
                           "--metric", "cpu", "-ht", "2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    # the whole run, search and analysis, within the budget (the analysis' runs are killed at its end)
    assert results["elapsed"] <= budget + 3, results["elapsed"]
    assert results["reported"], (done.stdout, results["analysed"])
    best = results["reported"][0]
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
    assert ("largest measured: " in done.stdout) == (largest["file"] != best["file"]), done.stdout
    assert f"{largest['file']} ({largest['size']} B" in done.stdout


def test_grow_number_passes_over_a_run_of_digits_longer_than_a_number():
    """A run of thousands of digits (other rules grow them) made int() raise past Python's 4,300-digit limit and
    stopped the whole fuzzing; it is left alone, and the numbers beside it still grow."""
    rule = next(r for r in parse_rule_specs(["grow-number"], False))
    long_run = b"017" * 2000
    assert rule.apply(long_run, random.Random(1)) is None
    grown = rule.apply(long_run + b" 12", random.Random(1))
    assert grown is not None and grown.startswith(long_run + b" ") and int(grown.split()[-1]) > 12
