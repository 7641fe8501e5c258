"""The footer: key hints that are shown whole or not at all.

Textual's footer lays the hints out in one row and the terminal's edge cuts
the last one in the middle ("e Mat").  This one measures the hints after
every rebuild and resize and hides, from the first that would not fit on,
every hint that would end under the command palette key or past the edge;
a hint hidden so is still in F1's list.
"""

from __future__ import annotations

from textual import events
from textual.widget import Widget
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

__all__ = ["Footer"]


class Footer(TextualFooter):
    """A footer whose key hints never show cut."""

    def on_mount(self) -> None:
        super().on_mount()
        self.call_after_refresh(self.fit_keys)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.fit_keys)

    async def recompose(self) -> None:
        # Textual rebuilds the footer on every bindings update, and a focus change sends several: each
        # rebuild mounts and styles a dozen widgets (a tab between panes cost 0.3-0.5 s of CPU, most of it
        # here).  Nothing to rebuild when the hints it would show are the ones it shows.
        shown = self._hints_key()
        if shown == getattr(self, "_shown_hints", None) and self.children:
            return
        self._shown_hints = shown
        await super().recompose()
        self.fit_keys()
        self.call_after_refresh(self.fit_keys)

    def _hints_key(self) -> tuple:
        """What the hints are made of: every shown binding with its state, the palette key, the compact style."""
        if not self._bindings_ready or not self.is_attached:
            return ()
        bindings = tuple((binding.key, binding.action, binding.description, binding.show, id(binding.group),
                          enabled, tooltip) for _node, binding, enabled, tooltip in self.screen.active_bindings.values())
        return bindings, self.compact, self.show_command_palette

    def fit_keys(self) -> None:
        """Hide the hints from the first one that does not fit whole on.

        A group of keys ("s b w f m View") is one hint: its keys and the
        label after them are shown or hidden together.
        """
        if not self.is_attached:
            return
        hints: list[list[Widget]] = []
        palette: list[Widget] = []
        for child in self.children:
            if isinstance(child, FooterKey) and child.has_class("-command-palette"):
                palette.append(child)
            elif isinstance(child, FooterLabel) and hints and isinstance(hints[-1][0], KeyGroup):
                hints[-1].append(child)
            else:
                hints.append([child])
        room = self.size.width - sum(_width(key) for key in palette)
        used = 0
        fits = True
        for hint in hints:
            used += sum(_width(part) for part in hint)
            fits = fits and used <= room
            for part in hint:
                if part.display != fits:
                    part.display = fits


def _width(widget: Widget) -> int:
    """Cells a footer part takes: as laid out when it is on screen, else its text (a group: its keys),
    padding, border and margins."""
    if widget.display and widget.outer_size.width:
        return widget.outer_size.width
    if isinstance(widget, KeyGroup):
        inner = sum(_width(key) for key in widget.query(FooterKey))
    else:
        text = widget.render()
        inner = getattr(text, "cell_len", None) or getattr(text, "cell_length", 0)
    styles = widget.styles
    return inner + styles.gutter.width + styles.margin.width
