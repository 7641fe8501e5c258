"""The footer: key hints that are shown whole or not at all.

Textual's footer lays the hints out in one row and the terminal's edge cuts
the last one in the middle ("e Mat").  This one measures the hints after
every rebuild and resize and hides, from the first that would not fit on,
every hint that would end under the command palette key or past the edge;
a hint hidden so is still in F1's list.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey

__all__ = ["Footer"]


class Footer(TextualFooter):
    """A footer whose key hints never show cut."""

    def on_mount(self) -> None:
        super().on_mount()
        self.call_after_refresh(self.fit_keys)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.fit_keys)

    async def recompose(self) -> None:
        await super().recompose()
        self.fit_keys()

    def fit_keys(self) -> None:
        """Hide the hints from the first one that does not fit whole on."""
        if not self.is_attached:
            return
        keys = [key for key in self.query(FooterKey) if not key.has_class("-command-palette")]
        palette = [key for key in self.query(FooterKey) if key.has_class("-command-palette")]
        room = self.size.width - sum(_width(key) for key in palette)
        used = 0
        fits = True
        for key in keys:
            used += _width(key)
            fits = fits and used <= room
            if key.display != fits:
                key.display = fits


def _width(key: FooterKey) -> int:
    """Cells the hint takes: its text, padding, border and margins."""
    text = key.render()
    styles = key.styles
    return text.cell_len + styles.gutter.width + styles.margin.width
