"""The counts a slow part is measured at, so that its growth can be fitted (used by :mod:`.confirm`).

The part is scaled from a few repetitions up, doubling, until a run takes
``cap`` seconds or the input passes the size limit; when the first count is
above the noise of the start-up already, a few counts a quarter of the one
below are measured (the range of counts above the noise is what an exponent
is fitted over, see :data:`.growth.MIN_SPAN`); then counts between are
measured where they add most.  Two kinds of count are added:

* toward the cap: a doubling that passes the cap (or is foreseen to, when
  the last one rose faster than a cubic would) leaves the largest count
  measured far below it when the cost grows steeply.  An exponential's next
  doubling is always far past the cap (a cost of 0.6 s at 32 repetitions,
  growing 1.6-fold per repetition, is hours at 64), so doubling alone gave
  such a growth one or two points above its start-up, too few to fit.  The
  next count is foreseen from the two largest counts measured as if the cost
  grew exponentially between them (the steepest growth it is likely to have:
  a polynomial comes out below the cap, an exponential near it), aiming at
  :data:`CAP_AIM` of the cap, and never beyond the middle of the interval
  left (so a wrong guess halves it);
* between: the geometric middle of the widest gap among the points above the
  noise, so the points spread over the whole measurable range, whether it
  spans decades (a polynomial) or a few repetitions (an exponential).

Every run is checked against the time left (a run whose wall time, foreseen
from the growth so far, would not end before ``end`` is not started) and a
run foreseen past twice the cap is not started either, and killed there: it
only bounds the range.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import Interrupted
from .growth import MIN_POINTS, MIN_SPAN
from .measure import LONG_RUN, Executor, Measurement

__all__ = ["CAP_AIM", "MAX_POINTS", "Point", "scale_points", "second_look"]

#: points above the noise after which no more counts are measured
MAX_POINTS = 8
#: the share of the cap a count toward the cap aims at (a count foreseen to cost more is not measured first)
CAP_AIM = 0.6
#: the top count stops being pushed toward the cap when its run takes this share of the cap
_NEAR_CAP = 0.5
#: most counts measured after the doubling
_MOST_REFINEMENTS = 24
#: most counts measured below the first one, when that is above the noise already
_MOST_DOWNWARD = 3


@dataclass
class Point:
    count: int
    data: bytes
    cost: float
    wall: float  # the seconds compared with the cap (CPU, or wall with that metric)
    took: float  # wall seconds of the run


def _measure_point(executor: Executor, data: bytes, metric: str) -> Measurement:
    """The cheapest of one to three runs (three while a run is short): interference only ever adds cost."""
    first = executor.measure(data)
    if first.hang or first.wall >= LONG_RUN:
        return first
    runs = [first, *executor.measure_all([data, data])]
    return min(runs, key=lambda m: m.value(metric))


class _Scaling:
    """The points measured so far and the least count known to be too slow or too big (``over``)."""

    def __init__(self, executor: Executor, build: Callable[[int], bytes], limit: int, cap: float, metric: str,
                 floor: float, base: float, end: float) -> None:
        self.executor, self.build, self.limit, self.cap, self.metric = executor, build, limit, cap, metric
        self.floor, self.base, self.end = floor, base, end
        self.points: dict[int, Point] = {}
        self.over: int | None = None

    def above(self) -> list[int]:
        """The counts whose cost is above the noise of the cost without the part."""
        return sorted(p.count for p in self.points.values() if p.cost - self.base > self.floor)

    def foreseen(self, k: int) -> float:
        """Wall seconds a measurement at ``k`` will take, from the two largest points below it: their cost ratio
        per doubling of the count (at least 2), carried on to ``k``; three runs while a run is short."""
        below = sorted((c for c in self.points if c < k), reverse=True)[:2]
        if not below:
            return 0.0
        last = self.points[below[0]].took
        per_doubling = math.log(4.0)
        if len(below) > 1:
            # per doubling, however close the two counts are (32 and 34 a 2.5-fold rise are many times that per
            # doubling): taken as a doubling's rise, it foresaw a run at 46 at 2.5 s, an exponential's hours
            rise = math.log(max(last, 1e-3) / max(self.points[below[1]].took, 1e-3))
            per_doubling = rise / math.log2(below[0] / below[1])
        steps = math.log2(k / below[0])
        took = last * math.exp(min(max(per_doubling, math.log(2.0)) * steps, 50.0))
        return took * (3 if took < LONG_RUN else 1)

    def wall_bound(self, k: int) -> float | None:
        """Twice the cap in wall seconds at the load the largest point below ``k`` met (None without one): a
        run past it only bounds the range, so it is not started when foreseen past it, and killed there."""
        below = [p for c, p in self.points.items() if c < k]
        if not below:
            return None
        largest = max(below, key=lambda p: p.count)
        stretch = largest.took / max(largest.wall, 1e-3)  # wall seconds per second compared with the cap
        return 2 * self.cap * max(stretch, 1.0)

    def _bounded(self, k: int) -> bool:
        self.over = k if self.over is None else min(self.over, k)
        return False

    def probe(self, k: int) -> bool:
        """Measure at ``k``; False when it is too slow or too big (then it bounds the range).  A run foreseen
        past :meth:`wall_bound` is not started and one that gets there is killed: an exponential doubled past
        the cap ran until the analysis' kill timeout (up to a quarter of its time) and left no time for the
        counts between."""
        data = self.build(k)
        bound = self.wall_bound(k)
        foreseen = self.foreseen(k)
        if len(data) > self.limit or time.monotonic() + foreseen > self.end or \
                (bound is not None and foreseen > bound):
            return self._bounded(k)
        kill = self.executor.hang_timeout
        if bound is not None and bound < kill:
            self.executor.set_hang_timeout(bound)
        try:
            outcome = _measure_point(self.executor, data, self.metric)
        except Interrupted:
            return self._bounded(k)
        finally:
            self.executor.set_hang_timeout(kill)
        spent = outcome.wall if self.metric == "wall" else outcome.cpu
        if outcome.hang or spent > self.cap:
            return self._bounded(k)
        self.points[k] = Point(k, data, outcome.value(self.metric), spent, outcome.wall)
        return True

    def _rises(self) -> tuple[float, dict[int, float]]:
        """The seconds of each point's run that depend on the count (over the start-up: the cost without the
        part in seconds, at most the cheapest run's), and the least such seconds that the noise cannot make."""
        cheapest = min(self.points.values(), key=lambda p: p.wall)
        startup = min(cheapest.wall, self.base * cheapest.wall / max(cheapest.cost, 1e-12))
        floor = max(startup, 1e-3) * self.floor / max(self.base, 1e-12)
        return floor, {c: p.wall - startup for c, p in self.points.items()}

    def steeper_than_cubic(self) -> bool:
        """Whether the cost over the start-up rose more than a cubic's from the second-largest count to the
        largest (the one below taken at the noise when it is within it): then the next doubling is foreseen
        far past the cap, not run (an exponential's run there only bounds the range, at twice the cap)."""
        if len(self.points) < 2:
            return False
        floor, rises = self._rises()
        top, previous = sorted(self.points)[-1], sorted(self.points)[-2]
        if rises[top] <= floor:
            return False
        per_doubling = math.log(rises[top] / max(rises[previous], floor)) / math.log2(top / previous)
        return per_doubling > 3.5 * math.log(2.0)

    def toward_cap(self) -> int | None:
        """The next count toward the cap (see the module's docstring), None when the largest count measured
        is near the cap already or right below ``over``.  When the count below the largest is within the
        noise, the rise per repetition is unknown: a step of a sixteenth of the interval left tells it."""
        if self.over is None or not self.points:
            return None
        top = max(self.points)
        if self.over - top < 2 or self.points[top].wall >= _NEAR_CAP * self.cap:
            return None
        middle = (top + self.over) // 2
        below = [c for c in self.points if c < top]
        floor, rises = self._rises()
        if not below or rises[top] <= floor:
            return middle
        previous = max(below)
        if rises[previous] <= floor:
            return min(middle, top + max(1, (self.over - top) // 16))
        per_step = math.log(rises[top] / rises[previous]) / (top - previous)
        if per_step <= 0:
            return middle
        aim = CAP_AIM * self.cap - (self.points[top].wall - rises[top])
        if aim <= rises[top]:
            return top + 1
        return max(top + 1, min(middle, top + math.floor(math.log(aim / rises[top]) / per_step)))

    def widest_gap(self) -> int | None:
        """The geometric middle of the widest gap whose upper end is above the noise or ``over``, None without
        one.  The gap up to ``over`` only while the largest count's run is far from the cap: a count beyond one
        near it adds little range and is likely past the cap, a run that bounds the range and nothing more."""
        above = set(self.above())
        edges = sorted(set(self.points) | ({self.over} if self.over is not None else set()))
        near = bool(self.points) and self.points[max(self.points)].wall >= _NEAR_CAP * self.cap
        gaps = [(b / a, a, b) for a, b in itertools.pairwise(edges)
                if b - a >= 2 and (b in above or (b == self.over and not near))]
        if not gaps:
            return None
        _, a, b = max(gaps)
        return min(max(round(math.sqrt(a * b)), a + 1), b - 1)


def scale_points(executor: Executor, build: Callable[[int], bytes], start: int, limit: int, cap: float, metric: str,
                 base: float, floor: float, deadline: float, end: float) -> list[Point]:
    """Cost at repetition counts from ``start`` doubling until a run takes ``cap`` seconds (CPU, or wall with
    that metric) or the size limit, then toward the cap and between (see the module's docstring), until
    :data:`MAX_POINTS` are above the noise ``floor`` over ``base`` (the cost without the part).  Past
    ``deadline`` only until a growth can be fitted at all; no run is started that would not end before
    ``end``."""
    scaling = _Scaling(executor, build, limit, cap, metric, floor, base, end)
    k = start
    while not scaling.probe(k) and not scaling.points and k > 1:
        k //= 4  # already too slow at the first count: start lower
    while scaling.over is None and k < (1 << 40):
        if scaling.steeper_than_cubic():
            scaling.over = 2 * k  # foreseen too slow: the counts toward the cap are stepped through instead
            break
        k *= 2
        if not scaling.probe(k) or (time.monotonic() > deadline and len(scaling.points) > MIN_POINTS):
            break
    # a first count already above the noise (a sixteenth of a long run can cost many times the start-up) leaves
    # the counts above it a range too narrow to name an exponent over: smaller counts, cheaper than any measured,
    # widen it down to where the cost meets the start-up
    for _ in range(_MOST_DOWNWARD):
        low = min(scaling.points, default=1)
        above = scaling.above()
        if low <= 1 or not above or above[0] != low or above[-1] >= 2 * MIN_SPAN * low or \
                time.monotonic() >= end or (time.monotonic() > deadline and len(above) >= MIN_POINTS):
            break
        scaling.probe(max(1, low // 4))
    for _ in range(_MOST_REFINEMENTS):
        above = scaling.above()
        if len(above) >= MAX_POINTS or (time.monotonic() > deadline and len(above) >= MIN_POINTS + 1):
            break
        if time.monotonic() >= end:
            break
        count = scaling.toward_cap()
        if count is None:
            count = scaling.widest_gap()
        if count is None:
            break
        scaling.probe(count)
    return sorted(scaling.points.values(), key=lambda p: p.count)


def second_look(executor: Executor, points: list[Point], metric: str, deadline: float) -> None:
    """Run the points measured by one run (the longest, which weigh most in the fit) once more, the largest
    first, while the time before ``deadline`` lasts, and keep the cheaper cost: a burst of load during the
    largest run alone bent a quadratic into n^8 on a busy machine, and a second run later seldom meets it."""
    for index in sorted((i for i, p in enumerate(points) if p.took >= LONG_RUN), key=lambda i: -points[i].count):
        point = points[index]
        if time.monotonic() + point.took > deadline:
            break
        try:
            again = executor.measure(point.data)
        except Interrupted:
            break
        if not again.hang and again.exit_status == 0 and again.value(metric) < point.cost:
            points[index] = replace(point, cost=again.value(metric))
