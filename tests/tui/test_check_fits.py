"""Pilot tests of what the check screen fits into its rows and columns (the status note, the columns, an empty
filter)."""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Region

from perun_core.api import in_words_of
from perun_core.check.noise import ADVICE
from perun_tui.app import PerunApp

from .helpers import open_check_screen, settle, wait_until


def outer_text(widget) -> str:
    """What ``widget`` shows, padding and all."""
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, *widget.outer_size)))


def squeezed(text: str) -> str:
    return "".join(text.split())  # wrapping breaks lines between words


async def test_the_advice_note_under_the_findings_is_readable_whole(demo_repo):
    """The note under the findings was one row cut with an ellipsis at every size ("note: measurements vary a
    lot or the machine was busy: repeat more (e: the …"), even with twenty free rows at 120x40: it wraps
    over free rows now, and the table keeps its rows at 40x12."""
    app = PerunApp(demo_repo)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_check_screen(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: not screen.running, timeout=30)
        await settle(pilot)
        note = f"note: {in_words_of(ADVICE, 'tui')}"
        screen._status(Text(note, style="yellow"))
        for size in ((120, 40), (80, 24)):
            await pilot.resize_terminal(*size)
            await settle(pilot)
            shown = outer_text(screen.query_one("#check-status"))
            assert squeezed(note) in squeezed(shown), (size, shown)
        await pilot.resize_terminal(40, 12)
        await settle(pilot)
        assert screen.query_one("#check-findings").size.height >= 2  # a row besides the header
