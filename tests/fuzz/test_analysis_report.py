"""What the analysis after the search reports: the largest input it measured for a superlinear growth, and one
analysed input per distinct slow part."""

from __future__ import annotations

import time
from dataclasses import replace
from types import SimpleNamespace

from perun_core.fuzz.confirm import Reference, analyse, distinct_parts
from perun_core.fuzz.findings import Finding
from perun_core.fuzz.measure import Measurement
from perun_core.fuzz.scaling import Point


class QuadraticInX:
    """Stands in for the runner: a run costs 0.1 s plus a quadratic in the number of "x", at no real time,
    and its wall time is ``stretch`` times its CPU time (a loaded machine)."""

    def __init__(self, stretch: float) -> None:
        self.stretch = stretch

    #: wall seconds after which a run would be killed (none of these runs is that long)
    hang_timeout = 60.0

    def set_hang_timeout(self, seconds: float) -> None:
        self.hang_timeout = seconds

    def measure(self, data: bytes) -> Measurement:
        cpu = 0.1 + 1e-4 * data.count(b"x") ** 2
        return Measurement(cpu, cpu * self.stretch, 0, False)

    def measure_all(self, inputs):
        return [self.measure(data) for data in inputs]


class SteepInX(QuadraticInX):
    """A quadratic that stays within a tenth of its 0.1 s start-up up to a thousand "x"."""

    def measure(self, data: bytes) -> Measurement:
        cpu = 0.1 + 1e-7 * data.count(b"x") ** 2
        return Measurement(cpu, cpu * self.stretch, 0, False)


def _analyse(stretch: float, window: float):
    seed = b"head tail\n"
    reference = Reference(seed, {"pad": [(len(seed), 0.1), (1 << 20, 0.1)]})
    data = b"head " + b"x" * 40 + b" tail\n"
    now = time.monotonic()
    return analyse("w1", data, reference, QuadraticInX(stretch), metric="cpu", noise=0.01, gain=0.05, cap=2.0,
                   limit=1 << 16, deadline=now + window, end=now + window, cost=0.26)


def test_a_superlinear_finding_keeps_the_largest_input_measured_even_when_a_smaller_one_is_compared():
    # runs take 20 times their CPU time: three paired runs of the largest input would not fit in the time left
    verdict, compared = _analyse(stretch=20.0, window=60.0)
    assert verdict.reported and verdict.growth.order == "quadratic", verdict
    largest = verdict.largest
    assert largest is not None and largest.repetitions == max(verdict.growth.counts)
    assert largest.data == b"head " + b"x" * largest.repetitions + b" tail\n"
    assert largest.cost == max(verdict.growth.costs) and 1.0 < largest.cost <= 2.0  # within the cap of 2 s
    assert len(compared) == verdict.size < largest.size and largest.size == len(largest.data)
    assert verdict.as_json()["largest"] == {"file": "", "size": largest.size, "cost": largest.cost,
                                            "repetitions": largest.repetitions}


def test_with_time_enough_the_compared_input_is_the_largest_one():
    verdict, compared = _analyse(stretch=1.0, window=600.0)
    assert verdict.reported and verdict.largest is not None and verdict.largest.data == compared


def test_a_steep_growth_is_compared_at_an_input_that_can_show_it_when_its_runs_fit():
    # runs take 20 times their CPU time: in half of the 14 s left only inputs at the start-up's cost fit three
    # paired runs, where the ratio cannot reach 1.5x; the cheapest input 1.5x its start-up fits in the whole 14 s
    seed = b"head tail\n"
    reference = Reference(seed, {"pad": [(len(seed), 0.1), (1 << 20, 0.1)]})
    data = b"head " + b"x" * 40 + b" tail\n"
    now = time.monotonic()
    verdict, compared = analyse("w1", data, reference, SteepInX(20.0), metric="cpu", noise=0.01, gain=0.05,
                                cap=2.0, limit=1 << 16, deadline=now + 14.0, end=now + 14.0, cost=0.1)
    assert verdict.growth.superlinear, verdict.growth
    shown = 0.1 + 1e-7 * compared.count(b"x") ** 2
    assert shown >= 1.5 * verdict.growth.base and 3 * 20 * shown <= 14.0, (compared.count(b"x"), verdict)
    assert verdict.reported and verdict.ratio >= 1.5, verdict


class ContentAndQuadraticInX(QuadraticInX):
    """Every byte costs (the seed's content too), and the "x" quadratically on top."""

    def measure(self, data: bytes) -> Measurement:
        cpu = 0.1 + 2e-4 * len(data) + 1e-7 * data.count(b"x") ** 2
        return Measurement(cpu, cpu * self.stretch, 0, False)


def test_a_superlinear_growth_is_compared_where_it_beats_an_ordinary_input_of_that_size():
    # runs take 30 times their CPU time: in half of the 100 s left three pairs fit up to 1024 "x", four times the
    # cost without the part but only 1.34x the seed repeated to that size, which costs per byte as well; the pairs
    # of 2048 "x" (about 1.8x) fit in the whole 100 s
    executor = ContentAndQuadraticInX(30.0)
    seed = b"head tail\n"
    reference = Reference.measure(executor, seed, executor.measure(seed).cpu, 1 << 16, "cpu")
    assert reference.tile_ordinary
    data = b"head " + b"x" * 40 + b" tail\n"
    now = time.monotonic()
    verdict, compared = analyse("w1", data, reference, executor, metric="cpu", noise=0.01, gain=0.05, cap=2.0,
                                limit=1 << 16, deadline=now + 100.0, end=now + 100.0, cost=executor.measure(data).cpu)
    assert verdict.growth.order == "quadratic", verdict.growth
    assert 1024 in verdict.growth.counts and compared.count(b"x") > 1024, (compared.count(b"x"), verdict)
    assert verdict.reported and verdict.ratio >= 1.5 and verdict.size == len(compared), verdict


class _Clock:
    """Time that passes only by the runs of :class:`TimedQuadraticInX`."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class TimedQuadraticInX(QuadraticInX):
    """:class:`QuadraticInX` whose runs take their wall time on ``clock``."""

    def __init__(self, stretch: float, clock: _Clock) -> None:
        super().__init__(stretch)
        self.clock = clock

    def measure(self, data: bytes) -> Measurement:
        measured = super().measure(data)
        self.clock.now += measured.wall
        return measured


def test_the_comparison_of_a_superlinear_growth_borrows_time_when_none_that_shows_it_fits_its_own(monkeypatch):
    # runs take 20 times their CPU time: the scaling of the 30 s share leaves about 8 s, where three pairs fit
    # only up to 16 "x" (1.26x the reference, below the 1.5x a report needs); the pairs of 32 "x" (2x) fit
    # before ``latest``, in the time of the analyses after this one
    from perun_core.fuzz import confirm, scaling

    clock = _Clock()
    for module in (confirm, scaling):
        monkeypatch.setattr(module, "time", SimpleNamespace(monotonic=clock.monotonic))
    seed = b"head tail\n"
    reference = Reference(seed, {"pad": [(len(seed), 0.1), (1 << 20, 0.1)]})
    data = b"head " + b"x" * 40 + b" tail\n"

    def analysed(latest: float):
        now = clock.now
        return analyse("w1", data, reference, TimedQuadraticInX(20.0, clock), metric="cpu", noise=0.01,
                       gain=0.05, cap=2.0, limit=1 << 16, deadline=now + 18.0, end=now + 30.0, cost=0.26,
                       latest=now + latest)

    verdict, compared = analysed(latest=30.0)  # no time to borrow
    assert verdict.growth.order == "quadratic" and not verdict.reported, verdict
    assert compared.count(b"x") == 16 and verdict.ratio < 1.5, verdict
    verdict, compared = analysed(latest=60.0)
    assert verdict.reported and verdict.ratio >= 1.5 and compared.count(b"x") == 32, verdict


def _kept(name: str, data: bytes, slowdown: float) -> Finding:
    return Finding(name, f"inputs/{name}.txt", len(data), 0.1, 0.1, 0.1, slowdown, "seed", "seed", ["pump"], 1, 1.0,
                   1, data=data)


def test_one_input_per_distinct_slow_part_is_analysed_the_slowest_of_each():
    kept = [_kept("w1", b"a" + b"." * 50 + b"a", 3.0), _kept("w2", b"www.x" + b")" * 80, 9.0),
            _kept("w3", b"www.y" + b")" * 60, 12.0), _kept("w4", b"b" + b"." * 90 + b"b", 2.0),
            _kept("w5", b"no repeats here", 1.5)]
    assert [f.id for f in distinct_parts(kept, 6, 1.5)] == ["w3", "w1", "w5"]
    assert [f.id for f in distinct_parts(kept, 2, 1.5)] == ["w3", "w1"]
    # those not clearly slower at their size come after the others, whatever their part
    kept.append(_kept("w6", b"c" * 30, 1.2))
    kept.append(replace(_kept("h1", b"(" * 20, 1.0), hang=True))
    assert [f.id for f in distinct_parts(kept, 6, 3.5)] == ["w3", "h1", "w1", "w5", "w6"]


def test_findings_of_one_growth_order_rank_a_part_of_the_input_before_the_whole_input():
    """Two quadratics, the whole input's fitted n^2.1 and a run's n^1.9 (fitted exponents wander with the load):
    the same order, so the one that says which part is slow comes first; a cubic still beats both."""
    from perun_core.fuzz.growth import WHOLE_INPUT, Growth, finding_rank

    whole = Growth("quadratic", 2.1, "power", 0.99, True, part=WHOLE_INPUT)
    run = Growth("quadratic", 1.9, "power", 0.99, True, part="the run of '(' on line 1")
    cubic = Growth("cubic", 3.0, "power", 0.99, True, part=WHOLE_INPUT)
    assert finding_rank(run) > finding_rank(whole)
    assert finding_rank(cubic) > finding_rank(run)
    assert finding_rank(Growth("linear", 1.0, "linear", 0.9, False, part="x")) < finding_rank(whole)


def test_the_whole_input_replaces_a_part_only_when_the_findings_ranking_puts_it_first(monkeypatch):
    """The part scaled linearly (n^1.0); the whole input too, fitted n^1.2: the same named order, so the part, which
    says where the cost comes from, stays (as the report ranks findings); a quadratic whole input replaces it."""
    from perun_core.fuzz import confirm
    from perun_core.fuzz.growth import WHOLE_INPUT, Growth

    def analysed(whole_growth: Growth) -> Growth:
        def fitted(executor, data, text, regions, *rest, **options):
            growth = Growth("linear", 1.0, "power", 0.99, False, part="the run of 'x'") if regions else whole_growth
            growth.base = 0.1
            return growth, [Point(4, data, 0.2, 0.2, 0.2)]

        monkeypatch.setattr(confirm, "_growth", fitted)
        seed = b"head tail\n"
        reference = Reference(seed, {"pad": [(len(seed), 0.1), (1 << 20, 0.1)]})
        now = time.monotonic()
        verdict, _ = analyse("w1", b"head " + b"x" * 40 + b" tail\n", reference, QuadraticInX(1.0), metric="cpu",
                             noise=0.01, gain=0.05, cap=2.0, limit=1 << 16, deadline=now + 60, end=now + 60, cost=0.26)
        return verdict.growth

    assert analysed(Growth("linear", 1.2, "power", 0.99, False, part=WHOLE_INPUT)).part == "the run of 'x'"
    assert analysed(Growth("quadratic", 2.0, "power", 0.99, True, part=WHOLE_INPUT)).part == WHOLE_INPUT
