"""Flow: an aggregation of ``--of`` through ``--through``, one line per ``--by`` value (spec §6.1.3).

For every value of ``by`` (one line when there is no ``by``), the line
goes through the ``through`` values in order (``snapshots`` by default;
a time profile's runs, ``order``, for time profiles) with ``func`` of the
``of`` values of the resources at each of them (``mean`` by default for a
time profile, ``sum`` otherwise; several subtypes get a line each).
``--accumulate`` makes each point the sum of its line up to there;
``--stacked`` puts every line on top of the previous ones, so the top line
is the total.  Missing values count as 0 once lines are accumulated or
stacked; otherwise a line simply has no point there.  Values of different
units are never added up: see ``--type``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import EmptyProfile
from ..profile.query import unique_resource_values_of
from .bars import FUNC, OF, TITLE, X_LABEL, Y_LABEL, aggregated, checked_keys, default_func, value_label
from .base import TYPE, Figure, Param, Plot, Series, View, render_figure, resource_keys, select_type, with_notes
from .fits import needs_amount
from .style import format_number

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile


def _defaults(profile: Profile, func: str | None, through: str | None, by: str | None) -> tuple[str, str, str | None]:
    """``(func, through, by)`` with what was not given filled in for ``profile``.

    A time profile's runs are averaged (``mean``) through their ``order``;
    several subtypes (real, user, sys) get a line each rather than one sum.
    """
    timed = profile.type == "time"
    func = func or default_func(profile)
    if through is None:
        through = "order" if timed and "order" in resource_keys(profile, snapshots=False) else "snapshots"
    if by is None and func != "count":
        subtypes = [v for v in unique_resource_values_of(profile, "subtype") if v is not None]
        by = "subtype" if len(subtypes) > 1 else None
    return func, through, by


def build(profile: Profile, *, func: str | None, of: str, through: str | None, by: str | None, stacked: bool,
          accumulate: bool, type: str | None, x_label: str | None, y_label: str | None,
          title: str | None) -> Figure:
    """The lines of ``func(of)`` through ``through`` (one per ``by`` value) as a one-plot :class:`Figure`."""
    import numpy as np

    checked_keys("flow", profile, func or "sum", of, through=through, by=by)
    shown = select_type("flow", profile, of, type, counting=func == "count")
    func, through, by = _defaults(shown.profile, func, through, by)
    x_values, by_values, matrix = aggregated("flow", shown.profile, func, of, through, by)
    if not x_values:
        raise EmptyProfile("flow", f"resources with both '{of}' and '{through}'")
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in x_values)
    xs = np.array(x_values, dtype=np.float64) if numeric else np.arange(len(x_values), dtype=np.float64)
    if accumulate:
        # a line starts at its first value and then carries its sum on
        started = np.cumsum(~np.isnan(matrix), axis=1) > 0
        matrix = np.where(started, np.cumsum(np.nan_to_num(matrix, nan=0.0), axis=1), np.nan)
    if stacked:
        matrix = np.cumsum(np.nan_to_num(matrix, nan=0.0), axis=0)
    names = [f"{func}({of})"] if by is None else [format_number(v) for v in by_values]
    series = []
    for name, row in zip(names, matrix):
        present = ~np.isnan(row)
        series.append(Series(name, xs[present], row[present]))
    default_title = with_notes(f"{func} of {of} through {through}" + (f" by {by}" if by else ""), shown.note(),
                               "accumulated" if accumulate else "", "stacked" if stacked else "")
    plot = Plot(
        kind="lines",
        title=default_title if title is None else title,
        xlabel=through if x_label is None else x_label,
        ylabel=value_label(func, of, shown.unit) if y_label is None else y_label,
        series=series,
        categories=[] if numeric else [format_number(v) for v in x_values],
        unit="" if func == "count" else shown.unit,
    )
    return Figure([plot])


VIEW = View(
    name="flow",
    summary="Lines of an aggregation of --of through --through, one per --by value.",
    description=__doc__ or "",
    params=(
        FUNC,
        OF,
        Param("through", help="Resource key on the X axis (the independent variable) [default: order (the runs) "
                              "for time profiles, else snapshots].", flags=("-t", "--through"), metavar="KEY"),
        Param("by", help="Resource key whose every value gets a line of its own [default: subtype when the "
                         "resources have several].", flags=("-b", "--by"), metavar="KEY"),
        Param("stacked", help="Stack the lines on top of each other (the top one is the total).", kind="bool",
              flags=("-s", "--stacked"), default=False),
        Param("accumulate", help="Each point sums its line up to there.", kind="bool",
              flags=("--accumulate",), off=("--no-accumulate",), default=False),
        TYPE,
        X_LABEL,
        Y_LABEL,
        TITLE,
    ),
    fits=needs_amount,
    build=build,
    render_result=render_figure,
)
