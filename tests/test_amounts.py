"""The one formatter of measured values (perun_core/amounts.py): units, prefixes, digits, percentages, ticks."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from perun_core.amounts import format_amount, format_percent, nice_ticks, relative_change

#: what one prefixed unit is worth in the family's base unit (seconds, bytes, one)
_WORTH = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "B": 1.0, "KiB": 1024.0, "MiB": 1024.0 ** 2,
          "GiB": 1024.0 ** 3, "TiB": 1024.0 ** 4, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_BASE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "B": 1.0, "KiB": 1024.0, "samples": 1.0, "": 1.0}
_TEXT = re.compile(r"^(-?)([0-9.]+(?:e[-+][0-9]+)?)([kMGT]?)(?: (.*))?$")


def read_back(text: str, unit: str) -> float:
    """The value a reader takes from ``text``, in ``unit``."""
    match = _TEXT.match(text)
    assert match, text
    sign, number, suffix, shown = match.groups()
    value = float(number)
    if unit in ("samples", ""):
        assert (shown or "") == unit, text
        worth = _WORTH[suffix]
    else:
        assert not suffix, text
        worth = _WORTH[shown] / _BASE[unit]
    return (-1 if sign else 1) * value * worth


@pytest.mark.parametrize("value,unit,expected", [
    (0.1839, "s", "183.9 ms"),
    (12000, "us", "12.0 ms"),
    (58600, "us", "58.6 ms"),
    (25276514304, "B", "23.5 GiB"),
    (512, "B", "512 B"),
    (5, "allocations", "5 allocations"),
    (58600, "samples", "58.6k samples"),
    (0.00042, "s", "420.0 µs"),
    (-0.0123, "s", "-12.3 ms"),
    (0, "s", "0 s"),
    (999.96, "ms", "1.00 s"),
    (None, "s", "-"),
    ("linear", "s", "linear"),
])
def test_examples(value, unit, expected):
    assert format_amount(value, unit) == expected


_UNITS = st.sampled_from(sorted(_BASE))
_POSITIVE = st.floats(min_value=1e-9, max_value=1e13, allow_nan=False, allow_infinity=False)


@given(_POSITIVE, _UNITS)
@settings(max_examples=400, deadline=None)
def test_never_prints_a_value_that_is_not_zero_as_zero(value, unit):
    assert read_back(format_amount(value, unit), unit) != 0


@given(_POSITIVE, _UNITS)
@settings(max_examples=400, deadline=None)
def test_round_trips_the_value_to_three_significant_digits(value, unit):
    shown = read_back(format_amount(value, unit), unit)
    assert math.isclose(shown, value, rel_tol=0.0051), (value, unit, format_amount(value, unit))
    # so the order of magnitude survives too
    assert abs(math.log10(shown) - math.log10(value)) < 0.01


@given(_POSITIVE, _POSITIVE, _UNITS)
@settings(max_examples=400, deadline=None)
def test_is_monotonic(a, b, unit):
    low, high = sorted((a, b))
    assert read_back(format_amount(low, unit), unit) <= read_back(format_amount(high, unit), unit)
    assert read_back(format_amount(-high, unit), unit) <= read_back(format_amount(-low, unit), unit)


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).filter(lambda p: p != 0))
def test_percentages_keep_their_sign_and_never_read_zero(percent):
    text = format_percent(percent)
    assert text[0] == ("+" if percent > 0 else "-")
    if abs(percent) < 0.01:
        assert text[1:] == "<0.01%"
        return
    assert float(text[1:-1]) != 0
    assert math.isclose(float(text[:-1]), percent, rel_tol=0.051)


def test_one_percentage_for_one_change():
    assert relative_change(0.1839, 0.2482) == pytest.approx(34.96, abs=0.01)
    assert format_percent(relative_change(100, 142.5)) == "+42.5%"
    assert relative_change(0, 1) is None and format_percent(None) == "n/a"
    assert format_percent(0.0) == "0%"


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), st.floats(min_value=1e-6, max_value=1e6),
       st.integers(min_value=3, max_value=8))
def test_ticks_are_even_round_and_cover_the_range(low, span, count):
    # a span below a millionth of the values is beyond what a float's ticks can tell apart
    assume(span > 1e-6 * abs(low))
    high = low + span
    ticks = nice_ticks(low, high, count)
    assert ticks[0] <= low + 1e-9 * max(1, abs(low)) and ticks[-1] >= high - 1e-9 * max(1, abs(high))
    steps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert all(math.isclose(s, steps[0], rel_tol=1e-6) for s in steps)
    mantissa = steps[0] / 10 ** math.floor(math.log10(steps[0]) + 1e-6)
    assert any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 5))
    assert len(ticks) <= 2 * count + 1


def test_short_plots_get_even_ticks():
    assert nice_ticks(0.042, 0.127, 4) == [0.0, 0.05, 0.1, 0.15]


def test_a_bound_just_below_zero_is_covered_by_the_first_tick():
    # the snap of binary noise onto a multiple of the step took -6e-8 for 0 against a step of 1e5 (a value the
    # axis then left out); 0.3 against a step of 0.1 is still that multiple
    ticks = nice_ticks(-5.960464477539063e-08, 100001.0, 3)
    assert ticks[0] <= -5.960464477539063e-08 and ticks[-1] >= 100001.0, ticks
    assert nice_ticks(0.3, 0.9, 7)[0] == 0.3


def test_a_wrapped_line_keeps_every_amount_with_its_unit():
    """The one wrap of the front ends (explain dialog, the TUI's logs, diff's sentences): at 40 columns the
    explain dialog broke '100 %' and '400 samples' across lines."""
    from perun_core.amounts import wrap_text

    text = "sll_search (src/sll.c:20): 400 samples -> 1300 samples (+225%), 100 % of it, 64.0M Ir"
    for width in range(21, 60):  # from where its longest word fits a line
        lines = wrap_text(text, width, indent=5, first=2)
        assert lines[0].startswith("  s") and all(line.startswith("     ") for line in lines[1:])
        assert all(len(line) <= width for line in lines), lines
        assert " ".join(line.strip() for line in lines) == text
        for line in lines:
            assert not re.search(r"\d$", line) and not re.match(r" *(%|samples|Ir)", line), (width, lines)


def test_a_p_value_stays_whole_on_its_line_and_a_function_has_one_percentage_style():
    """At 40x12 the explain dialog broke 'p' from its value ('..., p' / '< 0.0001, through') and showed '99 %' next
    to '-99.8%'."""
    from perun_core.amounts import wrap_text
    from perun_core.check.explain_result import ExplainedFunction

    function = ExplainedFunction("sll_insert", "src/sll.c", 12, 419.0, 1.0, 0.99, "", 0.00001)
    text = function.text("samples")
    assert "(-99.8%), 99% of the change, p < 0.0001" in text, text
    assert " %" not in text
    for width in range(21, 60):  # from where its longest word, '(src/sll.c:12):', fits a line
        lines = wrap_text(text, width, indent=5)
        assert " ".join(line.strip() for line in lines) == text
        assert sum("p < 0.0001" in line for line in lines) == 1, (width, lines)
    for width in range(14, 30):
        assert sum("p = 0.03" in line for line in wrap_text("a ranked function, 87% of it, p = 0.03", width)) == 1


def test_the_explain_dialogs_ranked_function_keeps_its_amounts_with_their_units():
    from perun_tui.modals.explain import hanging

    text = "sll_search (src/sll.c:20): 400 samples -> 1300 samples (+225%), 100 % of it"
    for width in range(20, 45):
        lines = hanging(text, 5, width).splitlines()
        assert " ".join(line.strip() for line in lines) == text
        assert not any(re.search(r"\d$", line) for line in lines), (width, lines)
