"""Bars: an aggregation of ``--of`` per value of ``--per``, split by ``--by`` (spec §3.5.2, §6.1.1).

Each bar shows ``func`` (sum, count, mean, median, min, max) of the ``of``
values of the resources sharing one ``per`` value (``snapshots``, the
region number, by default).  With ``by`` every bar is split by that key's
values, stacked on top of each other or grouped side by side.  Different
subtypes (a time profile's real, user and sys seconds) are never added up by
default, and a time profile's runs are averaged (``mean``), not summed: without ``--per`` and ``--by`` a profile with several subtypes gets
a bar per subtype (one snapshot) or the subtypes side by side in every
snapshot.  Values of
different units are never added up: see ``--type``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import EmptyProfile
from ..profile.query import resource_table, unique_resource_values_of
from .aggregate import grouped, values_of
from .base import (
    AGGREGATIONS,
    TYPE,
    Figure,
    Param,
    Plot,
    Series,
    View,
    not_numeric,
    render_figure,
    require_key,
    select_type,
    with_notes,
    with_unit,
)
from .fits import needs_amount
from .style import format_number

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile

FUNC = Param("func", help="Aggregation of the values of each bar [default: mean for time profiles, whose resources "
             "are one value per run (their sum grows with the number of runs), else sum].", kind="choice",
             choices=AGGREGATIONS, positional=True, metavar="[sum|count|mean|median|min|max]")


def default_func(profile: Profile) -> str:
    """The aggregation when none is given: the mean of a time profile's runs, else the sum."""
    return "mean" if profile.type == "time" else "sum"
OF = Param("of", help="Resource key aggregated on the Y axis (numeric unless counting).", flags=("-o", "--of"),
           default="amount", metavar="KEY")
BY = Param("by", help="Resource key splitting every bar into groups.", flags=("-b", "--by"), metavar="KEY")
X_LABEL = Param("x_label", help="Label of the X axis.", flags=("-xl", "--x-axis-label"), metavar="TEXT")
Y_LABEL = Param("y_label", help="Label of the Y axis.", flags=("-yl", "--y-axis-label"), metavar="TEXT")
TITLE = Param("title", help="Title of the graph.", flags=("-gt", "--graph-title"), metavar="TEXT")


def checked_keys(view: str, profile: Profile, func: str, of: str, **keys: str | None) -> None:
    """Raise :class:`InvalidParameter` for ``of`` or any of ``keys`` the resources do not have."""
    require_key(view, "of", profile, of, numeric=func != "count", snapshots=func == "count")
    for param, key in keys.items():
        if key is not None:
            require_key(view, param, profile, key)


def aggregated(view: str, profile: Profile, func: str, of: str, per: str, by: str | None) -> tuple:
    """``(per values, by values, matrix)`` of :func:`~.aggregate.grouped`, the keys checked."""
    import numpy as np

    table = resource_table(profile, list(dict.fromkeys(k for k in (of, per, by) if k is not None)))
    if func != "count" and np.isnan(values_of(table[of], func)).all():
        raise not_numeric(view, "of", profile, of)
    return grouped(table, of, per, by, func)


def value_label(func: str, of: str, unit: str) -> str:
    """The Y axis label, ``sum(amount) [B]``: a count has no unit."""
    label = f"{func}({of})"
    return label if func == "count" else with_unit(label, unit)


def _per_subtype(profile: Profile, per: str, stacked: bool) -> tuple[str, str | None, bool]:
    """``(per, by, stacked)`` that keep the subtypes of ``profile`` apart when it has several.

    One snapshot: a bar per subtype; several: the subtypes side by side in
    every snapshot (stacked, their sum would again be the bar's height).
    """

    subtypes = [v for v in unique_resource_values_of(profile, "subtype") if v is not None]
    if len(subtypes) < 2:
        return per, None, stacked
    if len(list(profile.regions())) <= 1:
        return "subtype", None, stacked
    return per, "subtype", False


def build(profile: Profile, *, func: str | None, of: str, per: str | None, by: str | None, stacked: bool,
          type: str | None, x_label: str | None, y_label: str | None, title: str | None) -> Figure:
    """The bars of ``func(of)`` per ``per`` value (split by ``by``) as a one-plot :class:`Figure`."""
    func = func or default_func(profile)
    checked_keys("bars", profile, func, of, per=per, by=by)
    shown = select_type("bars", profile, of, type, counting=func == "count")
    if per is None:
        per = "snapshots"
        if by is None and func != "count":
            # real, user and sys seconds (or any subtypes) are different measurements: never one summed bar
            per, by, stacked = _per_subtype(shown.profile, per, stacked)
    per_values, by_values, matrix = aggregated("bars", shown.profile, func, of, per, by)
    if not per_values:
        raise EmptyProfile("bars", f"resources with both '{of}' and '{per}'")
    categories = [format_number(v) for v in per_values]
    positions = list(range(len(categories)))
    if by is None:
        series = [Series(f"{func}({of})", positions, matrix[0])]
    else:
        series = [Series(format_number(name), positions, row) for name, row in zip(by_values, matrix)]
    default_title = with_notes(f"{func} of {of} per {per}" + (f" by {by}" if by else ""), shown.note())
    plot = Plot(
        kind="bars",
        title=default_title if title is None else title,
        xlabel=per if x_label is None else x_label,
        ylabel=value_label(func, of, shown.unit) if y_label is None else y_label,
        series=series,
        categories=categories,
        stacked=stacked,
        unit="" if func == "count" else shown.unit,
    )
    return Figure([plot])


VIEW = View(
    name="bars",
    summary="Bars of an aggregation of --of per --per, stacked or grouped by --by.",
    description=__doc__ or "",
    params=(
        FUNC,
        OF,
        Param("per", help="Resource key whose values are the bars (X axis) [default: snapshots; with several "
                          "subtypes and no --by, subtype (one snapshot) or snapshots with --by subtype].",
              flags=("-p", "--per"), metavar="KEY"),
        BY,
        Param("stacked", help="Stack the --by groups (default) or stand them side by side.", kind="bool",
              flags=("-s", "--stacked"), off=("-g", "--grouped"), default=True),
        TYPE,
        X_LABEL,
        Y_LABEL,
        TITLE,
    ),
    fits=needs_amount,
    build=build,
    render_result=render_figure,
)
