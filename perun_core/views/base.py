"""What every view is made of: declared parameters, a builder and a renderer.

A :class:`View` declares its parameters once with the one
:class:`~perun_core.params.Param`; front ends derive their options from them
(the CLI turns them into click arguments and options, the TUI builds a
form).  :meth:`View.run` checks the profile and the values
and calls the view's builder, which returns a typed result (a
:class:`Figure`, a table, a flame graph ...); :meth:`View.render` turns a
result into text for a given width, height and theme.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import EmptyProfile, InvalidParameter, ProfileError, UnsupportedProfile
from ..params import Param
from ..profile.resources import MISSING

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile
    from .style import Theme

#: Aggregation functions of bars and flow.
AGGREGATIONS = ("sum", "count", "mean", "median", "min", "max")

#: Smallest sizes a view renders at (columns, rows; pixels for pictures).
MIN_WIDTH = 20
MIN_HEIGHT = 5
MIN_PIXELS = 200
#: Largest sizes: bounded work and memory whatever the command line asks.
from ..params import MAX_HEIGHT, MAX_PIXELS, MAX_WIDTH  # noqa: E402

#: File suffixes every view writes: its terminal text, plain (.txt) or with colour as a web page (.html).
PLAIN_SUFFIXES = (".txt",)
HTML_SUFFIXES = (".html", ".htm")

#: ``--type`` value showing the resources of every type, whatever their units.
ALL_TYPES = "all"


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """How to render a result: format, size in columns and rows, and colours (``None``: plain).

    ``pixels`` is the width of a picture format (``None`` for the others).
    """

    fmt: str
    width: int
    height: int
    theme: Theme | None = None
    pixels: int | None = None


@dataclass(frozen=True)
class View:
    """A registered view: its parameters, the profiles it accepts, how it builds and renders.

    ``build(profile, **values)`` returns the view's result; ``render(result,
    options)`` returns text.  ``profile_types`` empty means any type.
    ``formats`` lists the output formats, the terminal one first;
    ``extensions`` maps file suffixes to formats for ``--filename``.
    ``textual`` lists the formats that are terminal text (rendered in
    colour on a terminal); the others are file formats.  ``pixel_formats``
    maps the formats drawn in pixels (svg) to their default width, which
    ``pixels`` in :meth:`render` overrides.  ``description`` is the help
    text for users (plain text: paragraphs, lists of lines starting with
    ``* ``).
    """

    name: str
    summary: str
    params: tuple[Param, ...]
    build: Callable[..., Any]
    render_result: Callable[[Any, RenderOptions], str]
    profile_types: tuple[str, ...] = ()
    formats: tuple[str, ...] = ("text",)
    textual: tuple[str, ...] = ("text",)
    extensions: Mapping[str, str] = field(default_factory=dict)
    pixel_formats: Mapping[str, int] = field(default_factory=dict)
    #: whether a profile without resources may be shown (the view checks itself)
    allows_empty: bool = False
    description: str = ""
    #: which profiles the view can show: a function of :class:`~.fits.ProfileTraits` giving None when it
    #: fits, else the reason it does not (see :mod:`perun_core.views.fits`); None accepts every profile
    fits: Callable[[Any], str | None] | None = None

    def fit(self, profile: Profile, traits: Any = None) -> str | None:
        """None when the view can show ``profile``, else why not (a clause: "it has no ...")."""
        # lazy: keeps `perun-core status` light
        from .fits import traits_of

        if self.profile_types and profile.type not in self.profile_types:
            return f"it is a {profile.type or 'untyped'} profile, not {' or '.join(self.profile_types)}"
        if self.fits is None:
            return None
        return self.fits(traits if traits is not None else traits_of(profile))

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(name)

    def bind(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Every parameter's value: given ones checked and converted, the rest defaulted."""
        known = {p.name for p in self.params}
        unknown = sorted(set(values) - known)
        if unknown:
            raise InvalidParameter(self.name, unknown[0], values[unknown[0]], f"one of the parameters {', '.join(sorted(known))}")
        return {p.name: self._value(p, values.get(p.name)) for p in self.params}

    def _value(self, param: Param, value: Any) -> Any:
        """One parameter's value: converted by its declaration; lists as tuples, () when not given."""
        if value is None or (param.kind == "list" and not value):
            if param.required:
                raise InvalidParameter(self.name, param.name, None, "a value (it is required)")
            return () if param.kind == "list" else param.default
        if param.kind == "list" and isinstance(value, str):
            value = (value,)  # one item: a KEY=VALUE filter may hold commas
        converted = param.convert(value, self.name)
        return tuple(converted) if param.kind == "list" else converted

    def check_profile(self, profile: Profile) -> None:
        """Raise :class:`UnsupportedProfile` or :class:`EmptyProfile` when the view cannot show ``profile``."""
        if self.profile_types and profile.type not in self.profile_types:
            raise UnsupportedProfile(self.name, profile.type, self.profile_types)
        if not self.allows_empty and profile.resource_count() == 0:
            raise EmptyProfile(self.name)

    def run(self, profile: Profile | dict, values: Mapping[str, Any] | None = None) -> Any:
        """Check ``profile`` and ``values``, then build the view's result."""
        # lazy: keeps `perun-core status` light
        from ..profile.query import as_profile

        prof = as_profile(profile)
        self.check_profile(prof)
        return self.build(prof, **self.bind(values or {}))

    def suffixes(self) -> list[str]:
        """The file suffixes ``--filename`` may end in: .txt, .html and the view's own."""
        return list(dict.fromkeys([*PLAIN_SUFFIXES, *HTML_SUFFIXES, *self.extensions]))

    def format_for(self, fmt: str | None, filename: str | None = None) -> str:
        """The output format: ``fmt`` if given, else the one ``filename``'s suffix implies, else the first.

        A suffix that is none of :meth:`suffixes` raises
        :class:`InvalidParameter` (a bars plot in ``b.svg`` would be terminal
        text under a picture's name); a name without a suffix gets the
        terminal text.
        """
        if fmt:
            if fmt not in self.formats:
                raise InvalidParameter(self.name, "format", fmt, f"one of {', '.join(self.formats)}")
            return fmt
        if filename:
            from pathlib import PurePath

            lowered = filename.lower()
            for suffix in sorted(self.extensions, key=len, reverse=True):
                if lowered.endswith(suffix):
                    return self.extensions[suffix]
            if PurePath(lowered).suffix not in ("", *PLAIN_SUFFIXES, *HTML_SUFFIXES):
                raise InvalidParameter(self.name, "filename", filename,
                                       f"a file name ending in one of {', '.join(self.suffixes())}")
        return self.formats[0]

    def render(self, result: Any, *, fmt: str | None = None, width: int = 80, height: int = 24,
               theme: Theme | None = None, pixels: int | None = None) -> str:
        """``result`` as text in format ``fmt`` (default: the terminal one).

        ``theme`` only colours terminal formats; ``None`` gives plain text.
        ``pixels`` is the width of a format drawn in pixels (see
        ``pixel_formats``); the others ignore it.
        """
        chosen = self.format_for(fmt)
        if chosen in self.pixel_formats and type(width) is int and width > MAX_WIDTH:
            width = MAX_WIDTH  # a picture's width is in pixels (checked below); columns do not matter to it
        if type(width) is not int or not MIN_WIDTH <= width <= MAX_WIDTH:
            raise InvalidParameter(self.name, "width", width, f"an integer from {MIN_WIDTH} to {MAX_WIDTH}")
        if type(height) is not int or not MIN_HEIGHT <= height <= MAX_HEIGHT:
            raise InvalidParameter(self.name, "height", height, f"an integer from {MIN_HEIGHT} to {MAX_HEIGHT}")
        if chosen not in self.textual:
            theme = None
        if chosen in self.pixel_formats:
            pixels = self.pixel_formats[chosen] if pixels is None else pixels
            if type(pixels) is not int or not MIN_PIXELS <= pixels <= MAX_PIXELS:
                raise InvalidParameter(self.name, "width", pixels, f"a width from {MIN_PIXELS} to {MAX_PIXELS} pixels")
        else:
            pixels = None
        if isinstance(result, Figure):
            _refuse_undrawable(self.name, result)
        return self.render_result(result, RenderOptions(chosen, width, height, theme, pixels))


# -- figures: what bars, flow and scatter produce -----------------------------------

@dataclass(slots=True)
class Series:
    """A named sequence of points (x and y of equal length; numpy arrays or lists)."""

    name: str
    x: Any
    y: Any


@dataclass(slots=True)
class Plot:
    """One plot: ``kind`` is ``"scatter"``, ``"bars"`` or ``"lines"``.

    * scatter: ``series`` are point clouds, ``curves`` the model curves;
    * bars: ``categories`` label the x positions and each series' ``y``
      holds one value per category (its ``x`` is the category index);
      ``stacked`` says whether groups stack or stand side by side;
    * lines: ``series`` are polylines; ``categories``, when set, label the
      integer x positions (x values that are not numbers).
    """

    kind: str
    title: str
    xlabel: str
    ylabel: str
    series: list[Series]
    curves: list[Series] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    stacked: bool = False
    #: the y axis's (low, high) when set (plots compared side by side share it), else from the data
    ylim: tuple[float, float] | None = None
    #: the unit of the y values: the tick labels take its best prefix, which the y label's ``[unit]`` then names
    unit: str = ""


@dataclass(slots=True)
class Figure:
    """What the plotting views produce: one or more plots, drawn one below the other."""

    plots: list[Plot]


#: the largest magnitude a plot draws: its axes' spans, headroom and ticks are differences and multiples of the
#: amounts, which overflow float past about 1.8e308
DRAWABLE = 1e300


def _refuse_undrawable(view: str, figure: Figure) -> None:
    """A :class:`ProfileError` naming the largest amount when a plot of ``figure`` could not be drawn."""
    import numpy as np

    largest = 0.0
    for plot in figure.plots:
        for series in (*plot.series, *plot.curves):
            for values in (series.x, series.y):
                try:
                    array = np.asarray(values, dtype=np.float64).reshape(-1)
                except (TypeError, ValueError):  # labels, not amounts
                    continue
                # an infinity here is a sum or mean that overflowed (profiles hold finite amounts only)
                array = np.abs(array[~np.isnan(array)])
                if len(array):
                    largest = max(largest, float(array.max()))
    if largest > DRAWABLE:
        what = f"an amount of {largest:.3g}" if math.isfinite(largest) else "amounts whose sum overflows"
        raise ProfileError(f"view '{view}' cannot draw {what}: a plot draws amounts of at most {DRAWABLE:.0e} "
                           f"in size")


def render_figure(figure: Figure, options: RenderOptions) -> str:
    """Every plot of ``figure`` at ``options.width`` x ``options.height``, separated by blank lines."""
    # lazy: perun_core.views imports this module back at load (circular)
    from . import plotting

    parts = []
    for plot in figure.plots:
        common = {
            "width": options.width,
            "height": options.height,
            "theme": options.theme,
            "title": plot.title,
            "xlabel": plot.xlabel,
            "ylabel": plot.ylabel,
            "ylim": plot.ylim,
            "unit": plot.unit,
        }
        if plot.kind == "scatter":
            parts.append(plotting.render_scatter(plot.series, plot.curves, **common))
        elif plot.kind == "bars":
            parts.append(plotting.render_bars(plot.categories, plot.series, stacked=plot.stacked, **common))
        else:
            parts.append(plotting.render_lines(plot.series, categories=plot.categories or None, **common))
    return "\n\n".join(parts)


# -- resource keys ---------------------------------------------------------------------

def check_key(view: str, param: str, key: str, accepted: Sequence[str], what: str) -> str:
    """``key`` when it is one of ``accepted``; else an :class:`InvalidParameter` listing them."""
    if key in accepted:
        return key
    listed = ", ".join(accepted) if accepted else "(none in this profile)"
    raise InvalidParameter(view, param, key, f"{what}: {listed}")


def require_key(view: str, param: str, profile: Profile, key: str, *, numeric: bool = False,
                snapshots: bool = True) -> str:
    """``key`` when the profile's resources have it; else an :class:`InvalidParameter` listing the keys.

    A top-level key (or ``snapshots``) is accepted at once; only other keys
    cost a walk over every column.  With ``numeric`` the listed keys are
    the numeric ones, but whether a top-level key holds numbers is left to
    the caller (see :func:`not_numeric`), which finds out anyway.
    """
    if (snapshots and key == "snapshots") or any(key in region.resources.columns()[0] for _, region in profile.regions()):
        return key
    return check_key(view, param, key, resource_keys(profile, numeric=numeric, snapshots=snapshots),
                     "a numeric resource key" if numeric else "a resource key")


def not_numeric(view: str, param: str, profile: Profile, key: str) -> InvalidParameter:
    """The error for a key without a single number: it lists the numeric keys."""
    accepted = resource_keys(profile, numeric=True, snapshots=False)
    return InvalidParameter(view, param, key, f"a numeric resource key: {', '.join(accepted) or '(none in this profile)'}")


def resource_keys(profile: Profile, *, numeric: bool = False, snapshots: bool = True) -> list[str]:
    """Keys a view may read from ``profile``'s resources (flattened; ``snapshots`` is the region number)."""
    # lazy: keeps `perun-core status` light
    from ..profile.query import all_numerical_resource_fields_of, all_resource_fields_of

    keys = all_numerical_resource_fields_of(profile) if numeric else all_resource_fields_of(profile)
    if snapshots and "snapshots" not in keys:
        keys = [*keys, "snapshots"]
    return keys


def amount_units(profile: Profile, *, having: str | None = None) -> dict[str, set[str]]:
    """The units of ``amount`` by resource type: ``{type: {unit, ...}}`` ("" where the header names none).

    Units are keyed by resource type, or by ``type(subtype)`` as the
    complexity and trace collectors do, so one type may have several.
    With ``having`` only the resources carrying that key count.
    Resources without a type are left out.
    """
    from itertools import compress

    units = profile.units
    by_subtype = any("(" in str(key) for key in units)
    pairs: set[tuple[str, str]] = set()
    for _, region in profile.regions():
        table = region.resources
        if not len(table):
            continue
        types = table.column("type")
        subtypes = table.column("subtype") if by_subtype else None
        if having is not None:
            keep = [value is not MISSING for value in table.column(having)]
            types = list(compress(types, keep))
            subtypes = None if subtypes is None else list(compress(subtypes, keep))
        kinds = _distinct(types)
        if subtypes is None:
            pairs.update((kind, "") for kind in kinds)
        elif len(kinds) == 1:
            # a set of pairs costs a tuple per resource: most profiles have one type, so avoid it there
            pairs.update((next(iter(kinds)), subtype) for subtype in _distinct(subtypes, missing=""))
        else:
            pairs.update((str(kind), "" if subtype is MISSING else str(subtype))
                         for kind, subtype in zip(types, subtypes) if kind is not MISSING)
    found: dict[str, set[str]] = {}
    for kind, subtype in pairs:
        unit = units.get(f"{kind}({subtype})", units.get(kind, ""))
        found.setdefault(kind, set()).add(str(unit))
    return found


def _distinct(values: Any, *, missing: str | None = None) -> set[str]:
    """The distinct values as text; ``MISSING`` is left out, or becomes ``missing`` when given."""

    try:
        seen = set(values)
    except TypeError:  # unhashable values
        seen = {v if v is MISSING else str(v) for v in values}
    if MISSING in seen:
        seen.discard(MISSING)
        if missing is not None:
            seen.add(missing)
    return {str(v) for v in seen}


def unit_label(units: set[str]) -> str:
    """One unit, or ``mixed units: B, s`` when values of several units are shown together."""
    if len(units) <= 1:
        return next(iter(units), "")
    return "mixed units: " + ", ".join(sorted(unit or "none" for unit in units))


def amount_unit(profile: Profile, key: str, *, having: str | None = None) -> str:
    """Unit of ``key`` when the profile says it: ``amount`` has the unit of its resources' type.

    When the resources' types have different units the label says so
    (:func:`unit_label`) rather than naming one of them.  ``having`` as in
    :func:`amount_units`.
    """
    units = profile.units
    if key in units:
        return str(units[key])
    if key == "amount":
        return unit_label(set().union(*amount_units(profile, having=having).values()))
    return ""


TYPE = Param(
    "type",
    help="Only resources of this type, or 'all'. By default, where types differ in the unit of --of (a time "
    "profile's max_rss rows hold bytes, the others seconds), only the profile's main type: its own, else the "
    "first its units name; the title names it.",
    flags=("-T", "--type"), metavar="TYPE",
)


@dataclass(frozen=True, slots=True)
class Selection:
    """What a plotting view shows: ``profile`` restricted to type ``only`` (``None``: every type) and the unit of --of."""

    profile: Profile
    only: str | None
    unit: str

    def note(self) -> str:
        """What the title notes when only one type is shown (see :func:`with_notes`)."""
        return f"{self.only} only" if self.only is not None else ""


def select_type(view: str, profile: Profile, of: str, chosen: str | None, *, counting: bool = False) -> Selection:
    """The resources a bars, flow or scatter view shows, so that it never adds or labels mixed units as one.

    ``chosen`` is the ``--type`` value: a resource type, :data:`ALL_TYPES`,
    or ``None``: then, when ``of`` (``amount``) has different units in
    different types, only the main type is kept: the profile's type, else
    the first type its units name, else the first by name.  ``counting``
    views add no values, so they keep every type by default.
    """
    units = profile.units
    by_type = amount_units(profile)

    def unit_of(kinds: list[str]) -> str:
        if of in units:
            return str(units[of])
        return unit_label(set().union(*(by_type[k] for k in kinds))) if of == "amount" else ""

    if chosen == ALL_TYPES:
        return Selection(profile, None, unit_of(list(by_type)))
    if chosen is not None:
        if chosen not in by_type:
            listed = ", ".join(sorted(by_type)) or "(none in this profile)"
            raise InvalidParameter(view, "type", chosen, f"a resource type of this profile: {listed}, or {ALL_TYPES}")
        main = chosen
    else:
        varies = of == "amount" and of not in units and len(set().union(*by_type.values())) > 1
        if counting or not varies:
            return Selection(profile, None, unit_of(list(by_type)))
        named = [str(key).partition("(")[0] for key in units]
        main = next((kind for kind in (profile.type, *named) if kind in by_type), min(by_type))
    if len(by_type) > 1:
        # lazy: keeps `perun-core status` light
        from ..analysis.filtering import filter_profile

        profile = filter_profile(profile, types=[main])
    return Selection(profile, main, unit_of([main]))


def with_unit(label: str, unit: str) -> str:
    return f"{label} [{unit}]" if unit else label


def with_notes(title: str, *notes: str) -> str:
    """``title (note, note)`` for the notes that are not empty."""
    shown = [note for note in notes if note]
    return f"{title} ({', '.join(shown)})" if shown else title
