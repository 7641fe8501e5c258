"""A per-call change no larger than one wait for the CPU: wall-clock calls of a run the kernel kept preempting.

When a program shares its cores with other work, the kernel switches it out
at the end of a time slice and it waits, runnable, for its turn: the call
that was running when that happened takes the whole wait longer.  On a busy
machine the waits are milliseconds long and come in runs (the calls of one
size measured one after another all fall into the same contended second),
so a function traced by its wall time (pytrace's default clock) can come out
twice as slow at every size without doing any more work: toolz's ``groupby``
went from 3.05 ms to 7.90 ms a call at load 7.8 on 2 cores, in a commit that
did not touch it, and an interleaved re-run measured x1.04.

pytrace (wall clock) and the trace collector record in the profile's header
how often the run was preempted and how long it spent off the CPU
(``preemption``; summed over the runs of a generated workload).  :func:`within_one_wait`
makes a certain change of a call's wall time a Maybe when the slower side
was measured on a busy machine (load above its cores), its run was
preempted at least :data:`MIN_PREEMPTIONS` times, often enough to have
delayed half of that function's calls, and the change per call is no
larger than the mean wait of one preemption (its time off the CPU over its
preemptions, at most :data:`MAX_WAIT`: time off the CPU includes sleeping,
and a runnable program waits a few time slices, not longer): one wait per
call explains it.
A change larger than that, one of a function called more often than the
run was preempted, and every change of a run that was hardly preempted
keep their verdicts.  Interleaved re-runs (``--confirm``) and calls timed by
their CPU time (``--clock cpu``) see through the waits, and the reason says
so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..advice import CLOCK_CPU
from ..amounts import format_amount, in_base_unit, unit_family
from .noise import busy, machine_of, maybe
from .results import Finding

if TYPE_CHECKING:  # pragma: no cover
    from .data import ProfileData

__all__ = ["MIN_PREEMPTIONS", "within_one_wait"]

#: Fewer preemptions than this over a whole run are the kernel's own housekeeping, not contention.
MIN_PREEMPTIONS = 10
#: The longest a preempted program waits for its turn, as counted here: the other runnable programs' time slices
#: (a few milliseconds each; 25 ms per preemption on average at load 7.8 on 2 cores); more is sleeping.
MAX_WAIT = 0.05


def within_one_wait(baseline: ProfileData, target: ProfileData, findings: Iterable[Finding]) -> list[Finding]:
    """The findings, with certain per-call wall-time changes that one wait for the CPU per call explains made Maybe."""
    found = list(findings)
    waits = {"baseline": _preemption(baseline), "target": _preemption(target)}
    if not any(waits.values()):
        return found
    out = []
    for finding in found:
        result = finding.result
        side = "target" if result.is_degradation else "baseline"
        wait = waits[side]
        if (not result.is_change or result.is_maybe or wait is None or finding.delta_abs is None
                or unit_family(finding.unit) != "time"):
            out.append(finding)
            continue
        count, wait_seconds = wait
        per_wait = min(wait_seconds / count, MAX_WAIT)
        slower = target if side == "target" else baseline
        calls = _calls(slower, finding.location)
        change = abs(in_base_unit(float(finding.delta_abs), finding.unit))
        if calls is None or count < calls / 2 or change > per_wait:
            out.append(finding)
            continue
        machine = machine_of(slower)
        out.append(maybe(finding, f"{format_amount(change, 's')} a call, no more than one wait for the CPU: the "
                                  f"{side}'s run was preempted {count} times at load {busy(machine):.1f} on "
                                  f"{machine.get('cores')} cores, {format_amount(per_wait, 's')} off the CPU each "
                                  f"on average; re-measure interleaved (--confirm) or time the calls by their CPU "
                                  f"time ({CLOCK_CPU.cli})"))
    return out


def _preemption(data: ProfileData) -> tuple[int, float] | None:
    """(preemptions, seconds off the CPU) of a wall-clock run preempted at least MIN_PREEMPTIONS times, else None."""
    header = getattr(data.profile, "header", None)
    record = header.get("preemption") if isinstance(header, Mapping) else None
    if not isinstance(record, Mapping) or busy(machine_of(data)) is None:
        return None
    count, wait = record.get("count"), record.get("wait_seconds")
    if not _number(count) or not _number(wait) or count < MIN_PREEMPTIONS or wait <= 0:
        return None
    return int(count), float(wait)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _calls(data: ProfileData, location: str) -> int | None:
    """How many calls of ``location`` the profile holds (None when it has none)."""
    sample = data.samples().get(location)
    return len(sample.y) if sample is not None and len(sample.y) else None
