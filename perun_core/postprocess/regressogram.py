"""The regressogram: a step function of the ``statistic`` of ``of`` in bins of ``depending_on``.

For every uid the x range is cut into ``--bins`` equal bins (a count, or a
rule of :func:`numpy.histogram_bin_edges`: auto, doane, fd, rice, scott,
sqrt, sturges) and each bin takes the mean or median of its y values.  The
record (``model: "regressogram"``, ``bin_edges``, ``bin_values``,
``bin_counts``, ``r_square``, ``x_interval_start``/``end``; see
:mod:`perun_core.analysis.bins`) is stored like the parametric
models (:mod:`perun_core.postprocess.common`), and every view or check
evaluates it with :func:`perun_core.analysis.evaluate_model`.
"""

from __future__ import annotations

from typing import Any

from ..analysis.bins import regressogram
from ..units import Param, PhaseResult, UnitContext
from .common import ORIGINAL_KEY_PARAMS, fit_and_store, settings

__all__ = ["Regressogram", "check_bins"]

_RULES = ("auto", "doane", "fd", "rice", "scott", "sqrt", "sturges")


def check_bins(value: str) -> int | str:
    """A positive bin count (as an int) or a rule name (lower case)."""
    text = str(value).strip().lower()
    if text in _RULES:
        return text
    try:
        count = int(text, 10)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"a positive number of bins or a rule: {', '.join(_RULES)}")
    return count


class Regressogram:
    name = "regressogram"
    kind = "postprocessor"
    summary = "Step function: mean or median amount in bins of x."
    description = (
        "Cuts the x range of every uid into equal bins (--bins: a count or a rule: auto, doane, fd, rice, "
        "scott, sqrt, sturges) and stores the mean or median of the amounts in each bin as a regressogram "
        "model, with its R^2."
    )
    params = (
        Param("bins", "str", "auto", "Number of bins, or a rule: auto, doane, fd, rice, scott, sqrt, sturges.",
              flags=("-b", "--bins", "-bn", "--bucket-number", "-bm", "--bucket-method"), metavar="COUNT|RULE", aliases=("bucket_number", "bucket_method"),
              check=check_bins),
        Param("statistic", "choice", "mean", "The value of a bin.", flags=("-st", "--statistic", "-sf", "--statistic-function"),
              aliases=("statistic_function",), choices=("mean", "median")),
        *ORIGINAL_KEY_PARAMS,
    )

    def postprocess(self, ctx: UnitContext, kwargs: dict[str, Any]) -> PhaseResult:
        options = settings(self, kwargs)
        return fit_and_store(self, kwargs, regressogram, bins=check_bins(options["bins"]),
                             statistic=options["statistic"])
