"""The porcelain of bisecting a degradation: ``bisect`` and ``bisect_jobs``.

Plain functions returning dataclasses; progress goes to ``on_event`` as the
events of :mod:`perun_core.check.bisect` (the runner's events of each
collection arrive wrapped in ``BisectRunEvent``); ``cancel`` stops it with
:class:`~perun_core.errors.Interrupted`, removing the temporary worktree.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..check.bisect import (
    BisectCollecting,
    BisectFinished,
    BisectResult,
    BisectRunEvent,
    BisectStarted,
    BisectStep,
    BisectTested,
    bisect as run_bisect,
)
from ..check.report import FAIL_ON
from ..check.session import _strategy
from ..errors import UsageError
from ..runner.jobs import matrix_from_config
from ..storage.repository import PerunRepository
from ._repo import using as _using

__all__ = ["BisectCollecting", "BisectFinished", "BisectResult", "BisectRunEvent", "BisectStarted", "BisectStep",
           "BisectTested", "bisect", "bisect_jobs", "labelled_findings"]


def _select(jobs: list[Any], wanted: Sequence[int | str]) -> list[Any]:
    if not wanted:
        return jobs
    chosen = []
    for item in wanted:
        text = str(item).strip()
        if text.isdigit():
            number = int(text)
            if not 1 <= number <= len(jobs):
                raise UsageError(f"-j {text}: the job matrix has {len(jobs)} job{'s' if len(jobs) != 1 else ''} "
                                 f"(numbered from 1)")
            found = [jobs[number - 1]]
        else:
            found = [job for job in jobs if text in job.label]
            if len(found) != 1:
                labels = "; ".join(f"{i}: {job.label}" for i, job in enumerate(jobs, 1))
                raise UsageError(f"-j '{text}' matches {len(found)} jobs of the matrix; give a number or a part "
                                 f"of exactly one label ({labels})")
        chosen += [job for job in found if job not in chosen]
    return chosen


def bisect_jobs(*, repo: PerunRepository | None = None, cwd: Path | str | None = None) -> list[str]:
    """Labels of the job matrix's jobs, in the order ``-j N`` numbers them (from 1)."""

    with _using(repo, cwd) as r:
        return [job.label for job in matrix_from_config(r.config, r.local_config_path)]


def bisect(
    good: str,
    bad: str = "HEAD",
    *,
    jobs: Sequence[int | str] = (),
    methods: Sequence[str] | None = None,
    register: bool = False,
    fail_on: str = "degradation",
    on_event: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> BisectResult:
    """Find the first commit from ``good`` to ``bad`` whose profiles of the selected jobs degrade.

    ``jobs`` selects jobs of the matrix by number (from 1) or by a part of
    their label (default: every job).  Tested commits run in turns with
    GOOD and BAD in temporary worktrees and are placed between their levels
    (see :mod:`perun_core.check.bisect`); stored profiles (registered or
    pending) are used instead; ``register`` keeps the measured ones.
    ``methods`` overrides the configured check strategy (which decides what
    BAD's degradation against GOOD is).  ``result.certain`` is False when
    the re-check of the boundary disagreed or set-aside commits may hold
    the culprit (``result.doubt`` says which).  Raises
    InvalidRevision, UsageError (GOOD not an ancestor of BAD, bad -j),
    ConfigError (no job matrix), PerunError (GOOD or BAD cannot be
    profiled), Interrupted.
    """

    if fail_on not in FAIL_ON:
        raise UsageError(f"fail_on '{fail_on}': expected one of {', '.join(FAIL_ON)}")
    with _using(repo, cwd) as r:
        good_sha, bad_sha = r.resolve_minor(good), r.resolve_minor(bad)
        selected = _select(matrix_from_config(r.config, r.local_config_path), jobs)
        return run_bisect(r, good_sha, bad_sha, selected, _strategy(r.config, methods), register=register,
                          fail_on=fail_on, on_event=on_event, cancel=cancel)


def labelled_findings(result: BisectResult) -> list[tuple[str, Any]]:
    """``(label, finding)`` of the culprit against GOOD and against its parent, for a front end to show.

    Each label says what was compared: ``against 1a2b3c4 (re-measured now)`` for profiles this bisect
    measured in turns, ``(stored profiles)`` for the stored ones, which ``check`` reports.  Where a figure
    was re-measured, the stored profiles' finding at the same place follows it, so that two numbers of one
    change read as what they are, not as a contradiction.  Only changes are listed against the parent.
    """
    rows: list[tuple[str, Any]] = []
    for against, found, measured, stored in (
            (result.good[:7], list(result.findings), result.findings_measured, result.stored_findings),
            ("its parent", [f for f in result.parent_findings if f.result.is_change], result.parent_measured,
             result.stored_parent_findings)):
        rows += [(f"against {against} ({'re-measured now' if measured else 'stored profiles'})", f) for f in found]
        places = {f.location for f in found}
        rows += [(f"against {against} (stored profiles)", f) for f in stored if f.location in places]
    return rows
