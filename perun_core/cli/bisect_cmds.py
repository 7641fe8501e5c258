"""``perun-core bisect GOOD [BAD]``: a thin front end over :func:`perun_core.api.bisect`.

Imported by ``perun-core --help``: only click and the standard library at module level.
Progress goes to stderr, the report to stdout; exit status 0 when the bisect ran to its end.
"""

from __future__ import annotations

from typing import Any

import click

from perun_core.cli.terminal import escape_controls, fit_to_terminal

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}



def _progress(verbose: int) -> Any:
    # lazy: keeps `perun-core --help` light
    from perun_core import api as api_bisect
    # lazy: keeps `perun-core --help` light
    from perun_core.cli.run_render import PlainRenderer

    plain = PlainRenderer(verbose, write=lambda text: click.echo(text, err=True)) if verbose else None

    def on_event(event: Any) -> None:
        if isinstance(event, api_bisect.BisectStarted):
            click.echo(f"bisecting {event.commits} commits from {event.good[:7]} to {event.bad[:7]} "
                       f"with {event.jobs} job{'s' if event.jobs != 1 else ''}", err=True)
        elif isinstance(event, api_bisect.BisectCollecting):
            click.echo(f"  collecting at {event.commit[:7]} (temporary worktree)", err=True)
        elif isinstance(event, api_bisect.BisectRunEvent) and plain is not None:
            plain(event.event)
        elif isinstance(event, api_bisect.BisectTested):
            step = event.step
            label = "  re-check: " if step.recheck else "  "
            click.echo(fit_to_terminal(escape_controls(f"{label}{step.commit[:7]} is {step.verdict}"
                                                       f"{_step_detail(step)}; {event.remaining} left to test")),
                       err=True)

    return on_event


def _step_detail(step: Any) -> str:
    """``(stored profiles, at 0.97 of the way to BAD, p=0.0003)`` or ``: why`` for a skipped or undecided one."""
    if step.reason:
        return f": {step.reason}"
    how = "stored profiles" if step.reused else f"{step.runs} runs a side in turns with GOOD and BAD"
    if step.position is not None and step.position == step.position and step.p_value is not None:
        how += f", at {step.position:.2f} of the way to BAD, p={step.p_value:.2g}"
    return f" ({how})"


def _finding_line(finding: Any) -> str:
    # lazy: keeps `perun-core --help` light
    from perun_core.api.text import format_amount, format_change

    change = f" ({format_change(finding.delta_rel, finding.from_)})" if isinstance(finding.delta_rel, (int, float)) else ""
    return escape_controls(f"{finding.result.value} at {finding.location}: {format_amount(finding.from_, finding.unit)} -> "
                           f"{format_amount(finding.to, finding.unit)}{change} [{finding.method}]")


@click.command("bisect", context_settings=CONTEXT)
@click.argument("good")
@click.argument("bad", required=False, default="HEAD")
@click.option("-j", "--job", "jobs", multiple=True, metavar="JOB",
              help="A job of the matrix, by number (from 1) or a part of its label (repeatable; default: all).")
@click.option("--register", is_flag=True, help="Keep the collected profiles, registered at their commits.")
@click.option("-M", "--method", "methods", multiple=True, metavar="METHOD",
              help="Check with this method instead of the configured strategy (repeatable).")
@click.option("--fail-on", type=click.Choice(["degradation", "maybe"]), default="degradation", show_default=True,
              help="Which findings make a commit bad: certain degradations, or also uncertain ones.")
@click.pass_context
def bisect(ctx: click.Context, good: str, bad: str, jobs: tuple[str, ...], register: bool,
           methods: tuple[str, ...], fail_on: str) -> None:
    """Find the first commit from GOOD to BAD (default HEAD) where a job's profile degrades.

    BAD is checked against GOOD with the configured strategy; the degraded
    places are followed.  Each tested commit runs in turns with GOOD and BAD
    (temporary worktrees built by execute.pre_run) and is bad when it sits
    significantly nearer BAD's level than GOOD's, undecided when the runs
    cannot tell.  Stored profiles (registered or pending) are used instead
    of measuring.  The first bad commit and its parent are measured again;
    a culprit that does not hold is reported as uncertain.  Commits that
    cannot be built, profiled or placed are set aside.
    """
    # lazy: keeps `perun-core --help` light
    from perun_core import api

    verbose = int(getattr(ctx.find_root().obj, "verbose", 0) or 0)
    result = api.bisect(good, bad, jobs=list(jobs), methods=list(methods) or None, register=register,
                        fail_on=fail_on, on_event=_progress(verbose))
    tested = len({step.commit for step in result.steps}) + 1  # GOOD is profiled too
    if result.culprit is None:
        click.echo(f"{result.bad[:7]} is not degraded against {result.good[:7]}: nothing to bisect")
    else:
        click.echo(f"first degraded commit: {result.culprit}")
        if not result.certain:
            click.echo(fit_to_terminal(f"  uncertain: {escape_controls(result.doubt)}"))
        for label, finding in api.labelled_findings(result):
            click.echo(fit_to_terminal(f"  {label}: {_finding_line(finding)}"))
    for commit, reason in result.skipped:
        click.echo(fit_to_terminal(f"skipped {commit[:7]}: {escape_controls(reason)}"))
    click.echo(f"tested {tested} of {result.commits} commits, {result.collections} collection"
               f"{'s' if result.collections != 1 else ''} run"
               + (f", {result.registered} profiles registered" if result.registered else ""))
