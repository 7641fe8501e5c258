"""The time collector: wall, user and system time and peak memory of a command.

The command runs ``warmup`` times unmeasured, then ``repeat`` times measured.
Each measured run contributes four resources (spec 001 §3.3.2 and §4.1.3),
all with ``uid`` = the profiled command and ``order`` = the run number from 1::

    {"type": "time",   "subtype": "real",    "amount": seconds, ...}   wall clock (monotonic)
    {"type": "time",   "subtype": "user",    "amount": seconds, ...}   CPU time in user mode
    {"type": "time",   "subtype": "sys",     "amount": seconds, ...}   CPU time in the kernel
    {"type": "memory", "subtype": "max_rss", "amount": bytes,   ...}   peak resident set size

CPU times and peak memory come from ``os.wait4`` (no GNU time needed) and
include the children the command waited for.  Every resource of a run also
carries ``involuntary_switches``: how often the kernel preempted the run
(``ru_nivcsw``).  Wall time that grows while user and system time do not,
together with many more involuntary switches, is the mark of a busy machine
rather than slower code (see :mod:`perun_core.check.noise`).  They sit in the profile's
``global`` region, whose ``timestamp`` is the wall time of all measured runs.
Runs are started by the small C spawn helper of
:mod:`perun_core.runner.helper` when a C compiler is available to build it:
one helper process makes all runs of a job, in lock step with the
repetition events (:class:`~perun_core.runner.process.RepeatedRuns`).
Otherwise each run is started from Python, and then the peak memory of a run
cannot be told apart from perun's own: the header's ``max_rss_floor`` says
up to which value ``max_rss`` amounts are perun's rather than the program's.

A run that exits non-zero (or is killed) fails the job with its exit status
and the tail of its standard error, unless ``keep_failed`` is set: then it is
recorded, its resources carrying ``exit_status``.  A run longer than
``timeout`` seconds always fails the job.  Processes a run leaves running in
its process group are killed when it ends (with the helper also those that
left the group with ``setsid``), so they cannot disturb the next run.
"""

from __future__ import annotations

import resource
from typing import Any

from ..errors import CollectionError
from ..profile.model import Profile, Snapshot
from ..profile.resources import ResourceTable
from ..runner.helper import spawn_helper
from ..runner.process import ProcessOutcome, RepeatedRuns, describe_status
from ..units import PhaseResult, UnitContext
from ..params import MAX_REPEAT, MAX_TIMEOUT, Param
from .native_run import check_command

__all__ = ["TimeCollector"]


class TimeCollector:
    name = "time"
    kind = "collector"
    summary = "Wall, user and system time and peak memory of whole runs of a command."
    description = (
        "Runs the command WARMUP times unmeasured, then REPEAT times measured, and records per run "
        "its wall time (real), user and system CPU time (user, sys; seconds) and peak resident "
        "memory (max_rss; bytes)."
    )
    profile_type = "time"
    default_units = {"time": "s", "memory": "B"}
    params = (
        Param("warmup", "int", 0, "Unmeasured runs before the measured ones.",
              flags=("-w", "--warm-up-repetition"), minimum=0, maximum=MAX_REPEAT, metavar="N"),
        Param("repeat", "int", 1, "Measured runs.", flags=("-r", "--repeat"), minimum=1, maximum=MAX_REPEAT, metavar="N"),
        Param("timeout", "float", None, "Fail a run (and the job) that takes longer than this many seconds.",
              flags=("-t", "--timeout"), minimum=0.001, maximum=MAX_TIMEOUT, metavar="SECONDS", unit="s"),
        Param("keep_failed", "bool", False, "Record runs that exit non-zero instead of failing the job.",
              flags=("--keep-failed",)),
    )

    def before(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        """Check that the command can be found before spending time on runs."""
        check_command(ctx, kwargs)
        kwargs["spawn_helper"] = spawn_helper()
        return PhaseResult.ok(kwargs)

    def collect(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        warmup, repeat = kwargs["warmup"], kwargs["repeat"]
        runs = []
        with RepeatedRuns(kwargs["argv"], cwd=ctx.cwd, helper=kwargs.get("spawn_helper"), timeout=kwargs["timeout"],
                          on_line=ctx.output, cancelled=ctx.cancelled) as runner:
            for number in range(1, warmup + repeat + 1):
                measured = number > warmup
                index = number - warmup if measured else number
                ctx.repetition(index, repeat if measured else warmup, warmup=not measured)
                outcome = self._run_once(ctx, kwargs, runner)
                if measured:
                    runs.append(outcome)
        kwargs["runs"] = runs
        return PhaseResult.ok(kwargs)

    def _run_once(self, ctx: UnitContext, kwargs: dict[str, Any], runner: RepeatedRuns) -> ProcessOutcome:
        job = ctx.label
        try:
            outcome = runner.run()
        except FileNotFoundError:
            raise CollectionError(job, f"command not found: {kwargs['argv'][0]}") from None
        except PermissionError:
            raise CollectionError(job, f"command cannot be executed (permission denied): {kwargs['argv'][0]}") from None
        except OSError as exc:
            raise CollectionError(job, f"command cannot be started: {exc.strerror or exc}") from None
        if outcome.timed_out:
            raise CollectionError(job, f"timed out after {kwargs['timeout']:g} s (the run was killed)",
                                  None, outcome.stderr_tail)
        if outcome.exit_status != 0 and not kwargs["keep_failed"]:
            raise CollectionError(job, f"the profiled command {describe_status(outcome.exit_status)}",
                                  outcome.exit_status, outcome.stderr_tail)
        return outcome

    def after(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        """Turn the measured runs into a profile in the documented form."""
        uid = kwargs["cmd"]
        rows = []
        for order, run in enumerate(kwargs.pop("runs"), 1):
            values = (("time", "real", run.wall_ns / 1e9), ("time", "user", run.user_seconds),
                      ("time", "sys", run.sys_seconds), ("memory", "max_rss", run.max_rss_bytes))
            for kind, subtype, amount in values:
                row = {"amount": amount, "type": kind, "subtype": subtype, "uid": uid, "order": order}
                if run.involuntary_switches is not None:
                    row["involuntary_switches"] = run.involuntary_switches
                if run.exit_status != 0:
                    row["exit_status"] = run.exit_status
                rows.append(row)
        total = sum(r["amount"] for r in rows if r["subtype"] == "real")
        header = {"type": self.profile_type, "units": dict(self.default_units), "cmd": kwargs["cmd"],
                  "params": kwargs["args"], "workload": kwargs["workload"]}
        if kwargs.pop("spawn_helper", None) is None:
            header["max_rss_floor"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        kwargs["profile"] = Profile(header=header, global_region=Snapshot(ResourceTable(rows), [], {"timestamp": total}))
        return PhaseResult.ok(kwargs)
