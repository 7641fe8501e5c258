"""The lines at the bottom of the main screen while the demo is built: the running phases, which commit of how many."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import Static

from perun_core.api import escape_controls

from ..demobuild import DemoBuild


def progress_text(build: DemoBuild) -> Text:
    """What the build has done: its seconds, then the last step of the phases running (or how it ended)."""
    text = Text()
    seconds = f"{build.elapsed():.0f} s"
    if build.running:
        text.append(f"Building the demo ({seconds}):", style="bold")
        text.append(" the commits get their profiles as they are measured; q stops the build")
        for step in build.running_steps():
            text.append(f"\n  {escape_controls(step)}")
    elif build.error is not None:
        reason = getattr(build.error, "message", None) or repr(build.error)
        text.append(f"Building the demo failed after {seconds}:", style="bold")
        text.append(f" {escape_controls(reason)}\nIt was removed; quit (q) and run make demo again.")
    else:
        text.append(f"The demo is built ({seconds}).", style="bold")
    return text


class DemoProgress(Static):
    """Follows a :class:`DemoBuild`; each change of it also goes up to the screen as :class:`DemoProgress.Changed`."""

    DEFAULT_CSS = """
    DemoProgress {
        height: auto;
        max-height: 4;
        padding: 0 1;
        background: $boost;
        &.-failed {
            color: $text-error;
        }
    }
    """

    @dataclass
    class Changed(Message):
        """The build made a step, got its repository ready or ended."""

        build: DemoBuild

    def __init__(self, build: DemoBuild, *, id: str | None = None) -> None:
        super().__init__(progress_text(build), id=id)
        self.build = build

    def on_mount(self) -> None:
        self.build.listen(self._from_build)
        self.set_interval(1, self._show)  # the seconds count on between steps
        self.post_message(self.Changed(self.build))  # what happened before this was listening

    def on_unmount(self) -> None:
        self.build.listen(None)

    def _from_build(self) -> None:
        """Called on the build's thread: a message to the app's."""
        try:
            self.post_message(self.Changed(self.build))
        except RuntimeError:  # the app's event loop has closed (it is ending)
            pass

    def _show(self) -> None:
        self.set_class(self.build.error is not None and not self.build.running, "-failed")
        self.update(progress_text(self.build))

    def on_demo_progress_changed(self, message: Changed) -> None:
        self._show()  # and the message goes on up to the screen
