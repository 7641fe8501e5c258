"""The clusterizer (spec 001 §5.1.3): a ``cluster`` number for every resource.

Resources are grouped by ``(type, subtype, uid)`` over all regions and,
within a group, ordered by the value of ``of`` (default ``amount``).  With
the ``sort_order`` strategy a resource's cluster is its position in that
order; with ``sliding_window`` a window slides over the ordered amounts and
numbers the runs that fit in it (see :mod:`perun_core.analysis.clusterizer`
for the exact width and height rules).  Every resource gets the number as a
new top-level key ``cluster`` (replacing one it had), so the clusters can
serve as the independent variable of a later analysis::

    perun-core postprocessby 0@p clusterizer -s sliding_window -ww 0.05
    perun-core postprocessby 1@p regression_analysis -dp cluster

A resource whose ``of`` value is not a finite number gets no ``cluster``.
"""

from __future__ import annotations

from typing import Any

from ..analysis.clusterizer import clusterize_profile, with_column
from ..profile.model import Snapshot
from ..units import Param, PhaseResult, UnitContext
from .common import check_numeric_key, copy_profile, of_param, require_resources, settings

__all__ = ["Clusterizer"]


class Clusterizer:
    name = "clusterizer"
    kind = "postprocessor"
    summary = "Number resources by clusters of similar amounts."
    description = (
        "Groups the resources by type, subtype and uid, orders each group by amount and stores a 'cluster' "
        "number in every resource: its position in that order (sort_order), or the number of the sliding "
        "window it falls into (sliding_window). A window takes at most --window-width resources (absolute: "
        "a count; relative: a share of the group; weighted: a share scaled down for frequent amounts) whose "
        "amounts lie within --window-height of the window's first amount (absolute: a difference; relative: "
        "a share of that amount). Then e.g. 'regression_analysis -dp cluster' models the amounts."
    )
    params = (
        Param("strategy", "choice", "sort_order", "How resources are put into clusters.",
              flags=("-s", "--strategy"), choices=("sort_order", "sliding_window")),
        Param("window_width", "float", 0.01, "Width of the sliding window (see --width-measure).",
              flags=("-ww", "--window-width"), minimum=1e-12),
        Param("width_measure", "choice", "relative", "absolute: a number of resources; relative: a share of the "
              "group's resources; weighted: a share scaled down for frequent amounts.",
              flags=("-wm", "--width-measure"), choices=("absolute", "relative", "weighted")),
        Param("window_height", "float", 0.01, "Height of the sliding window (see --height-measure).",
              flags=("-wh", "--window-height"), minimum=0.0),
        Param("height_measure", "choice", "relative", "absolute: amounts up to first + height; relative: up to "
              "first + |first| * height.", flags=("-hm", "--height-measure"), choices=("absolute", "relative")),
        of_param(help="Resource key of the amounts that are clustered."),
    )

    def postprocess(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        options = settings(self, kwargs)
        profile = kwargs["profile"]
        require_resources(profile, self.name)
        check_numeric_key(profile, self.name, "of", options["of"])
        clusters = clusterize_profile(
            profile, of=options["of"], strategy=options["strategy"], window_width=options["window_width"],
            width_measure=options["width_measure"], window_height=options["window_height"],
            height_measure=options["height_measure"],
        )
        regions = []
        for (_, region), values in zip(profile.regions(), clusters):
            table = with_column(region.resources, "cluster", values) if len(region.resources) else region.resources
            regions.append(Snapshot(table, list(region.models), dict(region.meta), region.has_models_key))
        if profile.global_region is not None:
            kwargs["profile"] = copy_profile(profile, regions[:-1], regions[-1])
        else:
            kwargs["profile"] = copy_profile(profile, regions, None)
        return PhaseResult.ok(kwargs)
