"""perun-tui: the App over one repository.

The first screen is :class:`~perun_tui.screens.main.MainScreen`; the others
live in :mod:`perun_tui.screens` (full screens) and :mod:`perun_tui.modals`
(dialogs), their parts in :mod:`perun_tui.widgets`.  Every blocking call
into the core runs in a thread worker over :class:`~perun_tui.core.Core`
and reports back by message; a failure of the core shows as a
notification, never a crash.  The ``perun-tui`` command is
:mod:`perun_tui.cli`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import textual
import textual.constants as textual_constants
import textual.screen as textual_screen
from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.dom import NoScreen
from textual.markup import escape as escape_markup
from textual.screen import Screen
from textual.widgets._toast import ToastRack
from textual.worker import Worker, WorkerState

from perun_core.api import escape_controls, escape_lines
from perun_core.errors import PerunError

from .bandwidth import LOW_BANDWIDTH_FPS
from .core import Core
from .demobuild import DemoBuild
from .formatting import ControlFilter, display_path
from .modals.details import ProfileDetailsScreen
from .modals.dialogs import ConfirmScreen, HelpScreen
from .modals.too_small import TooSmallScreen, too_small
from .pictures import PictureCache
from .screens.main import MainScreen
from .widgets.history import HistoryPane, HistoryView
from .widgets.profiles import ProfilesTable

__all__ = ["LOW_BANDWIDTH_FPS", "MainScreen", "PerunApp", "cap_loaded_frame_rate"]

def cap_loaded_frame_rate(fps: int) -> float | None:
    """Make screens draw at most ``fps`` frames a second; the frame period to give back later, or None.

    Nothing to do when textual was loaded with ``TEXTUAL_FPS`` at or below
    ``fps`` (:func:`perun_tui.bandwidth.cap_frame_rate`, the way
    ``perun-tui`` does it).  An app built after textual was loaded (from
    Python, in tests) can only change the module global each screen's frame
    timer takes when it starts, ``textual.screen.UPDATE_PERIOD``; that is no
    documented interface, so its shape is checked first and a textual that
    changed it fails here, loudly, rather than drawing at full rate unnoticed.
    """
    if textual_constants.MAX_FPS <= fps:
        return None
    period = getattr(textual_screen, "UPDATE_PERIOD", None)
    if not isinstance(period, float) or abs(period - 1 / textual_constants.MAX_FPS) > 1e-9:
        raise RuntimeError(f"textual {textual.__version__} has no frame period textual.screen.UPDATE_PERIOD of "
                           f"1/TEXTUAL_FPS (found {period!r}): the low-bandwidth mode cannot cap its frame rate; "
                           "start perun-tui with TEXTUAL_FPS set, or adapt perun_tui.app.cap_loaded_frame_rate")
    textual_screen.UPDATE_PERIOD = 1 / fps
    return period


#: the cells of a toast's line that are not its text: its coloured left edge and a space either side
TOAST_FRAME = 3


def toast_rows(height: int) -> int | None:
    """The most rows a toast takes from the panes in a terminal ``height`` rows high (None: as many as it needs)."""
    return 3 if height < 20 else 6 if height < 35 else None


def toast_text(markup: str, width: int, rows: int | None) -> str:
    """``markup`` as the lines a toast ``width`` cells wide shows, cut to ``rows`` with an ellipsis ending the last.

    Without the cut the toast dropped the rows past its height: a long file name ended in the middle with nothing
    to say that more was there.
    """
    if rows is None or width < 2:
        return markup
    lines = Content.from_markup(markup).wrap(width)
    if len(lines) <= rows:
        return markup
    last = lines[rows - 1].rstrip()
    if last.cell_length >= width:
        last = last.truncate(width - 1)
    return Content("\n").join([*lines[:rows - 1], last + "…"]).markup


def message_of(note) -> str:
    """The plain text of a notification's message, without the title ``notify`` put before it."""
    text = Content.from_markup(note.message).plain if note.markup else note.message
    return text.split(": ", 1)[1] if note.message.startswith("[b]") and ": " in text else text


def mark_focused_panes(widget) -> None:
    """The panes of ``widget``'s screen holding that screen's focused widget get ``-focus-within``, the others lose it.

    The look of ``:focus-within`` for less: with that pseudo-class Textual restyles every widget of the
    pane on every focus move inside it (the fuzz form's 31 fields on each tab); a class changes, and
    restyles, only when the focus enters or leaves a pane.
    """
    try:
        screen = widget.screen
    except NoScreen:  # removed meanwhile
        return
    focused = screen.focused
    holding = set(focused.ancestors_with_self) if focused is not None else set()
    for pane in screen.query(".pane"):
        pane.set_class(pane in holding, "-focus-within")


class PerunApp(App[None]):
    """The perun terminal UI over one repository."""

    CSS_PATH = "app.tcss"
    TITLE = "perun"
    BINDINGS = [
        Binding("q", "quit", "Quit", tooltip="Leave perun-tui", id="app.quit"),
        Binding("f1,question_mark", "help", "Help", tooltip="List every key", id="app.help"),
    ]

    #: every screen gets a width and a height class; app.tcss lays the screens out by them
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (80, "-medium"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (20, "-middle"), (35, "-tall")]
    #: information stays 3 s (errors and warnings say how long themselves)
    NOTIFICATION_TIMEOUT = 3

    def __init__(self, path: Path | str | None = None, *, core: Core | None = None, colour: bool = True,
                 low_bandwidth: bool = False, demo_build: DemoBuild | None = None) -> None:
        """The app over ``core`` (or the repository at ``path``).

        Without ``colour`` (NO_COLOR: see cli.colour_environment) textual's NoColor filter draws
        every cell in the terminal's default colours (it applies to ANSI mode only).
        ``low_bandwidth`` sends less for slow links: no mouse motion tracking
        (:mod:`perun_tui.driver`), no animations (scrolls jump), at most
        :data:`LOW_BANDWIDTH_FPS` frames a second (progress
        and other bursts of updates coalesce) and plots without colour (their
        series keep their markers, heat its shades).
        ``demo_build`` is the build of the demo going on in the repository
        (``perun-tui --demo`` on a demo not built yet): the main screen shows
        its phases and the commits' profiles as they land.
        """
        self.low_bandwidth = low_bandwidth
        driver = None
        if low_bandwidth and sys.platform != "win32":
            # lazy: the driver module imports textual's POSIX driver, needed only in this mode
            from .driver import LowBandwidthDriver

            driver = LowBandwidthDriver
        super().__init__(driver_class=driver, ansi_color=True if not colour else None)
        self._update_period: float | None = None
        if low_bandwidth:
            self.animation_level = "none"
            self._update_period = cap_loaded_frame_rate(LOW_BANDWIDTH_FPS)
        self.core = core if core is not None else Core.open(path)
        self.demo_build = demo_build
        self.pictures = PictureCache()
        self.sub_title = escape_controls(display_path(self.core.root))
        self._control_filter = ControlFilter()

    def get_line_filters(self):
        """Textual's filters and, last, :class:`ControlFilter` (so no raw control character is ever drawn)."""
        return [*super().get_line_filters(), *([self._control_filter] if self._control_filter.enabled else [])]

    def get_default_screen(self) -> Screen:
        return MainScreen()

    def on_mount(self) -> None:
        self.call_after_refresh(self.check_size)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.check_size)

    def check_size(self) -> None:
        """Cover the screen with :class:`TooSmallScreen` while the terminal is under 40x12; uncover it after."""
        small = too_small(*self.size)
        showing = isinstance(self.screen, TooSmallScreen)
        if small and not showing:
            self.push_screen(TooSmallScreen())
        elif not small and showing:
            self.pop_screen()
            self.call_after_refresh(self.check_size)  # another one under it (pushed over a pushed screen)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Under the too-small notice only q answers (it says so): ctrl+p with the palette open under the
        notice would push a second one of the same id, and the keys or any other screen would only hide
        beneath it."""
        if isinstance(self.screen, TooSmallScreen) and action != "quit":
            return False
        return super().check_action(action, parameters)

    def push_screen(self, screen, *args, **kwargs):
        """Push as usual; in a too small terminal the notice stays on top."""
        result = super().push_screen(screen, *args, **kwargs)
        if not isinstance(screen, TooSmallScreen) and too_small(*self.size):
            self.call_after_refresh(self.check_size)
        return result

    def notify(self, message, *, title: str = "", markup: bool = True, **kwargs) -> None:
        """Notify as usual, the title in bold at the start of the message's line (a toast takes the key bar's line,
        and a title of its own would take a pane's row more: app.tcss).

        Messages name profiles, files and commands: their control characters are escaped line by line.
        """
        text = escape_lines(str(message))
        if not markup:
            text = escape_markup(text)
        if title:
            text = f"[b]{escape_markup(escape_controls(str(title)))}:[/b] {text}"
        super().notify(toast_text(text, self.size.width - TOAST_FRAME, toast_rows(self.size.height)),
                       markup=True, **kwargs)

    def _refresh_notifications(self) -> None:
        """Show the notifications as usual, the screen's toast rack moved after its other widgets first: the
        rack stands in the key bar's place (app.tcss), and a widget is drawn over the ones before it, so the key
        bar, composed after the rack, hid a toast of one line."""
        try:
            screen = self.screen
            rack = screen.get_child_by_type(ToastRack)
        except Exception:  # no screen yet (starting) or none left (ending), or a screen without notifications
            rack = None
        if rack is not None and screen.children and screen.children[-1] is not rack:
            screen.move_child(rack, after=screen.children[-1])
        super()._refresh_notifications()

    def dismiss_notes(self, *starts: str) -> None:
        """Take the toasts whose message begins with one of ``starts`` off the screen: a hint of the key to press
        next ('marked 0@i · press d for the difference') is done with once the screen it leads to opens."""
        done = [note for note in self._notifications if message_of(note).startswith(starts)]
        for note in done:
            self._unnotify(note, refresh=False)
        if done:
            self._refresh_notifications()

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        mark_focused_panes(event.widget)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        mark_focused_panes(event.widget)

    def on_unmount(self) -> None:
        self.core.close()
        if self._update_period is not None:
            textual_screen.UPDATE_PERIOD = self._update_period  # as cap_loaded_frame_rate found it

    async def action_quit(self) -> None:
        """Leave; a run going on is cancelled first, and the app ends once its worker ended.

        The profiled program, its spawn helper and the run's worktree are
        gone when the terminal is given back (killed within a second).
        """
        # lazy: keeps the TUI's first frame light
        from .screens.run import RunScreen

        runs = [screen for screen in self.screen_stack if isinstance(screen, RunScreen) and screen.running]
        if not runs:
            self.exit()
            return
        for screen in runs:
            screen.quit_when_stopped()

    def report_error(self, error: PerunError) -> None:
        """Show a core error as a notification (its hint on a second line)."""
        message = error.message if not error.hint else f"{error.message}\n{error.hint}"
        self.notify(message, title="error", severity="error", timeout=10, markup=False)

    def report_failed_worker(self, event: Worker.StateChanged) -> None:
        """Show a worker that died of an exception that is no PerunError (a bug) as a notification."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(f"{event.worker.description or 'a task'} failed: {error!r}", title="unexpected error",
                        severity="error", timeout=10, markup=False)

    def action_help(self) -> None:
        # lazy: keeps the TUI's first frame light
        from .modals.keys import screen_key_groups, screen_legends

        if isinstance(self.screen, HelpScreen):
            return
        here = [*screen_key_groups(self.screen), ("everywhere", list(self.BINDINGS))]
        self.push_screen(HelpScreen(self.help_groups(), current=here, legend=screen_legends(self.screen)))

    def help_groups(self) -> list[tuple[str, list[BindingType]]]:
        # the screens behind keys load when first opened: a quicker first frame
        from .screens.check import CheckScreen, CompareScreen
        # lazy: keeps the TUI's first frame light
        from .screens.matrix import MatrixScreen
        # lazy: keeps the TUI's first frame light
        from .widgets.units import EntryList
        # lazy: keeps the TUI's first frame light
        from .screens.plot import PlotScreen
        # lazy: keeps the TUI's first frame light
        from .widgets.plot import ChartView, FlameView, HeapView
        # lazy: keeps the TUI's first frame light
        from .modals.postprocess import PostprocessScreen
        # lazy: keeps the TUI's first frame light
        from .screens.fuzz import FuzzScreen
        # lazy: keeps the TUI's first frame light
        from .screens.run import RunScreen

        focus = [Binding("tab", "focus_next", "Next pane"), Binding("shift+tab", "focus_previous", "Previous pane"),
                 Binding("ctrl+p", "command_palette", "Command palette")]
        return [
            ("everywhere", [*self.BINDINGS, *focus]),
            ("main screen", MainScreen.BINDINGS),
            ("history", [*HistoryView.BINDINGS, *HistoryPane.BINDINGS]),
            ("profiles", [Binding("up,down", "", "Move the cursor"), *ProfilesTable.BINDINGS]),
            ("details", ProfileDetailsScreen.BINDINGS),
            ("plot", [*PlotScreen.BINDINGS, *ChartView.BINDINGS]),
            ("flame graph", FlameView.BINDINGS),
            ("heap map", HeapView.BINDINGS),
            ("run", RunScreen.BINDINGS),
            ("fuzz (palette: fuzz: start)", FuzzScreen.BINDINGS),
            ("job matrix", [*MatrixScreen.BINDINGS, *EntryList.BINDINGS,
                            Binding("tab", "", "Matrix: next field; on the tab bar left/right switch tabs")]),
            ("postprocess", PostprocessScreen.BINDINGS),
            ("checks", CheckScreen.BINDINGS),
            ("compare", CompareScreen.BINDINGS),
            ("confirm", ConfirmScreen.BINDINGS),
        ]
