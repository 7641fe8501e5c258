"""The growth analysis' fit on synthetic costs: a start-up plus a term in the repetitions of the slow part."""

from __future__ import annotations

import random

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from perun_core.fuzz.growth import MIN_SPAN, finding_rank, fit_growth, order_rank

ORDERS = {1: "linear", 2: "quadratic", 3: "cubic"}


def _counts(start: int, points: int) -> list[int]:
    return [start * 2 ** i for i in range(points)]


@settings(max_examples=60, deadline=None)
@given(k=st.sampled_from([1, 2, 3]), start=st.integers(1, 200), points=st.integers(6, 9),
       share=st.floats(2.0, 50.0), startup=st.floats(1e-3, 10.0), noise=st.floats(0.0, 0.01),
       seed=st.integers(0, 2**16))
def test_a_power_above_a_start_up_gives_its_exponent(k, start, points, share, startup, noise, seed):
    """a*n^k + c: the term at the largest count is ``share`` times the start-up (from twice it to fifty
    times: a start-up that dominates all but the largest points must not pull the exponent down).  When the
    counts above the noise span less than :data:`MIN_SPAN` (a cubic only twice the start-up at the top rises
    above 5 % at its last two doublings) the exponent is not named, but the slope it is at least is k's."""
    counts = _counts(start, points)
    a = share * startup / counts[-1] ** k
    rng = random.Random(seed)
    costs = [(startup + a * n ** k) * (1 + rng.uniform(-noise, noise)) for n in counts]
    growth = fit_growth(counts, costs, startup, max(noise, 0.005))
    assert growth.superlinear is (k > 1)
    if growth.exponent is None:
        low, high = growth.measured
        assert k > 1 and growth.order == "superlinear" and high < MIN_SPAN * low, (growth, counts, costs)
        assert abs(growth.at_least - k) <= 0.3, (growth, counts, costs)
        return
    assert growth.order == ORDERS[k], (growth, counts, costs)
    assert abs(growth.exponent - k) <= 0.3


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
    """The growth order as a number: a named class (linear 1 .. cubic 3), an exponential above every power; a power
    measured over too narrow a range to name, the class of the slope it is at least."""
    if growth.order == "exponential":
        return 100.0
    if growth.exponent is None and growth.at_least is not None:
        return finding_rank(growth)[0]
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
    assert abs((growth.exponent or growth.at_least) - k) <= 0.75, (growth, counts, costs)


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
    elif growth.exponent is not None:
        assert growth.exponent >= 3.0, (growth, counts, costs)
    else:
        # over counts too close to name a power (2..7): the slope over them, which for an exponential is lower
        # than at its top, still ranks with the cubics or above
        assert growth.at_least >= 2.5 and finding_rank(growth)[0] >= 3.0, (growth, counts, costs)


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


@settings(max_examples=40, deadline=None)
@given(k=st.sampled_from([2, 3, 4]), start=st.integers(20, 2000), span=st.floats(1.5, 3.9), points=st.integers(5, 9),
       startup=st.floats(1e-3, 1.0), share=st.floats(1.0, 30.0), noise=st.floats(0.0, 0.05), scale=st.floats(1e-3, 1e3),
       seed=st.integers(0, 2**16))
@example(k=2, start=1002, span=2.8, points=7, startup=0.079, share=12.0, noise=0.05, scale=1.0, seed=3)
def test_a_narrow_range_of_counts_never_names_an_exponent(k, start, span, points, startup, share, noise, scale, seed):
    """c + a*n^k measured over counts less than :data:`MIN_SPAN` apart, every one above the noise: a few per cent on
    either end turns the exponent by a whole order (jinja2's quadratic in a run of '.', measured over 1002..2808 on
    a loaded machine, was fitted n^3.1), so no exponent and no class above superlinear is named; the slope given
    instead is the one of those counts, and whatever the unit of the cost the answer is the same."""
    counts = sorted({round(start * span ** (i / (points - 1))) for i in range(points)})
    assume(len(counts) >= 4)
    a = share * startup / counts[-1] ** k
    assume(a * counts[0] ** k > 0.2 * startup)  # every count well above the noise of the start-up
    rng = random.Random(seed)
    costs = [(startup + a * n ** k) * (1 + rng.uniform(-noise, noise)) for n in counts]
    growth = fit_growth(counts, costs, startup, max(noise, 0.01))
    assert growth.exponent is None and growth.order in ("superlinear", "linear", "constant", "not measurable"), \
        (growth, counts, costs)
    again = fit_growth(counts, [c * scale for c in costs], startup * scale, max(noise, 0.01))
    assert (again.order, again.exponent, again.at_least, again.superlinear) == \
        (growth.order, growth.exponent, growth.at_least, growth.superlinear)


def test_the_narrow_jinja2_quadratic_is_no_cubic():
    """The stored growth of jinja2 2.11.2's run of '.' (a quadratic: 0.13, 0.52 and 2.06 s at 1000, 2000 and
    4000 by hand): over 1002..2808 it was fitted n^3.10, cubic.  Now superlinear, at least about n^1.8."""
    counts = [1002, 1192, 1417, 1685, 2004, 2372, 2808]
    costs = [0.300885, 0.257872, 0.354011, 0.442097, 0.669333, 0.855547, 1.308369]
    growth = fit_growth(counts, costs, 0.078795, 0.0499)
    assert growth.order == "superlinear" and growth.exponent is None and growth.superlinear, growth
    assert 1.5 <= growth.at_least <= 2.5 and growth.measured == (1002, 2808), growth


@settings(max_examples=30, deadline=None)
@given(start=st.integers(20, 2000), points=st.integers(6, 10), startup=st.floats(0.01, 1.0), share=st.floats(1.0, 20.0),
       burst=st.floats(0.0, 0.2), seed=st.integers(0, 2**16))
def test_a_linear_cost_with_load_over_a_fourfold_range_is_not_superlinear(start, points, startup, share, burst, seed):
    """c + l*n over a fourfold range, each point up to ``burst`` above its cost (load only ever adds; the search's
    noise, 1 %, is far below it): a steep power with a large linear term under it absorbs half the squared error
    of a straight line through such points, which is no superlinear growth.  sqlparse 0.4.3's run of ',' (linear:
    0.16, 0.32 and 0.64 s at 750, 1500 and 3000 by hand) was reported cubic, n^3.4 over 753..3012."""
    counts = sorted({round(start * 4 ** (i / (points - 1))) for i in range(points)})
    slope = share * startup / counts[-1]
    rng = random.Random(seed)
    costs = [(startup + slope * n) * (1 + rng.uniform(0, burst)) for n in counts]
    growth = fit_growth(counts, costs, startup, 0.01)
    assert not growth.superlinear, (growth, counts, costs)


def test_sqlparse_commas_under_load_are_not_cubic():
    counts = [753, 896, 1065, 1506, 1791, 2130, 2533, 3012]
    costs = [0.221741, 0.309222, 0.279137, 0.37455, 0.429927, 0.544508, 0.706378, 0.882016]
    growth = fit_growth(counts, costs, 0.049382, 0.0192)
    assert growth.order == "linear" and not growth.superlinear, growth


@settings(max_examples=25, deadline=None)
@given(k=st.sampled_from([1, 2, 3]), start=st.integers(1, 100), points=st.integers(6, 10), share=st.floats(3.0, 50.0),
       startup=st.floats(1e-3, 10.0), noise=st.floats(0.0, 0.03), seed=st.integers(0, 2**16),
       times=st.sampled_from([2, 3, 10, 100]))
def test_counting_in_bigger_units_changes_no_power(k, start, points, share, startup, noise, seed, times):
    """Counting the part in units ``times`` as long (the same inputs, their counts multiplied) names the same order
    and exponent (or slope) of a power: an order is a property of the ratios of the counts, not of their unit."""
    counts = _counts(start, points)
    a = share * startup / counts[-1] ** k
    rng = random.Random(seed)
    costs = [(startup + a * n ** k) * (1 + rng.uniform(-noise, noise)) for n in counts]
    growth = fit_growth(counts, costs, startup, max(noise, 0.01))
    again = fit_growth([n * times for n in counts], costs, startup, max(noise, 0.01))
    assert (again.order, again.exponent, again.at_least) == (growth.order, growth.exponent, growth.at_least)


@settings(max_examples=30, deadline=None)
@given(k=st.floats(1.6, 3.5), start=st.integers(1, 64), points=st.integers(8, 12), share=st.floats(10.0, 60.0),
       startup=st.floats(0.01, 1.0), noise=st.floats(0.0, 0.03), seed=st.integers(0, 2**16))
def test_a_power_over_a_wide_range_gives_its_exponent(k, start, points, share, startup, noise, seed):
    """c + a*n^k (any k, not only whole ones) over at least 128-fold counts with a few per cent of noise: the
    exponent is named and within a quarter of k."""
    counts = _counts(start, points)
    a = share * startup / counts[-1] ** k
    rng = random.Random(seed)
    costs = [(startup + a * n ** k) * (1 + rng.uniform(-noise, noise)) for n in counts]
    growth = fit_growth(counts, costs, startup, max(noise, 0.01))
    assert growth.exponent is not None and abs(growth.exponent - k) <= 0.25, (growth, counts, costs)


def test_a_narrow_growth_is_told_as_a_bound_with_its_range():
    """What a report and the CLI say of a power over too narrow a range: the slope as a bound and the counts it was
    measured over, never an exponent as if fitted."""
    from types import SimpleNamespace

    from perun_core.fuzz.output import growth_text

    counts = [1002, 1192, 1417, 1685, 2004, 2372, 2808]
    costs = [0.300885, 0.257872, 0.354011, 0.442097, 0.669333, 0.855547, 1.308369]
    growth = fit_growth(counts, costs, 0.078795, 0.0499)
    growth.part = "the run of '.'"
    text = growth_text(SimpleNamespace(growth=growth))
    assert text.startswith("superlinear (about n^1.") and "or steeper over 1002..2808 repetitions" in text, text
    assert growth.as_json()["exponent"] is None and growth.as_json()["above_noise"] == [1002, 2808]
