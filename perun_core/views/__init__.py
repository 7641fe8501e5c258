"""Views: what ``perun-core show PROFILE VIEW`` and the TUI draw from a profile.

An explicit registry maps each view's name to its :class:`View` (declared
parameters, accepted profile types, a builder returning a typed result and
a renderer).  Built-in views:

=============  ==================================================  ===========================
name           result                                              formats
=============  ==================================================  ===========================
``tableof``    :class:`~.tableof.Table`                            table, csv, json, markdown
``bars``       :class:`~.base.Figure` (bars)                       text
``flow``       :class:`~.base.Figure` (lines)                      text
``scatter``    :class:`~.base.Figure` (points and model curves)    text
``flamegraph`` :class:`~.flamegraph.FlameGraph`                    icicle, svg, folded, speedscope
``heapmap``    :class:`~.heapmap.HeapMapResult`                    text
=============  ==================================================  ===========================

``raw`` is not here: it is the profile's JSON, printed by the CLI itself.
Other packages may add views with :func:`register_view`.  Importing this
package loads no numpy or plotext; the views import them when they run.

Typical use::

    view = get_view("bars")
    result = view.run(profile, {"func": "sum", "per": "subtype"})
    text = view.render(result, width=80, height=20, theme=None)
"""

from __future__ import annotations

from .base import (
    AGGREGATIONS,
    Figure,
    Param,
    Plot,
    RenderOptions,
    Series,
    View,
    render_figure,
)
from .style import DEFAULT_THEME, Theme, strip_ansi

__all__ = [
    "AGGREGATIONS",
    "DEFAULT_THEME",
    "VIEWS",
    "Figure",
    "Param",
    "Plot",
    "RenderOptions",
    "Series",
    "Theme",
    "View",
    "get_view",
    "register_view",
    "render_figure",
    "strip_ansi",
    "view_names",
]

#: name -> view; filled below, in the order ``show --help`` lists them.
VIEWS: dict[str, View] = {}


def register_view(view: View, *, replace: bool = False) -> None:
    """Add ``view`` to the registry; a name already taken needs ``replace``."""
    if view.name in VIEWS and not replace:
        raise ValueError(f"a view named {view.name!r} is already registered")
    VIEWS[view.name] = view


def get_view(name: str) -> View:
    """The view called ``name``; raises :class:`~perun_core.errors.UnknownUnit` listing the known ones."""
    try:
        return VIEWS[name]
    except KeyError:
        from ..errors import UnknownUnit

        raise UnknownUnit("view", name, ["raw", *VIEWS]) from None


def view_names() -> list[str]:
    return list(VIEWS)


def _register_builtins() -> None:
    from . import bars, flamegraph, flow, heapmap, scatter, tableof

    for module in (tableof, bars, flow, scatter, flamegraph, heapmap):
        register_view(module.VIEW)


_register_builtins()
