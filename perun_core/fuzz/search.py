"""The search for slow inputs.

1. Everything the user gave is checked before the program runs: the
   settings (through :data:`~perun_core.fuzz.options.FUZZ_PARAMS`), the seed
   corpus, the program, the output directory.  Then every seed is run
   ``calibration`` times (more when the runs spread widely, see :data:`NOISY`):
   its median sets its baseline, the spread of the runs the noise.  A program failing on a seed, or a seed run longer than
   the hang timeout or the time budget, stops everything with one error.
2. Rounds of ``jobs`` candidates, measured in parallel: each candidate is a
   parent from the pool (the best input half of the time, otherwise one of
   the eight best: "restart from the best") with a stack of mutations applied,
   the rules drawn by weight.  A candidate is judged by its cost over the
   cost of the seed grown to its size (:class:`~perun_core.fuzz.confirm.Reference`,
   so growth alone is worth nothing) and kept when that ratio beats its
   parent's by more than the noise (``threshold``: three times the relative
   spread of the seed runs, at least 5 %), measured again (when its run was
   short or its gain small) and judged by the lower of its two costs.  A kept
   input with a short run that :data:`REVISIT` children in a row did not beat
   is measured once more (its lowest cost kept), so a fluke does not hold the
   search up.  With the ``pump`` rule chosen
   (the default), the seeds' pumpings (:func:`~perun_core.fuzz.pump.pump_plan`)
   are 60 % of the candidates, the rest random from the start (a long plan
   does not hold the search up), for at most 60 % of the search's time.
   The search gets 70 % of the time budget (its runs are killed at its end);
   then the best kept input of each distinct slow part is analysed
   (:func:`~perun_core.fuzz.confirm.analyse`, each with its share of the
   time left, so every distinct superlinear finding can be reported, ranked
   by growth order and ratio) for at most the other 30 %,
   counted from the search's end: a search that stops early (the slow-down
   reached, nothing new to try) does not hand its unused time to the
   analysis, so ``-t 600`` searched for 20 s ends by 200 s, not 600 s (the
   analysis' runs are killed then).  Only those whose cost grows
   superlinearly with the part that made them slow, and that are clearly slower
   than the seed grown to their size, are reported.  A candidate not slow enough to
   keep but not faster than its parent either becomes a walker: later
   candidates mutate it further and are judged against the same parent, so
   gains too small to measure one by one add up.  Rules are drawn with
   weights proportional to their (smoothed) rate of kept inputs.  When no candidate
   is kept for a while, the mutation stack doubles (up to 64) to get across
   plateaus where small changes are lost in the noise.
3. A run killed at the hang timeout is a finding of its own (a hang); it
   never becomes a parent, and its parent is not chosen again while there
   are others (so one near-hang input does not flood the output with
   hangs).  The timeout is stretched as the load stretches wall time over
   CPU time (at most :data:`MAX_STRETCH` times): on a busy machine a slow
   input is not a hang.  A run that fails (exits non-zero) is dropped.
4. With gcov available and ``--source-path``/``--gcno-path`` naming a
   program built with ``--coverage``, a candidate is only kept when its
   executed-line count also grew by ``coverage_increase`` over its parent's
   (and runs are measured one at a time, as the counts share files).
   Otherwise the pre-filter is skipped and ``results.json`` says why.
5. With ``guidance`` "hits" a candidate its cost did not keep runs once more
   under :mod:`.guidance`'s hit counter (never a timed run), and is kept when
   some line or branch ran more often than on any input before.

The checks before the run are in :mod:`perun_core.fuzz.setup`.  Progress
goes to ``on_event`` as the dataclasses of :mod:`perun_core.fuzz.findings`;
``cancel`` stops the search between rounds (the running candidates are
killed) and the results so far are written as usual.
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import statistics
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import FuzzError, Interrupted
from .aftersearch import ANALYSIS_SHARE, analyse_search
from .confirm import Reference
from .findings import Finding, FuzzFinished, FuzzProgress, FuzzResult, FuzzStarted, InputKept
from .guidance import Guidance, start_guidance
from .measure import (LONG_RUN, Coverage, Executor, Measurement, available_cores, calibration_run, resolve_metric,
                      stop_at)
from .output import write_results
from .pump import pump_plan
from .rules import RuleChoice, parse_rule_specs
from .dictionary import user_tokens
from .setup import FuzzSettings, check_output_dir, is_binary, prepare_program, read_seeds
from .textrules import seed_dictionary

__all__ = ["fuzz"]

#: smallest relative gain a kept input needs, whatever the noise
MIN_GAIN = 0.05
#: default input-size limit: this many times the largest seed, but at least DEFAULT_MIN_LIMIT bytes
DEFAULT_SIZE_FACTOR = 32
DEFAULT_MIN_LIMIT = 64 * 1024
MAX_STACK = 64
#: most mutations a walker (a candidate neither kept nor faster) accumulates
MAX_WALK = 256
#: share of the candidates the pumping plan makes while it lasts, and the most of the search budget it lasts
PLAN_SHARE = 0.6
#: most the hang timeout is stretched by the machine's load (a program that mostly waits is not stretched further)
MAX_STRETCH = 8.0
#: a seed whose runs spread more than this (relative) gets more calibration runs, up to NOISY_ROUNDS times the
#: configured number: five runs on a busy machine give spreads from 1 to 20 % for the same program, and the
#: threshold of the whole search is three times it
NOISY, NOISY_ROUNDS = 0.1, 3
#: while the calibration has taken less than this share of the search's time (a short -t keeps its search)
NOISY_TIME = 0.1
#: a kept input none of whose last this many children beat it is measured again (see _Search.revisit), when its run
#: was short (a long run is stretched far less by a burst of load, and its second run would hold the search up)
REVISIT = 24


# -- the search --------------------------------------------------------------------------------

def _robust_spread(values: Sequence[float]) -> tuple[float, float]:
    median = statistics.median(values)
    mad = statistics.median(abs(v - median) for v in values)
    return median, 1.4826 * mad


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class _Search:
    def __init__(self, settings: FuzzSettings, argv: list[str], seeds: list[tuple[Path, bytes]],
                 rules: list[RuleChoice], executor: Executor, coverage_note: str,
                 on_event: Callable[[Any], None], cancel: threading.Event, metric: str = "cpu") -> None:
        self.s = settings
        self.metric = metric
        self.references: dict[str, Reference] = {}
        self.best_found_at = 0.0
        self.search_budget = settings.timeout * (1 - ANALYSIS_SHARE)
        self.seed_wall = 0.0
        self.argv = argv
        self.seed_files = seeds
        self.rules = rules
        self.executor = executor
        self.coverage_note = coverage_note
        self.emit = on_event
        self.cancel = cancel
        self.rng = random.Random(settings.seed)
        self.tries = {r.name: 0 for r in rules}
        self.successes = {r.name: 0 for r in rules}
        #: candidates that were not slower enough to keep but not faster either: mutated further
        self.walkers: list[tuple[Finding, bytes, list[str]]] = []
        self.findings: list[Finding] = []
        self.pool: list[Finding] = []
        self.seen: set[bytes] = set()
        self.baselines: dict[str, float] = {}
        self.limits: dict[str, int] = {}
        self.timeline: list[tuple[float, float]] = []
        self.failures = 0
        self.start = time.monotonic()
        self.stack = 1
        self.fruitless = 0
        self.candidates_made = self.planned_made = self.setup_runs = 0  # see _plan_turn, _stop_reason
        self.noise = 0.0
        self.gain = MIN_GAIN
        self.best = 1.0
        self.counter = 0
        #: parents a candidate of which hung: not chosen again while others are left
        self.hung_parents: set[str] = set()
        #: children judged since a parent was last measured or beaten, by parent id (see revisit)
        self.stale: dict[str, int] = {}
        self.repeated_hangs = 0
        #: hit-count guidance (see :mod:`.guidance`), None when off
        self.guide: Guidance | None = None
        #: the pumpings of every seed, tried first (when the pump rule is chosen); kinds that hung are skipped
        self.plan: Iterator[tuple[Finding, tuple[str, bytes], bytes]] | None = None
        self.plan_kinds: dict[bytes, tuple[str, tuple[str, bytes]]] = {}
        self.plan_hung: set[tuple[str, tuple[str, bytes]]] = set()
        self.plan_until = 0.0
        self.seed_list: list[Finding] = []

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    # -- calibration ---------------------------------------------------------------------
    def calibrate(self) -> list[Finding]:
        seeds: list[Finding] = []
        spreads = []
        largest = max(len(data) for _, data in self.seed_files)
        for index, (path, data) in enumerate(self.seed_files):
            runs: list[Measurement] = []
            planned = self.s.calibration
            while len(runs) < planned:
                runs.append(calibration_run(self.executor, data, path, self.s.hang_timeout, self.s.timeout))
                if len(runs) == planned and planned < NOISY_ROUNDS * self.s.calibration \
                        and self.elapsed() < NOISY_TIME * self.search_budget:
                    median, spread = _robust_spread([m.value(self.metric) for m in runs])
                    if spread > NOISY * median:
                        planned += self.s.calibration  # see NOISY
            values = [m.value(self.metric) for m in runs]
            median, spread = _robust_spread(values)
            median = max(median, 1e-6)
            spreads.append(spread / median)
            sid = f"seed{index + 1}" if len(self.seed_files) > 1 else "seed"
            self.baselines[sid] = median
            if self.s.max_size is not None:
                limit = self.s.max_size
            elif self.s.max_increase is not None:
                limit = len(data) + self.s.max_increase
            elif self.s.max_ratio is not None:
                limit = math.floor(len(data) * self.s.max_ratio)
            else:
                limit = max(DEFAULT_MIN_LIMIT, DEFAULT_SIZE_FACTOR * largest)
            self.limits[sid] = max(limit, 1)
            coverage = runs[-1].coverage
            finding = Finding(sid, str(path), len(data), statistics.median(m.cpu for m in runs),
                              statistics.median(m.wall for m in runs), median, 1.0, sid, None, [], 0, 0.0, 0,
                              coverage=coverage, data=data)
            seeds.append(finding)
            self.seen.add(_digest(data))
            self.seed_wall = max(self.seed_wall, finding.wall)
            if data:
                self.references[sid] = Reference.measure(self.executor, data, median, self.limits[sid], self.metric)
        self.noise = min(0.5, max(spreads))
        self.setup_runs = self.executor.executions  # the calibration's and references' runs: not the search's
        self.gain = max(MIN_GAIN, 3 * self.noise)
        self.pool = [s for s in seeds if s.size > 0] or seeds
        self.seed_list = seeds
        self.timeline.append((self.elapsed(), 1.0))
        # the plan's share counts from the end of the calibration, which can take a while
        self.plan_until = self.elapsed() + PLAN_SHARE * max(0.0, self.search_budget - self.elapsed())
        if any(rule.name == "pump" for rule in self.rules):
            self.plan = self._plan([s for s in seeds if s.size > 0])
        return seeds

    def _plan(self, seeds: list[Finding]) -> Iterator[tuple[Finding, tuple[str, bytes], bytes]]:
        """The seeds' pumping plans, taken in turn."""
        plans = [(seed, pump_plan(seed.data, self.limits[seed.seed])) for seed in seeds]
        while plans:
            for entry in list(plans):
                seed, plan = entry
                item = next(plan, None)
                if item is None:
                    plans.remove(entry)
                else:
                    yield seed, item[0], item[1]

    def _planned(self) -> tuple[Finding, bytes, list[str]] | None:
        """The next pumping of the plan not tried yet and not of a kind that hung; None when the plan is done."""
        if self.plan is None:
            return None
        if self.elapsed() >= self.plan_until:
            self.plan = None
            return None
        for seed, kind, data in self.plan:
            digest = _digest(data)
            if (seed.id, kind) in self.plan_hung or digest in self.seen or len(data) > self.limits[seed.seed]:
                continue
            self.seen.add(digest)
            self.plan_kinds[digest] = (seed.id, kind)
            return seed, data, ["pump"]
        self.plan = None
        return None

    # -- one round -------------------------------------------------------------------------
    def _parent(self) -> Finding:
        usable = [f for f in self.pool if f.id not in self.hung_parents] or self.pool
        ranked = sorted(usable, key=lambda f: f.slowdown, reverse=True)
        if self.rng.random() < 0.5:
            return ranked[0]
        return self.rng.choice(ranked[:8])

    def weight(self, name: str) -> float:
        """How likely a rule is drawn: its (smoothed) rate of kept inputs."""
        return (self.successes[name] + 1) / (self.tries[name] + 20)

    @property
    def weights(self) -> dict[str, float]:
        top = max(self.weight(n) for n in self.tries)
        return {n: self.weight(n) / top for n in self.tries}

    def _plan_turn(self) -> bool:
        """Whether the next candidate is the plan's: :data:`PLAN_SHARE` of the candidates while it lasts."""
        self.candidates_made += 1
        if self.plan is None or self.planned_made >= PLAN_SHARE * self.candidates_made:
            return False
        self.planned_made += 1
        return True

    def _candidate(self) -> tuple[Finding, bytes, list[str]] | None:
        if self._plan_turn() and (planned := self._planned()) is not None:
            return planned
        if self.walkers and self.rng.random() < 0.5:
            parent, data, used = self.walkers.pop(self.rng.randrange(len(self.walkers)))
            used = list(used)
        else:
            parent = self._parent()
            data = parent.data
            used = []
        limit = self.limits[parent.seed]
        names = list(self.tries)
        weights = [self.weight(n) for n in names]
        by_name = {r.name: r for r in self.rules}
        depth = len(used) + self.rng.randint(1, self.stack)
        attempts = 0
        while len(used) < depth and attempts < depth * 3:
            attempts += 1
            rule = by_name[self.rng.choices(names, weights)[0]]
            mutated = rule.apply(data, self.rng, limit - len(data))
            if mutated is None or mutated == data or len(mutated) > limit:
                continue
            data = mutated
            used.append(rule.name)
        if not used:
            return None
        digest = _digest(data)
        if digest in self.seen:
            return None
        self.seen.add(digest)
        return parent, data, used

    def _stop_reason(self) -> str | None:
        if self.cancel.is_set():
            return "cancelled"
        if self.elapsed() >= self.search_budget:
            return "time budget"
        if self.s.exec_limit is not None and self.executor.executions - self.setup_runs >= self.s.exec_limit:
            return "execution limit"
        if self.s.stop_at is not None and self.best >= self.s.stop_at:
            return "slowdown reached"
        return None

    def run(self) -> str:
        last_progress = 0.0
        while (reason := self._stop_reason()) is None:
            batch = []
            tries = 0
            while len(batch) < self.executor.jobs and tries < self.executor.jobs * 20:
                tries += 1
                made = self._candidate()
                if made is not None:
                    batch.append(made)
            if not batch:
                self.stack = min(MAX_STACK, self.stack * 2)
                if self.stack == MAX_STACK and tries >= self.executor.jobs * 20:
                    return "nothing new to try"
                continue
            try:
                measured = self.executor.measure_all([data for _, data, _ in batch])
            except Interrupted:
                return "cancelled" if self.cancel.is_set() else "time budget"
            kept_any = False
            for (parent, data, used), outcome in zip(batch, measured):
                kept = self._judge(parent, data, used, outcome)
                kept_any |= kept
                self.stale[parent.id] = 0 if kept else self.stale.get(parent.id, 0) + 1
            for parent in {parent.id: parent for parent, _, _ in batch}.values():
                if self.stale[parent.id] >= REVISIT and parent.parent is not None and parent.wall < LONG_RUN:
                    self.revisit(parent)
            self.executor.set_hang_timeout(self.s.hang_timeout * min(self.stretch(), MAX_STRETCH))
            if kept_any:
                self.fruitless = 0
                self.stack = max(1, self.stack // 2)
            else:
                self.fruitless += len(batch)
                if self.fruitless >= 8 * self.executor.jobs:
                    self.stack = min(MAX_STACK, self.stack * 2)
                    self.fruitless = 0
            now = self.elapsed()
            if now - last_progress >= 0.2 or kept_any:
                last_progress = now
                self._progress()
        return reason

    def threshold(self, parent: Finding) -> float:
        return parent.slowdown * (1 + self.gain)

    def fitness(self, seed: str, data: bytes, outcome: Measurement) -> float:
        """Cost over the cost of an ordinary input of the same size (the seed grown to it): growth alone is 1."""
        reference = self.references.get(seed)
        cost = outcome.value(self.metric)
        expected = reference.cost(len(data)) if reference is not None else self.baselines[seed]
        return cost / max(expected, 1e-12)

    def _judge(self, parent: Finding, data: bytes, used: list[str], outcome: Measurement) -> bool:
        if outcome.hang:
            if (kind := self.plan_kinds.get(_digest(data))) is not None:
                self.plan_hung.add(kind)
            if parent.id in self.hung_parents:
                self.repeated_hangs += 1  # one hang per parent is a finding; more would flood the output
                return False
            self.hung_parents.add(parent.id)
            self._keep(parent, data, used, outcome, hang=True)
            return True
        if outcome.exit_status != 0:
            self.failures += 1
            self._punish(used)
            return False
        value = self.fitness(parent.seed, data, outcome)
        limit = self.threshold(parent)
        if value <= limit:
            if self.guide is not None and self.guide.raises(data):
                # not measurably slower, but some line or branch ran more often than ever: kept as a parent
                self._keep(parent, data, used, outcome, hang=False)
                return True
            self._punish(used)
            if value >= parent.slowdown and len(used) < MAX_WALK:
                # no loss: walk on from here, so gains too small to measure one by one can add up
                self.walkers.append((parent, data, used))
                del self.walkers[:-2 * self.executor.jobs]
            return False
        if self.executor.coverage is not None and parent.coverage is not None and outcome.coverage is not None:
            if outcome.coverage < parent.coverage * self.s.coverage_increase:
                self._punish(used)
                return False
        if value < 2 * limit or outcome.wall < LONG_RUN:
            # measured again when the gain is small or the run short: one slow run on a busy machine can double a
            # short program's cost, and a fluke kept as the best sets a bar its children cannot pass (a 2.3x fluke
            # stalled a search for 400 s); a long run, which a burst stretches far less, is not paid for twice
            try:
                again = self.executor.measure(data)
            except Interrupted:
                return False
            if again.exit_status != 0 or again.hang:
                return False
            if (second := self.fitness(parent.seed, data, again)) < value:
                outcome, value = again, second
            if value <= limit:
                self._punish(used)
                return False
        self._keep(parent, data, used, outcome, hang=False)
        return True

    def _punish(self, used: list[str]) -> None:
        for name in set(used):
            self.tries[name] += 1

    def _keep(self, parent: Finding, data: bytes, used: list[str], outcome: Measurement, *, hang: bool) -> None:
        for name in set(used):
            self.tries[name] += 1
            self.successes[name] += 1
        self.counter += 1
        fid = f"{'hang' if hang else 'w'}{self.counter}"
        file = self.save("hangs" if hang else "inputs", fid, data)
        if hang:
            # the run was stopped: its cost is at least the hang timeout (in seconds; counted instructions as far
            # as they got), so its ratio is a lower bound
            value = self.s.hang_timeout if self.metric != "instructions" else outcome.value(self.metric)
            reference = self.references.get(parent.seed)
            expected = reference.cost(len(data)) if reference is not None else self.baselines[parent.seed]
            slowdown = value / max(expected, 1e-12)
        else:
            value = outcome.value(self.metric)
            slowdown = self.fitness(parent.seed, data, outcome)
        finding = Finding(fid, file, len(data), outcome.cpu, outcome.wall, value, slowdown, parent.seed,
                          parent.id, list(used), parent.depth + len(used), round(self.elapsed(), 4),
                          self.executor.executions, hang, outcome.coverage, data)
        self.findings.append(finding)
        if not hang:
            self.pool.append(finding)
        if finding.slowdown > self.best:
            self.best = finding.slowdown
            self.best_found_at = finding.found_at
            self.timeline.append((finding.found_at, self.best))
        self.emit(InputKept(finding, self.best))

    def revisit(self, parent: Finding) -> None:
        """Measure ``parent`` again, and keep the lower cost: a fluke (a run slowed down by a burst of load, and
        the run at once after it by the same burst) makes a parent whose children cannot beat it, and a search
        that keeps choosing it stalls; a second look, minutes away from the first, takes the fluke out."""
        self.stale[parent.id] = 0
        try:
            again = self.executor.measure(parent.data)
        except Interrupted:
            return
        if again.exit_status != 0 or again.hang or (slowdown := self.fitness(parent.seed, parent.data, again)) \
                >= parent.slowdown:
            return
        parent.value, parent.cpu, parent.wall, parent.slowdown = again.value(self.metric), again.cpu, again.wall, \
            slowdown
        best = max(self.findings, key=lambda f: f.slowdown)
        if best.slowdown < self.best:
            self.best, self.best_found_at = best.slowdown, best.found_at
            self.timeline.append((self.elapsed(), self.best))

    def stretch(self) -> float:
        """How much longer than their CPU time runs take on this machine now (1 on an idle one)."""
        runs = [f for f in self.findings[-20:] if f.cpu > 0.02 and not f.hang] or \
            [f for f in self.seed_list if f.cpu > 0]
        return max(1.0, statistics.median(f.wall / f.cpu for f in runs)) if runs else 1.0

    def save(self, folder: str, name: str, data: bytes) -> str:
        """Write a kept or analysed input under the output directory; its path relative to it."""
        file = f"{folder}/{name}{Path(self.seed_files[0][0]).suffix}"
        target = self.s.output_dir / file
        target.parent.mkdir(parents=True, exist_ok=True)
        # renamed into place (never seen half-written) but not fsynced: a kept input costs no disk flush
        # in the middle of the search; results.json, written at the end, is fsynced
        partial = target.with_name(f".{target.name}.part")
        partial.write_bytes(data)
        os.replace(partial, target)
        return file

    def _progress(self) -> None:
        elapsed = self.elapsed()
        self.emit(FuzzProgress(self.executor.executions, len(self.findings), sum(f.hang for f in self.findings),
                               self.failures, self.best, elapsed,
                               self.executor.executions / elapsed if elapsed > 0 else 0.0, self.best_found_at))


def fuzz(settings: FuzzSettings, *, cwd: Path | str | None = None, on_event: Callable[[Any], None] | None = None,
         cancel: threading.Event | None = None) -> FuzzResult:
    """Search for inputs that make ``settings.cmd`` slow; write them and the results to the output directory.

    Raises :class:`FuzzError` (bad seeds, program, output directory, a
    program failing on a seed, budgets too short), UnknownUnit /
    InvalidParameter for bad rules, all before the output directory is made.
    """

    emit = on_event or (lambda event: None)
    cancel = cancel or threading.Event()
    where = Path(cwd) if cwd is not None else Path.cwd()
    check_output_dir(settings.output_dir)
    seeds = read_seeds(settings.seeds, settings.workloads_filter)
    argv = prepare_program(settings.cmd, settings.args, where)
    binary = any(is_binary(data) for _, data in seeds)
    rules = parse_rule_specs(settings.rules, binary)
    if not rules:
        raise FuzzError("no mutation rule is left to use; name some with -r")
    tokens = seed_dictionary([data for _, data in seeds], user_tokens(settings.dictionary, settings.literal_source))
    for rule in rules:
        rule.give_dictionary(tokens)
    metric, metric_note = resolve_metric(settings.metric)
    coverage, note = (None, "skipped (--skip-coverage-testing)") if settings.skip_coverage else \
        Coverage.usable(settings.source_path, settings.gcno_path)
    coverage_note = "used" if coverage is not None else f"skipped: {note}"
    jobs = settings.jobs or available_cores()
    name = "input" + seeds[0][0].suffix
    # the search's runs are killed when its share of the time budget is spent, so the analysis gets its own
    search_stop = stop_at(cancel, time.monotonic() + settings.timeout * (1 - ANALYSIS_SHARE))
    with Executor(argv, cwd=where, jobs=jobs, hang_timeout=settings.hang_timeout, stdin=settings.stdin,
                  input_name=name, cancelled=search_stop, coverage=coverage,
                  count_instructions=metric == "instructions") as executor, \
            start_guidance(settings.guidance, argv, cwd=where, input_name=name, stdin=settings.stdin,
                           hang_timeout=settings.hang_timeout, cancelled=search_stop, coverage=coverage) as guide:
        search = _Search(settings, argv, seeds, rules, executor, coverage_note, emit, cancel, metric)
        try:
            seed_findings = search.calibrate()  # cancelling here raises Interrupted: there is nothing to write yet
        except Interrupted:
            if cancel.is_set():
                raise
            raise FuzzError(f"the time budget {settings.timeout:g} s (-t) is too short: calibrating the seeds "
                            f"took more than the search's share of it", hint="raise -t") from None
        guide.prime(data for _, data in seeds)
        search.guide = guide if guide.active else None
        settings.output_dir.mkdir(parents=True, exist_ok=True)
        notes = [metric_note] if metric_note else []
        if search.gain > 0.5:
            notes.append(f"the noise of the cost ({100 * search.noise:.0f} %) keeps only inputs "
                         f"{100 * search.gain:.0f} % slower than their parent: smaller gains cannot be kept")
        emit(FuzzStarted(tuple(str(p) for p, _ in seeds), tuple(f.value for f in seed_findings), search.noise,
                         search.gain, executor.jobs, tuple(r.name for r in rules), coverage_note, metric,
                         "; ".join(notes)))
        stopped = search.run()
        search.timeline.append((search.elapsed(), search.best))
        search._progress()
        verdicts, searched = analyse_search(search, settings, argv, where, name, metric, jobs, cancel)
        elapsed = search.elapsed()
        if settings.guidance != "off":
            notes.append(guide.summary())
        if not search.findings and search.gain > 0.5:
            notes.append("nothing was kept: the noise threshold may be why (a quieter machine, --metric "
                         "instructions where perf counts, or a larger input per run lowers it)")
        result = FuzzResult(settings, argv, seed_findings, search.findings, search.timeline, executor.executions,
                            search.failures, elapsed, stopped, search.noise, search.gain, executor.jobs,
                            {k: round(v, 4) for k, v in search.weights.items()}, dict(search.successes),
                            coverage_note, notes=notes, metric=metric, verdicts=verdicts, searched=searched)
    write_results(result)
    emit(FuzzFinished(stopped, result.executions, len(result.findings), sum(f.hang for f in result.findings),
                      result.best_slowdown, elapsed, len(result.reported)))
    return result
