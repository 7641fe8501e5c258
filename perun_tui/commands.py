"""Command palette (ctrl+p) commands, named "noun: verb".

The commands come from the screen the palette was opened on: a screen that
has a ``palette_commands()`` method lists its own, so the palette offers only
what makes sense where the user is.  Textual's own commands (Keys, Theme,
Maximize, Screenshot, Quit) stay.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.command import DiscoveryHit, Hit, Hits, Provider


@dataclass(frozen=True, slots=True)
class PaletteCommand:
    name: str
    help: str
    run: Callable[[], object]


class ScreenCommands(Provider):
    """Commands of the current screen."""

    def _commands(self) -> list[PaletteCommand]:
        commands = getattr(self.screen, "palette_commands", None)
        return list(commands()) if callable(commands) else []

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(command.name, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.name)
            if score > 0:
                yield Hit(score, matcher.highlight(command.name), command.run, text=command.name, help=command.help)
