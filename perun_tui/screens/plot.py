"""The plot screen: scatter with models, bars, flow, flame graph and heap map of one profile.

::

    ╭ Plot · 1@i mixed at abc1234 ───────────────────────────────╮
    │ s scatter  b bars  w flow  f flame graph  m heap map        │  the views; the current one lit
    │ (the picture, as big as the pane)                           │
    │ uid 2 of 3: sll_search · ←/→ other uids                     │  what the cursor is on
    ╰─────────────────────────────────────────────────────────────╯

The profile is loaded and each view's data built (``View.run``) in thread
workers; every picture is drawn in a thread worker too, at the widget's
size, and cached by (profile, view, state, width, height, theme) in the
app's :class:`~perun_tui.pictures.PictureCache`.  While a new picture is
drawn the old one stays on screen.  Charts come from perun_core's plotting
adapter as ANSI text; the flame graph (an icicle) and the heap map are
drawn with Rich segments by the widgets of :mod:`perun_tui.widgets.plot`,
from the layouts of the core's views, because they have a cursor.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Header, Static
from textual.worker import Worker

from perun_core.api import ProfileInfo, escape_controls, fit_middle, type_defaults
from perun_core.errors import PerunError

from ..commands import UNAVAILABLE_STYLE, PaletteCommand, ScreenCommands
from ..messages import PlotModelBuilt, PlotProfileLoaded, PlotStatus
from ..widgets.footer import Footer
from ..widgets.plot import VIEW_LABELS, VIEW_PHRASES, VIEWS, ChartView, FlameView, HeapView, PictureWidget


def _unprefixed(view: str, error: str) -> str:
    """The core's error without its leading ``view:`` (the TUI names the view already)."""
    return error[len(view) + 2:] if error.startswith(f"{view}: ") else error


def default_view(profile_type: str, fitting: set[str] | None = None) -> str:
    """What a profile of this type is best shown as first (among the ``fitting`` views when known)."""
    best = {"mixed": "scatter", "memory": "heapmap"}.get(profile_type, "bars")
    if fitting is None or best in fitting:
        return best
    return next((view for view, _key, _label in VIEWS if view in fitting), best)


def view_params(view: str, profile_type: str) -> dict[str, Any]:
    """The parameters the TUI gives each view: the core's defaults by profile type, as ``perun-core show``."""
    return type_defaults(view, profile_type)


def profile_key(info: ProfileInfo) -> str:
    """What identifies a profile's content: its checksum, else its file and time."""
    return info.checksum or f"{info.path or info.source}@{info.time}"


#: the view keys show in the footer as one item
VIEW_KEYS = Binding.Group("View")


class PlotScreen(Screen[None]):
    """Plots of one profile; ``s``, ``b``, ``l``, ``f``, ``m`` switch views, escape goes back."""

    TITLE = "perun · plot"
    HELP_NAME = "plot"

    COMMANDS = {ScreenCommands}
    BINDINGS = [
        Binding("escape", "close", "Back", key_display="esc", tooltip="Back to the profiles", id="plot.close"),
        Binding("s", "view('scatter')", "Scatter", group=VIEW_KEYS, tooltip="Scatter of amount per size with models",
                id="plot.scatter"),
        Binding("b", "view('bars')", "Bars", group=VIEW_KEYS, tooltip="Bars of an aggregation", id="plot.bars"),
        Binding("w", "view('flow')", "Flow", group=VIEW_KEYS, tooltip="Flow: lines through the snapshots or runs",
                id="plot.flow"),
        Binding("f", "view('flamegraph')", "Flame graph", group=VIEW_KEYS, tooltip="Flame graph (icicle) of the traces",
                id="plot.flamegraph"),
        Binding("m", "view('heapmap')", "Heap map", group=VIEW_KEYS, tooltip="Heap map of a memory profile",
                id="plot.heapmap"),
    ]

    def __init__(self, info: ProfileInfo, minor: str | None, view: str | None = None) -> None:
        super().__init__()
        self.info = info
        self.minor = minor
        self.requested = view
        self.view: str | None = None
        self.profile: Any = None
        self.models: dict[str, Any] = {}
        self.errors: dict[str, str] = {}
        #: view -> why it cannot show the profile; views that can are absent (known once loaded)
        self.unfit: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        with Vertical(id="plot-pane", classes="pane"):
            yield Static("", id="plot-views")
            with ContentSwitcher(id="plot-switcher", initial="plot-message"):
                yield Static("loading the profile…", id="plot-message")
                yield ChartView(id="plot-chart")
                yield FlameView(id="plot-flame")
                yield HeapView(id="plot-heap")
            yield Static("", id="plot-status")
        yield Footer()

    def on_mount(self) -> None:
        pane = self.query_one("#plot-pane")
        where = f" at {self.minor[:7]}" if self.info.registered and self.minor else " (pending)"
        pane.border_title = f"Plot · {self.info.tag} {self.info.type}{where}"
        self._subtitle()
        self._show_views()
        self.app.theme_changed_signal.subscribe(self, self._theme_changed)
        self.load()

    def on_resize(self, event: events.Resize) -> None:
        self._subtitle()

    def _subtitle(self) -> None:
        """The command line the profile measured: as text, not markup, shortened in the middle to fit."""
        from textual.content import Content

        line = escape_controls(" ".join(p for p in (self.info.cmd, self.info.args, self.info.workload) if p))
        room = max(self.app.size.width - 8, 10)
        self.query_one("#plot-pane").border_subtitle = Content(fit_middle(line, room))

    def _theme_changed(self, _theme: Any) -> None:
        widget = self.current_widget
        if widget is not None:
            widget.request()

    @property
    def current_widget(self) -> PictureWidget | None:
        current = self.query_one(ContentSwitcher).current
        if current in ("plot-chart", "plot-flame", "plot-heap"):
            return self.query_one(f"#{current}", PictureWidget)
        return None

    # -- loading -------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="plot-load", description="loading a profile")
    def load(self) -> None:
        core = self.app.core
        try:
            loaded = core.load(self.info, self.minor)
            fits = core.view_fits(loaded.profile)
        except PerunError as error:
            self.post_message(PlotProfileLoaded(None, error.message))
            return
        self.post_message(PlotProfileLoaded(loaded, fits=fits))

    def on_plot_profile_loaded(self, message: PlotProfileLoaded) -> None:
        if message.loaded is None:
            self.app.notify(message.error, title="error", severity="error", timeout=10, markup=False)
            self._message(message.error)
            return
        self.profile = message.loaded.profile
        shown = {view for view, _key, _label in VIEWS}
        self.unfit = {fit.name: fit.reason for fit in message.fits if fit.name in shown and not fit.fits}
        first = default_view(self.profile.type, shown - set(self.unfit))
        if self.requested in self.unfit:
            # asked for from elsewhere (the main screen's palette): say why, show what fits
            self._explain(self.requested, notify=True)
            self.requested = None
        self.action_view(self.requested or first)

    @work(thread=True, exit_on_error=False, group="plot-model", description="building a view")
    def build(self, view: str) -> None:
        try:
            model = self.app.core.view_model(self.profile, view, view_params(view, self.profile.type))
        except PerunError as error:
            self.post_message(PlotModelBuilt(view, None, error.message))
            return
        self.post_message(PlotModelBuilt(view, model))

    def on_plot_model_built(self, message: PlotModelBuilt) -> None:
        if message.error:
            self.errors[message.view] = message.error
            if message.view == self.view:
                self.app.notify(_unprefixed(message.view, message.error), title=VIEW_LABELS[message.view],
                                severity="warning", markup=False)
        else:
            self.models[message.view] = message.model
        if message.view == self.view:
            self._show_model()

    # -- views ---------------------------------------------------------------------------
    def action_view(self, view: str) -> None:
        self.view = view
        if view in self.unfit:
            self._show_views()
            # the pane says why: a toast saying it again would cover the tab bar and the keys that fit
            self._explain(view, notify=False)
            return
        self._show_views()
        if self.profile is None:
            return
        if view in self.models or view in self.errors:
            self._show_model()
        else:
            self._message(f"building the {VIEW_LABELS[view]}…")
            self.build(view)

    def _show_model(self) -> None:
        view = self.view
        if view in self.errors:
            self._message(f"{VIEW_LABELS[view]}: {_unprefixed(view, self.errors[view])}")
            self.query_one("#plot-status", Static).update("s b w f m: other views · esc: back")
            return
        widget_id = {"flamegraph": "plot-flame", "heapmap": "plot-heap"}.get(view, "plot-chart")
        widget = self.query_one(f"#{widget_id}", PictureWidget)
        self.query_one(ContentSwitcher).current = widget_id
        widget.set_model((profile_key(self.info), view), view, self.models[view])
        widget.focus()
        self.refresh_bindings()

    def _explain(self, view: str, *, notify: bool) -> None:
        """Why ``view`` cannot show this profile: in the pane (with the keys that do), and as a notification when
        ``notify`` (the view was asked for from elsewhere and the pane shows another)."""
        reason = self.unfit[view]
        keys = ", ".join(f"{key} {label}" for name, key, label in VIEWS if name not in self.unfit)
        if notify:
            self.app.notify(f"the {VIEW_LABELS[view]} cannot show {self.info.tag}: {reason}",
                            title=VIEW_LABELS[view], severity="warning", markup=False)
        if self.view == view:
            self._message(f"{VIEW_LABELS[view]}: {reason}")
            self.query_one("#plot-status", Static).update(
                Text(f"views that fit: {keys} · esc: back" if keys else "esc: back", no_wrap=True,
                     overflow="ellipsis"))

    def _message(self, text: str) -> None:
        self.query_one("#plot-message", Static).update(Text(text))
        self.query_one(ContentSwitcher).current = "plot-message"
        self.query_one("#plot-status", Static).update("")

    def _show_views(self) -> None:
        line = Text(no_wrap=True, overflow="ellipsis")
        for view, key, label in VIEWS:
            if view in self.unfit:
                # greyed out: the key still answers, with the reason
                line.append(f" {key} {label} ", style=UNAVAILABLE_STYLE)
            else:
                style = "reverse bold" if view == self.view else ""
                line.append(f" {key} ", style=style or "bold")
                line.append(f"{label} ", style=style)
            line.append(" ")
        views = self.query_one("#plot-views", Static)
        views.update(line)
        views.tooltip = "\n".join(f"{VIEW_LABELS[view]}: {reason}" for view, reason in self.unfit.items()) or None

    def on_plot_status(self, message: PlotStatus) -> None:
        self.query_one("#plot-status", Static).update(Text(message.text, no_wrap=True, overflow="ellipsis"))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_failed_worker(event)

    def action_close(self) -> None:
        self.dismiss(None)

    def palette_commands(self) -> Iterator[PaletteCommand]:
        for view, _key, label in VIEWS:
            yield PaletteCommand(f"plot: {label}", f"Show the profile as {VIEW_PHRASES[view]}",
                                 functools.partial(self.action_view, view), unavailable=self.unfit.get(view, ""))
        # the commands of the view on screen
        if self.view == "scatter":
            chart = self.query_one(ChartView)
            yield PaletteCommand("plot: next uid", "Scatter: the next uid", functools.partial(chart.action_uid, 1))
            yield PaletteCommand("plot: previous uid", "Scatter: the previous uid",
                                 functools.partial(chart.action_uid, -1))
        elif self.view == "flamegraph":
            flame = self.query_one(FlameView)
            yield PaletteCommand("plot: zoom into frame", "Flame graph: zoom into the selected frame",
                                 flame.action_zoom)
            yield PaletteCommand("plot: back out of zoom", "Flame graph: back out one level", flame.action_unzoom)
        elif self.view == "heapmap":
            heap = self.query_one(HeapView)
            yield PaletteCommand("plot: next snapshot", "Heap map: the next snapshot",
                                 functools.partial(heap.action_snapshot, 1))
            yield PaletteCommand("plot: previous snapshot", "Heap map: the previous snapshot",
                                 functools.partial(heap.action_snapshot, -1))
            yield PaletteCommand("plot: toggle heat mode", "Heap map: sites of one snapshot or heat of all",
                                 heap.action_heat)
            yield PaletteCommand("plot: play snapshots", "Heap map: step through the snapshots by itself",
                                 heap.action_animate)
        yield PaletteCommand("plot: close", "Back to the profiles", self.action_close)
        yield PaletteCommand("help: keys", "List every key", self.app.action_help)
