"""How far a pair of time profiles can be trusted: busy machines, preemption, different machines.

Wall-clock time measures the program *and* everything else the machine
did meanwhile.  On a machine with more runnable work than cores (a CI
runner, a laptop, a shared server) a program waits for a core, and its wall
time grows while its CPU time (user + sys) does not.  Two signs tell that
apart from a program that really got slower while waiting (sleeping,
blocking on I/O):

* the load average recorded in the profile's ``machine`` section (before
  and after collection) above the number of logical cores, or
* far more involuntary context switches per run (preemptions, counted by
  the kernel) on one side than on the other.

:func:`temper` turns a certain wall-time (``[real]``) Degradation or
Optimization into a Maybe when CPU time does not back the change *and*
one of these signs is present, with the reason in words.  A wall-time
change on a quiet machine stays what it is: a program that now sleeps or
waits on I/O longer is slower, whatever its CPU time says.

The rules at a glance (each constant below says why it is what it is):

==========================  ==========================================  ===============================
rule                        a side counts as ...                        thresholds
==========================  ==========================================  ===============================
contention                  measured under contention when preempted     :data:`SWITCH_RATIO` as often
                            far more often per CPU-second than the       per CPU-second, :data:`RATE_EXCESS`
                            other                                        more per second, :data:`SWITCH_EXCESS`
                                                                         more per run
backed wall time            a ``[real]`` change stays certain on a busy  CPU time moved by
                            machine only when CPU time backs it          :data:`BACKED_SHARE` of it (log)
CPU time on a busy machine  a certain ``[user]``/``[sys]`` change only   :data:`BATCH_DRIFT` and
                            beyond the drift of CPU time between two     :data:`CONTENTION_FLOOR` per run
                            batches and the extra waiting of its side
waiting for a CPU           extra off-CPU time is waiting, not sleeping  :data:`PREEMPTIONS_PER_WAITED_SECOND`
noisy runs                  runs too spread to trust without repeats     :data:`NOISY_CV`
peak memory                 a ``[max_rss]`` change is certain only       :data:`RSS_JITTER`
                            beyond the jitter of identical runs
==========================  ==========================================  ===============================

The peak-memory rule (:func:`steady_memory`) holds on quiet machines and for
interleaved re-runs too: it is about how a process is laid out, not about load.

Interleaved re-runs (``--confirm``, bisect) are not tempered: alternating the
two versions exposes both to the same load.

:func:`machine_difference` names the first field of the ``machine``
sections that differs (host, CPU model, cores, ...), and :func:`advice`
says what to do when the measurements are noisy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from ..advice import CLOCK_CPU, REPEAT, REPEAT_N
from .data import ProfileData, RunColumns
from .results import Finding, PerformanceChange

__all__ = ["ADVICE", "CONFIRM_ADVICE", "NOISY_CV", "RSS_JITTER", "advice", "busy", "contention", "machine_difference", "machine_of", "maybe",
           "profile_advice", "steady_memory", "temper", "time_noise"]

#: Fields of the ``machine`` section that make two machines different, in the order they are named.
MACHINE_FIELDS = ("hostname", "cpu", "cores", "memory", "arch", "os")
#: A wall-time change counts as backed by CPU time when CPU time moved by at least this share of it
#: (on the log scale: contention stretches wall time in proportion to the work), in the same
#: direction, and the CPU-time locations of the command show a certain change themselves.  A short
#: program on a busy machine shows CPU times a few milliseconds apart run to run (caches shared with
#: other work); a ratio of medians alone would take such a drift for work done.
BACKED_SHARE = 0.5
#: On a busy machine CPU time itself drifts between two batches of runs made at different moments
#: (caches and cores shared with other work, a virtual machine's host taking its CPU away): identical
#: code measured by batches a few minutes apart on a busy 2-core virtual machine came out 1.33, 1.34 and
#: once 1.69 times the user time of the other batch (a tenth of a second of C, both sides loaded).  A
#: CPU-time change between batches measured on a busy machine counts as certain only beyond twice (above
#: the largest drift seen) ...
BATCH_DRIFT = 2.0
#: ... and beyond this many seconds per run.  Interleaved re-runs (--confirm) see through the drift: the
#: two versions alternate, so whatever the machine does hits both alike.
CONTENTION_FLOOR = 0.010
#: Within one run, the functions of a program share whatever the machine did to it: a function's change
#: within this ratio of the change of the rest of the profile is the whole run moving
#: (:mod:`perun_core.check.shift`).
CONTENTION_MARGIN = 1.3
#: One side was measured under contention when it was preempted this many times as often per
#: CPU-second as the other ...
SWITCH_RATIO = 3.0
#: ... at least this many times more per CPU-second (a program on a quiet core meets a few
#: preemptions a second from the kernel's own threads; one sharing its core with other work is
#: preempted at every scheduler time slice, a hundred times a second and more) ...
RATE_EXCESS = 20.0
#: ... and at least this many times per run: one stray preemption of a short run is not contention
#: (a short program under four busy processes on two cores is preempted two or three times per run).
SWITCH_EXCESS = 2.0
#: Runs shorter than this count as this long when preemptions are divided by their CPU time.
MIN_RUN_SECONDS = 0.005
#: A run waiting for a CPU is preempted again every few milliseconds (a scheduler time slice); one
#: that sleeps or waits for I/O gives the CPU up itself and is preempted rarely.  Extra off-CPU time
#: with at least this many preemptions per second of it is taken as waiting for a CPU.
PREEMPTIONS_PER_WAITED_SECOND = 100.0
#: The peak resident memory of one program varies from run to run by up to about this much, on a
#: quiet machine as on a busy one: address-space layout randomisation places the stack, the heap
#: and each shared library differently every run, and the loader faults in a different number of
#: pages around them (a 1 MiB C program measured 852-1,072 KiB over 200 identical runs, a Python
#: start-up 248 KiB apart).  A ``[max_rss]`` change of the medians smaller than this is uncertain.
RSS_JITTER = 256 * 1024
#: Runs whose wall times vary more than this (coefficient of variation) are noisy.
NOISY_CV = 0.10
#: What a reason made uncertain by the machine's load ends with; dropped once interleaved runs have decided.
CONFIRM_ADVICE = "confirm with --confirm or compare instruction counts"
ADVICE = (f"measurements vary a lot or the machine was busy: repeat more ({REPEAT.cli}), use {CLOCK_CPU.cli} for "
          "pytrace, or callgrind (instruction counts) in CI")


def machine_of(data: Any) -> Mapping[str, Any]:
    """The ``machine`` section of a profile (or of the profile of checked data); empty when missing."""
    profile = getattr(data, "profile", data)
    header = getattr(profile, "header", None) or {}
    value = header.get("machine") if isinstance(header, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def machine_difference(baseline: Any, target: Any) -> str | None:
    """``"cpu: 'X' vs 'Y'"`` for the first machine field that differs; None when alike or unknown."""
    base, new = machine_of(baseline), machine_of(target)
    if not base or not new:
        return None
    for key in MACHINE_FIELDS:
        if key in base and key in new and base[key] != new[key]:
            return f"{key}: {base[key]!r} vs {new[key]!r}"
    return None


def busy(machine: Mapping[str, Any]) -> float | None:
    """The highest load recorded in a ``machine`` section when it exceeds the cores, else None."""
    cores = machine.get("cores")
    loads = [machine.get(key) for key in ("load_before", "load_after")]
    numbers = [float(v) for v in loads if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not numbers or not isinstance(cores, int) or cores < 1:
        return None
    load = max(numbers)
    return load if load > cores else None


def _run_columns(data: ProfileData, uid: str) -> RunColumns:
    """The runs of command ``uid``: the one source of per-run data for every path a check takes."""
    return data.run_columns(uid)


def _median(values: Iterable[float]) -> float | None:
    ordered = sorted(values)
    if not ordered:
        return None
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _cpu(columns: RunColumns) -> float | None:
    user, system = columns.get("user", {}), columns.get("sys", {})
    runs = [user[k] + system.get(k, 0.0) for k in user]
    return _median(runs)


def _preemptions(columns: RunColumns) -> tuple[float, float] | None:
    """Median preemptions of a run, and per second of its CPU time (wall time where CPU time is missing).

    Per CPU-second, because a program that really does more work runs
    longer and so meets more scheduler ticks and more preemptions in all,
    on a quiet machine as on a busy one; what marks contention is how often
    it is preempted for each second it computes.
    """
    switches = columns.get("switches", {})
    if not switches:
        return None
    user, system, real = columns.get("user", {}), columns.get("sys", {}), columns.get("real", {})
    rates = []
    for run, count in switches.items():
        busy_time = user[run] + system.get(run, 0.0) if run in user else real.get(run)
        if busy_time is not None:
            rates.append(count / max(busy_time, MIN_RUN_SECONDS))
    per_run, per_second = _median(switches.values()), _median(rates)
    if per_run is None or per_second is None:
        return None
    return per_run, per_second


def _contended(base_cols: RunColumns, new_cols: RunColumns) -> tuple[str, float, float] | None:
    """``(side, its rate, the other's rate)`` when one side was preempted far more often per CPU-second."""
    base, new = _preemptions(base_cols), _preemptions(new_cols)
    if base is None or new is None:
        return None
    for side, (high_runs, high_rate), (_low_runs, low_rate) in (("target", new, base), ("baseline", base, new)):
        if (high_rate >= SWITCH_RATIO * low_rate and high_rate - low_rate >= RATE_EXCESS
                and high_runs >= SWITCH_EXCESS):
            return side, high_rate, low_rate
    return None


def one_sided(baseline: ProfileData, target: ProfileData, uid: str) -> bool:
    """Whether only one side was measured under contention (see :func:`contended_side`)."""
    return contended_side(baseline, target, uid) is not None


def contended_side(baseline: ProfileData, target: ProfileData, uid: str) -> str | None:
    """``"baseline"`` or ``"target"`` when only that side was measured under contention, else None.

    The preemptions of the runs themselves decide (far more per CPU-second on
    one side); the load average is a one-minute mean that lags behind (it
    stays high after other work ended and rises only slowly when it starts),
    so it decides only for profiles that recorded no preemptions.
    """
    base_cols, new_cols = _run_columns(baseline, uid), _run_columns(target, uid)
    if _preemptions(base_cols) is None or _preemptions(new_cols) is None:
        loaded = busy(machine_of(baseline)) is not None, busy(machine_of(target)) is not None
        return None if loaded[0] == loaded[1] else "baseline" if loaded[0] else "target"
    contended = _contended(base_cols, new_cols)
    return None if contended is None else contended[0]


def contention(baseline: ProfileData, target: ProfileData, uid: str) -> str | None:
    """Words for the sign of a busy machine between the two profiles of ``uid``, or None."""
    parts = []
    for name, data in (("baseline", baseline), ("target", target)):
        machine = machine_of(data)
        load = busy(machine)
        if load is not None:
            parts.append(f"load {load:.1f} on {machine.get('cores')} cores ({name})")
    base_cols, new_cols = _run_columns(baseline, uid), _run_columns(target, uid)
    base, new = _preemptions(base_cols), _preemptions(new_cols)
    if base is not None and new is not None:
        contended = _contended(base_cols, new_cols)
        if contended is not None:
            side, high, low = contended
            runs = f"{base[0]:.0f} vs {new[0]:.0f}" if side == "baseline" else f"{new[0]:.0f} vs {base[0]:.0f}"
            parts.append(f"the {side} was preempted {high:.0f} times per CPU-second vs {low:.0f} ({runs} per run)")
        else:
            waited = _preempted_wait(base_cols, new_cols, base[0], new[0])
            if waited is not None:
                parts.append(waited)
    return "; ".join(parts) or None


def _off_cpu(columns: RunColumns) -> float | None:
    """Median time a run spent off the CPU: its wall time less its user and system time."""
    real, user, system = columns.get("real", {}), columns.get("user", {}), columns.get("sys", {})
    return _median(real[k] - user.get(k, 0.0) - system.get(k, 0.0) for k in real if k in user)


def _preempted_wait(base_cols: RunColumns, new_cols: RunColumns,
                    base_sw: float, new_sw: float) -> str | None:
    """Words for a slower side whose extra wall time was spent off the CPU while it was being preempted.

    When other work loads the machine on both sides, neither side has far
    more preemptions than the other, yet the slower side may have waited
    for a CPU much longer.  A program that sleeps or does I/O waits off the
    CPU too, but it gives the CPU up itself (voluntary switches): only runs
    preempted again and again (:data:`SWITCH_EXCESS` times or more, and
    :data:`PREEMPTIONS_PER_WAITED_SECOND` per second of the extra wait) count.
    """
    base_wait, new_wait = _off_cpu(base_cols), _off_cpu(new_cols)
    base_wall, new_wall = _median(base_cols.get("real", {}).values()), _median(new_cols.get("real", {}).values())
    if None in (base_wait, new_wait, base_wall, new_wall):
        return None
    slower_wait, faster_wait, slower_sw = ((new_wait, base_wait, new_sw) if new_wall >= base_wall
                                           else (base_wait, new_wait, base_sw))
    change = abs(new_wall - base_wall)
    if change <= 0 or slower_sw < SWITCH_EXCESS:
        return None
    extra = slower_wait - faster_wait
    if extra < 0.5 * change or slower_sw / extra < PREEMPTIONS_PER_WAITED_SECOND:
        return None
    return (f"the slower runs waited {(slower_wait - faster_wait) * 1e3:.1f} ms longer off the CPU, "
            f"preempted {slower_sw:.0f} times per run")


def temper(baseline: ProfileData, target: ProfileData, findings: Iterable[Finding]) -> list[Finding]:
    """The findings, with time changes a busy machine can explain made Maybe (see the module).

    CPU-time locations (``[user]``, ``[sys]``) first: a change within
    :data:`BATCH_DRIFT` measured on a busy machine is uncertain.  Then
    wall time (``[real]``), which only a certain CPU-time change can back.
    """
    found = list(findings)
    if baseline.type != "time" and target.type != "time":
        return found
    why_of: dict[str, str | None] = {}

    def why(uid: str) -> str | None:
        if uid not in why_of:
            why_of[uid] = contention(baseline, target, uid)
        return why_of[uid]

    found = [_tempered_cpu(baseline, target, f, why) for f in found]
    certain_cpu: dict[str, set[bool]] = {}
    cpu_checked: set[str] = set()
    for finding in found:
        uid, _, what = finding.location.rpartition(" [")
        if what in ("user]", "sys]"):
            cpu_checked.add(uid)
            if finding.result.is_change and not finding.result.is_maybe:
                certain_cpu.setdefault(uid, set()).add(finding.result.is_degradation)
    return [_tempered_wall(baseline, target, f, why, certain_cpu, cpu_checked) for f in found]


def steady_memory(baseline: ProfileData, target: ProfileData, findings: Iterable[Finding]) -> list[Finding]:
    """The findings, with certain ``[max_rss]`` changes within :data:`RSS_JITTER` made Maybe."""
    found = list(findings)
    if baseline.type != "time" and target.type != "time":
        return found
    return [_tempered_memory(baseline, target, f) for f in found]


def _tempered_memory(baseline: ProfileData, target: ProfileData, finding: Finding) -> Finding:
    result = finding.result
    if not result.is_change or result.is_maybe or not finding.location.endswith(" [max_rss]"):
        return finding
    uid = finding.location[: -len(" [max_rss]")]
    before = _median(_run_columns(baseline, uid).get("max_rss", {}).values())
    after = _median(_run_columns(target, uid).get("max_rss", {}).values())
    if before is None or after is None or abs(after - before) >= RSS_JITTER:
        return finding
    return maybe(finding, f"peak memory {(after - before) / 1024:+.0f} KiB, within the {RSS_JITTER // 1024} KiB "
                           "that identical runs of one program differ by (address-space layout, loader pages)")


def maybe(finding: Finding, reason: str) -> Finding:
    """The finding made a Maybe of its direction for ``reason``, keeping its first result in its details."""
    result = finding.result
    uncertain = PerformanceChange.MAYBE_DEGRADATION if result.is_degradation else PerformanceChange.MAYBE_OPTIMIZATION
    return replace(finding, result=uncertain, reason=reason, details={**finding.details, "first_result": result.value})


def _stretch(columns: RunColumns) -> float | None:
    """Median wall time over CPU time of a run: how much longer than its computing a run took."""
    real, user, system = columns.get("real", {}), columns.get("user", {}), columns.get("sys", {})
    return _median(real[k] / max(user[k] + system.get(k, 0.0), MIN_RUN_SECONDS) for k in real if k in user)


def _tempered_cpu(baseline: ProfileData, target: ProfileData, finding: Finding, why: Any) -> Finding:
    """A certain CPU-time change no larger than what a busy machine itself can do to CPU time, made Maybe.

    Within :data:`BATCH_DRIFT` (or :data:`CONTENTION_FLOOR`) always; and when
    only the side with more CPU time was measured under contention, within
    the difference in waiting too (its runs took that many more
    times their CPU time than the other side's): the more other work shared
    the cores, the slower the very instructions ran.
    """
    result = finding.result
    uid, _, what = finding.location.rpartition(" [")
    if not result.is_change or result.is_maybe or what not in ("user]", "sys]"):
        return finding
    column = what[:-1]
    base_cols, new_cols = _run_columns(baseline, uid), _run_columns(target, uid)
    before, after = _median(base_cols.get(column, {}).values()), _median(new_cols.get(column, {}).values())
    if before is None or after is None:
        return finding
    low, high = sorted((before, after))
    required = BATCH_DRIFT
    stretches = _stretch(base_cols), _stretch(new_cols)
    # contention on the side with less CPU time would have hidden a change, not made one; a side whose runs
    # took no wall time says nothing of waiting
    more_cpu = "baseline" if before > after else "target"
    if None not in stretches and min(stretches) > 0 and contended_side(baseline, target, uid) == more_cpu:
        more, less = stretches if before > after else stretches[::-1]
        required = max(required, more / less)  # type: ignore[operator]
    if high - low >= CONTENTION_FLOOR and (low <= 0 or high / low >= required):
        return finding
    reasons = why(uid)
    if reasons is None:
        return finding
    change = f"{(after - before) * 1e3:+.1f} ms" if low <= 0 else f"{(after / before - 1) * 100:+.0f} %"
    return maybe(finding, f"{column} time {change}, within what a busy machine does to CPU time measured apart "
                           f"({reasons}); {CONFIRM_ADVICE}")


def _tempered_wall(baseline: ProfileData, target: ProfileData, finding: Finding, why: Any,
                   certain_cpu: dict[str, set[bool]], cpu_checked: set[str]) -> Finding:
    result = finding.result
    if not result.is_change or result.is_maybe or not finding.location.endswith(" [real]"):
        return finding
    uid = finding.location[: -len(" [real]")]
    base_cols, new_cols = _run_columns(baseline, uid), _run_columns(target, uid)
    wall_b, wall_t = _median(base_cols.get("real", {}).values()), _median(new_cols.get("real", {}).values())
    cpu_b, cpu_t = _cpu(base_cols), _cpu(new_cols)
    if not wall_b or not wall_t or wall_b <= 0 or wall_t <= 0 or cpu_b is None or cpu_t is None:
        return finding
    floor = 1e-6
    cpu = math.log(max(cpu_t, floor) / max(cpu_b, floor))
    reasons = why(uid)
    if reasons is None:
        return finding  # a quiet machine: waiting longer (sleep, I/O) is a real change
    if contended_side(baseline, target, uid) not in (None, "target" if result.is_degradation else "baseline"):
        return finding  # contention of the faster side alone could have hidden the change, not made it
    wall = math.log(wall_t / wall_b)
    # where the method judged the CPU-time locations, a CPU change it did not find certain backs nothing
    cpu_certain = uid not in cpu_checked or result.is_degradation in certain_cpu.get(uid, set())
    if wall != 0 and cpu / wall >= BACKED_SHARE and cpu_certain:
        if not one_sided(baseline, target, uid):
            return finding  # both sides equally disturbed: CPU time moved along, the program does more work
        if result.is_degradation in certain_cpu.get(uid, set()):
            # the CPU-time change itself is certain, and it was held to the difference in waiting between
            # the sides (see _tempered_cpu): the program does more work, so the wall-time change is real
            return finding
        # CPU time moved along, but only one side was measured under contention: a busy sibling core (a
        # hyperthread of the same physical core, as on most virtual machines) slows the very
        # instructions, so CPU time cannot vouch for the wall time here; the [user] and [sys]
        # findings keep their own verdicts, and --confirm re-measures both sides alike.
        return maybe(finding, f"wall and CPU time {math.expm1(cpu) * 100:+.0f} % both measured under contention "
                               f"({reasons}); {CONFIRM_ADVICE}")
    cpu_text = "CPU time unchanged" if abs(cpu) < math.log(1.05) else f"CPU time {math.expm1(cpu) * 100:+.0f} %"
    return maybe(finding, f"wall time only; {cpu_text}; {reasons}")


def time_noise(data: ProfileData) -> float | None:
    """The largest coefficient of variation of the wall times of a time profile's commands, or None."""
    if data.type != "time":
        return None
    worst = None
    for location, sample in data.samples().items():
        if not location.endswith(" [real]") or sample.count < 2:
            continue
        mean = float(sample.y.mean())
        if mean <= 0:
            continue
        cv = float(sample.y.std(ddof=1)) / mean
        worst = cv if worst is None else max(worst, cv)
    return worst


def advice(datas: Iterable[ProfileData]) -> str | None:
    """:data:`ADVICE` when a time profile among ``datas`` is noisy or was collected on a busy machine."""
    for data in datas:
        cv = time_noise(data)
        if (cv is not None and cv > NOISY_CV) or (data.type == "time" and busy(machine_of(data)) is not None):
            return ADVICE
    return None


def profile_advice(profile: Any) -> str | None:
    """One line for ``collect``/``run`` when a time profile's runs vary a lot or its machine was busy, else None."""

    data = ProfileData(profile)
    if data.type != "time":
        return None
    why = []
    cv = time_noise(data)
    if cv is not None and cv > NOISY_CV:
        why.append(f"the wall times of the runs vary by {cv * 100:.0f} % (CV)")
    machine = machine_of(data)
    load = busy(machine)
    if load is not None:
        why.append(f"the machine was busy (load {load:.1f} on {machine.get('cores')} cores)")
    if not why:
        return None
    return ("advice: " + " and ".join(why) + f": repeat more ({REPEAT_N.cli}), use {CLOCK_CPU.cli} with pytrace, "
            "or callgrind (instruction counts) in CI")
