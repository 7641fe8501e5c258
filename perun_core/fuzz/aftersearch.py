"""After the search: the growth and equal-size analysis of its best kept inputs (see :mod:`.confirm`).

The analysis gets :data:`ANALYSIS_SHARE` of the time budget counted from
the search's end (never more than the budget's end), so a search that stops
early does not hand its unused time to the analysis.  It runs on an executor
of its own whose runs are killed at the analysis' end.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import Interrupted
from .confirm import analyse, distinct_parts, needed_ratio
from .findings import FindingAnalysed, Verdict
from .growth import finding_rank
from .measure import Executor, stop_at

if TYPE_CHECKING:  # pragma: no cover
    from .search import _Search
    from .setup import FuzzSettings

__all__ = ["ANALYSIS_SHARE", "MAX_ANALYSED", "analyse_search", "analysis_cap"]

#: share of the time budget the analysis of the best inputs gets after the search (however early the search ends)
ANALYSIS_SHARE = 0.3
#: most kept inputs analysed
MAX_ANALYSED = 6


def analysis_cap(search: _Search) -> float:
    """Longest run of the analysis, in seconds: long enough to see a growth above the start-up."""
    return min(search.s.hang_timeout / 2, max(2.0, 10 * search.seed_wall))


def analyse_findings(search: _Search, executor: Executor, deadline: float) -> list[Verdict]:
    """Analyse the best kept inputs with ``executor`` (its runs are killed at the analysis' time cap and at
    ``deadline``): one input per distinct slow part (the unit of its longest repeated region), the slowest kept
    one of each, those clearly slower than an ordinary input of their size first, until ``deadline``.  Each gets
    at most half of the time left while others wait (no analysis starves the next one), the last all of it; the
    comparison at equal size of a superlinear growth may borrow half of the others' time when no input that can
    show it fits in its own (see :func:`~.confirm.analyse`).  Reported ones first, by growth order, then ratio."""
    clear = needed_ratio(search.gain)
    chosen = distinct_parts([f for f in search.findings if f.seed in search.references], MAX_ANALYSED, clear)
    verdicts: list[Verdict] = []
    for index, finding in enumerate(chosen):
        now = time.monotonic()
        if search.cancel.is_set() or now >= deadline:
            break
        window = (deadline - now) / (2 if index + 1 < len(chosen) else 1)
        latest = now + (deadline - now) * (0.75 if index + 1 < len(chosen) else 1)
        try:
            verdict, data = analyse(finding.id, finding.data, search.references[finding.seed], executor,
                                    cost=finding.value, hang=finding.hang,
                                    metric=search.metric, noise=search.noise, gain=search.gain,
                                    cap=analysis_cap(search), limit=search.limits[finding.seed],
                                    deadline=now + window * 0.6, end=now + window, latest=latest)
        except Interrupted:
            break
        verdict.found_at, verdict.rules, verdict.kept_file = finding.found_at, finding.rules, finding.file
        if data is not None:
            verdict.file = search.save("findings", finding.id, data)
        if verdict.largest is not None:
            # the largest measured input is saved beside the compared one unless it is the same input
            same = verdict.largest.data == data
            verdict.largest.file = verdict.file if same else \
                search.save("findings", f"{finding.id}-largest", verdict.largest.data)
        verdicts.append(verdict)
        search.emit(FindingAnalysed(verdict))
    return sorted(verdicts, key=lambda v: (v.reported, *finding_rank(v.growth), v.ratio), reverse=True)


def analyse_search(search: _Search, settings: FuzzSettings, argv: list[str], where: Path, name: str, metric: str,
                   jobs: int, cancel: threading.Event) -> tuple[list[Verdict], float]:
    """The analysis of the search's findings, on a runner of its own stopped at the analysis' end.
    Returns the verdicts and the seconds the search took."""
    searched = time.monotonic() - search.start
    end = search.start + min(settings.timeout, searched + ANALYSIS_SHARE * settings.timeout)
    stop = stop_at(cancel, end)
    try:
        # runs are killed at the hang timeout stretched as much as the machine's load stretches wall time over
        # CPU time (a loaded machine would otherwise kill runs that did little work), at most a quarter of the
        # analysis' time, and at its end
        window = end - time.monotonic()
        kill = max(analysis_cap(search), min(settings.hang_timeout * search.stretch(), window / 4))
        with Executor(argv, cwd=where, jobs=jobs, hang_timeout=kill, stdin=settings.stdin,
                      input_name=name, cancelled=stop, count_instructions=metric == "instructions") as analyser:
            return analyse_findings(search, analyser, end), searched
    finally:
        stop.set()
