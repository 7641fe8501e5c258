"""The porcelain of profile statistics: ``summary`` (numbers with their units, never mixed).

A profile's resources measure different things: the time collector records
real, user and sys seconds and the peak memory in bytes of every run.  An
average over all of them means nothing, so the measured keys (``amount``
and ``exclusive``) are summarised per resource type and subtype, each with
its unit; the other numeric keys (``order``, sizes, addresses, call counts)
are one row each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..profile.machine import describe_machine
from .profiles import load_profile

if TYPE_CHECKING:  # pragma: no cover
    from ..profile.model import Profile
    from ..storage.repository import PerunRepository

__all__ = ["describe_machine", "FieldStats", "ModelRow", "ProfileSummary", "summary", "short_number", "format_number", "MEASURED_KEYS"]

#: Keys whose values are measurements in the unit of their resource's type (and subtype).
MEASURED_KEYS = ("amount", "exclusive")


@dataclass(frozen=True, slots=True)
class FieldStats:
    """Statistics of one numeric resource key, over the resources of one type and subtype when it is measured.

    ``type`` and ``subtype`` are "" for keys summarised over every resource;
    ``count`` is how many resources have the key.
    """

    key: str
    type: str
    subtype: str
    unit: str
    count: int
    minimum: float
    mean: float
    maximum: float
    total: float

    @property
    def kind(self) -> str:
        """``time real``, ``memory max_rss`` ... ("" for keys over every resource)."""
        return " ".join(part for part in (self.type, self.subtype) if part)

    @property
    def label(self) -> str:
        """The row's label where its values carry their units: ``amount · time real``."""
        return f"{self.key} · {self.kind}" if self.kind else self.key

    @property
    def name(self) -> str:
        """How a table of bare numbers labels the row: ``amount · time real [s]``."""
        return f"{self.label} [{self.unit}]" if self.unit else self.label


@dataclass(frozen=True, slots=True)
class ModelRow:
    """One stored model: uid, kind, R², coefficients and interval as text."""

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

    @property
    def amount_unit(self) -> str:
        """The one unit of the profile's amounts, which its models' coefficients are in ('' when none or several)."""
        units = {f.unit for f in self.fields if f.key == "amount"}
        return units.pop() if len(units) == 1 else ""


def _unit(units: dict[str, Any], key: str, kind: str, subtype: str) -> str:
    if key in units:
        return str(units[key])
    if key not in MEASURED_KEYS:
        return ""
    for name in (f"{kind}({subtype})", kind):
        if name in units:
            return str(units[name])
    return ""


def summary(
    profile: Profile | dict | str,
    *,
    minor: str | None = None,
    repo: PerunRepository | None = None,
    cwd: Path | str | None = None,
) -> ProfileSummary:
    """Statistics of every numeric resource key and the stored models of ``profile``.

    ``profile`` is a loaded profile (or its JSON dict) or a spec that
    :func:`perun_core.api.load_profile` looks up.  Measured keys
    (:data:`MEASURED_KEYS`) get a row per (type, subtype) with its unit.
    """
    import numpy as np

    # lazy: keeps the TUI's first frame light
    from ..profile.query import all_models_of, all_numerical_resource_fields_of, as_profile, numeric_column, \
        resource_table

    if isinstance(profile, str):
        loaded = load_profile(profile, minor=minor, repo=repo, cwd=cwd).profile
    else:
        loaded = as_profile(profile)
    kinds = resource_table(loaded, ["type", "subtype"])
    types = np.array([str(v) if isinstance(v, str) else "" for v in kinds["type"]], dtype=object)
    subtypes = np.array([str(v) if isinstance(v, str) else "" for v in kinds["subtype"]], dtype=object)
    units = dict(loaded.units or {})
    fields: list[FieldStats] = []
    for key in all_numerical_resource_fields_of(loaded):
        values = numeric_column(loaded, key)
        present = ~np.isnan(values)
        if not present.any():
            continue
        groups: list[tuple[str, str, Any]] = []
        if key in MEASURED_KEYS and len(types) == len(values):
            for kind, subtype in dict.fromkeys(zip(types[present], subtypes[present])):
                groups.append((kind, subtype, present & (types == kind) & (subtypes == subtype)))
        else:
            groups.append(("", "", present))
        for kind, subtype, mask in groups:
            chosen = values[mask]
            fields.append(FieldStats(key, kind, subtype, _unit(units, key, kind, subtype), int(chosen.size),
                                     float(chosen.min()), float(chosen.mean()), float(chosen.max()),
                                     float(chosen.sum())))
    models = [_model_row(model) for _, model in all_models_of(loaded)]
    return ProfileSummary(loaded.resource_count(), sum(1 for _ in loaded.regions()), fields, models)


def short_number(value: Any) -> str:
    """A short, readable form of a number (other values as text): 4 significant digits, spaced thousands."""
    import math

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


_number = short_number
#: the name front ends know it by
format_number = short_number


def coefficient_text(value: Any) -> str:
    """A model coefficient: six significant digits, never grouped (``b0=34571 b1=0.0123``).

    :func:`short_number`'s spaced thousands read as two numbers in a list
    of coefficients (``b0=34 571``).
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "" if value is None else str(value)
    return f"{value:.6g}"


def _model_row(model: dict[str, Any]) -> ModelRow:
    coeffs = model.get("coeffs") or []
    parts = []
    if isinstance(coeffs, list):
        for coeff in coeffs:
            if isinstance(coeff, dict):
                parts.append(f"{coeff.get('name', '?')}={coefficient_text(coeff.get('value'))}")
    start = model.get("x_start", model.get("x_interval_start"))
    end = model.get("x_end", model.get("x_interval_end"))
    interval = f"{_number(start)}..{_number(end)}" if start is not None or end is not None else ""
    r_square = model.get("r_square")
    return ModelRow(
        uid=str(model.get("uid", "")),
        model=str(model.get("model", model.get("type", ""))),
        r_square=float(r_square) if isinstance(r_square, (int, float)) and not isinstance(r_square, bool) else None,
        coeffs=" ".join(parts),
        interval=interval,
    )
