"""``fuzz`` and ``deltadebugging``: options generated from their Param declarations.

Only click is imported at start-up; the API comes in when a command runs.
Progress goes to standard error, the summary to standard output.  Ctrl-C
during fuzzing stops the search and still writes the results so far.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

import click

from perun_core.cli.terminal import escape_controls, fit_to_terminal

from .params import DeclaredCommand


def _echo(text: str, **options: Any) -> None:
    """A result line: the paths, workloads and notes in it are the user's text, control characters escaped."""
    click.echo(fit_to_terminal(escape_controls(text)), **options)


CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _fuzz_params() -> Any:
    # lazy: keeps `perun-core --help` light
    from perun_core.api import FUZZ_PARAMS

    return FUZZ_PARAMS


def _delta_params() -> Any:
    # lazy: keeps `perun-core --help` light
    from perun_core.api import DELTA_PARAMS

    return DELTA_PARAMS


def _err(text: str) -> None:
    click.echo(fit_to_terminal(text), err=True)


def _cost(value: float, metric: str) -> str:
    # lazy: keeps `perun-core --help` light
    from perun_core.api import format_cost

    return format_cost(value, metric)


def compact_rules(names: list[str]) -> str:
    # lazy: keeps `perun-core --help` light
    from perun_core.api import compact_rules as compact

    return compact(names)


def growth_text(verdict: Any) -> str:
    # lazy: keeps `perun-core --help` light
    from perun_core.api import growth_text as text

    return text(verdict)


class _Printer:
    """Renders fuzz events as lines on standard error."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.last = 0.0
        self.metric = "cpu"

    def __call__(self, event: Any) -> None:
        kind = type(event).__name__
        if kind == "FuzzStarted":
            baselines = ", ".join(_cost(b, event.metric) for b in event.baselines)
            _err(f"fuzzing with {event.jobs} parallel run{'s' * (event.jobs != 1)}; cost: {event.metric}; seed "
                 f"baseline {baselines}; noise {100 * event.noise:.1f} %, keeping inputs "
                 f"{100 * event.threshold:.0f} % slower than their parent at equal size; coverage pre-filter "
                 f"{event.coverage}")
            if event.note:
                _err(f"note: {event.note}")
            self.metric = event.metric
        elif kind == "InputKept" and not self.quiet:
            f = event.finding
            what = "hang" if f.hang else _cost(f.value, self.metric)
            _err(f"kept {f.id}: {f.size} B, {what}, {f.slowdown:.1f}x at equal size in the search "
                 f"({compact_rules(f.rules)})")
        elif kind == "FuzzProgress" and not self.quiet and time.monotonic() - self.last >= 5:
            self.last = time.monotonic()
            found = f" (found at {event.best_found_at:.0f} s)" if event.best_slowdown > 1 else ""
            _err(f"{event.executions} runs ({event.executions_per_second:.0f}/s), {event.kept} kept, "
                 f"{event.hangs} hangs, best {event.best_slowdown:.1f}x{found}, {event.elapsed:.{0 if event.elapsed >= 10 else 1}f} s so far")
        elif kind == "FindingAnalysed" and not self.quiet:
            v = event.verdict
            verdict = "reported" if v.reported else f"not reported: {v.reason}"
            ratio = (f"{v.ratio:.1f}x at equal size, re-measured side by side" if v.ratio > 0
                     else "not compared at equal size")
            _err(f"analysed {v.id}: {ratio}, {growth_text(v)}; {verdict}")
        elif kind == "ProfilesCollected":
            for path in event.paths:
                _err(f"profile of a best input: {path}")
            if event.registered:
                _err(f"registered at {', '.join(m[:7] for m in event.registered)}")


def _fuzz_callback(ctx: click.Context, **values: Any) -> None:
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    quiet = bool(values.pop("quiet", False))
    no_plot = bool(values.pop("no_plotting", False))
    cancel = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    try:
        result = api.run_fuzzing(values, on_event=_Printer(quiet), cancel=cancel)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    out = result.settings.output_dir
    _echo(f"{result.executions} runs in {result.elapsed:.1f} s ({result.stopped}): {len(result.findings)} "
               f"inputs kept, {len(result.reported)} reported as findings (cost: {result.metric})")
    for verdict in result.reported:
        _echo(f"  {verdict.ratio:8.1f}x at equal size (confidence {verdict.confidence:.3f}), "
                   f"{growth_text(verdict)}: {out / verdict.file} ({verdict.size} B, found at {verdict.found_at:.0f} s)")
        largest = verdict.largest
        if largest is not None and largest.file and largest.file != verdict.file:
            _echo(f"            largest measured: {out / largest.file} ({largest.size} B, "
                       f"{_cost(largest.cost, result.metric)}, {largest.repetitions} repetitions of the part)")
    if not result.reported:
        _echo("  no finding: no kept input grows superlinearly and runs clearly slower than an ordinary input "
                   "of its size" + (f" (best kept {result.best_slowdown:.1f}x at equal size)" if result.findings
                                    else ""))
    if not no_plot and len(result.timeline) > 1:
        import shutil

        click.echo(api.slowdown_plot(result, width=min(100, shutil.get_terminal_size((80, 24)).columns), height=15))
    for note in result.notes:
        _echo(f"note: {note}")
    if result.matrix_workloads:
        _echo(f"added to the job matrix's workloads: {', '.join(result.matrix_workloads)}")
    _echo(f"results: {out / 'results.json'}, {out / 'results.md'}, {out / 'slowdown.svg'}")


fuzz = DeclaredCommand(
    "fuzz",
    declared=_fuzz_params,
    params=[click.Option(["quiet", "-q", "--quiet"], is_flag=True, help="Report only the start and the end."),
            click.Option(["no_plotting", "-np", "--no-plotting"], is_flag=True,
                         help="Do not draw the slow-down plot in the terminal.")],
    callback=click.pass_context(_fuzz_callback),
    help="Find inputs that make a program slow (performance fuzzing).\n\n"
         "Mutates the seed inputs (-w) with rules inspired by known performance bugs, runs the program (-b) on "
         "each candidate as a file argument (or on standard input with --stdin), keeps those measurably slower "
         "than their parent, and writes them with results.json, results.md and slowdown.svg to -o.",
    short_help="Find inputs that make a program slow.",
    context_settings=CONTEXT,
)


def _delta_callback(cmd: str, input: str, **values: Any) -> None:
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    def show(step: Any) -> None:
        _err(f"{step.phase}: {step.size} B, {step.value:.4g} (after {step.tests} runs)")

    cancel = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, lambda *_: cancel.set())
    try:
        result = api.deltadebug(cmd, input, values, on_event=show, cancel=cancel)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    _echo(f"shrunk {result.original_size} B ({_cost(result.original_value, result.metric)}) to {result.size} B "
               f"({_cost(result.value, result.metric)}) in {result.tests} runs, {result.elapsed:.1f} s "
               f"({result.stopped}); kept by {result.keep} within a tolerance of {100 * result.tolerance:.0f} %")
    if result.original_growth is not None:
        after = result.growth["order"] if result.growth else "not measured"
        kept = "kept" if result.growth_kept else "NOT kept"
        _echo(f"growth with {result.original_growth['part']}: {result.original_growth['order']} before, "
                   f"{after} after ({kept})")
    _echo(f"smallest slow input: {result.output}")


deltadebugging = DeclaredCommand(
    "deltadebugging",
    declared=_delta_params,
    leading=[click.Argument(["cmd"]), click.Argument(["input"])],
    params=[],
    callback=_delta_callback,
    help="Shrink a slow INPUT of CMD to the part that makes it slow.\n\n"
         "Runs ddmin over the lines, then over the characters, keeping a smaller input while it stays at least as "
         "slow relative to its size (--keep density), at least as slow (--keep time), or at least as slow when its "
         "repeated part is grown back to the original's size (--keep growth, which also reports the growth order "
         "before and after).",
    short_help="Shrink a slow input to the part that makes it slow.",
    context_settings=CONTEXT,
)
