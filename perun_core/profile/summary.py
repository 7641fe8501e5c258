"""Summary statistics of a profile: per numeric field count, min, mean and max, and its models.

What the TUI's details screen shows (through :func:`perun_core.api.summary`).
numpy is imported only when a summary is computed, so importing this module
stays quick.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .model import Profile
from .query import all_models_of, all_numerical_resource_fields_of, all_resources_of, numeric_column

__all__ = ["FieldStats", "ModelRow", "ProfileSummary", "format_number", "summarize"]


@dataclass(frozen=True, slots=True)
class FieldStats:
    """count, min, mean and max of one numeric resource field (count = resources having it)."""

    name: str
    count: int
    minimum: float
    mean: float
    maximum: float


@dataclass(frozen=True, slots=True)
class ModelRow:
    uid: str
    model: str
    r_square: float | None
    coeffs: str
    interval: str


@dataclass(frozen=True, slots=True)
class ProfileSummary:
    resources: int
    regions: int
    fields: list[FieldStats] = field(default_factory=list)
    models: list[ModelRow] = field(default_factory=list)


def summarize(profile: Profile) -> ProfileSummary:
    """Per numeric field statistics over all resources, and the models of every region."""
    import numpy as np

    resources = sum(1 for _ in all_resources_of(profile))
    regions = sum(1 for _ in profile.regions())
    fields = []
    for name in all_numerical_resource_fields_of(profile):
        values = numeric_column(profile, name)
        present = values[~np.isnan(values)]
        if present.size == 0:
            continue
        fields.append(FieldStats(name, int(present.size), float(present.min()), float(present.mean()),
                                 float(present.max())))
    models = [_model_row(model) for _, model in all_models_of(profile)]
    return ProfileSummary(resources, regions, fields, models)


def _model_row(model: dict[str, Any]) -> ModelRow:
    coeffs = model.get("coeffs") or []
    parts = []
    if isinstance(coeffs, list):
        for coeff in coeffs:
            if isinstance(coeff, dict):
                parts.append(f"{coeff.get('name', '?')}={format_number(coeff.get('value'))}")
    start = model.get("x_start", model.get("x_interval_start"))
    end = model.get("x_end", model.get("x_interval_end"))
    interval = f"{format_number(start)}..{format_number(end)}" if start is not None or end is not None else ""
    r_square = model.get("r_square")
    return ModelRow(
        uid=str(model.get("uid", "")),
        model=str(model.get("model", model.get("type", ""))),
        r_square=float(r_square) if isinstance(r_square, (int, float)) else None,
        coeffs=" ".join(parts),
        interval=interval,
    )


def format_number(value: Any) -> str:
    """A short, readable form of a number (other values as text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "" if value is None else str(value)
    if isinstance(value, int) or (math.isfinite(value) and value == int(value) and abs(value) < 1e12):
        return f"{int(value):,}".replace(",", " ") if abs(value) >= 10_000 else str(int(value))
    if not math.isfinite(value):
        return str(value)
    magnitude = abs(value)
    if magnitude >= 1000 or magnitude < 0.001:
        return f"{value:.4g}"
    return f"{value:.4f}".rstrip("0").rstrip(".")
