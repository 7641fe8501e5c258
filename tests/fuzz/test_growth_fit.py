"""The growth analysis' fit on synthetic costs: a start-up plus a term in the repetitions of the slow part."""

from __future__ import annotations

import random

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from perun_core.fuzz.growth import fit_growth, order_rank

ORDERS = {1: "linear", 2: "quadratic", 3: "cubic"}


def _counts(start: int, points: int) -> list[int]:
    return [start * 2 ** i for i in range(points)]


@settings(max_examples=60, deadline=None)
@given(k=st.sampled_from([1, 2, 3]), start=st.integers(1, 200), points=st.integers(6, 9),
       share=st.floats(2.0, 50.0), startup=st.floats(1e-3, 10.0), noise=st.floats(0.0, 0.01),
       seed=st.integers(0, 2**16))
def test_a_power_above_a_start_up_gives_its_exponent(k, start, points, share, startup, noise, seed):
    """a*n^k + c: the term at the largest count is ``share`` times the start-up (from twice it to fifty
    times: a start-up that dominates all but the largest points must not pull the exponent down)."""
    counts = _counts(start, points)
    a = share * startup / counts[-1] ** k
    rng = random.Random(seed)
    costs = [(startup + a * n ** k) * (1 + rng.uniform(-noise, noise)) for n in counts]
    growth = fit_growth(counts, costs, startup, max(noise, 0.005))
    assert growth.order == ORDERS[k], (growth, counts, costs)
    assert abs(growth.exponent - k) <= 0.3
    assert growth.superlinear is (k > 1)


@settings(max_examples=40, deadline=None)
@given(k=st.sampled_from([2, 3]), linear_share=st.floats(1.0, 4.0), start=st.integers(8, 64))
def test_a_superlinear_term_under_a_larger_linear_one_is_still_found(k, linear_share, start):
    """c + l*n + a*n^k with the linear part up to four times the superlinear one at the largest count: the
    order is the superlinear term's (a program quadratic in the repeats of a unit, linear in their bytes)."""
    counts = _counts(start, 8)
    top = counts[-1]
    a = 1.0 / top ** k
    linear = linear_share / top
    costs = [0.2 + linear * n + a * n ** k for n in counts]
    growth = fit_growth(counts, costs, 0.2, 0.01)
    assert growth.order == ORDERS[k] and growth.superlinear, growth


@settings(max_examples=40, deadline=None)
@given(factor=st.floats(1.3, 3.0), first=st.integers(2, 20), points=st.integers(6, 14),
       startup=st.floats(0.01, 1.0))
def test_an_exponential_cost_is_named_exponential(factor, first, points, startup):
    """c^n over counts where it grows at least sixteenfold (over fewer, a power fits it as well)."""
    assume(factor ** (points - 1) >= 16)
    counts = list(range(first, first + points))
    scale = 20 * startup / factor ** counts[-1]
    costs = [startup + scale * factor ** n for n in counts]
    growth = fit_growth(counts, costs, startup, 0.01)
    assert growth.order == "exponential" and growth.superlinear, growth
    assert abs(growth.per_step - factor) <= 0.1 * factor
    cubic = fit_growth([100, 200, 400, 800], [1.0 + 1e-6 * n ** 3 for n in (100, 200, 400, 800)], 1.0, 0.01)
    assert order_rank(growth) > order_rank(cubic)


@settings(max_examples=40, deadline=None)
@given(level=st.floats(1e-3, 10.0), noise=st.floats(0.0, 0.05), seed=st.integers(0, 2**16),
       start=st.integers(1, 100))
def test_a_constant_cost_is_no_growth(level, noise, seed, start):
    rng = random.Random(seed)
    counts = _counts(start, 8)
    costs = [level * (1 + rng.uniform(-noise, noise)) for _ in counts]
    growth = fit_growth(counts, costs, level, max(noise, 0.01))
    assert growth.order == "constant" and growth.exponent is None and not growth.superlinear, growth


def test_too_few_points_are_not_measurable():
    growth = fit_growth([1, 2, 4], [1.0, 2.0, 4.0], 0.5, 0.01)
    assert growth.order == "not measurable" and growth.exponent is None and not growth.superlinear
