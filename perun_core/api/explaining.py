"""Explaining the time changes of a check report: which functions made a job slower or faster.

See :mod:`perun_core.check.explain`.  Plain functions returning
dataclasses; nothing is printed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..check.explain import (
    ExplainCollecting,
    ExplainFinished,
    ExplainRound,
    ExplainStarted,
    ExplainedFunction,
    Explanation,
    explain_report,
    load_explained,
    not_explained_because,
    store_explanations,
)
from ..check.report import CheckReport
from ..diff import compare
from ..storage.repository import PerunRepository
from ._repo import using_if_any

__all__ = ["ExplainCollecting", "ExplainFinished", "ExplainRound", "ExplainStarted", "ExplainedFunction", "Explanation", "explain", "explanation_comparison",
           "explanation_of", "why_not_explained"]


def explain(
    report: CheckReport,
    *,
    explain_dir: Path | str | None = None,
    register: bool = False,
    collector: str | None = None,
    on_event: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
    store: bool = True,
    budget: float | None = None,
) -> CheckReport:
    """``report`` with an :class:`Explanation` on every certain time change between two commits.

    Call-level profiles of the baseline and target commits (registered ones
    reused, missing ones collected in temporary worktrees with the best
    collector for the program) are compared per function; the functions
    adding up to most of the change come first.  Collected profiles are
    kept as pending, or registered with ``register``.  ``explain_dir``
    receives the difference flame graph (or bars) and the per-function
    listing of each explained job.  A finding that cannot be explained gets
    an explanation whose ``message`` says why.  ``collector`` (callgrind,
    perf, pytrace) overrides the choice.  With ``store``, the explanations
    are kept with the stored results of the check (``.perun/changes``), so
    that later reports, the TUI and pushed findings show them; a check that
    stored nothing (``check profiles``) stores nothing here either.  ``budget`` bounds the seconds spent
    collecting (default ``DEFAULT_BUDGET``, 240): the collector is chosen by its expected cost, and a run
    that would not fit samples with perf or uses a smaller generated workload (the explanation's ``notes``
    say which).  Raises UsageError (unknown ``collector``, a budget that is not positive), Interrupted.
    """

    directory = Path(explain_dir).expanduser() if explain_dir is not None else None
    # profile files checked outside a repository can still be explained when they are call-level
    with using_if_any(repo, cwd) as opened:
        explained = explain_report(opened, report, directory=directory, register=register, collector=collector,
                                   emit=on_event, cancel=cancel, budget=budget)
        if store:
            store_explanations(opened, explained)
        return explained


def why_not_explained(report: CheckReport) -> str | None:
    """Why :func:`explain` gives the first finding of ``report`` no explanation (a mixed or memory profile, no
    change, a change only maybe), in one line with what would work; None when it would explain it."""
    for _version, pair, finding in report.findings():
        return not_explained_because(pair, finding)
    return None


def explanation_of(finding: Any) -> Explanation | None:
    """The explanation :func:`explain` attached to a finding, if any."""
    found = getattr(finding, "details", {}).get("explanation")
    return found if isinstance(found, Explanation) else None


def explanation_comparison(explanation: Explanation, *, repo: PerunRepository | None = None,
                           cwd: Path | str | None = None) -> Any:
    """The :class:`~perun_core.diff.Comparison` of the two call-level profiles ``explanation`` compared, for the
    difference views (flame graph where both have call stacks), or None when a profile is gone."""

    with using_if_any(repo, cwd) as opened:
        profiles = load_explained(opened, explanation)
    if profiles is None:
        return None
    names = explanation.profiles if len(explanation.profiles) == 2 else ("baseline", "target")
    return compare(profiles[0], profiles[1], baseline_name=names[0], target_name=names[1])
