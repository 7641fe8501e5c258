"""The main screen: the history on top, the profiles of the selected commit (and the commit) below.

::

    ╭ History ───────────────────────────────────╮   commits, newest first
    │ commit  date       author    a m x t subject│
    ╰────────────────────────────────────────────╯
    ╭ Profiles at abc1234 ──────╮╭ Commit ───────╮   the commit pane shows only
    │ tag type collector ...    ││ author, date  │   from 100 columns on; from
    ╰───────────────────────────╯╰───────────────╯   120 it stands beside the
     h HEAD  / Search  R Run  e Matrix  q Quit  f1 Help   history, so that the
                                                      profiles get every column

From here, full screens: the plots of a profile (``p``, :mod:`.plot`), a
run of the job matrix (``R``, :mod:`.run`), the job-matrix editor (``e``,
:mod:`.matrix`), the degradation checks (``c``, :mod:`.check`), and the
postprocess form (``o``, :mod:`perun_tui.modals.postprocess`).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Iterator

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Header
from textual.worker import Worker, get_current_worker

from perun_core.api import ProfileInfo
from perun_core.errors import PerunError

from ..commands import PaletteCommand, ScreenCommands
from ..messages import (
    CommitHighlighted,
    DiffRequested,
    EntryRefreshed,
    HistoryChunk,
    HistoryDone,
    ProfileAction,
    ProfileLink,
    ProfilesChanged,
    StatusLoaded,
)
from ..modals.details import ProfileDetailsScreen
from ..modals.dialogs import ConfirmScreen
from ..widgets.commit import CommitPane
from ..widgets.demoprogress import DemoProgress
from ..widgets.firstuse import FirstUse
from ..widgets.history import HistoryPane, HistoryView
from ..widgets.profiles import ProfilesPane, ProfilesTable
from ..widgets.footer import Footer


#: below this many columns the screen gets the ``narrow`` class
NARROW_BELOW = 100
#: from this many columns on the commit pane stands beside the history: the profiles' columns (cmd, args,
#: origin) need the whole width more than the history's subjects need its last 38 columns
COMMIT_BESIDE_HISTORY_FROM = 120


class MainScreen(Screen[None]):
    """History on top; profiles of the selected commit (and the commit itself) below."""

    COMMANDS = {ScreenCommands}
    AUTO_FOCUS = "HistoryView"
    BINDINGS = [
        Binding("R", "run", "Run", tooltip="Run the job matrix for the marked commits (space marks), else for HEAD",
                id="main.run"),
        Binding("e", "edit_matrix", "Matrix", tooltip="Edit the job matrix of .perun/local.yml", id="main.matrix"),
        Binding("c", "check", "Check", show=False, tooltip="Degradation checks: head, all, two profiles",
                id="main.check"),
        Binding("r", "reload", "Reload", show=False, tooltip="Read history and pending profiles again",
                id="main.reload"),
        # also from the profiles pane: both move the focus to the history first
        Binding("slash", "search", "Search", show=False, key_display="/", id="main.search"),
        Binding("h", "jump_head", "HEAD", show=False, id="main.head"),
        Binding("1", "focus_pane('history')", "Focus history", show=False, id="main.focus_history"),
        Binding("2", "focus_pane('profiles')", "Focus profiles", show=False, id="main.focus_profiles"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.report = None
        self._generation = 0
        self._restore: str | None = None  # the commit to select again after a reload
        self._want_profile: str | None = None  # a profile to select once it is listed (after a run)
        self._want_details = False  # and to open its details once selected (enter on a run's job)
        #: set once the first chunk of a walk is on screen; the walk waits for it before going on
        self._first_chunk_shown = threading.Event()
        #: profile key -> {view: why it cannot show the profile}, found when the palette opens
        self._unfit: dict[str, dict[str, str]] = {}
        #: one move of the commit pane at a time (resizes come faster than a remove and a mount)
        self._moving_commit_pane = asyncio.Lock()

    def compose(self) -> ComposeResult:
        yield Header(icon="≡")
        beside = self.app.size.width >= COMMIT_BESIDE_HISTORY_FROM
        with Horizontal(id="upper"):
            yield HistoryPane(id="history-pane", classes="pane")
            if beside:
                yield CommitPane(id="commit-pane", classes="pane")
        with Horizontal(id="lower"):
            yield ProfilesPane(id="profiles-pane", classes="pane")
            if not beside:
                yield CommitPane(id="commit-pane", classes="pane")
        build = getattr(self.app, "demo_build", None)
        if build is not None and build.running:
            yield DemoProgress(build, id="demo-progress")
        yield Footer()

    @property
    def history(self) -> HistoryView:
        return self.query_one(HistoryView)

    @property
    def profiles(self) -> ProfilesTable:
        return self.query_one(ProfilesTable)

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < NARROW_BELOW, "narrow")
        self.action_reload()

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_BELOW, "narrow")
        self.call_later(self._place_commit_pane)  # after this resize is handled everywhere

    async def _place_commit_pane(self) -> None:
        """The commit pane beside the history from 120 columns on, beside the profiles under that."""
        async with self._moving_commit_pane:
            # the width now, not the resize's: a later resize may have come while another move ran
            row = "upper" if self.app.size.width >= COMMIT_BESIDE_HISTORY_FROM else "lower"
            panes = self.query(CommitPane)
            if not panes:
                return  # not composed yet, or the app is closing
            pane = panes.first(CommitPane)
            if pane.parent is None or pane.parent.id == row:
                return
            await pane.remove()  # a widget cannot change its parent: the pane is made again in the other row
            moved = CommitPane(id="commit-pane", classes="pane")
            entry = self.history.current
            moved.show(entry, is_head=self._is_head(entry.version.checksum if entry else None))  # shown on mount
            await self.query_one(f"#{row}", Horizontal).mount(moved)

    # -- loading -----------------------------------------------------------------------
    def action_reload(self) -> None:
        self._generation += 1
        current = self.history.current
        self._restore = current.version.checksum if current else None
        self.history.clear()
        self.query_one(HistoryPane).border_subtitle = "loading…"
        self._first_chunk_shown.clear()
        self.load_history(self._generation)
        self.load_status()

    @work(thread=True, exclusive=True, exit_on_error=False, group="history", description="walking the history")
    def load_history(self, generation: int) -> None:
        worker = get_current_worker()
        count = 0
        try:
            for batch in self.app.core.history():
                if worker.is_cancelled:
                    return
                first = count == 0
                count += len(batch)
                self.post_message(HistoryChunk(batch, generation))
                if first:
                    # walking on would compete with drawing the first rows for the interpreter:
                    # let them reach the screen first (a long history takes a second to walk)
                    self._first_chunk_shown.wait(0.5)
        except PerunError as error:
            self.app.call_from_thread(self.app.report_error, error)
        self.post_message(HistoryDone(count, generation))

    @work(thread=True, exclusive=True, exit_on_error=False, group="status", description="reading the status")
    def load_status(self) -> None:
        try:
            report = self.app.core.status()
        except PerunError as error:
            self.app.call_from_thread(self.app.report_error, error)
            return
        self.post_message(StatusLoaded(report))

    @work(thread=True, exclusive=True, exit_on_error=False, group="refresh", description="re-reading commits")
    def refresh_entries(self, minors: list[str]) -> None:
        for minor in minors:
            try:
                entry = self.app.core.entry(minor)
            except PerunError as error:
                self.app.call_from_thread(self.app.report_error, error)
                continue
            self.post_message(EntryRefreshed(entry))

    def on_history_chunk(self, message: HistoryChunk) -> None:
        if message.generation != self._generation:
            return
        view = self.history
        first = not view.entries
        view.extend(message.entries)
        if first:
            self.call_after_refresh(self._first_chunk_shown.set)
        if self._restore is not None:
            index = view.index_of(self._restore)
            if index is not None:
                view.cursor = index
                self._restore = None
        self.query_one(HistoryPane).border_subtitle = f"loading… {len(view.entries)} commits"

    def on_history_done(self, message: HistoryDone) -> None:
        if message.generation != self._generation:
            return
        view = self.history
        view.walking = False
        count = len(view.entries)
        self.query_one(HistoryPane).border_subtitle = f"{count} commit{'s' * (count != 1)}"
        if not view.entries:
            self._show_selection()
        self._show_first_use()

    def on_status_loaded(self, message: StatusLoaded) -> None:
        self.report = message.report
        report = message.report
        dirty = " (uncommitted changes)" if report.dirty else ""
        self.query_one(HistoryPane).border_title = f"History of {report.major}{dirty}"
        if report.damaged:
            count = len(report.damaged)
            self.app.notify(f"{count} profile{'s' * (count != 1)} registered at HEAD "
                            f"{'are' if count != 1 else 'is'} damaged: {report.damaged[0].message}",
                            severity="error", timeout=10)
        self._show_selection()

    def on_demo_progress_changed(self, message: DemoProgress.Changed) -> None:
        """The demo's build went on: re-read the commits, whose profiles land one by one; at its end, everything."""
        build = message.build
        if build.running:
            self.refresh_entries([entry.version.checksum for entry in self.history.entries])
            self.load_status()  # HEAD's profiles pane lists what the status says
        elif build.error is None:
            self.query(DemoProgress).remove()
            self.app.notify(f"The demo is built ({build.elapsed():.0f} s): every profile and check is in.")
            self.action_reload()  # the pending profiles of HEAD and the checks' marks

    def on_entry_refreshed(self, message: EntryRefreshed) -> None:
        self.history.replace_entry(message.entry)

    def on_commit_highlighted(self, message: CommitHighlighted) -> None:
        self._show_selection(message.entry)

    def _is_head(self, minor: str | None) -> bool:
        return self.report is not None and minor == self.report.head.checksum

    def _show_selection(self, entry=None) -> None:
        entry = entry or self.history.current
        minor = entry.version.checksum if entry else None
        registered = list(entry.profiles) if entry else []
        if self._is_head(minor):
            registered = self.report.registered  # carries the damage found by status
        # each commit lists only its own pending profiles (HEAD's as status reported them)
        pending = list(entry.pending) if entry else []
        if self.report is not None and (entry is None or self._is_head(minor)):
            pending = list(self.report.pending)
        self.query_one(ProfilesPane).show(entry, registered, pending)
        for pane in self.query(CommitPane):  # none while a resize moves it: the moved pane shows the selection
            pane.show(entry, is_head=self._is_head(minor))
        self._show_first_use()
        if self._want_profile and self.profiles.select_source(self._want_profile):
            self._want_profile = None
            self.profiles.focus()
            info = self.profiles.current
            if self._want_details and info is not None:
                self._want_details = False
                self.post_message(ProfileAction("details", info, self.profiles.minor))

    @property
    def empty(self) -> bool:
        """True once the history and the status are read and no commit has a profile and none is pending.

        Never while the demo is built into the repository (its profiles are on their way).
        """
        view = self.history
        if self.report is None or view.walking or self.query(DemoProgress):
            return False
        return not (self.report.pending or self.report.registered or any(e.counts.total for e in view.entries))

    def _show_first_use(self) -> None:
        """On a repository without profiles, the profiles pane says how to collect the first ones."""
        pane = self.query_one(ProfilesPane)
        shown = pane.query(FirstUse)
        empty = self.empty
        pane.table.display = not empty
        if empty and not shown:
            pane.mount(FirstUse(id="first-use"), before=pane.table)
        elif not empty and shown:
            shown.remove()

    def show_profile(self, link: ProfileLink, details: bool = False) -> None:
        """Select ``link``'s commit and then, once it is listed, its profile (and open its details with ``details``)."""
        self._want_profile = link.source
        self._want_details = details
        if link.minor:
            index = self.history.index_of(link.minor)
            if index is not None:
                self.history.cursor = index
        self._show_selection()

    # -- actions on profiles ---------------------------------------------------------
    def on_profile_action(self, message: ProfileAction) -> None:
        info, minor = message.info, message.minor
        if message.action == "details":
            self.app.push_screen(ProfileDetailsScreen(info, minor))
        elif message.action == "plot":
            # lazy: keeps the TUI's first frame light
            from .plot import PlotScreen

            self.app.push_screen(PlotScreen(info, minor, message.view))
        elif message.action == "postprocess":
            def done(link: ProfileLink | None) -> None:
                if link is not None:
                    self.load_status()
                    self.show_profile(link)

            # lazy: keeps the TUI's first frame light
            from ..modals.postprocess import PostprocessScreen

            self.app.push_screen(PostprocessScreen(info, minor), done)
        elif message.action == "register":
            self.change_profiles("register", info, minor)
        elif message.action == "unlink":
            where = minor[:7] if minor else "HEAD"
            question = (f"Unlink {info.tag} from commit {where}?\n\n{info.source}\n\n"
                        "The profile object stays in the store; only its link to the commit goes.")
            self._confirm("Unlink profile", question, "Unlink", "unlink", info, minor)
        elif message.action == "delete":
            question = (f"Delete the pending profile {info.tag}?\n\n{info.source}\n\n"
                        "The file is removed from .perun/jobs; this cannot be undone.")
            self._confirm("Delete pending profile", question, "Delete", "delete", info, minor)

    def on_diff_requested(self, message: DiffRequested) -> None:
        # lazy: keeps the TUI's first frame light
        from .diff import DiffScreen

        core = self.app.core  # type: ignore[attr-defined]
        base, base_minor, target, target_minor = message.base, message.base_minor, message.target, message.target_minor
        # the toasts of the marks said to press d: pressed, they would only cover the difference
        self.app.dismiss_notes("marked ", "unmarked ")  # type: ignore[attr-defined]
        self.app.push_screen(DiffScreen(lambda: (core.load(base, base_minor), core.load(target, target_minor)),
                                        f"{base.tag} → {target.tag}"))

    def _confirm(self, title: str, question: str, verb: str, action: str, info: ProfileInfo,
                 minor: str | None) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.change_profiles(action, info, minor)

        self.app.push_screen(ConfirmScreen(title, question, verb), answered)

    @work(thread=True, exclusive=True, exit_on_error=False, group="profiles", description="changing profiles")
    def change_profiles(self, action: str, info: ProfileInfo, minor: str | None) -> None:
        core = self.app.core
        try:
            if action == "register":
                added = core.register(info)
                minors = sorted({a.minor for a in added})
                note = f"registered {info.source} at {', '.join(m[:7] for m in minors)}"
            else:
                removed = core.remove(info, minor)
                minors = sorted({r.minor for r in removed if r.minor})
                note = (f"unlinked {info.source} from {minor[:7] if minor else 'HEAD'}" if action == "unlink"
                        else f"deleted {info.source}")
        except PerunError as error:
            self.app.call_from_thread(self.app.report_error, error)
            return
        self.post_message(ProfilesChanged(minors, note))

    def on_profiles_changed(self, message: ProfilesChanged) -> None:
        if message.note:
            self.app.notify(message.note, title="profiles")
        if message.minors:
            self.refresh_entries(message.minors)
        self.load_status()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # worker state messages do not bubble: each screen that runs workers passes them on
        self.app.report_failed_worker(event)

    # -- running the job matrix -----------------------------------------------------
    def action_run(self, which: str = "auto") -> None:
        """Run the matrix for ``which``: "head", "selected" (the cursor), "marked", or "auto" (marked, else HEAD)."""
        marked = list(self.history.marked)
        if which == "auto":
            which = "marked" if marked else "head"
        if which == "marked" and not marked:
            self.app.notify("no commit is marked: space marks the commit under the cursor", severity="warning")
            return
        if which == "head":
            if self.report is None:
                self.app.notify("HEAD is not known yet; try again in a moment", severity="warning")
                return
            minors = [self.report.head.checksum]
            label = f"job matrix for HEAD {minors[0][:7]}"
        elif which == "selected":
            current = self.history.current
            if current is None:
                self.app.notify("no commit is selected", severity="warning")
                return
            minors = [current.version.checksum]
            label = f"job matrix for {minors[0][:7]}"
        else:
            minors = marked
            label = f"job matrix for {len(marked)} marked commit{'s' * (len(marked) != 1)}"
            self.history.clear_marks()

        def closed(link: ProfileLink | None) -> None:
            self.refresh_entries(minors)
            self.load_status()
            if link is not None:
                # 'Show profile' shows it: selected in a pane that may be three rows high (40x12), it went unseen
                self.show_profile(link, details=True)

        # lazy: keeps the TUI's first frame light
        from .run import RunScreen

        self.app.push_screen(RunScreen(minors, label), closed)

    def action_edit_matrix(self) -> None:
        # lazy: keeps the TUI's first frame light
        from .matrix import MatrixScreen

        self.app.push_screen(MatrixScreen())

    def action_bisect(self) -> None:
        """Bisect between the two marked commits, or the marked one and the cursor's."""
        marked = list(self.history.marked)
        current = self.history.current
        if len(marked) == 1 and current is not None and current.version.checksum != marked[0]:
            marked.append(current.version.checksum)
        if len(marked) != 2:
            self.app.notify("mark two commits with space (a good and a bad one), or one and put the cursor on "
                            "the other", severity="warning")
            return
        # lazy: keeps the TUI's first frame light
        from .bisect import BisectScreen

        self.history.clear_marks()
        self.app.push_screen(BisectScreen(marked[0], marked[1]), lambda _result: self.action_reload())

    def action_fuzz(self) -> None:
        # lazy: keeps the TUI's first frame light
        from .fuzz import FuzzScreen

        def closed(link: ProfileLink | None) -> None:
            self.load_status()
            if link is not None:
                self.show_profile(link)

        self.app.push_screen(FuzzScreen(), closed)

    def action_check(self, what: str | None = None) -> None:
        """Open the degradation pane for the selected commit (and start ``what``: head, all, profiles)."""
        current = self.history.current
        revision = current.version.checksum if current else None
        info = self.profiles.current
        profile = None
        baseline = None

        def spec(one: ProfileInfo) -> str:
            return str(one.path) if not one.registered and one.path else one.tag

        # a pair of the same type for 'check profiles' (a time profile against a mixed one cannot be checked)
        pair = self.profiles.comparable_pair(info)
        if pair is not None:
            baseline, info = spec(pair[0]), pair[1]
        if info is not None:
            profile = (spec(info), (self.profiles.minor or "") if info.registered else (revision or ""))

        def closed(stored: bool | None) -> None:
            if stored:
                self.action_reload()  # the history shows the new -/+ marks

        # lazy: keeps the TUI's first frame light
        from .check import CheckScreen

        screen = CheckScreen(revision, profile, baseline=baseline)
        self.app.push_screen(screen, closed)
        if what is not None:
            screen.call_after_refresh(screen.action_check, what)

    # -- focus and commands ------------------------------------------------------
    def action_focus_pane(self, pane: str) -> None:
        (self.history if pane == "history" else self.profiles).focus()

    def action_jump_head(self) -> None:
        self.history.focus()
        self.history.action_jump_head()

    def action_search(self) -> None:
        self.history.action_search()

    def open_plot(self, view: str | None = None) -> None:
        """Plot the profile selected in the profiles pane (``view``: scatter, bars, flow, ...)."""
        info = self.profiles.current
        if info is None:
            self.app.notify("select a profile in the profiles pane first (2 or tab moves there)",
                            severity="warning")
            return
        # lazy: keeps the TUI's first frame light
        from .plot import PlotScreen

        self.app.push_screen(PlotScreen(info, self.profiles.minor, view))

    async def palette_prepare(self) -> None:
        """Find out which views fit the selected profile, so that the palette greys out the others."""
        # lazy: keeps the TUI's first frame light
        from .plot import profile_key

        info, minor = self.profiles.current, self.profiles.minor
        if info is None or profile_key(info) in self._unfit:
            return
        core = self.app.core

        def unfit() -> dict[str, str]:
            try:
                return {fit.name: fit.reason for fit in core.view_fits(core.load(info, minor).profile) if not fit.fits}
            except PerunError:
                return {}  # the plot screen says what is wrong with the profile

        self._unfit[profile_key(info)] = await asyncio.to_thread(unfit)

    def palette_commands(self) -> Iterator[PaletteCommand]:
        # lazy: keeps the TUI's first frame light
        from ..widgets.plot import VIEW_PHRASES
        # lazy: keeps the TUI's first frame light
        from ..widgets.plot import VIEWS as PLOT_VIEWS
        # lazy: keeps the TUI's first frame light
        from .plot import profile_key

        table = self.profiles
        unfit = self._unfit.get(profile_key(table.current), {}) if table.current is not None else {}
        history = self.history
        yield PaletteCommand("history: jump to HEAD", "Put the history cursor on HEAD", self.action_jump_head)
        yield PaletteCommand("history: search", "Find a commit by sha, author or message", self.action_search)
        yield PaletteCommand("history: next match", "Go to the next commit matching the search",
                             history.action_next_match)
        yield PaletteCommand("history: mark commit", "Mark (or unmark) the selected commit for a run",
                             history.action_toggle_mark)
        yield PaletteCommand("history: clear marks", "Unmark every commit", history.clear_marks)
        yield PaletteCommand("history: reload", "Read the history and the pending profiles again",
                             self.action_reload)
        yield PaletteCommand("profile: details", "Show the selected profile", table.action_details)
        yield PaletteCommand("profile: plot", "Plot the selected profile", table.action_plot)
        yield PaletteCommand("profile: postprocess", "Postprocess the selected profile into a new pending one",
                             table.action_postprocess)
        yield PaletteCommand("profile: register", "Register the selected pending profile at its commit",
                             table.action_register)
        yield PaletteCommand("profile: unlink", "Unlink the selected registered profile from its commit",
                             table.action_unlink)
        yield PaletteCommand("profile: delete pending", "Delete the selected pending profile",
                             table.action_delete)
        for view, _key, label in PLOT_VIEWS:
            yield PaletteCommand(f"plot: {label}", f"Plot the selected profile as {VIEW_PHRASES[view]}",
                                 functools.partial(self.open_plot, view), unavailable=unfit.get(view, ""))
        yield PaletteCommand("run: matrix for HEAD", "Run the job matrix for HEAD",
                             functools.partial(self.action_run, "head"))
        yield PaletteCommand("run: matrix for selected commit", "Run the job matrix for the commit under the cursor",
                             functools.partial(self.action_run, "selected"))
        yield PaletteCommand("run: matrix for marked commits", "Run the job matrix for the commits marked with space",
                             functools.partial(self.action_run, "marked"))
        yield PaletteCommand("matrix: edit", "Edit the job matrix of .perun/local.yml", self.action_edit_matrix)
        yield PaletteCommand("fuzz: start", "Find inputs that make a program slow (performance fuzzing)",
                             self.action_fuzz)
        yield PaletteCommand("bisect: start", "Find the first degraded commit between the two marked commits "
                             "(or the marked one and the one under the cursor)", self.action_bisect)
        yield PaletteCommand("check: selected commit", "Check the selected commit's profiles against their baselines",
                             functools.partial(self.action_check, "head"))
        yield PaletteCommand("check: all", "Check every commit with profiles, from the selected one back",
                             functools.partial(self.action_check, "all"))
        yield PaletteCommand("check: profiles", "Check two profiles (the selected one is the target)",
                             functools.partial(self.action_check, "profiles"))
        yield PaletteCommand("check: show results", "Open the degradation pane with the stored results",
                             self.action_check)
        yield PaletteCommand("pane: focus history", "Move the focus to the history",
                             lambda: self.action_focus_pane("history"))
        yield PaletteCommand("pane: focus profiles", "Move the focus to the profiles",
                             lambda: self.action_focus_pane("profiles"))
        yield PaletteCommand("help: keys", "List every key", self.app.action_help)
