"""Command palette (ctrl+p) commands, named "noun: verb".

The commands come from the screen the palette was opened on: a screen that
has a ``palette_commands()`` method lists its own, so the palette offers only
what makes sense where the user is.  Textual's own commands (Keys, Theme,
Maximize, Screenshot, Quit) stay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.content import Content
from textual.command import DiscoveryHit, Hit, Hits, Provider

#: how the name of an unavailable command is drawn
UNAVAILABLE_STYLE = "dim strike"


@dataclass(frozen=True, slots=True)
class PaletteCommand:
    """One palette entry; ``unavailable`` says why it cannot do its work here (it is then greyed out).

    An unavailable command still runs when chosen: its action explains
    itself instead of failing.
    """

    name: str
    help: str
    run: Callable[[], object]
    unavailable: str = ""

    @property
    def help_text(self) -> str:
        return f"not here: {self.unavailable}" if self.unavailable else self.help


class ScreenCommands(Provider):
    """Commands of the current screen.

    A screen with an async ``palette_prepare()`` gets to find out first what
    its commands need (which views fit the selected profile, say).
    """

    async def startup(self) -> None:
        prepare = getattr(self.screen, "palette_prepare", None)
        if callable(prepare):
            await prepare()

    def _commands(self) -> list[PaletteCommand]:
        commands = getattr(self.screen, "palette_commands", None)
        return list(commands()) if callable(commands) else []

    async def discover(self) -> Hits:
        for command in self._commands():
            name = Content.styled(command.name, UNAVAILABLE_STYLE) if command.unavailable else command.name
            yield DiscoveryHit(name, command.run, text=command.name, help=command.help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.name)
            if score > 0:
                shown = matcher.highlight(command.name)
                if command.unavailable:
                    shown = shown.stylize(UNAVAILABLE_STYLE)
                    score /= 2  # below the commands that can run
                yield Hit(score, shown, command.run, text=command.name, help=command.help_text)
