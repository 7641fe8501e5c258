"""Scatter: ``--of`` against ``--per`` as points, one plot per uid, with the stored models (§6.1.5).

Every uid with at least one point (both values finite numbers) gets a plot,
or only the one chosen with ``--uid``.  Each model stored in the profile
for that uid (parametric or not) is drawn as a curve over its interval and
labelled with its kind and R^2; ``--model`` keeps only the given kinds.
Values of different units never share an axis: see ``--type``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..analysis import plot_points
from ..analysis.curves import model_kind
from ..analysis.points import read_points
from ..errors import EmptyProfile, InvalidParameter
from ..profile.query import all_models_of, flatten_value, resource_table
from .base import (
    TYPE,
    Figure,
    Param,
    Plot,
    Series,
    View,
    amount_unit,
    not_numeric,
    render_figure,
    require_key,
    resource_keys,
    select_type,
    with_notes,
    with_unit,
)
from .bars import TITLE, X_LABEL, Y_LABEL
from .fits import SIZE_KEY, needs_amount

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile

#: Points sampled along each model curve.
CURVE_POINTS = 400

MODEL_KINDS = ("constant", "logarithmic", "linear", "nlogn", "quadratic", "power", "exponential",
               "regressogram", "moving_average", "kernel_regression")

_UIDS_LISTED = 12


def curve_label(model: dict) -> str:
    """``kind (R^2=0.987)``, or the kind alone when the model has no R^2."""
    r_square = model.get("r_square")
    if isinstance(r_square, (int, float)) and not isinstance(r_square, bool):
        return f"{model_kind(model)} (R^2={r_square:.3f})"
    return model_kind(model)


def _models_by_uid(profile: Profile, of: str, per: str, kinds: tuple[str, ...], split: dict) -> dict[str, list[dict]]:
    """Models by the plot they belong to: their uid, or the ``uid [subtype]`` group they were fitted to.

    ``split`` is :attr:`~perun_core.analysis.points.PointsRead.kinds` of the points shown.
    """

    label_of = {(str(uid), kind, subtype): label for label, (uid, kind, subtype) in split.items()}
    shown: set | None = None
    out: dict[str, list[dict]] = {}
    for _, model in all_models_of(profile):
        if kinds and model_kind(model) not in kinds:
            continue
        # models that say which keys they were fitted on are only drawn over those keys
        if model.get("per_key", per) != per or model.get("of_key", of) != of:
            continue
        uid = str(flatten_value(model.get("uid")))
        fitted_to = (model.get("resource_type"), model.get("subtype"))
        label = label_of.get((uid, *fitted_to))
        if label is None and fitted_to != (None, None):
            # fitted to one kind of resources: drawn only where that kind is shown
            if shown is None:
                table = resource_table(profile, ["type", "subtype"])
                shown = set(zip(table.get("type", ()), table.get("subtype", ())))
            if fitted_to not in shown:
                continue
        out.setdefault(str(uid if label is None else label), []).append(model)
    return out


def _uid_list(uids: list[Any]) -> str:
    shown = [str(u) for u in uids[:_UIDS_LISTED]]
    more = len(uids) - len(shown)
    return ", ".join(shown) + (f" (and {more} more)" if more > 0 else "")


def build(profile: Profile, *, of: str, per: str, uid: str | None, models: tuple[str, ...], type: str | None,
          x_label: str | None, y_label: str | None, title: str | None) -> Figure:
    """One scatter plot per uid (or just ``uid``) with the curves of its models."""

    import numpy as np

    require_key("scatter", "of", profile, of, numeric=True, snapshots=False)
    # without input sizes the points stand in run order: the collector's 'order' or the order of the resources;
    # sizes that are there but not numbers are an error below, not a reason to plot something else
    by_order = per == SIZE_KEY and SIZE_KEY not in resource_keys(profile, snapshots=False)
    per_name = "run order" if by_order else per
    if by_order and "order" in resource_keys(profile, numeric=True, snapshots=False):
        per, by_order = "order", False
        x_label = "run order" if x_label is None else x_label
    if not by_order:
        require_key("scatter", "per", profile, per, numeric=True, snapshots=False)
    shown = select_type("scatter", profile, of, type)
    profile = shown.profile
    # a uid measuring several things (real/user/sys seconds) gets a plot per thing, as regression models them
    found = read_points(profile, of if by_order else per, of, split_kinds=True)
    points = {u: xy for u, xy in found.by_uid.items() if len(xy[0])}
    if by_order:
        points = {u: (np.arange(1, len(y) + 1, dtype=np.float64), y) for u, (_x, y) in points.items()}
        x_label = "run order" if x_label is None else x_label
    if not points:
        numeric = resource_keys(profile, numeric=True, snapshots=False)
        for param, key in (("of", of), ("per", per)):
            if key not in numeric:
                raise not_numeric("scatter", param, profile, key)
        raise EmptyProfile("scatter", f"resources with numbers in both '{of}' and '{per}'")
    if uid is not None:
        chosen = [u for u in points if str(u) == uid] or [u for u in points if str(found.kinds.get(u, ("",))[0]) == uid]
        if not chosen:
            raise InvalidParameter("scatter", "uid", uid, f"a uid with points: {_uid_list(list(points))}")
        points = {u: points[u] for u in chosen}
    curves_of = _models_by_uid(profile, of, per, models, found.kinds)
    xlabel = with_unit(per, amount_unit(profile, per)) if x_label is None else x_label
    ylabel = with_unit(of, shown.unit) if y_label is None else y_label
    plots = []
    for key, (x, y) in points.items():
        curves = []
        for model in curves_of.get(str(key), []):
            cx, cy = plot_points(model, CURVE_POINTS)
            curves.append(Series(curve_label(model), cx, cy))
        plots.append(Plot(
            kind="scatter",
            title=with_notes(f"{of} per {per_name}; uid: {key}", shown.note()) if title is None else title,
            xlabel=xlabel,
            ylabel=ylabel,
            series=[Series(str(key), x, y)],
            curves=curves,
            unit=shown.unit,
        ))
    return Figure(plots)


VIEW = View(
    name="scatter",
    summary="Points of --of against --per, one plot per uid, with the stored models as curves.",
    description=__doc__ or "",
    params=(
        Param("of", help="Resource key on the Y axis.", flags=("-o", "--of"), default="amount", metavar="KEY"),
        Param("per", help="Resource key on the X axis; without input sizes (the default key) the run order.", flags=("-p", "--per"), default="structure-unit-size",
              metavar="KEY"),
        Param("uid", help="Plot only this uid.", flags=("-u", "--uid"), metavar="UID"),
        Param("models", help="Draw only models of this kind (repeatable).", kind="list", flags=("--model",),
              choices=MODEL_KINDS, metavar="KIND"),
        TYPE,
        X_LABEL,
        Y_LABEL,
        TITLE,
    ),
    fits=needs_amount,
    build=build,
    render_result=render_figure,
)
