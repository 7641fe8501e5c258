"""Measuring a checked profile again: the job that made it, over the workloads it was made with.

Confirmation (:mod:`.confirm`) and explanation (:mod:`.explain`) both run
a profile's program again, at its commit and at its baseline's.  Both start
here, so both work alike on registered profiles, on pending ones (what
``run matrix`` writes) and on profiles of generated workloads:

* :func:`profile_of` reads the profile a check report names, wherever it is;
* :func:`rerun_of` finds the time job of the job matrix that made it (with
  ``any_collector``, the job of whichever collector made it: confirmation
  re-measures per-call times of the trace collector or pytrace too), and the
  workload generator it ran over: the one the profile records
  (``header.generator``, written since profiles record their generator in
  full), else the configured generator of that id.  When there is none it
  says why, in words a user can act on;
* :func:`measure` runs that job once per workload (one measured run each)
  and gives one profile, as the first collection made it (merged over the
  sizes, or the one workload of a per-workload profile).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PerunError
from ..profile.codec import load_profile_from_file
from ..runner.generators import generator_from_spec, generators_from_config, measure_generated
from ..runner.jobs import matrix_from_config
from ..runner.run import collect_job, postprocess_job
from .data import config_key

if TYPE_CHECKING:  # pragma: no cover
    from ..config.generators import Generator
    from ..runner.jobs import Job

__all__ = ["Rerun", "measure", "one_run", "profile_of", "rerun_for_job", "rerun_of"]


@dataclass(frozen=True, slots=True)
class Rerun:
    """How to measure a profile again: its ``job``; the ``generator`` of its workloads, and the ``label`` of
    its one workload when it was made per workload."""

    job: Job
    generator: Generator | None = None
    label: str | None = None

    @property
    def command_line(self) -> str:
        return self.job.command_line


def profile_of(repo: Any, ref: Any) -> Any:
    """The profile a report's reference names: registered, pending or a file.  Raises PerunError, OSError."""
    if ref.checksum and repo is not None:
        return repo.objects.read_profile(ref.checksum)
    if ref.kind == "pending" and repo is not None:
        return load_profile_from_file(repo.jobs_dir / Path(ref.source).name)
    return load_profile_from_file(Path(ref.name).expanduser())


def _generator_of(repo: Any, header: dict) -> tuple[str | None, Generator | None, str | None]:
    """(the generator id the profile's workload names, the generator, the one workload's label)."""
    recorded = header.get("generator")
    ident = recorded.get("id") if isinstance(recorded, dict) and isinstance(recorded.get("id"), str) else None
    if ident is None:
        return None, None, None
    workload = str(header.get("workload") or "")
    label = workload[len(ident) + 1:] if workload.startswith(ident + ":") else None
    generator = generator_from_spec(recorded)
    if generator is None:  # recorded by id and type only: the configured generator of that id
        generator = generators_from_config(repo.config, getattr(repo, "local_config_path", None)).get(ident)
    return ident, generator, label


def rerun_of(repo: Any, profile: Any, *, any_collector: bool = False) -> Rerun | str:
    """How to measure ``profile`` again, or a one-line reason why it cannot be (see the module).

    Raises ConfigError for an invalid job matrix or generator section.
    """
    cmd, args, workload, collector, post = config_key(profile)
    if collector != "time" and not (any_collector and collector):
        return f"collected by {collector or 'an unknown collector'}, not by the time collector"
    ident, generator, label = _generator_of(repo, profile.header or {})
    if ident is not None:
        workload = ident
    matrix = matrix_from_config(repo.config, getattr(repo, "local_config_path", None))
    for job in matrix:
        if (job.cmd, job.args, job.workload, job.collector.name) != (cmd, args, workload, collector):
            continue
        if tuple(p.name for p in job.postprocessors) != post:
            continue
        if ident is not None and generator is None:
            return f"the workload generator '{ident}' it was made with is no longer configured"
        return Rerun(job, generator, label)
    shown = " ".join(part for part in (cmd, args, workload) if part) or "(no command)"
    if not any(job.collector.name == collector for job in matrix):
        return f"the job matrix has no {collector} job, so '{shown}' cannot be run again"
    return f"no {collector} job of the job matrix runs '{shown}' (the job matrix changed since it was measured)"


def rerun_for_job(repo: Any, job: Job) -> Rerun:
    """A job of the job matrix as a :class:`Rerun`: with the configured generator its workload names."""
    generator = generators_from_config(repo.config, getattr(repo, "local_config_path", None)).get(job.workload)
    return Rerun(job, generator)


def one_run(job: Job, first: bool) -> Job:
    """What one turn of interleaved runs measures: a time job one run (its warm-up runs only before the
    first), without postprocessors; another collector once, with its postprocessors (a filter that drops
    preempted calls decides what the measurements are)."""
    if job.collector.name != "time":
        return job
    params = dict(job.collector.params)
    params["repeat"] = 1
    if not first:
        params["warmup"] = 0
    return replace(job, collector=replace(job.collector, params=params), postprocessors=())


def measure(rerun: Rerun, job: Job, ctx: Any, origin: str) -> Any:
    """One profile of ``job`` (``rerun``'s job or a variant of it) over ``rerun``'s workloads, through
    ``job``'s postprocessors (:func:`one_run` and explanations leave them to jobs that need them).

    Raises CollectionError, WorkloadGenerationFailed, Interrupted, PerunError.
    """
    if rerun.generator is None:
        return collect_job(job, ctx, origin)
    try:
        profile = measure_generated(job, rerun.generator, ctx, origin, rerun.label)
    except ValueError as exc:
        raise PerunError(str(exc)) from None
    return postprocess_job(job, profile, ctx)
