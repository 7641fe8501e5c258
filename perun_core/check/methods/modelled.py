"""Shared by the model-based methods: a common interval of input sizes and model values on it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ...analysis import evaluate_model

from ...errors import InvalidProfile

if TYPE_CHECKING:  # pragma: no cover
    import numpy

    from ..data import Sample

__all__ = ["common_grid", "interval_of"]


def interval_of(model: dict, sample: Sample | None) -> tuple[float, float] | None:
    """The x interval a model was fitted on (or its sample's sizes)."""
    start = model.get("x_interval_start", model.get("x_start"))
    end = model.get("x_interval_end", model.get("x_end"))
    if isinstance(start, (int, float)) and isinstance(end, (int, float)) and math.isfinite(start) \
            and math.isfinite(end) and end > start:
        return float(start), float(end)
    if sample is not None and sample.x is not None and len(sample.x):
        return float(sample.x.min()), float(sample.x.max())
    return None


def common_grid(first: tuple[float, float] | None, second: tuple[float, float] | None,
                points: int = 64) -> numpy.ndarray | None:
    """Evenly spaced sizes over the overlap of two intervals (None when they do not overlap)."""
    import numpy as np

    if first is None or second is None:
        return None
    low, high = max(first[0], second[0]), min(first[1], second[1])
    if not high > low:
        return None
    return np.linspace(low, high, points)


def model_values(model: dict, grid: numpy.ndarray) -> numpy.ndarray | None:
    """A model evaluated on ``grid``; None when it is undefined anywhere there."""
    import numpy as np

    try:
        values = evaluate_model(model, grid)
    except InvalidProfile:
        return None
    return values if np.isfinite(values).all() else None


def area(values: numpy.ndarray, grid: numpy.ndarray) -> float:
    """The trapezoidal area under ``values`` over ``grid``."""
    return float(((values[1:] + values[:-1]) * 0.5 * (grid[1:] - grid[:-1])).sum())
