"""The porcelain of views: build a view of a profile and render it to text, a picture or a file.

``perun-core show PROFILE VIEW`` calls :func:`show`; the TUI, which draws
pictures of its own size, calls its two steps, :func:`build_view` and
:func:`render_view`, and draws the interactive flame graph and heap map
from the same layouts the text views use (:func:`layout_flame`,
:func:`layout_heap`).  A view's declaration (parameters, formats, help) is
:func:`view` (:class:`perun_core.views.View`).  Nothing here prints;
:func:`write_output` writes a file the user asked for.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..analysis.filtering import filter_profile
from ..atomic import write_user_file
from ..errors import UnsupportedProfile
from ..profile.codec import to_json_bytes
from ..profile.query import as_profile
from ..safetext import escape_output
from ..views import VIEWS, get_view
from ..views.base import HTML_SUFFIXES, PLAIN_SUFFIXES, Figure
from ..views.fits import traits_of
from ..views.flamegraph import FlameLayout, Span, block_colour, block_label, layout_flame
from ..views.heapmap import HEAT_GLYPHS, HeapLayout, allocations_in, heat_glyph, heat_legend, layout_heap, site_glyph
from ..views.style import DEFAULT_THEME, Theme, fit_middle, strip_ansi
from .profiles import load_profile

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile
    from ..storage.repository import PerunRepository
    from ..views.base import View

__all__ = ["share_y_scale", "y_extent", "DEFAULT_THEME", "HEAT_GLYPHS", "HTML_SUFFIXES", "PLAIN_SUFFIXES", "FlameLayout", "HeapLayout", "Shown", "Span", "Theme",
           "allocations_in", "block_colour", "block_label", "build_view", "heat_glyph", "heat_legend", "layout_flame", "layout_heap", "one_plot",
           "only_types", "profile_json", "render_view", "show", "site_glyph", "view", "view_names", "write_output",
           "ViewFit", "view_fits", "fitting_views", "fit_middle"]


def view(name: str) -> View:
    """The declaration of view ``name``; raises UnknownUnit listing the known views."""

    return get_view(name)


def view_names() -> list[str]:
    """Every registered view, in the order ``show --help`` lists them."""

    return list(VIEWS)


def build_view(profile: Any, name: str, params: dict[str, Any] | None = None) -> Any:
    """What view ``name`` builds from ``profile`` (a Figure, Table, FlameGraph or HeapMapResult).

    Raises InvalidParameter (a bad value) and IncomparableProfiles-like view
    errors (a profile the view cannot show).
    """
    return view(name).run(profile, params or {})


def render_view(name: str, model: Any, *, fmt: str | None = None, width: int = 80, height: int = 24,
                theme: Theme | None = None, pixels: int | None = None) -> str:
    """``model`` of view ``name`` as text (ANSI coloured with ``theme``) or as the file format ``fmt``."""
    return view(name).render(model, fmt=fmt, width=width, height=height, theme=theme, pixels=pixels)


def one_plot(figure: Figure, index: int) -> Figure:
    """A figure holding only plot ``index`` of ``figure`` (scatter of one uid at a time)."""

    return Figure([figure.plots[index]])


def y_extent(plot: Any) -> tuple[float, float] | None:
    """The (low, high) a plot's y axis needs for its data (bars: from 0, stacks summed); None when it has none."""
    import numpy as np

    if plot.kind == "bars":
        if not plot.series:
            return None
        matrix = np.nan_to_num(np.array([np.asarray(s.y, dtype=np.float64).reshape(-1) for s in plot.series]))
        if not matrix.size:
            return None
        if plot.stacked:
            high, low = float(matrix.clip(min=0).sum(axis=0).max()), float(matrix.clip(max=0).sum(axis=0).min())
        else:
            high, low = float(matrix.max()), float(matrix.min())
        return min(low, 0.0), max(high, 0.0)
    values = [np.asarray(s.y, dtype=np.float64).reshape(-1) for s in [*plot.series, *plot.curves]]
    finite = np.concatenate([v[np.isfinite(v)] for v in values]) if values else np.array([])
    if not finite.size:
        return None
    return float(finite.min()), float(finite.max())


def share_y_scale(*figures: Figure) -> list[Figure]:
    """The figures with one y scale for the plots at the same position, so that charts drawn side by side compare.

    Plot ``i`` of every figure gets the y range that holds the data of all
    of them (when they are of the same kind); the figures given are not
    changed.
    """
    from dataclasses import replace

    count = max((len(figure.plots) for figure in figures), default=0)
    limits: list[tuple[float, float] | None] = []
    for index in range(count):
        plots = [figure.plots[index] for figure in figures if index < len(figure.plots)]
        extents = [extent for extent in map(y_extent, plots) if extent is not None]
        if not extents or len({plot.kind for plot in plots}) != 1:
            limits.append(None)
            continue
        low, high = min(e[0] for e in extents), max(e[1] for e in extents)
        if low == high:
            margin = abs(low) * 0.05 or 0.5
            low, high = low - margin, high + margin
        limits.append((low, high))
    return [Figure([replace(plot, ylim=limits[index]) if limits[index] else plot
                    for index, plot in enumerate(figure.plots)]) for figure in figures]


def only_types(profile: Any, types: list[str]) -> Any:
    """``profile`` with only the resources of these types (a new profile; the given one is unchanged)."""

    return filter_profile(profile, uids=None, types=types, subtypes=None, conditions=[], mode="keep")


@dataclass(frozen=True, slots=True)
class Shown:
    """What :func:`show` made: the text (or file content) and, when written, the file."""

    view: str
    source: str
    fmt: str
    text: str
    path: Path | None = None


def type_defaults(view_name: str, profile_type: str) -> dict[str, Any]:
    """The parameters a view takes by default for a profile of ``profile_type``, in every front end.

    Time profiles take the views' own defaults (the mean of the runs per
    kind of time, through the runs); for mixed profiles the functions
    (uids) are the groups, for the others the subtypes of every snapshot.
    A bars view of a mixed profile with the view's own defaults was one bar
    of everything summed ('sum of amount per snapshots'), while the TUI
    drew one per function.
    """
    if profile_type == "time":
        return {}
    if view_name == "bars":
        return {"mixed": {"func": "sum", "per": "uid"}}.get(profile_type, {"func": "sum", "per": "snapshots",
                                                                          "by": "subtype"})
    if view_name == "flow":
        return {"mixed": {"func": "mean", "through": "structure-unit-size", "by": "uid"}}.get(
            profile_type, {"func": "sum", "through": "snapshots", "by": "subtype"})
    return {}


def show(
    spec: str,
    name: str,
    params: dict[str, Any] | None = None,
    *,
    minor: str | None = None,
    fmt: str | None = None,
    filename: str | None = None,
    width: int = 80,
    height: int = 24,
    pixels: int | None = None,
    colour: bool = False,
    html_page: Callable[[str, str], str] | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> Shown:
    """Look profile ``spec`` up, build view ``name`` with ``params`` and render it.

    ``params`` left at None or ``()`` are the view's defaults.  The format is
    ``fmt``, else the one ``filename``'s suffix names, else the view's first;
    a suffix the view cannot write is refused before any profile is read.
    Terminal text is coloured when ``colour`` is set (always, for an
    ``.html`` file: a standalone page made by ``html_page(text, title)``,
    which a front end with a terminal library provides; without it the page
    holds the text uncoloured).  With ``filename`` the output is written
    there (atomically, with the permissions the umask allows).
    Raises ProfileNotFound, InvalidProfile, InvalidParameter, UnknownUnit.
    """

    declared = view(name)
    chosen = declared.format_for(fmt, filename)
    loaded = load_profile(spec, minor=minor, repo=repo, cwd=cwd)
    fits = {fit.name: fit for fit in view_fits(loaded.profile)}
    # a view that cannot show the profile says why and names those that can (an empty profile gets the
    # view's own message, which says what the view needs)
    if name in fits and not fits[name].fits and loaded.profile.resource_count():
        wrong_type = bool(declared.profile_types) and loaded.profile.type not in declared.profile_types
        raise UnsupportedProfile(name, loaded.profile.type, declared.profile_types,
                                 "" if wrong_type else fits[name].reason,
                                 fitting=[other for other, fit in fits.items() if fit.fits])
    given = {**type_defaults(name, loaded.profile.type),
             **{key: value for key, value in (params or {}).items() if value is not None and value != ()}}
    model = declared.run(loaded.profile, given)
    to_html = bool(filename) and str(filename).lower().endswith(HTML_SUFFIXES)
    coloured = chosen in declared.textual and (to_html if filename else colour)
    text = declared.render(model, fmt=chosen, width=width, height=height,
                           theme=DEFAULT_THEME if coloured else None, pixels=pixels)
    text = escape_output(text, keep_colour=coloured)
    if not filename:
        return Shown(name, loaded.source, chosen, text)
    if to_html:
        text = (html_page or _plain_page)(text, f"{name}: {loaded.source}")
    write_output(filename, (text + "\n").encode("utf-8"))
    return Shown(name, loaded.source, chosen, text, Path(filename))


def profile_json(profile: Any, *, indent: int | None = 2) -> bytes:
    """``profile`` in the documented JSON form (what ``show raw`` prints)."""

    return to_json_bytes(profile, indent=indent)


def write_output(filename: str | Path, data: bytes) -> None:
    """Write a file the user asked for (``show ... -f FILE``): atomically, with the permissions the umask allows.

    Refused before anything is written when its directory is missing or not
    writable (:func:`perun_core.atomic.write_user_file`).
    """

    write_user_file(filename, data)


def _plain_page(ansi_text: str, title: str) -> str:
    """Terminal text as a standalone HTML page without its colours (when no ``html_page`` was given)."""

    title, body = html.escape(title, quote=False), html.escape(strip_ansi(ansi_text), quote=False)
    return (f"<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"UTF-8\">\n<title>{title}</title>\n"
            f"</head>\n<body>\n<pre><code>{body}</code></pre>\n</body>\n</html>\n")


@dataclass(frozen=True, slots=True)
class ViewFit:
    """One registered view and whether it can show a profile; ``reason`` says why not ("" when it can)."""

    name: str
    summary: str
    fits: bool
    reason: str = ""


def view_fits(
    profile: Profile | dict | str,
    *,
    minor: str | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> list[ViewFit]:
    """Every registered view, in the order ``show`` lists them, with whether it fits ``profile``.

    ``profile`` is a loaded profile (or its JSON dict) or a spec that
    :func:`perun_core.api.load_profile` looks up (``0@i``, a name, a path).
    """
    # lazy: 'view_names' is bound to something else at module level
    from ..views import get_view, view_names

    if isinstance(profile, str):
        loaded = load_profile(profile, minor=minor, repo=repo, cwd=cwd).profile
    else:
        loaded = as_profile(profile)
    traits = traits_of(loaded)
    out = []
    for name in view_names():
        view = get_view(name)
        reason = view.fit(loaded, traits)
        out.append(ViewFit(name, view.summary, reason is None, reason or ""))
    return out


def fitting_views(profile: Profile | dict) -> list[str]:
    """The names of the views that can show ``profile``."""
    return [fit.name for fit in view_fits(profile) if fit.fits]
