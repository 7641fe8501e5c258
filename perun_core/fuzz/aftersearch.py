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
from .confirm import analyse
from .findings import FindingAnalysed, Verdict
from .growth import describe, order_rank, periodic_regions
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
    ``deadline``), one part (a run, a repeated unit) each, until ``deadline``; each gets at most half of the
    time left.  Reported ones first, by growth order, then ratio."""
    verdicts: list[Verdict] = []
    parts: set[str] = set()
    for finding in sorted(search.findings, key=lambda f: f.slowdown, reverse=True):
        now = time.monotonic()
        if search.cancel.is_set() or len(verdicts) >= MAX_ANALYSED or now >= deadline:
            break
        text = finding.data.decode("utf-8", "surrogateescape")
        part = describe(text, periodic_regions(text))
        if part in parts or finding.seed not in search.references:
            continue
        parts.add(part)
        try:
            verdict, data = analyse(finding.id, finding.data, search.references[finding.seed], executor,
                                    cost=finding.value, hang=finding.hang,
                                    metric=search.metric, noise=search.noise, gain=search.gain,
                                    cap=analysis_cap(search), limit=search.limits[finding.seed],
                                    deadline=now + (deadline - now) / 2, end=deadline)
        except Interrupted:
            break
        verdict.found_at, verdict.rules = finding.found_at, finding.rules
        if data is not None:
            verdict.file = search.save("findings", finding.id, data)
        verdicts.append(verdict)
        search.emit(FindingAnalysed(verdict))
    return sorted(verdicts, key=lambda v: (v.reported, order_rank(v.growth), v.ratio), reverse=True)


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
