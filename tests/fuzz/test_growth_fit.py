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


def _named_rank(growth) -> float:
    """The growth order as a number: a named class (linear 1 .. cubic 3), an exponential above every power."""
    if growth.order == "exponential":
        return 100.0
    classes = {"constant": 0.0, "not measurable": 0.0, "linear": 1.0, "superlinear": 1.5, "quadratic": 2.0,
               "cubic": 3.0}
    return classes.get(growth.order, round(growth.exponent or 0.0))


@settings(max_examples=40, deadline=None)
@given(start=st.integers(1, 500), points=st.integers(4, 12), startup=st.floats(1e-3, 10.0),
       share=st.floats(0.0, 20.0), outlier=st.floats(1.2, 30.0), noise=st.floats(0.0, 0.03),
       seed=st.integers(0, 2**16))
def test_a_linear_cost_with_one_high_point_at_the_top_is_never_superlinear(start, points, startup, share, outlier,
                                                                            noise, seed):
    """c + l*n (the linear part ``share`` times the start-up at the largest count, none to twenty times), a few per
    cent of noise, and the largest point ``outlier`` times its true cost (a burst of load, a one-off cost): one
    point cannot carry an order, however steep a power fits it."""
    counts = _counts(start, points)
    slope = share * startup / counts[-1]
    rng = random.Random(seed)
    costs = [(startup + slope * n) * (1 + rng.uniform(-noise, noise)) for n in counts]
    costs[-1] *= outlier
    growth = fit_growth(counts, costs, startup, max(noise, 0.01))
    assert not growth.superlinear and _named_rank(growth) <= 1.0, (growth, counts, costs)


@settings(max_examples=25, deadline=None)
@given(k=st.sampled_from([2, 3]), start=st.integers(1, 200), points=st.integers(6, 9), share=st.floats(3.0, 50.0),
       startup=st.floats(1e-3, 10.0), noise=st.floats(0.01, 0.04), seed=st.integers(0, 2**16))
def test_a_power_with_a_few_per_cent_of_noise_keeps_its_order(k, start, points, share, startup, noise, seed):
    """(c + a*n^k) times 1 +- up to 4 % per point, the term ``share`` times the start-up at the largest count:
    superlinear, its exponent within three quarters of k (the few points that rise above a start-up this noisy
    fix the exponent no closer), never linear."""
    counts = _counts(start, points)
    a = share * startup / counts[-1] ** k
    rng = random.Random(seed)
    costs = [(startup + a * n ** k) * (1 + rng.uniform(-noise, noise)) for n in counts]
    growth = fit_growth(counts, costs, startup, noise)
    assert growth.model == "power" and growth.superlinear, (growth, counts, costs)
    assert abs(growth.exponent - k) <= 0.75, (growth, counts, costs)


@settings(max_examples=25, deadline=None)
@given(factor=st.floats(1.3, 3.0), first=st.integers(2, 20), points=st.integers(6, 14),
       startup=st.floats(0.01, 1.0), noise=st.floats(0.01, 0.04), seed=st.integers(0, 2**16))
def test_an_exponential_with_a_few_per_cent_of_noise_stays_exponential_or_a_steep_power(factor, first, points,
                                                                                     startup, noise, seed):
    """c + s*f^n times 1 +- up to 4 % per point: exponential with its factor, or (over the few counts where a
    mild factor and a high power agree within the noise) a power of at least n^3; never a lower order."""
    assume(factor ** (points - 1) >= 16)
    counts = list(range(first, first + points))
    scale = 20 * startup / factor ** counts[-1]
    rng = random.Random(seed)
    costs = [(startup + scale * factor ** n) * (1 + rng.uniform(-noise, noise)) for n in counts]
    growth = fit_growth(counts, costs, startup, noise)
    assert growth.superlinear, (growth, counts, costs)
    if growth.order == "exponential":
        assert abs(growth.per_step - factor) <= 0.15 * factor, (growth, counts, costs)
    else:
        assert growth.exponent >= 3.0, (growth, counts, costs)


@settings(max_examples=25, deadline=None)
@given(costs=st.lists(st.floats(0.01, 10.0), min_size=4, max_size=10), start=st.integers(1, 100),
       base=st.floats(0.005, 5.0), noise=st.floats(0.0, 0.1), scale=st.sampled_from([1e-3, 0.37, 8.0, 1e4]))
def test_scaling_every_cost_by_a_constant_changes_nothing(costs, start, base, noise, scale):
    """The fit works on relative errors and a relative noise floor: the unit of the cost (seconds, instructions)
    cannot change the order, the exponent or the factor."""
    counts = _counts(start, len(costs))
    growth = fit_growth(counts, costs, base, noise)
    again = fit_growth(counts, [c * scale for c in costs], base * scale, noise)
    assert (again.order, again.exponent, again.per_step, again.superlinear) == \
        (growth.order, growth.exponent, growth.per_step, growth.superlinear)


@settings(max_examples=20, deadline=None)
@given(low=st.sampled_from([1, 2]), high=st.sampled_from([2, 3]), start=st.integers(1, 200),
       share=st.floats(3.0, 50.0), startup=st.floats(1e-3, 10.0))
def test_a_bigger_exponent_is_never_reported_as_a_lower_order(low, high, start, share, startup):
    """The same start-up, counts and cost at the largest count, the term n^high against n^low: the order named for
    the steeper one is never below the other's."""
    assume(high > low)
    counts = _counts(start, 8)

    def growth_of(k: int):
        a = share * startup / counts[-1] ** k
        return fit_growth(counts, [startup + a * n ** k for n in counts], startup, 0.01)

    assert _named_rank(growth_of(high)) >= _named_rank(growth_of(low))
