"""Text mutations, equal-size fitness and growth orders of the fuzzer, and the CLI on a quadratic and a linear program."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perun_core.fuzz.confirm import Reference, confidence_greater, grown_seed, grows_linearly
from perun_core.fuzz.findings import compact_rules
from perun_core.fuzz.growth import describe, fit_growth, order_rank, periodic_regions, scaled
from perun_core.fuzz.rules import parse_rule_specs
from perun_core.fuzz.textrules import RepeatVaried, seed_dictionary

from .programs import write_program

TEXT_RULES = [r for r in parse_rule_specs(None, False)]
GROWTH_RULES = ("repeat-substring", "grow-run", "nest-delimiters")


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=40), st.integers(0, 2**32 - 1))
def test_every_text_rule_keeps_valid_utf8_valid(text, seed):
    data = text.encode("utf-8", "surrogatepass")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        return  # not valid UTF-8 to start with
    rng = random.Random(seed)
    for rule in TEXT_RULES:
        rule.give_dictionary(seed_dictionary([data]))
        out = rule.apply(data, rng)
        if out is not None:
            out.decode("utf-8")  # raises on a cut code point


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=30).filter(lambda t: not any(0xD800 <= ord(c) <= 0xDFFF for c in t)),
       st.integers(0, 2**32 - 1))
def test_growth_rules_grow(text, seed):
    data = text.encode()
    rng = random.Random(seed)
    for rule in TEXT_RULES:
        if rule.name in GROWTH_RULES:
            out = rule.apply(data, rng)
            assert out is not None and len(out) > len(data), rule.name


def test_grow_run_grows_a_run_of_a_multibyte_character():
    rng = random.Random(4)
    rule = next(r for r in TEXT_RULES if r.name == "grow-run")
    data = "ab\u00e9\u00e9c".encode()
    grown = {rule.apply(data, rng) for _ in range(50)}
    assert any("\u00e9" * 4 in g.decode() for g in grown)


@settings(max_examples=80, deadline=None)
@given(st.from_regex(r"[a-zA-Z0-9_.é]{1,12}", fullmatch=True), st.integers(1, 3000), st.integers(0, 2**32 - 1))
def test_repeat_varied_adds_distinct_variants_of_a_word_keeping_its_shape(word, most, seed):
    out = RepeatVaried().mutate(f"{word}\n".encode(), random.Random(seed), {"times": most})
    if out is None:  # nothing to vary: no letter or digit
        assert not any(c.isascii() and c.isalnum() for c in word)
        return
    # the variants come right after the word, separated as it is from what follows it
    first, *variants, last = out.decode().split("\n")
    assert first == word and last == ""
    assert 1 <= len(variants) <= most and len(set(variants) | {word}) == len(variants) + 1
    for variant in variants:
        # the same length, and the same class (digit, lower-case, upper-case ASCII letter) where it differs
        assert len(variant) == len(word)
        assert all(a == b or a.isascii() and b.isascii() and a.isdigit() == b.isdigit() and a.islower() == b.islower()
                   and a.isalnum() and b.isalnum() for a, b in zip(word, variant))


def test_repeat_varied_varies_the_same_positions_of_every_copy():
    for seed in range(20):
        out = RepeatVaried().mutate(b"key_alpha_001\n", random.Random(seed), {"times": 50})
        variants = out.decode().split()[1:]
        changed = {tuple(i for i, (a, b) in enumerate(zip("key_alpha_001", v)) if a != b) for v in variants}
        assert 2 <= len(variants) <= 50 and len(set(variants)) == len(variants)
        assert len(set().union(*changed)) <= 2  # 50 variants need two positions at most, the same ones every time


def test_repeat_varied_also_puts_its_variants_in_place_of_the_items_after_the_one_it_varies():
    data = b"key_001 key_001 key_001 other\nnext line\n"
    results = {RepeatVaried().mutate(data, random.Random(seed), {"times": 3}) for seed in range(60)}
    same_size = [r for r in results if r is not None and len(r) == len(data)]
    assert same_size, results
    for result in same_size:
        # the separators stay where they were; only letters and digits changed, and no item is repeated verbatim
        assert [i for i, c in enumerate(result) if c in b" \n"] == [i for i, c in enumerate(data) if c in b" \n"]
        changed = [w for w, o in zip(result.split(), data.split()) if w != o]
        assert changed and len(set(changed)) == len(changed)



@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(0, 2**32 - 1))
def test_repeat_varied_adds_no_more_than_the_room_the_size_limit_leaves(room, seed):
    # a long line (a whole input without newlines) and a short one: what the search would throw away for its size
    # is never built, whichever item is varied
    # (the room is in bytes: "é" takes two of them)
    data = (" ".join(f"entry_{i:04d}é" for i in range(300)) + "\nkey_001\n").encode()
    rule = next(r for r in TEXT_RULES if r.name == "repeat-varied")
    out = rule.apply(data, random.Random(seed), room)
    assert out is None or len(out) <= len(data) + room

def test_the_dictionary_holds_the_seeds_punctuation_words_and_the_dict_file():
    tokens = seed_dictionary([b"key = \"value\" # caf\xc3\xa9"], [b"<!--"])
    assert b'"' in tokens and b"#" in tokens and b"key" in tokens and "\u00e9".encode() in tokens
    assert tokens[-1] == b"<!--"


def test_periodic_regions_find_runs_and_nested_delimiters_and_scale_them():
    text = "x = " + "(" * 20 + "1" + ")" * 20
    regions = periodic_regions(text)
    assert [r.unit for r in regions] == ["(", ")"]
    assert scaled(text, regions, 3) == "x = (((1)))"
    assert describe(text, regions).startswith("the run of '('")
    assert periodic_regions("short") == []


def test_every_run_of_the_slow_unit_scales_with_it_whatever_its_length():
    # a long run split by mutations: left at 800, the shorter runs would keep the input slow at every scale
    text = "(" + "1" * 3000 + "." + "1" * 800 + "x" + "1" * 20 + "j)"
    regions = periodic_regions(text)
    assert [(r.unit, r.count) for r in regions] == [("1", 3000), ("1", 800), ("1", 20)]
    assert scaled(text, regions, 2) == "(11.11x11j)"


@pytest.mark.parametrize(("cost", "order", "superlinear"), [
    (lambda k: 1.0 + 0.01 * k, "linear", False),
    (lambda k: 1.0 + 1e-4 * k * k, "quadratic", True),
    (lambda k: 1.0 + 1e-6 * k ** 3, "cubic", True),
])
def test_growth_orders_of_polynomial_costs(cost, order, superlinear):
    counts = [100, 200, 400, 800, 1600, 3200]
    growth = fit_growth(counts, [cost(k) for k in counts], 1.0, 0.01)
    assert growth.order == order and growth.superlinear is superlinear


def test_an_exponential_cost_is_exponential_and_ranks_above_any_polynomial():
    counts = list(range(14, 24))
    growth = fit_growth(counts, [1.0 + 1e-5 * 2 ** k for k in counts], 1.0, 0.01)
    assert growth.order == "exponential" and growth.superlinear and 1.9 < growth.per_step < 2.1
    cubic = fit_growth([100, 200, 400, 800], [1.0 + 1e-6 * k ** 3 for k in (100, 200, 400, 800)], 1.0, 0.01)
    assert order_rank(growth) > order_rank(cubic)


def test_a_cost_within_the_noise_has_no_growth_order():
    growth = fit_growth([1, 2, 4, 8, 16], [1.0, 1.01, 0.99, 1.0, 1.02], 1.0, 0.02)
    assert growth.order == "constant" and growth.exponent is None and not growth.superlinear


def test_the_reference_interpolates_the_cheaper_growth_of_a_seed_whose_repetition_is_superlinear():
    seed = b"ab\n"
    # the repeated seed costs 30 at 192 where a straight line through the points before says 10
    reference = Reference(seed, {"tile": [(3, 1.0), (24, 2.0), (192, 30.0)], "pad": [(3, 1.0), (24, 1.5), (192, 40.0)]})
    assert not reference.tile_ordinary
    assert reference.cost(24) == 1.5 and reference.strategy(24) == "pad"
    assert reference.cost(192) == 30.0 and reference.strategy(192) == "tile"
    assert reference.cost(384) == pytest.approx(30.0 + 28.0 / 168 * 192)
    assert grown_seed(seed, 10, "tile") == b"ab\nab\nab\na"
    assert grown_seed(seed, 6, "pad") == b"ab\n   "
    assert grown_seed("é\n".encode(), 4, "tile") == "é\né".encode()[:3]


def test_a_seed_repeated_at_a_linear_cost_is_the_reference_even_where_padding_is_cheaper():
    # padding costs nothing to read: against it, more of the seed's own content looked slower the larger it was,
    # and a search grew its inputs to the size limit instead of finding what made them slow
    reference = Reference(b"ab\n", {"tile": [(3, 1.0), (24, 2.0), (192, 9.5)], "pad": [(3, 1.0), (24, 1.1), (192, 1.2)]})
    assert reference.tile_ordinary
    assert reference.strategy(24) == reference.strategy(192) == "tile" and reference.cost(192) == 9.5
    assert reference.sample(10) == b"ab\nab\nab\na"


@pytest.mark.parametrize("points, linear", [
    ([(1, 1.0), (8, 2.0), (64, 9.0)], True),               # a straight line
    ([(1, 1.0), (8, 1.1), (64, 1.3)], True),               # growth within a quarter of the first cost: noise
    ([(1, 1.0), (8, 2.0), (64, 50.0)], False),             # quadratic: far above the line through the two before
    ([(1, 1.0), (8, 1.1), (64, 4.0), (512, 30.0)], False),  # bends upwards only at the largest sizes
    ([(1, 1.0), (8, 9.0)], False),                         # two points tell nothing
])
def test_a_cost_curve_grows_linearly_when_no_point_is_far_above_the_line_through_the_two_before(points, linear):
    assert grows_linearly(points) is linear


def test_confidence_of_paired_runs():
    assert confidence_greater([5, 6, 7, 8, 9], [1, 2, 3, 4, 4.5]) == pytest.approx(1 - 1 / 252)
    assert confidence_greater([1, 2, 3], [1, 2, 3]) < 0.7


def test_kept_rules_are_listed_compactly():
    assert compact_rules(["grow-run"] * 3 + ["truncate", "a", "b", "c", "d"]) == "grow-run x3, a, b, c, +2 more"


# -- the command line on a linear program ------------------------------------

#: the same work per character whatever the input: linear
LINEAR = r'''
import sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
steps = 0
for char in text:
    for _ in range(3 if char == "(" else 2):
        steps += 1
print(steps)
'''


def _fuzz(tmp_path: Path, source: str, name: str) -> tuple[subprocess.CompletedProcess, dict]:
    program = write_program(tmp_path, name, source)
    (tmp_path / "seed.txt").write_text("f(a, (b)) + g(c)\n")
    out = tmp_path / f"out-{name}"
    done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "fuzz", "-b", str(program), "-w", "seed.txt",
                           "-o", str(out), "-t", "14", "--seed", "5", "-np", "-r", "grow-run", "-r", "truncate",
                           "-r", "repeat-substring", "--profiles", "0", "-N", "20000"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return done, json.loads((out / "results.json").read_text())


def test_fuzzing_a_linear_program_reports_nothing(tmp_path):
    done, results = _fuzz(tmp_path, LINEAR, "linear.py")
    assert results["reported"] == [], results["reported"]
    assert "no finding" in done.stdout


def test_deltadebugging_refuses_a_tolerance_below_the_noise(tmp_path):
    program = write_program(tmp_path, "linear.py", LINEAR)
    (tmp_path / "input.txt").write_text("f(a, (b)) + g(c)\n" * 50)
    done = subprocess.run([sys.executable, "-m", "perun_core.cli.entry", "deltadebugging", str(program), "input.txt",
                           "-o", "dd", "--tolerance", "0", "--metric", "wall"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    lines = done.stderr.strip().splitlines()
    if done.returncode == 0:  # the wall times of the runs did not vary at all: a zero tolerance is honest there
        assert (tmp_path / "dd").is_dir(), done.stdout + done.stderr
        return
    assert done.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "--tolerance 0" in lines[0] and "noise" in lines[0]
    assert not (tmp_path / "dd").exists()
