"""Slow at equal size, and growing faster than the input: what makes a kept input a finding.

A bigger input is slower for every program, so an input is judged against
ordinary inputs of its own size (:class:`Reference`): the seed repeated (its
lines again and again) and the seed padded with spaces, measured at a few
sizes up to the size limit when the fuzzing starts.  The seed repeated is the
reference while its cost grows no faster than linearly: spaces cost a program
next to nothing, and against them more of the seed's own content would look
slower the larger it gets (a search rewarded for size alone grows its inputs to
the limit instead of finding what makes them slow).  When the repeated seed grows
faster than that (repeating it is itself slow), the cheaper of the two at a size
is the reference there.  Costs between the sizes measured are interpolated.
The search keeps inputs by their cost over that reference.

After the search each of the best kept inputs is analysed
(:func:`analyse`): the part that made it slow (:mod:`.growth`) is scaled
from one repetition up, until a run takes ``cap`` seconds or the size limit
is reached, and the cost's growth is fitted.  The largest scaled input whose
runs fit in the time left is then measured against the reference input of its
size, in pairs run side by side, for the ratio at equal size and its confidence
(one-sided exact Mann-Whitney test over the pairs); for a superlinear growth a
larger one when that one's cost is not clearly above the reference's at its
size and a larger one's is (:func:`expected_ratio`).  It is reported when the
growth is superlinear and the ratio clearly above one; the worst scaled input
measured within ``cap`` (which may be larger than the compared one) is kept
with the verdict (:class:`~perun_core.fuzz.findings.LargestInput`), as it shows
the growth at the largest size measured.
"""

from __future__ import annotations

import itertools
import math
import statistics
import time
from collections.abc import Sequence

from ..errors import Interrupted
from .findings import Finding, LargestInput, Verdict
from .growth import (Growth, Region, describe, finding_rank, fit_growth, periodic_regions, periodic_regions_without,
                     scaled)
from .measure import Executor, Measurement
from .scaling import Point, scale_points, second_look
from .textrules import char_start

__all__ = ["SHOW_MARGIN", "Reference", "analyse", "confidence_greater", "distinct_parts", "expected_ratio",
           "grows_linearly", "needed_ratio"]

STRATEGIES = {"tile": "the seed repeated", "pad": "the seed padded with spaces"}
_SIZE_STEP = 8
#: how far above the ratio a report needs the input compared at equal size is chosen to be likely to show (its
#: cost and the reference's were measured apart, the paired runs' medians may come out lower)
SHOW_MARGIN = 1.25
#: runs of each ordinary input a reference is measured with
_REFERENCE_RUNS = 3


def grown_seed(seed: bytes, size: int, strategy: str) -> bytes:
    """``seed`` grown to ``size`` bytes by ``strategy`` (tile: repeated line by line; pad: trailing spaces)."""
    if size <= len(seed):
        return seed
    if strategy == "pad":
        return seed + b" " * (size - len(seed))
    unit = seed if seed.endswith(b"\n") else seed + b"\n"
    grown = unit * (size // len(unit) + 1)
    return grown[:char_start(grown, size)]


class Reference:
    """The cost of ordinary inputs grown from one seed, by size."""

    def __init__(self, seed: bytes, curves: dict[str, list[tuple[int, float]]]) -> None:
        self.seed = seed
        self.curves = {name: sorted(points) for name, points in curves.items() if points}
        #: whether the seed repeated is the reference at every size (see the module's docstring)
        self.tile_ordinary = "tile" in self.curves and grows_linearly(self.curves["tile"])

    @classmethod
    def measure(cls, executor: Executor, seed: bytes, seed_cost: float, limit: int, metric: str) -> Reference:
        """Measure both strategies at sizes growing eightfold from the seed's up to ``limit`` (the cheapest of
        :data:`_REFERENCE_RUNS` runs each), each until it costs four times the seed (beyond that its curve is
        extended linearly); the seed repeated at one size more, between, when it was measured at one only."""
        sizes = []
        size = len(seed) * _SIZE_STEP
        while size < limit:
            sizes.append(size)
            size *= _SIZE_STEP
        if limit > len(seed):
            sizes.append(limit)
        curves: dict[str, list[tuple[int, float]]] = {name: [(len(seed), seed_cost)] for name in STRATEGIES}
        refused: set[str] = set()
        done: set[str] = set()
        for size in sizes:
            # a strategy that costs four times the seed is not measured at larger sizes (its curve is extended
            # linearly): a seed whose copies are slow to process would otherwise make the calibration slow
            names = [name for name in STRATEGIES if name not in done]
            if not names:
                break
            grown = [grown_seed(seed, size, name) for name in names]
            # the cheapest of three runs (interference only ever adds cost): one slow run would raise the curve,
            # and with it what every candidate of that size is compared with, for the whole search
            rounds = [executor.measure_all(grown) for _ in range(_REFERENCE_RUNS)]
            for index, (name, data) in enumerate(zip(names, grown)):
                runs = [outcomes[index] for outcomes in rounds]
                if any(run.hang or run.exit_status != 0 for run in runs):
                    refused.add(name)
                cost = min(run.value(metric) for run in runs)
                curves[name].append((len(data), cost))
                if cost > 4 * seed_cost or any(run.hang for run in runs):
                    done.add(name)
        tile = curves["tile"]
        if "tile" not in refused and len(tile) == 2 and tile[1][0] > 2 * len(seed):
            # one size measured (it cost four times the seed already, or it was the limit): a point between tells
            # whether the repeated seed grows linearly (see grows_linearly)
            data = grown_seed(seed, round(math.sqrt(tile[0][0] * tile[1][0])), "tile")
            runs = [executor.measure(data) for _ in range(_REFERENCE_RUNS)]
            if not any(run.hang or run.exit_status != 0 for run in runs):
                tile.append((len(data), min(run.value(metric) for run in runs)))
        usable = {n: c for n, c in curves.items() if n not in refused} or curves
        return cls(seed, usable)

    def _interpolate(self, points: list[tuple[int, float]], size: int) -> float:
        if size <= points[0][0] or len(points) == 1:
            return points[0][1]
        for (s0, c0), (s1, c1) in itertools.pairwise(points):
            if size <= s1:
                return c0 + (c1 - c0) * (size - s0) / max(s1 - s0, 1)
        (s0, c0), (s1, c1) = points[-2], points[-1]
        slope = max(0.0, (c1 - c0) / max(s1 - s0, 1))
        return c1 + slope * (size - s1)

    def strategy(self, size: int) -> str:
        """The strategy of the reference input of ``size`` bytes: the seed repeated when that grows linearly,
        else the one whose input of that size costs least."""
        if self.tile_ordinary:
            return "tile"
        return min(self.curves, key=lambda name: self._interpolate(self.curves[name], size))

    def cost(self, size: int) -> float:
        return self._interpolate(self.curves[self.strategy(size)], size)

    def sample(self, size: int) -> bytes:
        return grown_seed(self.seed, size, self.strategy(size))


def grows_linearly(points: Sequence[tuple[int, float]]) -> bool:
    """Whether costs at growing sizes (at least three points) stay near the straight line through each two
    before: no point exceeds the cost extrapolated from the two before it by more than the extrapolated increase
    itself (a quadratic measured at sizes eight times apart exceeds it about sevenfold) and a quarter of the first
    cost (so the noise of small increases is not taken for growth).  Two points tell nothing: False."""
    if len(points) < 3:
        return False
    floor = points[0][1] / 4
    for (s0, c0), (s1, c1), (s2, c2) in zip(points, points[1:], points[2:]):
        increase = max(0.0, (c1 - c0) / max(s1 - s0, 1)) * (s2 - s1)
        if c2 - (c1 + increase) > max(increase, floor):
            return False
    return True


def confidence_greater(xs: Sequence[float], ys: Sequence[float]) -> float:
    """1 - p of the one-sided exact Mann-Whitney test that ``xs`` are greater than ``ys`` (ties count half)."""
    def u_statistic(a: Sequence[float], b: Sequence[float]) -> float:
        return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)

    observed = u_statistic(xs, ys)
    pooled = list(xs) + list(ys)
    n = len(xs)
    total = at_least = 0
    for chosen in itertools.combinations(range(len(pooled)), n):
        picked = set(chosen)
        a = [pooled[i] for i in chosen]
        b = [pooled[i] for i in range(len(pooled)) if i not in picked]
        total += 1
        at_least += u_statistic(a, b) >= observed - 1e-12
    return 1.0 - at_least / total


def _growth(executor: Executor, data: bytes, text: str, regions: list[Region], limit: int, cap: float, metric: str,
            noise: float, deadline: float, end: float, hang: bool = False) -> tuple[Growth, list[Point]]:
    """Scale ``regions`` of ``text`` (or, without regions, the whole input: its first n bytes, repeated past its
    end) and fit the cost's growth."""
    def build(k: int) -> bytes:
        if regions:
            return scaled(text, regions, k).encode("utf-8", "surrogateescape")
        tiled = data * (k // max(len(data), 1) + 1)
        return tiled[:char_start(tiled, k)]

    if regions:
        # an input that hangs may grow exponentially: scaled from a few repetitions up, a doubling past the
        # cap costs one run killed at the cap, not several
        start = max(1, max(r.count for r in regions) // 16)
        start = min(start, 8) if hang else start
    else:
        start = max(1, len(data) // 16)
        limit *= 4  # an input near the size limit: larger ones must fit to show a growth
    first = executor.measure(build(0))
    # the cost without the part: the least of three runs, one when it is slow already
    base = first.value(metric) if first.hang or first.wall >= 0.5 else \
        min(m.value(metric) for m in [first, *executor.measure_all([build(0)] * 2)])
    floor = max(3 * noise, 0.05) * max(base, 1e-12)
    points = scale_points(executor, build, start, limit, cap, metric, base, floor, deadline, end)
    second_look(executor, points, metric, deadline)
    growth = fit_growth([p.count for p in points], [p.cost for p in points], base, noise)
    growth.part, growth.base = describe(text, regions), base
    growth.counts = [p.count for p in points]
    growth.sizes = [len(p.data) for p in points]
    growth.costs = [p.cost for p in points]
    return growth, points


def _culprit(executor: Executor, data: bytes, text: str, regions: list[Region], metric: str,
             noise: float, cost: float, hang: bool) -> list[Region]:
    """The repeated part that holds the cost: of the longest repeated region (with its copies) and the three
    next ones, the one whose removal saves the most cost per byte removed (for an input that hangs: the
    smallest one whose removal lets it finish); the longest when none stands out."""
    if not regions:
        return []
    groups = [regions] + [[r] for r in periodic_regions_without(text, regions)[:3]]
    # the input's own cost is known from the search (a hang: each part's removal is run once, it may hang too)
    full = Measurement(cost, cost, 0, hang)
    empty = executor.measure(b"")
    total = full.value(metric) - empty.value(metric)
    best, best_score = regions, 1.5
    for group in groups:
        without = scaled(text, group, 0).encode("utf-8", "surrogateescape")
        runs = executor.measure_all([without] if hang else [without, without])
        share = (len(data) - len(without)) / max(len(data), 1)
        if share <= 0:
            continue
        if full.hang:
            # the run was stopped, its cost unknown: a part whose removal lets it finish holds the cost
            score = 1.0 / share if not any(m.hang for m in runs) else 0.0
        else:
            saved = full.value(metric) - min(m.value(metric) for m in runs)
            enough = saved > max(3 * noise, 0.05) * full.value(metric) and total > 0
            score = (saved / total) / share if enough else 0.0
        if score > best_score:
            best, best_score = group, score
        if group is regions and (hang or saved > total / 2):
            # the longest part holds most of the cost, or the input hangs either way (every other removal
            # would cost a hang timeout to learn little): the others are not tried
            break
    return best


def analyse(finding_id: str, data: bytes, reference: Reference, executor: Executor, *, metric: str, noise: float,
            gain: float, cap: float, limit: int, deadline: float, end: float, cost: float,
            hang: bool = False, latest: float | None = None) -> tuple[Verdict, bytes | None]:
    """Scale the slow part of ``data`` (its ``cost`` measured by the search; ``hang``: it hangs) until
    ``deadline`` (past it only as far as a fit needs, never so far that the runs cannot end before ``end``),
    fit its growth, measure the ratio at equal size; the verdict and the input it is about (the largest
    scaled input whose paired runs fit in the time left), None when nothing could be measured.  The comparison
    of a superlinear growth may run until ``latest`` (after ``end``: time of the analyses after this one) when
    no input that can show the ratio a report needs fits before ``end`` (see :func:`_showing`)."""
    text = data.decode("utf-8", "surrogateescape")
    # a quarter of the time is kept for the comparison at equal size: the scaling ends before
    reserve = max(0.0, end - time.monotonic()) / 4
    end, compare_end = end - reserve, end
    regions = _culprit(executor, data, text, periodic_regions(text), metric, noise, cost, hang)
    growth, points = _growth(executor, data, text, regions, limit, cap, metric, noise, deadline, end, hang)
    if regions and not growth.superlinear and time.monotonic() < deadline and len(data) > 0:
        # the repeated part alone does not explain it: maybe the whole input does (a quadratic pass over it)
        whole, whole_points = _growth(executor, data, text, [], limit, cap, metric, noise, deadline, end)
        # the ranking of the findings decides (a part before the whole input at the same named order): a whole
        # input fitted n^1.1 is no better a finding than its part fitted n^1.0, and says less
        if finding_rank(whole) > finding_rank(growth):
            growth, points = whole, whole_points
    part = growth.part
    within = points
    if not within:
        return Verdict(finding_id, "", len(data), 0.0, 0, 0.0, "", 0.0, 0.0, growth, False,
                       "the scaled inputs could not be measured", metric), None
    # the largest input whose three paired runs fit in half the time left: paired runs on a busy machine take longer
    # than the same input's run during the scaling did, and a comparison cut short reports nothing
    room = compare_end - time.monotonic()
    quick = [p for p in within if 3 * p.took <= room / 2] or \
        [min(within, key=lambda p: p.took)]
    chosen = max(quick, key=lambda p: p.count)
    needed = needed_ratio(gain)
    if growth.superlinear:
        spare = max(room, (latest if latest is not None else compare_end) - time.monotonic())
        chosen = _showing(within, chosen, reference, needed * max(SHOW_MARGIN, 1 + gain), room, spare)
    reasons = []
    compared = True
    try:
        ratio, confidence, value, ref_value, ref_size, name = _equal_size(executor, chosen.data, reference, metric,
                                                                          compare_end)
    except Interrupted:
        # the time budget ran out (or the user stopped it): the growth is still worth telling
        reasons.append("the time budget ran out before the comparison at equal size")
        compared = False
        ratio, confidence, value, ref_value, ref_size, name = 0.0, 0.0, chosen.cost, 0.0, 0, reference.strategy(0)
    if not growth.superlinear:
        reasons.append(f"the cost grows {growth.order} in {part}" if growth.exponent is not None else
                       f"the cost does not grow with {part}" if growth.order == "constant" else
                       f"no growth measurable in {part}")
    if not compared:
        pass
    elif ratio < needed:
        reasons.append(f"only {ratio:.2f}x the reference at equal size (needs {needed:.2f}x)")
    elif confidence < 0.9:
        reasons.append(f"the ratio at equal size is not sure enough (confidence {confidence:.2f})")
    verdict = Verdict(finding_id, "", len(chosen.data), value, ref_size, ref_value, STRATEGIES[name], ratio,
                      confidence, growth, not reasons, "; ".join(reasons), metric)
    if growth.superlinear:
        # the comparison needs a few runs side by side, so it may be made on a smaller input than the largest
        # one measured; that one shows the growth best and is what a user wants to reproduce the problem with
        worst = max(points, key=lambda p: (p.cost, p.count))
        verdict.largest = LargestInput(worst.count, len(worst.data), worst.cost, data=worst.data)
    return verdict, chosen.data


def expected_ratio(point: Point, reference: Reference) -> float:
    """The ratio at equal size ``point`` is likely to show: its cost over the reference input's of its size (as
    measured when the fuzzing started; the paired runs are what decides)."""
    return point.cost / max(reference.cost(len(point.data)), 1e-12)


def _showing(points: list[Point], chosen: Point, reference: Reference, target: float, room: float,
             spare: float) -> Point:
    """The input to compare at equal size for a superlinear growth: ``chosen`` (the largest whose three pairs fit
    in half of ``room``) when its cost is ``target`` times the reference input of its size; else the cheapest one
    that is, if its pairs fit in ``room``, or else in ``spare`` (the seconds up to the latest end the comparison
    may have); else the one likely to show the highest ratio whose pairs fit in ``room``.

    A superlinear cost rises above an ordinary input's only at the larger counts.  Judged against the cost without
    the part (the start-up), an input could be twice that and still no slower than the seed grown to its size,
    whose content costs too (a quadratic was compared at 669 B, 1.01x, while its largest measured input was 3.5x
    slower); on a loaded machine, where the runs that show the growth are long, an exponential was compared at its
    start-up's cost (1.1x).  When the scaling overran into the time kept for the comparison (runs on a loaded
    machine take longer than foreseen), only inputs at the start-up's cost fitted: a growth measured to 17 times
    its start-up was compared at 1.0x and not reported, though the analysis had time left after this part's
    share."""
    if expected_ratio(chosen, reference) >= target:
        return chosen
    fitting = [p for p in points if 3 * p.took <= room]
    for within in (room, spare):
        showing = [p for p in points if 3 * p.took <= within and expected_ratio(p, reference) >= target]
        if showing:
            return min(showing, key=lambda p: p.took)
    best = max(fitting, key=lambda p: expected_ratio(p, reference), default=chosen)
    return best if expected_ratio(best, reference) > expected_ratio(chosen, reference) else chosen


def _equal_size(executor: Executor, data: bytes, reference: Reference, metric: str,
                end: float) -> tuple[float, float, float, float, int, str]:
    """Ratio, confidence and the two medians of ``data`` against the reference input of its size, run in pairs
    (five, or three when the runs are long or ``end`` is near; Interrupted when not even three fit)."""
    size = len(data)
    name = reference.strategy(size)
    other = grown_seed(reference.seed, size, name)
    xs: list[float] = []
    ys: list[float] = []
    took = 0.0
    while len(xs) < 5:
        if len(xs) >= 3 and (took >= 0.5 or time.monotonic() + took > end):
            break
        try:
            pair = executor.measure_all([data, other])
        except Interrupted:
            if len(xs) < 3:
                raise
            break
        took = max(took, pair[0].wall, pair[1].wall)
        xs.append(pair[0].value(metric))
        ys.append(pair[1].value(metric))
    x, y = statistics.median(xs), statistics.median(ys)
    ratio = x / y if y > 0 else math.inf
    return round(ratio, 3), round(confidence_greater(xs, ys), 4), x, y, len(other), name


def needed_ratio(gain: float) -> float:
    """The ratio at equal size a finding needs to be reported: 1.5, or more when the noise keeps only larger gains."""
    return max(1.5, 1 + gain)


def distinct_parts(findings: Sequence[Finding], most: int, clear: float) -> list[Finding]:
    """The slowest of ``findings`` for each distinct slow part (the unit of its longest repeated region, or the
    whole input without one), at most ``most``: inputs slow by the same part would be analysed to the same
    growth, while another part may be another problem.  Those at least ``clear`` times slower than an ordinary
    input of their size come first (slowest first), then the others."""
    chosen: list[Finding] = []
    parts: set[str] = set()
    for finding in sorted(findings, key=lambda f: f.slowdown, reverse=True):
        if len(chosen) >= most:
            break
        regions = periodic_regions(finding.data.decode("utf-8", "surrogateescape"))
        part = max(regions, key=lambda r: len(r.unit) * r.count).unit if regions else ""
        if part not in parts:
            parts.add(part)
            chosen.append(finding)
    return sorted(chosen, key=lambda f: (f.hang or f.slowdown >= clear, f.slowdown), reverse=True)
