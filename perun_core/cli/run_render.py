"""Showing run events: a rich progress display on a terminal, plain lines otherwise.

Plain lines are meant for logs and pipes: one line per commit, pre_run
command, job, written or registered profile and failure.  With ``-v`` the
repetitions and the output of pre_run commands and profiled programs are
shown too.  On a terminal a progress bar counts jobs and runs, and the same
lines are printed above it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from perun_core.api import run_events as ev
from perun_core.cli.terminal import escape_controls


def _short(sha: str) -> str:
    return sha[:7]


def _where(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


class PlainRenderer:
    """Turns events into text lines; ``write`` prints one line."""

    def __init__(self, verbose: int, write: Callable[[str], None] = click.echo) -> None:
        self.verbose = verbose
        self.write = write
        self.total = 0

    def line_for(self, event: Any) -> str | None:
        if isinstance(event, ev.RunPlanned):
            self.total = event.total
            jobs = f"{event.jobs} job{'s' if event.jobs != 1 else ''}"
            if not event.versions:
                return "Nothing to run: this shard holds none of the commit x job pairs"
            if event.in_place:
                return f"Running {jobs} for {_short(event.versions[0])} in the working tree"
            commits = len(event.versions)
            return f"Running {jobs} for each of {commits} commit{'s' if commits != 1 else ''} in temporary worktrees"
        if isinstance(event, ev.VersionStarted):
            if not event.worktree:
                return None
            return f"Commit {_short(event.version)} ({event.index}/{event.count}) in {event.workdir}"
        if isinstance(event, ev.PhaseStarted):
            return f"$ {event.detail}" if event.phase == "pre_run" else None
        if isinstance(event, ev.JobStarted):
            return f"[{event.job}/{event.total}] {event.spec.label}"
        if isinstance(event, ev.WorkloadStarted):
            if self.verbose:
                return f"  workload {event.index}/{event.total} of {event.generator}: {event.workload} (size {event.size})"
            return None
        if isinstance(event, ev.Repetition):
            if self.verbose:
                return f"  {'warm-up' if event.warmup else 'run'} {event.index}/{event.total}"
            return None
        if isinstance(event, ev.OutputLine):
            return f"  | {event.text}" if self.verbose else None
        if isinstance(event, ev.ProfileWritten):
            return f"  wrote {_where(event.path)}"
        if isinstance(event, ev.ProfileRegistered):
            return f"  registered {event.source} at {_short(event.minor)}"
        if isinstance(event, ev.MeasurementAdvice):
            return f"  {event.text}"
        if isinstance(event, ev.JobFailed):
            return f"  failed: {event.reason}" if self.total > 1 else None
        if isinstance(event, ev.RunFinished):
            if event.status in ("ok", "failed"):
                failed = f", {event.failed} job{'s' if event.failed != 1 else ''} failed" if event.failed else ""
                return f"Collected {event.written} profile{'s' if event.written != 1 else ''} in {event.seconds:.2f} s{failed}"
        return None

    def __call__(self, event: Any) -> None:
        line = self.line_for(event)
        if line is not None:
            # commands, arguments, workloads and output lines are the user's text: a terminal escape stays visible
            self.write(escape_controls(line))


class RichRenderer:
    """A progress bar of jobs and runs, with the plain lines printed above it."""

    def __init__(self, verbose: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = Console(highlight=False)
        self.progress = Progress(
            SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=self.console, transient=True,
        )
        self.plain = PlainRenderer(verbose, write=lambda text: self.console.print(text, markup=False))
        self.jobs = self.progress.add_task("jobs", total=None)
        self.runs = self.progress.add_task("runs", total=None, visible=False)

    def __enter__(self) -> RichRenderer:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def __call__(self, event: Any) -> None:
        update = self.progress.update
        if isinstance(event, ev.RunPlanned):
            update(self.jobs, total=event.total, completed=0)
        elif isinstance(event, ev.JobStarted):
            update(self.jobs, description=_description(f"job {event.job}/{event.total}: {event.spec.command_line}"))
            update(self.runs, visible=False, completed=0, total=None)
        elif isinstance(event, ev.Repetition):
            label = "warm-up" if event.warmup else "runs"
            update(self.runs, visible=True, description=label, total=event.total, completed=event.index - 1)
        elif isinstance(event, (ev.JobFinished, ev.JobFailed)):
            update(self.runs, visible=False)
            self.progress.advance(self.jobs)
        elif isinstance(event, ev.PhaseStarted) and event.phase == "pre_run":
            update(self.jobs, description=_description(f"pre_run: {event.detail}"))
        self.plain(event)


def _description(text: str) -> str:
    """A progress bar's description of the user's text: control characters escaped, and no rich markup
    (the bar's column reads '[bold]' in a command line as markup)."""
    from rich.markup import escape

    return escape(escape_controls(text))


@contextlib.contextmanager
def renderer(verbose: int) -> Iterator[Callable[[Any], None]]:
    """The event callback for this terminal (rich on a TTY, plain lines otherwise)."""
    if sys.stdout.isatty() and os.environ.get("TERM") != "dumb":
        with RichRenderer(verbose) as rich_renderer:
            yield rich_renderer
    else:
        yield PlainRenderer(verbose)
