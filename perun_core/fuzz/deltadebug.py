"""Delta debugging: shrink a slow input to the part that makes it slow.

Zeller's ddmin runs twice: first over the input's lines, then over the
characters of what is left.  A smaller candidate replaces the current input
when it is still slow enough, which ``keep`` defines:

* ``time`` (default): its time is at least the original's, so the result
  keeps the slow-down; right for inputs with a small slow core (a regex
  near miss, a crafted key) among harmless content;
* ``density``: its time above the program's start-up time (the time of a
  run on an empty input) per byte is at least the original's, i.e. it is at
  least as slow relative to its size; for costs that grow with the whole
  input (a quadratic loop), where any smaller input is faster;
* ``growth``: the finding's own property, for an input that is slow by a
  repeated part (a run of one character, a substring repeated, nesting, see
  :mod:`.growth`): a candidate must still have a repeated part, and grown
  back to the original's size (that part repeated more often) it must be at
  least as slow as the original, i.e. keep the ratio at equal size.  How the
  cost grows with the repeated part (its order, fitted) is measured for the
  original before shrinking and for the result after; an original whose
  growth cannot be measured is refused, and the two orders are reported
  (``growth_kept`` says whether the result's class, exponential, superlinear
  or neither, is at least the original's).

Both allow a ``tolerance`` (default three times the relative spread of the
original's runs, at least 5 %).  A tolerance the noise does not allow is
refused rather than quietly changed: one below the spread of the original's
runs (a loss that small cannot be told from noise), with ``growth`` one so large that an ordinary input
of the original's size (its repeated part blanked out with spaces) would pass (it keeps nothing of the
ratio at equal size), or a default (three times that spread) above 50 % (the runs vary too much to keep
anything honestly).  A candidate must also stay clearly above
the start-up time (five times its spread), so an input too small to measure
never wins by noise.  A candidate that hits the hang timeout (three times the
original's wall time, plus a second) counts as slow.  Each accepted step is
reported as a :class:`DeltaStep`; the time budget or ``cancel`` stop the
search with the smallest input found so far.

The output directory gets ``<name>.min<suffix>`` (the shrunk input) and
``deltadebugging.json`` (the original, the result and every step).
"""

from __future__ import annotations

import hashlib
import json
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..atomic import atomic_write, atomic_write_text
from ..errors import FuzzError, Interrupted
from .growth import Growth, describe, fit_growth, periodic_regions, scaled
from .measure import Executor, Measurement, resolve_metric
from .setup import check_output_dir, prepare_program

__all__ = ["DeltaResult", "DeltaStep", "deltadebug"]


@dataclass(frozen=True, slots=True)
class DeltaStep:
    """The input shrank: ``phase`` lines or characters, its new size and time, tests so far."""

    phase: str
    size: int
    value: float
    tests: int
    elapsed: float


@dataclass
class DeltaResult:
    input: str
    output: str
    original_size: int
    original_value: float
    size: int
    value: float
    startup: float
    tolerance: float
    keep: str
    metric: str
    tests: int
    elapsed: float
    stopped: str
    steps: list[DeltaStep] = field(default_factory=list)
    #: with keep growth: how the original's and the result's costs grow with their repeated part
    original_growth: dict | None = None
    growth: dict | None = None
    growth_kept: bool | None = None

    @property
    def ratio(self) -> float:
        """How many times smaller the input got."""
        return self.original_size / max(self.size, 1)


class _Shrinker:
    def __init__(self, executor: Executor, metric: str, keep: str, original: bytes, value: float, startup: float,
                 startup_spread: float, tolerance: float, timeout: float, cancel: threading.Event,
                 emit: Callable[[Any], None]) -> None:
        self.executor = executor
        self.metric = metric
        self.keep = keep
        self.value = value
        self.size = len(original)
        self.startup = startup
        self.floor = startup + 5 * startup_spread
        self.tolerance = tolerance
        self.timeout = timeout
        self.cancel = cancel
        self.emit = emit
        self.start = time.monotonic()
        self.tests = 0
        self.cache: dict[bytes, bool] = {}
        self.values: dict[bytes, float] = {}
        self.steps: list[DeltaStep] = []
        self.stopped = "done"
        self.current = original
        #: with keep growth: candidates are judged grown back to this many code points
        self.chars = len(original.decode("utf-8", "surrogateescape"))

    def out_of_time(self) -> bool:
        if self.cancel.is_set():
            self.stopped = "cancelled"
            return True
        if time.monotonic() - self.start >= self.timeout:
            self.stopped = "time budget"
            return True
        return False

    def _slow_enough(self, data: bytes, outcome: Measurement) -> bool:
        if outcome.hang:
            return True
        if outcome.exit_status != 0:
            return False
        value = outcome.value(self.metric)
        if value <= self.floor:
            return False
        if self.keep != "density":
            return value >= self.value * (1 - self.tolerance)
        needed = (self.value - self.startup) * len(data) / self.size
        return value - self.startup >= needed * (1 - self.tolerance)

    def test(self, data: bytes) -> bool:
        key = hashlib.blake2b(data, digest_size=16).digest()
        if key in self.cache:
            return self.cache[key]
        run = regrown(data, self.chars) if self.keep == "growth" else data
        if run is None:
            self.cache[key] = False  # no repeated part left: nothing to grow back
            return False
        self.tests += 1
        outcome = self.executor.measure(run)
        verdict = self._slow_enough(data, outcome)
        if verdict and not outcome.hang:
            # a second opinion before giving up bytes for good: the lower time decides
            again = self.executor.measure(run)
            if again.value(self.metric) < outcome.value(self.metric):
                outcome = again
            verdict = self._slow_enough(data, outcome)
        self.cache[key] = verdict
        self.values[key] = outcome.value(self.metric)
        return verdict

    def ddmin(self, items: list[bytes], joiner: bytes, phase: str) -> list[bytes]:
        granularity = 2
        while len(items) >= 2 and not self.out_of_time():
            chunk = max(1, len(items) // granularity)
            parts = [items[i:i + chunk] for i in range(0, len(items), chunk)]
            reduced = False
            for i in range(len(parts)):
                if self.out_of_time():
                    return items
                subset = parts[i]
                complement = [x for j, part in enumerate(parts) if j != i for x in part]
                for candidate, next_granularity in ((subset, 2), (complement, max(granularity - 1, 2))):
                    if len(parts) == 2 and candidate is complement:
                        continue  # with two parts the complement of one is the other, tested already
                    if self.test(joiner.join(candidate)):
                        items = candidate
                        granularity = next_granularity
                        reduced = True
                        self._step(phase, joiner.join(items))
                        break
                if reduced:
                    break
            if not reduced:
                if granularity >= len(items):
                    break
                granularity = min(len(items), granularity * 2)
        return items

    def _step(self, phase: str, data: bytes) -> None:
        self.current = data
        key = hashlib.blake2b(data, digest_size=16).digest()
        step = DeltaStep(phase, len(data), self.values.get(key, 0.0), self.tests, round(time.monotonic() - self.start, 4))
        self.steps.append(step)
        self.emit(step)


def regrown(data: bytes, chars: int) -> bytes | None:
    """``data`` with its repeated part (:func:`~perun_core.fuzz.growth.periodic_regions`) repeated until the
    whole has about ``chars`` code points (never fewer repetitions than it has); None without a repeated part."""
    text = data.decode("utf-8", "surrogateescape")
    regions = periodic_regions(text)
    if not regions:
        return None
    return scaled(text, regions, _count_for(text, regions, chars)).encode("utf-8", "surrogateescape")


def _count_for(text: str, regions: list, chars: int) -> int:
    """The repetition count that makes ``text`` about ``chars`` code points long."""
    per_step = sum(len(r.unit) for r in regions)
    fixed = len(text) - sum(len(r.unit) * r.count for r in regions)
    return max(max(r.count for r in regions), round((chars - fixed) / per_step))


def measure_growth(executor: Executor, data: bytes, chars: int, metric: str, noise: float) -> Growth | None:
    """How the cost of ``data`` grows with its repeated part, repeated from a quarter of the count that makes it
    ``chars`` code points long up to that count, at seven counts (the cheapest of three runs each); None without
    a repeated part."""
    text = data.decode("utf-8", "surrogateescape")
    regions = periodic_regions(text)
    if not regions:
        return None
    top = _count_for(text, regions, chars)
    # the order shows at the large counts (a linear term and the start-up dominate small ones), but over less than
    # a fourfold range a quadratic term stays within a busy machine's noise (counts 540..1441 of a quadratic run
    # were once fitted linear beside four busy sessions)
    # (a sixteenth and an eighth of it are cheap and widen the range an exponent is named over: growth.MIN_SPAN)
    counts = sorted({max(1, top * n // 16) for n in (1, 2, 4, 6, 8, 10, 12, 14, 16)})

    spreads: list[float] = []

    def cost(k: int) -> float:
        run = scaled(text, regions, k).encode("utf-8", "surrogateescape")
        runs = sorted(executor.measure(run).value(metric) for _ in range(3))
        spreads.append((runs[1] - runs[0]) / max(runs[0], 1e-9))
        return runs[0]

    base = cost(0)
    costs = [cost(k) for k in counts]
    # the points are the cheapest of three runs: their noise is what separates the two cheapest at each count
    # (typically far below the spread of single runs, ``noise``, which would hide any term but the linear one)
    growth = fit_growth(counts, costs, base, min(noise, statistics.median(spreads)))
    growth.part, growth.base, growth.counts, growth.costs = describe(text, regions), base, counts, costs
    growth.sizes = [len(scaled(text, regions, k).encode("utf-8", "surrogateescape")) for k in counts]
    return growth


def _honest_tolerance(given: float | None, spread: float, metric: str, value: float = 0.0,
                      ordinary: float | None = None) -> float:
    """The tolerance to shrink with; FuzzError for one the measured noise (``spread``) does not allow, or (keeping
    growth, ``ordinary`` the cost of the original with its repeated part blanked out) one under which an input
    no slower than an ordinary one of its size would pass."""
    if given is not None:
        if given < spread:
            raise FuzzError(f"deltadebugging: --tolerance {given:g} is below the noise of the runs ({100 * spread:.0f} % "
                            f"of the {metric} cost): a loss that small cannot be told from noise; give at least "
                            f"{spread:.2f}")
        if ordinary is not None and value * (1 - given) <= ordinary:
            most = max(0.0, 1 - ordinary / value) if value > 0 else 0.0
            raise FuzzError(f"deltadebugging: --tolerance {given:g} with --keep growth would keep an input no slower "
                            f"than an ordinary one of the same size (the original costs {value:.4g}, with its "
                            f"repeated part blanked out {ordinary:.4g}), which keeps nothing of its ratio at equal "
                            f"size; give less than {most:.2f}")
        return given
    chosen = max(0.05, 3 * spread)
    if chosen > 0.5:
        raise FuzzError(f"deltadebugging: the runs of the input vary by {100 * spread:.0f} % of the {metric} cost, "
                        "too much to keep a smaller input honestly; give --tolerance, use a quieter machine or "
                        "--metric instructions where perf counts")
    return chosen


def _blanked_cost(executor: Executor, data: bytes, metric: str) -> float:
    """The cost (cheapest of three runs) of ``data`` with its repeated part replaced by as many spaces: an ordinary
    input of its size."""
    text = data.decode("utf-8", "surrogateescape")
    pieces, at = [], 0
    for region in periodic_regions(text):
        pieces += [text[at:region.start], " " * (region.end - region.start)]
        at = region.end
    blank = ("".join(pieces) + text[at:]).encode("utf-8", "surrogateescape")
    return min(executor.measure(blank).value(metric) for _ in range(3))


def _same_class(original: Growth, shrunk: Growth) -> bool:
    """Whether ``shrunk`` grows in ``original``'s class or above: exponential, superlinear (polynomial), other.

    Classes rather than exponents: on a loaded machine the exponent fitted
    to one program over a few sizes varies by more than half an order (2.8
    and 1.9 for the same quadratic loop), while the class it falls in holds.
    """
    def rank(growth: Growth) -> int:
        return 2 if growth.order == "exponential" and growth.superlinear else 1 if growth.superlinear else 0

    return rank(shrunk) >= rank(original)


def _growth_to_keep(executor: Executor, original: bytes, source: Path, metric: str, noise: float) -> Growth:
    """The original's growth, which ``keep growth`` keeps; FuzzError when its cost does not grow measurably with
    its repeated part."""
    chars = len(original.decode("utf-8", "surrogateescape"))
    growth = measure_growth(executor, original, chars, metric, noise)
    assert growth is not None, "deltadebug checked the repeated part before running anything"
    if growth.order in ("constant", "not measurable"):
        raise FuzzError(f"deltadebugging: --keep growth: the cost of {source} does not grow measurably with "
                        f"{growth.part}; use --keep time or density")
    return growth


def _input_to_shrink(source: Path, keep: str) -> tuple[Path, bytes]:
    """The input to shrink, checked for ``keep``; FuzzError naming it when it cannot be shrunk."""
    if keep not in ("density", "time", "growth"):
        raise FuzzError(f"deltadebugging: --keep {keep!r} is not known; expected density, time or growth")
    if source.exists() and not source.is_file() and not source.is_dir():
        raise FuzzError(f"input {source} is not a regular file (a pipe, device or socket); expected the slow input "
                        "to shrink")
    if not source.is_file():
        raise FuzzError(f"input {source} does not exist; expected the slow input to shrink")
    original = source.read_bytes()
    if not original:
        raise FuzzError(f"input {source} is empty; there is nothing to shrink")
    if keep == "growth" and not periodic_regions(original.decode("utf-8", "surrogateescape")):
        raise FuzzError(f"deltadebugging: --keep growth needs an input slow by a repeated part (a run, a repeated "
                        f"substring, nesting); {source} has none; use --keep time or density")
    return source, original


def deltadebug(cmd: str, input_path: str | Path, output_dir: str | Path, *, args: str | None = None,
               timeout: float = 300.0, stdin: bool = False, metric: str = "cpu", keep: str = "time",
               tolerance: float | None = None, cwd: Path | str | None = None,
               on_event: Callable[[Any], None] | None = None, cancel: threading.Event | None = None) -> DeltaResult:
    """Shrink ``input_path`` for ``cmd`` (ddmin over lines, then characters); write the result to ``output_dir``.

    Raises :class:`FuzzError` for a missing or empty input, an output
    directory that exists and is not empty, a program that cannot be found
    or fails on the input.
    """
    where = Path(cwd) if cwd is not None else Path.cwd()
    out = (where / Path(output_dir).expanduser()).resolve()
    source, original = _input_to_shrink(where / Path(input_path).expanduser(), keep)
    check_output_dir(out)
    argv = prepare_program(cmd, args, where)
    emit = on_event or (lambda event: None)
    cancel = cancel or threading.Event()
    metric, _ = resolve_metric(metric)
    started = time.monotonic()
    # a first run without a limit learns how long the original takes
    with Executor(argv, cwd=where, jobs=1, hang_timeout=max(timeout, 1.0), stdin=stdin, input_name=source.name,
                  cancelled=cancel, count_instructions=metric == "instructions") as probe:
        first = probe.measure(original)
    if first.exit_status != 0 or first.hang:
        raise FuzzError(f"the program fails on {source}: it exited with status {first.exit_status}"
                        if not first.hang else f"the program did not finish on {source} within {timeout:g} s (-t)")
    hang_timeout = 3 * first.wall + 1.0
    with Executor(argv, cwd=where, jobs=1, hang_timeout=hang_timeout, stdin=stdin, input_name=source.name,
                  cancelled=cancel, count_instructions=metric == "instructions") as executor:
        # the first run warms the caches up and is left out; so is the slowest of the others: one run slowed by a
        # passing interruption must not make every tolerance "below the noise"
        runs = sorted(executor.measure(original).value(metric) for _ in range(4))
        value = statistics.median(runs)
        spread = (runs[-2] - runs[0]) / max(value, 1e-9)
        empty = [executor.measure(b"") for _ in range(3)]
        startups = [m.value(metric) for m in empty if m.exit_status == 0 and not m.hang] or [0.0]
        startup = min(statistics.median(startups), value * 0.99)
        startup_spread = (max(startups) - min(startups)) if len(startups) > 1 else 0.0
        ordinary = _blanked_cost(executor, original, metric) if keep == "growth" else None
        chosen = _honest_tolerance(tolerance, spread, metric, value, ordinary)
        original_growth = _growth_to_keep(executor, original, source, metric, spread) if keep == "growth" else None
        shrinker = _Shrinker(executor, metric, keep, original, value, startup, startup_spread, chosen, timeout,
                             cancel, emit)
        try:
            lines = shrinker.ddmin(original.split(b"\n"), b"\n", "lines")
            current = b"\n".join(lines)
            if not shrinker.out_of_time():
                chars = shrinker.ddmin([current[i:i + 1] for i in range(len(current))], b"", "characters")
                current = b"".join(chars)
        except Interrupted:
            shrinker.stopped = "cancelled"
            current = shrinker.current
        if shrinker.steps:
            current_key = hashlib.blake2b(current, digest_size=16).digest()
            final_value = shrinker.values.get(current_key, value)
        else:
            final_value = value
        growth = None
        if original_growth is not None and not cancel.is_set():
            try:
                growth = measure_growth(executor, current, shrinker.chars, metric, spread)
            except Interrupted:
                growth = None
    target = out / f"{source.stem}.min{source.suffix}"
    out.mkdir(parents=True, exist_ok=True)

    atomic_write(target, current)
    result = DeltaResult(str(source), str(target), len(original), value, len(current), final_value, startup, chosen,
                         keep, metric, shrinker.tests, time.monotonic() - started, shrinker.stopped, shrinker.steps)
    if original_growth is not None:
        result.original_growth = original_growth.as_json()
        result.growth = growth.as_json() if growth is not None else None
        result.growth_kept = growth is not None and _same_class(original_growth, growth)
    summary = {k: v for k, v in asdict(result).items() if k != "steps"}
    summary["steps"] = [asdict(s) for s in result.steps]
    summary["command"] = argv
    atomic_write_text(out / "deltadebugging.json", json.dumps(summary, indent=2) + "\n")
    return result
