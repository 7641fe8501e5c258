"""The base of the plot pane's widgets: a picture of a model, drawn in a worker and cached."""

from __future__ import annotations

import functools
from typing import Any

from textual import events
from textual.widget import Widget

from perun_core.errors import PerunError
from perun_core.api import escape_controls

from ...messages import PictureReady, PlotStatus
from ...pictures import plot_theme, theme_key

#: (view, key, label) in the order the view line shows them
VIEWS = (
    ("scatter", "s", "scatter"),
    ("bars", "b", "bars"),
    ("flow", "w", "flow"),
    ("flamegraph", "f", "flame graph"),
    ("heapmap", "m", "heap map"),
)
VIEW_LABELS = {name: label for name, _key, label in VIEWS}
#: how a sentence says "shown as" each view ("as bars", not "as a bars")
VIEW_PHRASES = {
    "scatter": "a scatter plot",
    "bars": "bars",
    "flow": "flow lines",
    "flamegraph": "a flame graph",
    "heapmap": "a heap map",
}


#: the smallest canvas a picture is drawn on
MIN_WIDTH, MIN_HEIGHT = 20, 5


class PictureWidget(Widget, can_focus=True):
    """A picture of a model drawn in a worker at the widget's size; the old one stays until the new is ready."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model: Any = None
        self.model_key: tuple = ()
        self.view = ""
        self.picture: Any = None
        self._wanted: tuple | None = None
        #: what stands where the picture will be: "drawing…", or why it cannot be drawn at this size
        self.waiting_text = "drawing…"

    def set_model(self, model_key: tuple, view: str, model: Any) -> None:
        if model_key == self.model_key and model is self.model:
            self.request()
            return
        self.model_key = model_key
        self.view = view
        self.model = model
        self.picture = None
        self.reset_state()
        self.request()

    # hooks of the subclasses
    def reset_state(self) -> None:
        """A new model arrived: start from its beginning."""

    def state_key(self) -> tuple:
        """What besides the size the picture depends on (hashable: it is part of the cache key)."""
        return ()

    def draw_input(self) -> Any:
        """What :meth:`draw` needs of the state, taken on the UI thread (the state key by default)."""
        return self.state_key()

    def draw(self, model: Any, state: Any, width: int, height: int, theme: Any) -> Any:
        """The picture (runs in a worker thread: use only the arguments)."""
        raise NotImplementedError

    def picture_shown(self) -> None:
        """A new picture is on screen (update the status line)."""

    @property
    def canvas_size(self) -> tuple[int, int]:
        region = self.content_region
        return region.width, region.height

    def request(self) -> None:
        """Show the picture for the current state and size: from the cache, else drawn in a worker."""
        width, height = self.canvas_size
        if self.model is None:
            return
        if width < MIN_WIDTH or height < MIN_HEIGHT:
            # 0x0: not laid out yet (just switched to, or the layout not done yet on a busy machine):
            # the first paint with room asks again (placeholder).  Else really too small: say so
            # (a resize asks again)
            self._wanted = None
            if self.picture is None:
                self.waiting_text = ("drawing…" if not width or not height
                                     else f"too small: {width}x{height}, needs at least {MIN_WIDTH}x{MIN_HEIGHT}")
                self.refresh()
            return
        self.waiting_text = "drawing…"
        state = self.state_key()
        key = (*self.model_key, *state, width, height, theme_key(self.app))
        self._wanted = key
        cached = self.app.pictures.get(key)
        if cached is not None:
            self._show(cached)
            return
        theme = plot_theme(self.app)
        work = functools.partial(self._draw_in_thread, key, self.model, self.draw_input(), width, height, theme)
        self.run_worker(work, thread=True, exclusive=True, exit_on_error=False, group=f"draw-{self.id}",
                        description=f"drawing the {VIEW_LABELS.get(self.view, self.view)}")

    def _draw_in_thread(self, key: tuple, model: Any, state: Any, width: int, height: int, theme: Any) -> None:
        try:
            picture = self.draw(model, state, width, height, theme)
        except PerunError as error:
            self.post_message(PictureReady(key, None, error.message))
            return
        self.post_message(PictureReady(key, picture))

    def on_picture_ready(self, message: PictureReady) -> None:
        message.stop()
        if message.error:
            if message.key == self._wanted:
                self.notify(message.error, title="plot", severity="error", markup=False)
            return
        self.app.pictures.put(message.key, message.picture)
        if message.key == self._wanted:
            self._show(message.picture)

    def _show(self, picture: Any) -> None:
        self.picture = picture
        self.refresh()
        self.picture_shown()

    def on_resize(self, event: events.Resize) -> None:
        self.request()

    def placeholder(self) -> str:
        """What stands where no picture is yet; painted with room it was never asked for, it asks.

        A Resize is not the only moment a widget gets its size: asked while the layout still gave
        it 0x0, it waited for a Resize that had already come.  Being painted means being laid out.
        """
        width, height = self.canvas_size
        asked = self._wanted is not None and self._wanted[-3:-1] == (width, height)
        if self.model is not None and not asked and width >= MIN_WIDTH and height >= MIN_HEIGHT:
            self.call_later(self.request)
        return self.waiting_text

    def status(self, text: str) -> None:
        self.post_message(PlotStatus(escape_controls(text)))


def style_colour(rgb: tuple[int, int, int]) -> str:
    """An RGB triple as a Rich colour."""
    return f"rgb({rgb[0]},{rgb[1]},{rgb[2]})"
