"""The regressogram: the mean (or median) of ``y`` in bins of ``x`` (spec §3.4.2).

Its record is described in :mod:`perun_core.analysis.nonparametric`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameter
from .nonparametric import analyse, bin_index, clean_points, finish_record, finite_floats, record_base
from .points import DEFAULT_X, DEFAULT_Y, AnalysisResult, DegenerateData

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = ["BIN_RULES", "MAX_BINS", "STATISTICS", "fit_regressogram", "regressogram"]

#: Rules of ``numpy.histogram_bin_edges`` for choosing the bins.
BIN_RULES = ("auto", "doane", "fd", "rice", "scott", "sqrt", "sturges")
STATISTICS = ("mean", "median")
#: Upper limit on the number of bins a rule may choose.
MAX_BINS = 1024


def _check_bins(bins: Any) -> tuple[int | None, str | None]:
    if isinstance(bins, str):
        rule = bins.strip().lower()
        if rule not in BIN_RULES:
            raise InvalidParameter("regressogram", "bins", bins, f"a positive integer or one of {', '.join(BIN_RULES)}")
        return None, rule
    if type(bins) is int and bins >= 1:
        return bins, None
    raise InvalidParameter("regressogram", "bins", bins, f"a positive integer or one of {', '.join(BIN_RULES)}")


def _bin_edges(x: numpy.ndarray, count: int | None, rule: str | None, max_bins: int) -> numpy.ndarray:
    import numpy as np

    n = len(x)
    low, high = float(x.min()), float(x.max())
    if count is None and rule in ("fd", "auto", "scott") and n > 1 and high > low:
        # These rules derive a bin width from the spread of x; with a narrow
        # spread and a far outlier they would ask for millions of bins.
        with np.errstate(all="ignore"):  # a heuristic: underflow on subnormal spreads is harmless
            if rule == "scott":
                width = (24.0 * math.sqrt(math.pi) / n) ** (1.0 / 3.0) * float(np.std(x))
            else:
                q75, q25 = np.percentile(x, [75, 25])
                width = 2.0 * float(q75 - q25) * n ** (-1.0 / 3.0)
        if width > 0 and (high - low) / width > max_bins:
            count, rule = max_bins, None
    with np.errstate(all="ignore"):
        try:
            edges = np.histogram_bin_edges(x, bins=count if rule is None else rule)
        except (ValueError, OverflowError, MemoryError) as exc:
            raise DegenerateData(f"cannot choose bins: {exc}") from None
        if len(edges) - 1 > max_bins:
            edges = np.histogram_bin_edges(x, bins=max_bins)
    if len(edges) < 2 or not np.isfinite(edges).all() or not (np.diff(edges) > 0).all():
        raise DegenerateData("the x range cannot be split into finite bins")
    return edges


def _fill_empty(values: numpy.ndarray, present: numpy.ndarray) -> numpy.ndarray:
    import numpy as np

    if present.all():
        return values
    positions = np.where(present, np.arange(len(values)), -1)
    previous = np.maximum.accumulate(positions)
    first = int(np.argmax(present))
    previous[previous < 0] = first
    return values[previous]


def fit_regressogram(
    x: Any,
    y: Any,
    *,
    bins: int | str = "auto",
    statistic: str = "mean",
    max_bins: int = MAX_BINS,
    uid: Any = None,
) -> dict:
    """A regressogram of one uid's points: ``statistic`` of y in each bin of x.

    ``bins`` is a number of equal-width bins or a rule of :data:`BIN_RULES`
    (a rule never gives more than ``max_bins`` bins).  Raises
    :class:`~perun_core.analysis.points.DegenerateData` when no finite
    model exists (no points, an x range too wide for floats).
    """
    import numpy as np

    count, rule = _check_bins(bins)
    if statistic not in STATISTICS:
        raise InvalidParameter("regressogram", "statistic", statistic, "mean or median")
    if type(max_bins) is not int or max_bins < 1:
        raise InvalidParameter("regressogram", "max_bins", max_bins, "a positive integer")
    x, y = clean_points(x, y)
    edges = _bin_edges(x, count, rule, max_bins)
    nbins = len(edges) - 1
    index = bin_index(edges, x)
    counts = np.bincount(index, minlength=nbins)
    present = counts > 0
    with np.errstate(all="ignore"):
        if statistic == "mean":
            # relative to one sample, so a constant signal gives exact values
            reference = y[0]
            sums = np.bincount(index, weights=y - reference, minlength=nbins)
            values = np.zeros(nbins)
            values[present] = sums[present] / counts[present] + reference
        else:
            order = np.lexsort((y, index))
            ordered = y[order]
            starts = np.cumsum(counts) - counts
            low = starts + (counts - 1) // 2
            high = starts + counts // 2
            values = np.zeros(nbins)
            values[present] = ordered[low[present]] / 2.0 + ordered[high[present]] / 2.0
    values = _fill_empty(values, present)
    record = record_base(uid, "regressogram")
    record.update({
        "statistic": statistic,
        "bin_rule": rule,
        "bin_edges": finite_floats(edges),
        "bin_values": finite_floats(values),
        "bin_counts": [int(c) for c in counts.tolist()],
    })
    return finish_record(record, x, y)


def regressogram(
    data: Any,
    *,
    bins: int | str = "auto",
    statistic: str = "mean",
    max_bins: int = MAX_BINS,
    depending_on: str = DEFAULT_X,
    of: str = DEFAULT_Y,
) -> AnalysisResult:
    """Regressograms of every uid of ``data`` (a profile, region, table or ``{uid: (x, y)}``)."""
    _check_bins(bins)
    if statistic not in STATISTICS:
        raise InvalidParameter("regressogram", "statistic", statistic, "mean or median")
    return analyse("regressogram", data, depending_on, of, fit_regressogram,
                    bins=bins, statistic=statistic, max_bins=max_bins)
