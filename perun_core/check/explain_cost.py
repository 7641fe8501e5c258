"""What an explanation costs: the call-level collector chosen by its expected run time, within a budget.

The time profiles that found the change say how long one run of the
program takes on each side.  From that :func:`plan` estimates each
collector's run time for both commits and picks one:

* Python programs: cProfile (pytrace), about :data:`PYTRACE_FACTOR` times
  slower than a plain run, three rounds a side;
* native programs: perf sampling when the kernel allows it and the change
  is large enough to show in the samples (:data:`PERF_ENOUGH` samples of
  the change over the rounds: the program barely slows down); else
  callgrind, exact but :data:`CALLGRIND_FACTOR` times slower (measured
  here between 20 and 30 times in CPU time on small C and C++ programs,
  plus about a second to start valgrind; programs making many small calls
  go up to a few hundred times, so the estimate takes the high end).

The estimate is reported before collection starts.  When callgrind would
take longer than what is left of the budget (``--explain-budget``,
:data:`DEFAULT_BUDGET` seconds of profiled runs for all jobs of one check,
enough for a CI job; building the commits is not counted), the explanation samples with perf instead where it may, or runs a
smaller generated workload, and says so in its ``notes``; every run gets
the time left as its timeout, so the budget holds even where the estimate
was wrong.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import PerunError
from ..profile.resources import MISSING
from ..runner.generators import SIZE_KEY

__all__ = ["CALLGRIND_FACTOR", "DEFAULT_BUDGET", "PERF_ENOUGH", "PYTRACE_FACTOR", "Budget", "BudgetKilled", "BudgetSpent",
           "Plan", "duration_text", "expected", "native_seconds", "plan", "reduction_note"]

#: Seconds of call-level collection one check may spend explaining (all jobs together).
DEFAULT_BUDGET = 240.0
#: How many times slower a program runs under callgrind, and valgrind's start-up in seconds.
CALLGRIND_FACTOR = 100.0
CALLGRIND_START = 1.0
#: The same for perf sampling with DWARF call stacks (the program runs almost at full speed; ``perf script``
#: unwinding the stacks takes a few seconds per second sampled) and for cProfile.
PERF_FACTOR = 5.0
PERF_START = 1.0
PYTRACE_FACTOR = 3.0
#: Samples a second (perf's default frequency here) and the samples of the change perf needs to localize it.
PERF_FREQUENCY = 999
PERF_ENOUGH = 300
#: Fewer samples than this on the slower side localize nothing (see explain_compare.MIN_SAMPLES).
_SIDE_SAMPLES = 50
_ROUNDS = {"callgrind": 1, "perf": 3, "pytrace": 3}
#: perf for explanations: stacks unwound from DWARF, since the C library's leaf functions (memcpy, strlen) keep
#: no frame pointer and frame-pointer stacks skip the caller an explanation must name
PERF_PARAMS = {"mode": "record", "call_graph": "dwarf"}


@dataclass
class Budget:
    """Seconds the profiled runs of one check's explanations may take (building the commits is not counted)."""

    seconds: float = DEFAULT_BUDGET
    spent: float = 0.0

    def left(self) -> float:
        return self.seconds - self.spent

    @contextlib.contextmanager
    def run(self, runs_left: int) -> Iterator[float]:
        """Time one run, which may take its share of what is left (given to the body); raises BudgetSpent."""
        left = self.left()
        if left <= 0:
            raise BudgetSpent(self.seconds)
        started = time.monotonic()
        try:
            yield left / max(runs_left, 1)
        finally:
            self.spent += time.monotonic() - started


class BudgetSpent(PerunError):
    """The explain budget is spent before a run could start."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the explain budget of {seconds:g} s is spent (--explain-budget)")


class BudgetKilled(PerunError):
    """A profiled run took all of its share of the explain budget and was killed."""

    def __init__(self, collector: str, seconds: float, budget: float) -> None:
        super().__init__(f"{collector} was stopped after {duration_text(seconds)} by the explain budget of "
                         f"{budget:g} s")
        self.collector = collector
        self.seconds = seconds


@dataclass(frozen=True)
class Plan:
    """The collector for one job and what it is expected to cost (None: unknown run time)."""

    collector: str
    params: dict[str, Any]
    estimate: float | None
    #: what was chosen or reduced, and why (shown with the explanation)
    notes: tuple[str, ...] = ()
    #: callgrind is expected to take longer than the budget left: reduce the workload or give up
    over: bool = False
    #: ``OLD to NEW``: the generated workload NEW replaced the job's OLD ("" when none did)
    reduced: str = ""


def native_seconds(profile: Any, subtype: str = "real") -> float | None:
    """The median wall time of one run in a time profile (``time`` resources of subtype ``real``; ``user``:
    its CPU time in user mode, what perf samples where the kernel forbids profiling itself), or None.

    Of a profile over generated workloads, that of the largest workload
    (the one an explanation runs).
    """
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}.get(str((profile.units or {}).get("time", "s")), 1.0)
    by_size: dict[float, list[float]] = {}
    for _, region in profile.regions():
        table = region.resources
        keys = table.columns()[0] if len(table) else []
        if "subtype" not in keys:
            continue
        kinds = table.column("type") if "type" in keys else [MISSING] * len(table)
        sizes = table.column(SIZE_KEY) if SIZE_KEY in keys else [0] * len(table)
        for kind, found, amount, size in zip(kinds, table.column("subtype"), table.column("amount"), sizes):
            if kind == "time" and found == subtype and type(amount) in (int, float):
                by_size.setdefault(float(size) if type(size) in (int, float) else 0.0, []).append(amount * scale)
    return statistics.median(by_size[max(by_size)]) if by_size else None


def expected(collector: str, seconds: tuple[float, float]) -> float:
    """Seconds ``collector`` is expected to take for both sides of ``seconds`` (one plain run each)."""
    rounds = _ROUNDS.get(collector, 1)
    if collector == "callgrind":
        return sum(CALLGRIND_START + CALLGRIND_FACTOR * s for s in seconds) * rounds
    if collector == "perf":
        return sum(PERF_START + PERF_FACTOR * s for s in seconds) * rounds
    return sum(PYTRACE_FACTOR * s for s in seconds) * rounds


def _samples(seconds: tuple[float, float]) -> tuple[float, float]:
    """(samples of the change, samples of the slower side) perf is expected to take over its rounds."""
    rounds = _ROUNDS["perf"]
    return (abs(seconds[1] - seconds[0]) * PERF_FREQUENCY * rounds,
            max(seconds) * PERF_FREQUENCY * rounds)


def duration_text(seconds: float) -> str:
    """``42 s``, ``4.2 s``: the seconds of a run or an estimate as explanations say them."""
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


def _about(seconds: float) -> str:
    return f"about {duration_text(seconds)}"


def plan(python: bool, wanted: str | None, seconds: tuple[float, float] | None, left: float,
         valgrind: bool, perf: bool, sampled: tuple[float, float] | None = None) -> Plan | str:
    """The collector for a job (see the module docstring), or a one-line message saying why there is none.

    ``python``: the program is Python; ``wanted``: the collector the user
    asked for; ``seconds``: one plain run of the baseline and the target
    (None when unknown); ``left``: seconds of the budget left;
    ``valgrind``/``perf``: whether each may run here; ``sampled``: the
    seconds of a run perf samples (its user-mode CPU time), default ``seconds``.
    """
    sampled = sampled or seconds
    if wanted == "pytrace" or (wanted is None and python):
        return Plan("pytrace", {"mode": "cprofile"}, expected("pytrace", seconds) if seconds else None)
    costs = {name: expected(name, seconds) if seconds else None for name in ("callgrind", "perf")}
    if wanted is not None:
        over = wanted == "callgrind" and costs["callgrind"] is not None and costs["callgrind"] > left
        params = dict(PERF_PARAMS) if wanted == "perf" else {}
        return Plan(wanted, params, costs[wanted], over=over)
    shows = sampled is not None and _samples(sampled)[0] >= PERF_ENOUGH and _samples(sampled)[1] >= _SIDE_SAMPLES
    if perf and shows:
        assert sampled is not None and costs["callgrind"] is not None
        change = _samples(sampled)[0]
        return Plan("perf", dict(PERF_PARAMS), costs["perf"],
                    (f"sampled with perf: the change shows in about {change:.0f} samples; callgrind would take "
                     f"{_about(costs['callgrind'])}",))
    if valgrind:
        cost = costs["callgrind"]
        if cost is not None and cost > left and perf and sampled is not None and _samples(sampled)[1] >= _SIDE_SAMPLES:
            return Plan("perf", dict(PERF_PARAMS), costs["perf"],
                        (f"sampled with perf: callgrind would take {_about(cost)}, more than the "
                         f"{left:.0f} s left of the explain budget",))
        return Plan("callgrind", {}, cost, over=cost is not None and cost > left)
    if perf:
        return Plan("perf", dict(PERF_PARAMS), costs["perf"])
    return ""


def reduction_note(old: str, new: str, estimate: float, left: float) -> str:
    """Why the workload was reduced."""
    return (f"workload reduced from {old} to {new}: callgrind on {old} would take {_about(estimate)}, more than "
            f"the {left:.0f} s left of the explain budget")
