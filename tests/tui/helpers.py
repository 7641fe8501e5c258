"""Helpers shared by the TUI tests."""

from __future__ import annotations

from textual.message import Message
from textual.notifications import Notify

from perun_tui.app import MainScreen


async def settle(pilot) -> None:
    """Wait until every worker finished and the messages they sent were handled."""
    app = pilot.app
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


def rendered_text(widget) -> str:
    """What ``widget`` shows on screen now, as plain lines."""
    from textual.geometry import Region

    width, height = widget.size
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, width, height)))


def main_screen(app) -> MainScreen:
    for screen in app.screen_stack:
        if isinstance(screen, MainScreen):
            return screen
    raise AssertionError("no main screen")


class Recorder:
    """A ``message_hook`` that keeps every message, for asserting on what the app said."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def __call__(self, message: Message) -> None:
        self.messages.append(message)

    def of(self, kind: type) -> list:
        return [m for m in self.messages if isinstance(m, kind)]

    def notes(self, severity: str | None = None) -> list[str]:
        return [m.notification.message for m in self.of(Notify)
                if severity is None or m.notification.severity == severity]
