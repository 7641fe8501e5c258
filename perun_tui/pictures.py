"""The colours and the cache of the plot pane's pictures.

Charts (scatter, bars, flow) are drawn by perun_core's plotting adapter
and arrive as ANSI text; the flame graph and the heap map are drawn by the
widgets from the layouts of perun_core's views
(:func:`perun_core.api.layout_flame`, :func:`perun_core.api.layout_heap`),
in thread workers, and kept in a :class:`PictureCache` by size and theme.

:func:`plot_theme` turns the app's theme into the RGB colours the views
take; under NO_COLOR and in the low-bandwidth mode it is None, and every
picture tells its series and levels apart by glyphs alone.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from textual.color import Color

from .core import Core

if TYPE_CHECKING:
    from textual.app import App

RGB = tuple[int, int, int]


# -- colours --------------------------------------------------------------------------

def _rgb(color: Color) -> RGB:
    return (color.r, color.g, color.b)


def _readable(color: Color, background: Color, foreground: Color) -> Color:
    """``color`` moved towards the text colour until it stands out from ``background``."""
    for step in range(5):
        if abs(color.brightness - background.brightness) >= 0.25:
            break
        color = color.blend(foreground, 0.25 + 0.1 * step)
    return color


def plain_pictures(app: App) -> bool:
    """Whether pictures go without colour: under NO_COLOR, and in the low-bandwidth mode (fewer escapes)."""
    return bool(app.no_color or getattr(app, "low_bandwidth", False))


def theme_key(app: App) -> str:
    """What a picture's colours depend on: the theme's name, or "plain" without colour."""
    return "plain" if plain_pictures(app) else app.theme


def plot_theme(app: App) -> Any:
    """The views' Theme made of the app theme's colours (None for :func:`plain_pictures`)."""
    if plain_pictures(app):
        return None
    variables = app.get_css_variables()

    def parse(name: str, fallback: str) -> Color:
        try:
            return Color.parse(variables.get(name, fallback))
        except Exception:  # noqa: BLE001 - a theme variable that is no colour ("auto 87%")
            return Color.parse(fallback)

    background = parse("surface", "#1e1e1e")
    foreground = parse("foreground", "#e0e0e0")
    series: list[RGB] = []
    for name in ("primary", "accent", "success", "error", "secondary", "warning"):
        rgb = _rgb(_readable(parse(name, "#888888"), background, foreground))
        if rgb not in series:
            series.append(rgb)
    cold, warm, hot = parse("primary", "#0178d4"), parse("warning", "#fea62b"), parse("error", "#b93c5b")
    heat = tuple(_rgb(cold.blend(warm, i / 4)) for i in range(4)) + tuple(_rgb(warm.blend(hot, i / 4))
                                                                          for i in range(5))
    muted = foreground.blend(background, 0.45)

    # labels on coloured blocks (flame frames, heap sites) are black: the blocks are light enough
    return Core.theme(tuple(series), heat, _rgb(foreground), _rgb(muted), _rgb(background), (0, 0, 0))


# -- a small cache ------------------------------------------------------------------------

class PictureCache:
    """The last ``size`` pictures by key (profile, view, state, width, height, theme)."""

    def __init__(self, size: int = 48) -> None:
        self.size = size
        self._items: OrderedDict[tuple, Any] = OrderedDict()

    def get(self, key: tuple) -> Any:
        item = self._items.get(key)
        if item is not None:
            self._items.move_to_end(key)
        return item

    def put(self, key: tuple, value: Any) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)
