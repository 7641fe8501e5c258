"""The degradation pane: run ``check head``, ``check all`` or ``check profiles``; browse the findings.

::

    ╭ Degradation check · all from 6c8442a ──── 58 pairs · 5 degradations ╮
    │ show: all  changes  degradations  optimizations  maybe  no change    │  f cycles
    │ commit  location            result        from → to     delta  ...   │  one row per finding
    │ 0ca221a:sll-bench-…  →  c39c114:sll-bench-…                          │  the pair of the row
    ╰──────────────────────────────────────────────────────────────────────╯

Checks run through ``api_check`` in a thread worker (on their own
repository instance, see :mod:`perun_tui.core`), reporting progress by
message; escape cancels ``check head`` and ``check all``.  On opening, the
results the last check stored for the selected commit are shown.  Enter on
a finding opens :class:`CompareScreen`: baseline and target plotted side by
side (stacked in narrow terminals) by the same view.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static
from textual.worker import Worker, WorkerState, get_current_worker

from perun_core.api import CheckReport, escape_controls, fit_middle, format_change, in_words_of
from perun_core.errors import Interrupted, PerunError

from ..commands import PaletteCommand, ScreenCommands
from ..messages import CheckDone, CheckProgress, CompareLoaded
from ..modals.check_profiles import CheckProfilesDialog
from ..modals.explain import ExplainScreen
from ..modals.finding import FindingScreen
from ..screens.diff import DiffScreen
from ..widgets.columns import FittedTable
from ..widgets.findings import (FILTERS, FINDING_COLUMNS, RESULT_STYLES, STACK_BELOW, FilterBar, FindingDetail,
                                finding_amount, finding_confidence, finding_delta, finding_text)
from ..widgets.footer import Footer
from ..widgets.plot import ChartView, MiddleTitle
from .plot import view_params

#: what a filter that leaves no finding says it found none of
EMPTY_FILTER = {"all": "findings", "maybe": "maybe results", "other": "unchanged or other results"}


class StatusNote(FindingDetail):
    """The line under the findings (advice on noisy measurements, profiles left out, an error), wrapped over
    the rows it gets; cut, its last row ends in an ellipsis."""

    MORE = "…"


class CheckScreen(Screen[bool]):
    """Findings of degradation checks; dismisses with True when a check stored new results."""

    TITLE = "perun · degradation check"

    COMMANDS = {ScreenCommands}
    BINDINGS = [
        # 'check head' of the command line, on the commit selected in the history (not always HEAD): named so
        Binding("h", "check('head')", "Check commit", tooltip="Check: the selected commit's profiles against "
                "their baselines", id="check.head"),
        Binding("a", "check('all')", "Check all", tooltip="Check: every commit with profiles, from the "
                "selected one back", id="check.all"),
        Binding("p", "check('profiles')", "Profiles", tooltip="Check: two profiles you name", id="check.profiles"),
        Binding("f", "filter", "Filter", tooltip="Check: show all findings, changes, degradations, ...",
                id="check.filter"),
        Binding("enter", "open", "Compare", show=False, tooltip="Check: plot the baseline and the target of "
                "the finding side by side", id="check.open"),
        Binding("d", "diff", "Difference", show=False, tooltip="Check: what changed between the finding's baseline "
                "and target profiles (table, difference flame graph, bars)", id="check.diff"),
        Binding("i", "finding", "Finding", show=False, tooltip="Check: the whole of the selected finding (result, "
                "amounts, reason, both profiles), wrapped in a dialog", id="check.finding"),
        Binding("x", "explain", "Why?", show=False, tooltip="Check: collect call-level profiles of the finding's "
                "commits and list the functions responsible for the change", id="check.explain"),
        Binding("escape", "stop", "Cancel", key_display="esc",
                tooltip="Check: stop the running check; otherwise back to the history",
                id="check.stop"),
        Binding("escape", "close", "Back", key_display="esc", tooltip="Check: back to the history",
                id="check.close"),
    ]

    def __init__(self, revision: str | None, profile: tuple[str, str] | None = None, *,
                 baseline: str | None = None) -> None:
        super().__init__()
        self.revision = revision
        self.profile = profile  # (spec, minor) of the profile selected in the profiles pane
        self.baseline = baseline  # the spec of a listed profile of the same type to check it against
        self.rows: list[tuple[Any, Any, Any]] = []
        self.filter = 0
        self.stream: Any = None
        self.running = False
        self.cancelling = False
        self.stored_new = False
        self.what = ""

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="check-pane", classes="pane"):
            yield FilterBar(id="check-filter")
            yield FittedTable(FINDING_COLUMNS, id="check-findings")
            yield FindingDetail(id="check-pair")
            yield StatusNote(id="check-status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#check-pane").border_title = "Degradation check"
        self._show_filter()
        self._status("h: check the selected commit · a: all commits · p: two profiles · f: filter")
        if self.revision:
            self.load_stored()

    # -- running -------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="check", description="reading stored results")
    def load_stored(self) -> None:
        try:
            stored = self.app.core.stored_check(self.revision)
        except PerunError as error:
            self.post_message(CheckDone("stored", error=error.message, status="error", stored=True))
            return
        if stored is not None:
            self.post_message(CheckDone("stored", stored, stored=True))

    def action_check(self, what: str) -> None:
        if self.running:
            self.notify("a check is running; esc stops it", severity="warning")
            return
        if what == "profiles":
            spec, minor = self.profile if self.profile else ("0@p", self.revision or "HEAD")
            baseline = self.baseline if self.baseline is not None else ("0@i" if self.profile is None else "")
            self.app.push_screen(CheckProfilesDialog(baseline, spec, minor or ""),
                                 lambda answer: answer and self._start("profiles", *answer))
            return
        self._start(what)

    def _start(self, what: str, baseline: str = "", target: str = "", minor: str = "") -> None:
        self.running = True
        self.cancelling = False
        self.what = what
        self.query_one("#check-pane").border_title = f"Degradation check · {self._named(what)}"
        self.query_one("#check-pane").border_subtitle = "running…"
        self._status(f"checking {what}…")
        # the findings of the last check would stand under the new title: gone until the new ones come
        self.rows = []
        self._fill()
        self._show_pair()
        self.refresh_bindings()
        self.check(what, baseline, target, minor or None)

    @work(thread=True, exclusive=True, exit_on_error=False, group="check", description="running a check")
    def check(self, what: str, baseline: str, target: str, minor: str | None) -> None:
        worker = get_current_worker()
        core = self.app.core
        try:
            if what == "profiles":
                stream = core.stream_check("profiles", baseline=baseline, target=target, minor=minor)
            else:
                stream = core.stream_check(what, revision=self.revision)
        except PerunError as error:
            self.post_message(CheckDone(what, status="error", error=error.message))
            return
        self.stream = stream
        try:
            for event in stream:
                if worker.is_cancelled:
                    stream.cancel()
                text = _describe_event(event)
                if text:
                    self.post_message(CheckProgress(text))
        except Interrupted:
            self.post_message(CheckDone(what, status="interrupted"))
            return
        except PerunError as error:
            message = error.message if not error.hint else f"{error.message} ({error.hint})"
            self.post_message(CheckDone(what, status="error", error=message))
            return
        self.post_message(CheckDone(what, stream.result))

    def on_check_progress(self, message: CheckProgress) -> None:
        if self.running and not self.cancelling:
            self._status(message.text)

    def on_check_done(self, message: CheckDone) -> None:
        pane = self.query_one("#check-pane")
        if not message.stored:
            self.running = False
            self.cancelling = False
            self.stream = None
            self.refresh_bindings()
        if message.status == "error":
            pane.border_subtitle = "failed"
            self._status(Text(escape_controls(f"error: {message.error}"), style="bold red"))
            self.app.notify(message.error, title="check", severity="error", timeout=10, markup=False)
            return
        if message.status == "interrupted":
            pane.border_subtitle = "cancelled"
            self._status("the check was cancelled; nothing was stored")
            return
        report = message.report
        if message.stored:
            rows = [(report, pair, finding) for pair in report.pairs for finding in pair.findings]
            pane.border_title = f"Degradation check · last results of {self.revision[:7]}"
        else:
            rows = list(report.findings())
            if message.what in ("head", "all"):
                self.stored_new = True
        self.rows = rows
        self._fill()
        degradations = sum(1 for _, _, f in rows if f.result.is_degradation and not f.result.is_maybe)
        optimizations = sum(1 for _, _, f in rows if f.result.is_optimization and not f.result.is_maybe)
        pairs = len({id(pair) for _, pair, _ in rows})
        pane.border_subtitle = (f"{pairs} pair{'s' * (pairs != 1)} · {degradations} degradation"
                                f"{'s' * (degradations != 1)} · {optimizations} optimization"
                                f"{'s' * (optimizations != 1)}")
        errors = getattr(report, "errors", ())
        # warnings and advice (different machines, noisy measurements), each once
        notes = list(dict.fromkeys(note for _, pair, _ in rows for note in getattr(pair, "notes", ())))
        # which pending profiles were left out (an older run of a job whose newer run is pending), before the advice
        if not message.stored:
            notes = [line for version in report.versions for line in getattr(version, "skipped", ())] + notes
        if errors:
            self._status(Text(escape_controls(f"problem: {errors[0]}"), style="bold red"))
        elif notes:
            self._status(Text(escape_controls(f"note: {in_words_of(notes[0], 'tui')}"), style="yellow"))
        elif not rows:
            self._status("nothing to compare: no profile has a baseline" if not message.stored else
                         "the last check found nothing")
        else:
            self._status("enter compares the baseline and the target of the selected finding")
        if not message.stored:
            note = f"check {self._named(message.what)}: {degradations} degradations, {optimizations} optimizations"
            self.app.notify(note, title="check", severity="warning" if degradations else "information")
        self.query_one("#check-findings", DataTable).focus()

    def _named(self, what: str) -> str:
        """The check as the screen names it: ``commit b79ccdd`` (the selected one, not HEAD), ``all from …``."""
        if what == "head":
            return f"commit {self.revision[:7]}" if self.revision else "commit HEAD"
        if what == "all" and self.revision:
            return f"all from {self.revision[:7]}"
        return what

    # -- the table -------------------------------------------------------------------------
    def _visible(self) -> list[int]:
        keep = FILTERS[self.filter][2]
        return [i for i, (_, _, finding) in enumerate(self.rows) if keep(finding.result)]

    def _fill(self) -> None:
        table = self.query_one("#check-findings", FittedTable)
        rows = []
        for index in self._visible():
            version, pair, finding = self.rows[index]
            result = finding.result
            minor = getattr(version, "minor", None) or pair.target.minor
            rows.append((str(index), [
                Text((minor or "-")[:7], style="yellow"),
                Text(escape_controls(finding.location)),
                Text(f"{result.glyph} {result.value}", style=RESULT_STYLES.get(result.style, "")),
                Text(finding_delta(finding), justify="right"),
                Text(f"{finding_amount(finding, finding.from_)} → {finding_amount(finding, finding.to)}"),
                Text(finding_confidence(finding)),
                Text(escape_controls(finding.method or "-")),
            ]))
        table.set_rows(rows)
        self._show_filter()
        self._show_pair()

    def _show_filter(self) -> None:
        counts = f"{len(self._visible())} of {len(self.rows)}" if self.rows else ""
        self.query_one("#check-filter", FilterBar).show(self.filter, counts)

    @property
    def current(self) -> tuple[Any, Any, Any] | None:
        table = self.query_one("#check-findings", DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
        return self.rows[int(key)] if key is not None else None

    def _show_pair(self) -> None:
        current = self.current
        pair_line = self.query_one("#check-pair", FindingDetail)
        if current is None:
            # a filter that leaves none of the findings: the table's headers alone said nothing of why
            name = FILTERS[self.filter][0]
            empty = bool(self.rows) and not self.running
            # the table shrinks to its headers, the line right under them
            self.set_class(empty, "-none-shown")
            pair_line.show(Text(f"no {EMPTY_FILTER.get(name, name)} in this check", style="italic") if empty
                           else Text())
            return
        self.set_class(False, "-none-shown")
        _, pair, finding = current
        # wrapped over as many rows as it takes (up to half the pane; i shows the rest): the reason first, it
        # says what the row cannot (a maybe whose re-run found no change, the size a model was compared at)
        text = Text()
        if finding.reason:
            text.append(escape_controls(in_words_of(finding.reason, "tui")), style="italic")
            text.append("\n")
        text.append(escape_controls(pair.baseline.name), style="dim")
        text.append(" → ")
        text.append(escape_controls(pair.target.name))
        pair_line.show(text)

    @on(DataTable.RowHighlighted, "#check-findings")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_pair()

    @on(DataTable.RowSelected, "#check-findings")
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def _status(self, text: str | Text) -> None:
        self.query_one("#check-status", StatusNote).show(text if isinstance(text, Text) else Text(text))

    # -- actions ----------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.running and self.what != "profiles"
        if action == "close":
            return not (self.running and self.what != "profiles")
        if action in ("open", "diff", "finding"):
            return bool(self.rows)
        return True

    def action_filter(self, name: str | None = None) -> None:
        if name is None:
            self.filter = (self.filter + 1) % len(FILTERS)
        else:
            self.filter = next(i for i, f in enumerate(FILTERS) if f[0] == name)
        self._fill()

    def action_open(self) -> None:
        current = self.current
        if current is None:
            return
        _, pair, finding = current
        self.app.push_screen(CompareScreen(pair, finding))

    def action_finding(self) -> None:
        current = self.current
        if current is None:
            return
        _, pair, finding = current
        self.app.push_screen(FindingScreen(f"Finding · {escape_controls(finding.location)}",
                                           finding_text(pair, finding)))

    def action_diff(self) -> None:
        current = self.current
        if current is None:
            return

        _, pair, _ = current
        core = self.app.core
        self.app.push_screen(DiffScreen(lambda: (core.load_ref(pair.baseline), core.load_ref(pair.target)),
                                        f"{pair.baseline.name} → {pair.target.name}",
                                        (pair.baseline.name, pair.target.name)))

    def action_explain(self) -> None:
        current = self.current
        if current is None:
            return
        from dataclasses import replace

        version, pair, finding = current
        one = replace(version, pairs=(replace(pair, findings=(finding,)),))
        self.app.push_screen(ExplainScreen(CheckReport("explain", (one,)), f"{finding.location} "
                                                                         f"({pair.baseline.name} → {pair.target.name})"))

    def action_stop(self) -> None:
        if self.running and self.stream is not None and not self.cancelling:
            self.cancelling = True
            self.stream.cancel()
            self._status("cancelling…")

    def action_close(self) -> None:
        if not self.running or self.what == "profiles":
            self.dismiss(self.stored_new)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.group == "check":
            # a bug, not a PerunError: the check ended all the same (the pane said "running…" for good)
            self.on_check_done(CheckDone(self.what, status="error", error=f"unexpected error: {event.worker.error!r}"))
            return
        self.app.report_failed_worker(event)

    def on_unmount(self) -> None:
        if self.stream is not None:
            self.stream.cancel()

    def palette_commands(self) -> Iterator[PaletteCommand]:
        yield PaletteCommand("check: selected commit", "Check the selected commit's profiles against their baselines",
                             functools.partial(self.action_check, "head"))
        yield PaletteCommand("check: all", "Check every commit with profiles", functools.partial(self.action_check, "all"))
        yield PaletteCommand("check: profiles", "Check two profiles you name",
                             functools.partial(self.action_check, "profiles"))
        for name, label, _keep in FILTERS:
            yield PaletteCommand(f"check: show {label}", f"Filter the findings: {label}",
                                 functools.partial(self.action_filter, name))
        yield PaletteCommand("check: compare finding", "Plot the baseline and the target side by side",
                             self.action_open)
        yield PaletteCommand("check: whole finding", "The selected finding in full: amounts, reason, both profiles",
                             self.action_finding)
        yield PaletteCommand("check: back", "Back to the history", self.action_close)
        yield PaletteCommand("help: keys", "List every key", self.app.action_help)


def _describe_event(event: Any) -> str:
    name = type(event).__name__
    if name == "VersionStarted" and getattr(event, "minor", None):
        return f"checking {event.minor[:7]} ({event.index} of {event.count})"
    if name == "PairChecked":
        return f"checked {event.pair.target.name} ({event.index} of {event.total})"
    if name == "CollectionStarted":
        return f"collecting missing profiles for {len(event.versions)} commit(s)…"
    if name == "ConfirmationStarted":
        return f"confirming {event.findings} change(s) by interleaved runs ({event.runs} a side)…"
    return ""


# -- baseline and target side by side -------------------------------------------------------

def compare_view(profile_type: str) -> str:
    return "scatter" if profile_type == "mixed" else "bars"


def compare_params(view: str, profile_type: str, location: str) -> dict[str, Any]:
    if view == "scatter":
        return {"uid": location}
    return view_params(view, profile_type)


def relative_changes(pair: Any, finding: Any, baseline: Any, target: Any) -> str:
    """``real +42.5% · user +40.1%``: the check's own change for each bar of one group; "" otherwise.

    The percentages are the findings' (of the same method, for the bars'
    categories as subtypes of the finding's uid), never recomputed from the
    bars: the bars show means, the check a robust estimate of the shift, and
    one change must read the same in the verdict line and over the plot.
    """
    if baseline is None or target is None or not baseline.plots or not target.plots:
        return ""
    before, after = baseline.plots[0], target.plots[0]
    if before.kind != "bars" or after.kind != "bars" or len(before.series) != 1 or len(after.series) != 1:
        return ""
    uid, bracket, _subtype = finding.location.rpartition(" [")
    uid = uid if bracket else finding.location
    by_location = {f.location: f for f in pair.findings if f.method == finding.method and f.delta_rel is not None}
    parts = []
    for category in after.categories:
        found = by_location.get(f"{uid} [{category}]")
        if found is not None:
            parts.append(f"{category} {format_change(found.delta_rel, found.from_)}")
    return " · ".join(parts)


class CompareScreen(Screen[None]):
    """The baseline and the target of one finding, plotted by the same view."""

    TITLE = "perun · compare"

    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("escape", "close", "Back", key_display="esc", tooltip="Compare: back to the findings",
                id="compare.close"),
    ]

    def __init__(self, pair: Any, finding: Any) -> None:
        super().__init__()
        self.pair = pair
        self.finding = finding
        self.view = compare_view(pair.target.type or pair.baseline.type)

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="compare-pane", classes="pane"):
            with Horizontal(id="compare-row"):
                with Vertical(id="compare-baseline", classes="compare-side"):
                    yield MiddleTitle("baseline", classes="compare-title")
                    yield ChartView(id="compare-baseline-chart")
                with Vertical(id="compare-target", classes="compare-side"):
                    yield MiddleTitle("target", classes="compare-title")
                    yield ChartView(id="compare-target-chart")
            yield Static("", id="compare-finding")
        yield Footer()

    def on_mount(self) -> None:
        finding = self.finding
        result = finding.result
        pane = self.query_one("#compare-pane")
        self._title_pane()
        pane.border_subtitle = f"{result.value} {finding_delta(finding)}"
        for side, ref in (("baseline", self.pair.baseline), ("target", self.pair.target)):
            self.query_one(f"#compare-{side} .compare-title", MiddleTitle).set_text(side, ref.name)
        line = Text(no_wrap=True, overflow="ellipsis")
        line.append(f"{result.glyph} {result.value}", style=RESULT_STYLES.get(result.style, ""))
        line.append(f" · {finding_amount(finding, finding.from_)} → {finding_amount(finding, finding.to)} · {finding_delta(finding)}"
                    f" · {finding_confidence(finding)} · {escape_controls(finding.method or '-')}")
        self.query_one("#compare-finding", Static).update(line)
        self.set_class(self.app.size.width < STACK_BELOW, "stacked")
        self.load()

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < STACK_BELOW, "stacked")
        self._title_pane()

    def _title_pane(self) -> None:
        """The finding's location whole ([subtype] and all, no markup), shortened in the middle to fit."""
        from textual.content import Content

        room = max(self.app.size.width - 16, 10)
        self.query_one("#compare-pane").border_title = Content(f"Compare · {fit_middle(escape_controls(self.finding.location), room)}")

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare", description="loading two profiles")
    def load(self) -> None:
        core = self.app.core
        models = []
        try:
            for ref in (self.pair.baseline, self.pair.target):
                profile = core.load_ref(ref).profile
                if profile.type == "time":
                    # a time profile also holds the peak memory of each run: bytes next to seconds hide the change
                    profile = core.only_types(profile, ["time"])
                params = compare_params(self.view, profile.type, self.finding.location)
                try:
                    models.append(core.view_model(profile, self.view, params))
                except PerunError:
                    if self.view != "scatter":
                        raise
                    # the location is no uid with points (a uid and subtype): show every uid
                    models.append(core.view_model(profile, self.view, {}))
        except PerunError as error:
            self.post_message(CompareLoaded(error=error.message))
            return
        # one y scale: the same height means the same amount on both sides
        self.post_message(CompareLoaded(*core.share_y_scale(*models)))

    def on_compare_loaded(self, message: CompareLoaded) -> None:
        if message.error:
            self.app.notify(message.error, title="compare", severity="error", timeout=10, markup=False)
            self.query_one("#compare-finding", Static).update(Text(escape_controls(f"error: {message.error}"),
                                                                   style="bold red"))
            return
        for side, ref, model in (("baseline", self.pair.baseline, message.baseline),
                                 ("target", self.pair.target, message.target)):
            chart = self.query_one(f"#compare-{side}-chart", ChartView)
            chart.set_model((ref.checksum or ref.name, self.view, self.finding.location), self.view, model)
        changes = relative_changes(self.pair, self.finding, message.baseline, message.target)
        if changes:
            self.query_one("#compare-target .compare-title", MiddleTitle).set_text(
                "target", self.pair.target.name, f"· {changes}")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failed_worker(event)

    def action_close(self) -> None:
        self.dismiss(None)

    def palette_commands(self) -> Iterator[PaletteCommand]:
        yield PaletteCommand("compare: back", "Back to the findings", self.action_close)
        yield PaletteCommand("help: keys", "List every key", self.app.action_help)
