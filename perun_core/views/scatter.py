"""Scatter: ``--of`` against ``--per`` as points, one plot per uid, with the stored models (§6.1.5).

Every uid with at least one point (both values finite numbers) gets a plot,
or only the one chosen with ``--uid``.  Each model stored in the profile
for that uid (parametric or not) is drawn as a curve over its interval and
labelled with its kind and R^2; ``--model`` keeps only the given kinds.
Models of a whole uid whose resources are split by subtype (the original
Perun fits a command's real, user and sys seconds together) get a plot of
all the uid's points before its plots per subtype.
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


def _fitted_per_key(profile: Profile) -> str | None:
    """The resource key the stored models were fitted over, when they name one other than the input size.

    The original Perun's postprocessors of a time profile fit over the key its workload generators
    add (``n``): nonparametric models say so in their ``per_key``, regression models only in the
    postprocessor's parameters.
    """
    named = [model.get("per_key") for _region, model in all_models_of(profile)]
    for unit in profile.postprocessors:
        params = unit.get("params") if isinstance(unit, dict) else None
        if isinstance(params, dict):
            named.append(params.get("per_key"))
    return next((key for key in named if isinstance(key, str) and key and key != SIZE_KEY), None)


def _whole_uid_plots(points: dict, kinds: dict, curves_of: dict) -> list[tuple[Any, str, tuple]]:
    """The plots to draw as ``(key of their curves, uid shown, points)``: one per key of ``points``, and, before
    the plots of a uid split by subtype, one of all its points where models of the whole uid exist (the
    original Perun fits a time profile's real, user and sys seconds of a command together)."""

    import numpy as np  # noqa: PLC0415 (read_points has loaded it; numpy stays off the import path of the CLI)

    out: list[tuple[Any, str, tuple]] = []
    done: set[str] = set()
    for key, xy in points.items():
        uid = kinds.get(key, (None,))[0]
        whole = str(uid)
        if uid is not None and whole in curves_of and whole not in points and whole not in done:
            done.add(whole)
            parts = [(k, v) for k, v in points.items() if kinds.get(k, (None,))[0] == uid]
            if len(parts) < 2:  # one subtype asked for (--uid): not what the models describe
                out.append((key, str(key), xy))
                continue
            names = ", ".join(str(kinds[k][2] or kinds[k][1]) for k, _v in parts)
            together = (np.concatenate([v[0] for _k, v in parts]), np.concatenate([v[1] for _k, v in parts]))
            out.append((whole, f"{whole} ({names} together, as its models were fitted)", together))
        out.append((key, str(key), xy))
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
    if per == SIZE_KEY and SIZE_KEY not in resource_keys(profile, snapshots=False):
        fitted = _fitted_per_key(profile)
        if fitted is not None and fitted in resource_keys(profile, numeric=True, snapshots=False):
            per = fitted
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
    drawn = _whole_uid_plots(points, found.kinds, curves_of) if not by_order else [
        (key, str(key), xy) for key, xy in points.items()]
    plots = []
    for key, shown_as, (x, y) in drawn:
        curves = []
        for model in curves_of.get(str(key), []):
            cx, cy = plot_points(model, CURVE_POINTS)
            curves.append(Series(curve_label(model), cx, cy))
        plots.append(Plot(
            kind="scatter",
            title=with_notes(f"{of} per {per_name}; uid: {shown_as}", shown.note()) if title is None else title,
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
        Param("per", help="Resource key on the X axis; without input sizes (the default key) the key the stored "
                          "models were fitted over (the original Perun's 'n'), else the run order.",
              flags=("-p", "--per"), default="structure-unit-size", metavar="KEY"),
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
