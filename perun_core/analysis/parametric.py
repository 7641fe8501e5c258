"""The parametric model kinds and their records (spec §3.4.2): names, ranking, evaluation.

A record is ``{uid, model, method, r_square, coeffs: [{name, value}, ...],
x_interval_start, x_interval_end}``; :mod:`perun_core.analysis.regression`
makes them and this module reads them.  The best of several records is the
one with the highest ``r_square``, except that models whose unexplained
share ``1 - r_square`` exceeds the best one's by at most :data:`TIE_RELATIVE`
(plus :data:`TIE_ABSOLUTE`) count as tied, and the simplest of the tied ones
(in the order of :data:`MODELS`) wins.  A robust fit's record also has
``r_square_error``, the standard error of its ``r_square``: then a model
within :data:`TIE_STANDARD_ERRORS` standard errors of the best one's is
tied too (the difference is what the noise of the points explains).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameter, InvalidProfile
from .curves import model_coefficients

if TYPE_CHECKING:  # pragma: no cover
    import numpy

__all__ = [
    "ALIASES",
    "MODELS",
    "RANK",
    "TIE_ABSOLUTE",
    "TIE_RELATIVE",
    "TIE_STANDARD_ERRORS",
    "best_model",
    "canonical_model_name",
    "evaluate_parametric",
    "tie_limit",
    "ties",
]

#: Model kinds, simplest first (the order breaks ties between equally good models).
MODELS = ("constant", "logarithmic", "linear", "nlogn", "quadratic", "power", "exponential")
#: Models whose ``1 - r_square`` is within this share of the best one's are tied ...
TIE_RELATIVE = 1e-3
#: ... give or take this much.
TIE_ABSOLUTE = 1e-9
#: A robust fit's ``r_square`` is an estimate with a standard error (``r_square_error``): a model whose
#: ``r_square`` is below the best one's by at most this many standard errors of the difference is as good as
#: far as the data can tell (a difference of two standard errors or more arises by chance about once in 40).
TIE_STANDARD_ERRORS = 2.0

ALIASES = {
    "n log n": "nlogn",
    "nlogn": "nlogn",
    "n_log_n": "nlogn",
    "linearithmic": "nlogn",
    "log": "logarithmic",
    "const": "constant",
    "exp": "exponential",
}
RANK = {name: rank for rank, name in enumerate(MODELS)}
_UNIT = "regression_analysis"


def canonical_model_name(name: str) -> str:
    """The canonical kind for ``name`` (``"n log n"`` -> ``"nlogn"``), case-insensitively.

    Raises :class:`~perun_core.errors.InvalidParameter` for unknown kinds.
    """
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in RANK:
        raise InvalidParameter(_UNIT, "regression_models", name, f"one of {', '.join(MODELS)} or 'all'")
    return key


def tie_limit(top: float) -> float:
    """The lowest r_square that ties with a best r_square of ``top``."""
    return 1.0 - ((1.0 - top) * (1.0 + TIE_RELATIVE) + TIE_ABSOLUTE)


def ties(top: float, top_error: float, r_square: float, error: float) -> bool:
    """Whether a model of ``r_square`` (standard error ``error``, 0 when exact) is as good as the best one's
    ``top`` (``top_error``): within :func:`tie_limit`, or within :data:`TIE_STANDARD_ERRORS` standard errors
    of the difference (the errors taken as independent: that overstates the error of the difference, so the
    simpler model is kept in doubt)."""
    return r_square >= tie_limit(top) or top - r_square <= TIE_STANDARD_ERRORS * math.hypot(top_error, error)


def _error(record: dict) -> float:
    value = record.get("r_square_error", 0.0)
    usable = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if usable and value > 0 else 0.0


def best_model(models: Iterable[dict]) -> dict | None:
    """The best of ``models`` (records): highest ``r_square``, ties to the simplest kind (see above and
    :func:`ties`).

    Records of kinds this module does not know rank after the known ones
    when tied.  Returns None for an empty input.
    """
    chosen = None
    chosen_key = None
    records = [m for m in models if isinstance(m.get("r_square"), (int, float))]
    if not records:
        return None
    top = max(records, key=lambda m: m["r_square"])
    for record in records:
        if not ties(top["r_square"], _error(top), record["r_square"], _error(record)):
            continue
        kind = ALIASES.get(str(record.get("model", "")).lower(), str(record.get("model", "")).lower())
        key = RANK.get(kind, len(MODELS))
        if chosen_key is None or key < chosen_key:
            chosen, chosen_key = record, key
    return chosen


def _coefficients(model: dict) -> dict[str, float]:
    return model_coefficients(model)


def evaluate_parametric(model: dict, xs: Any) -> numpy.ndarray:
    """Values of a parametric model record at ``xs`` (NaN where the formula is undefined).

    Uses the formulas of :func:`~perun_core.analysis.curves.plot_data_from_coefficients_of`,
    including ``b0 + b1*x + b2*x^2`` for quadratic records that have ``b2``.
    """
    import numpy as np

    kind = str(model.get("model", model.get("type", ""))).strip().lower()
    kind = ALIASES.get(kind, kind)
    if kind not in RANK:
        raise InvalidProfile(None, "model", f"unknown model kind '{kind}'")
    c = _coefficients(model)
    needed = ("b0",) if kind == "constant" else ("b0", "b1")
    for name in needed:
        if name not in c:
            raise InvalidProfile(None, "model.coeffs", f"missing coefficient '{name}' of a {kind} model")
    x = np.asarray(xs, dtype=np.float64)
    with np.errstate(all="ignore"):
        if kind == "constant":
            out = np.full(x.shape, c["b0"])
        elif kind == "linear":
            out = c["b0"] + c["b1"] * x
        elif kind == "logarithmic":
            out = c["b0"] + c["b1"] * np.log(np.where(x > 0, x, np.nan))
        elif kind == "quadratic":
            out = c["b0"] + c["b1"] * x * x if "b2" not in c else c["b0"] + c["b1"] * x + c["b2"] * x * x
        elif kind == "nlogn":
            # x ln x tends to 0 at x = 0, as in the fit
            x_ln_x = np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), np.where(x == 0, 0.0, np.nan))
            out = c["b0"] + c["b1"] * x_ln_x
        elif kind == "power":
            out = c["b0"] * np.power(x, c["b1"])
        else:  # exponential
            out = c["b0"] * np.power(c["b1"], x)
    return np.where(np.isfinite(out), out, np.nan)
