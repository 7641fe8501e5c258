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

Each view declares which profiles it can show (``fits``, see
:mod:`perun_core.views.fits`); :func:`perun_core.api.view_fits` asks them all.
``raw`` is not here: it is the profile's JSON, printed by the CLI itself.
The views live in :data:`views`, a :class:`~perun_core.registry.Registry`
that imports each built-in view the first time it is named.  Other packages
may add views with :func:`register_view` or through the entry-point group
``perun.views`` (naming a :class:`View`).  Importing this package loads no
numpy or plotext; the views import them when they run.

Typical use::

    view = get_view("bars")
    result = view.run(profile, {"func": "sum", "per": "subtype"})
    text = view.render(result, width=80, height=20, theme=None)
"""

from __future__ import annotations

from ..errors import UnitError, UnknownUnit
from ..registry import Registry
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
    "ENTRY_POINT_GROUP",
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
    "views",
]

ENTRY_POINT_GROUP = "perun.views"

#: name -> view, in the order ``show --help`` lists them.
views: Registry[View] = Registry("view", "build", builtins={
    name: f"perun_core.views.{name}:VIEW" for name in ("tableof", "bars", "flow", "scatter", "flamegraph", "heapmap")
}, group=ENTRY_POINT_GROUP, sort=False)
#: the registry under its former name
VIEWS = views


def register_view(view: View, *, replace: bool = False) -> None:
    """Add ``view`` to the registry; a name already taken needs ``replace`` (ValueError otherwise)."""
    try:
        views.register(view, replace=replace)
    except UnitError as exc:
        raise ValueError(exc.message) from None


def get_view(name: str) -> View:
    """The view called ``name``; raises :class:`~perun_core.errors.UnknownUnit` listing the known ones."""
    try:
        return views.get(name)
    except UnknownUnit:
        raise UnknownUnit("view", name, ["raw", *views.names()]) from None


def view_names() -> list[str]:
    return views.names()
