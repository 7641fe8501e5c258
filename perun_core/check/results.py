"""What a check reports: the kinds of change (spec 001 §8.1, paper Tables I-II) and findings.

A :class:`Finding` is one verdict of one method about one location (a uid,
or a uid and subtype when a uid measures several things) between a baseline
and a target profile.  It carries what the original tool's
``DegradationInfo`` carried -- result, type, location, from/to, confidence --
plus the absolute and relative delta of the paper's tables.

``delta_rel`` is in percent of the baseline value (``+100`` = twice as
slow); ``delta_abs`` is in the profile's unit of ``amount``, which ``unit`` names.  ``from_`` and
``to`` are numbers (typical amounts) or model names (``"linear"``), as the
method says in ``type``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

__all__ = ["Finding", "PerformanceChange"]


class PerformanceChange(Enum):
    """The result of a check of one location, spelled as in JSON output."""

    NO_CHANGE = "NoChange"
    DEGRADATION = "Degradation"
    OPTIMIZATION = "Optimization"
    MAYBE_DEGRADATION = "MaybeDegradation"
    MAYBE_OPTIMIZATION = "MaybeOptimization"
    SEVERE_DEGRADATION = "SevereDegradation"
    SEVERE_OPTIMIZATION = "SevereOptimization"
    TOTAL_DEGRADATION = "TotalDegradation"
    TOTAL_OPTIMIZATION = "TotalOptimization"
    NOT_IN_BASELINE = "NotInBaseline"
    NOT_IN_TARGET = "NotInTarget"
    UNKNOWN = "Unknown"

    @classmethod
    def parse(cls, text: str) -> PerformanceChange:
        """The member spelled ``text`` (its JSON value or its Python name)."""
        for member in cls:
            if text in (member.value, member.name):
                return member
        raise ValueError(f"unknown performance change '{text}'")

    @property
    def is_degradation(self) -> bool:
        """Degradations of any certainty (Maybe included)."""
        return self in _DEGRADATIONS

    @property
    def is_optimization(self) -> bool:
        """Optimizations of any certainty (Maybe included)."""
        return self in _OPTIMIZATIONS

    @property
    def is_maybe(self) -> bool:
        return self in (PerformanceChange.MAYBE_DEGRADATION, PerformanceChange.MAYBE_OPTIMIZATION)

    @property
    def is_change(self) -> bool:
        """Whether the result says the performance moved (either way, any certainty)."""
        return self in _DEGRADATIONS or self in _OPTIMIZATIONS

    @property
    def mark(self) -> str:
        """``-`` for a certain degradation, ``+`` for a certain optimization, else ''.

        These are the marks ``log`` shows with ``%changes%``.
        """
        if self.is_maybe:
            return ""
        if self in _DEGRADATIONS:
            return "-"
        if self in _OPTIMIZATIONS:
            return "+"
        return ""

    @property
    def glyph(self) -> str:
        """One character that tells the kind of result without colour."""
        return _GLYPHS[self]

    @property
    def style(self) -> str:
        """Style name for front ends: degradation, optimization, maybe, muted or error."""
        if self.is_maybe:
            return "maybe"
        if self in _DEGRADATIONS:
            return "degradation"
        if self in _OPTIMIZATIONS:
            return "optimization"
        if self is PerformanceChange.UNKNOWN:
            return "error"
        if self is PerformanceChange.NO_CHANGE:
            return "muted"
        return "notice"


_DEGRADATIONS = frozenset({
    PerformanceChange.DEGRADATION, PerformanceChange.MAYBE_DEGRADATION,
    PerformanceChange.SEVERE_DEGRADATION, PerformanceChange.TOTAL_DEGRADATION,
})
_OPTIMIZATIONS = frozenset({
    PerformanceChange.OPTIMIZATION, PerformanceChange.MAYBE_OPTIMIZATION,
    PerformanceChange.SEVERE_OPTIMIZATION, PerformanceChange.TOTAL_OPTIMIZATION,
})
_GLYPHS = {
    PerformanceChange.NO_CHANGE: "=",
    PerformanceChange.DEGRADATION: "-",
    PerformanceChange.SEVERE_DEGRADATION: "-",
    PerformanceChange.TOTAL_DEGRADATION: "-",
    PerformanceChange.OPTIMIZATION: "+",
    PerformanceChange.SEVERE_OPTIMIZATION: "+",
    PerformanceChange.TOTAL_OPTIMIZATION: "+",
    PerformanceChange.MAYBE_DEGRADATION: "~",
    PerformanceChange.MAYBE_OPTIMIZATION: "~",
    PerformanceChange.NOT_IN_BASELINE: "*",
    PerformanceChange.NOT_IN_TARGET: "x",
    PerformanceChange.UNKNOWN: "?",
}


def _clean(value: Any) -> Any:
    """A JSON-safe value: finite floats rounded to 6 significant digits, NaN/inf as None."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return None
    return float(f"{number:.6g}")


@dataclass(frozen=True, slots=True)
class Finding:
    """One verdict about one location (spec 001 §8.4 ``DegradationInfo``).

    ``reason`` explains an Unknown result (or anything else worth a note);
    ``method`` is the full name of the method that found it.
    """

    result: PerformanceChange
    type: str
    location: str
    from_: Any = None
    to: Any = None
    delta_abs: float | None = None
    delta_rel: float | None = None
    confidence_type: str = "no"
    confidence_rate: float = 0.0
    method: str = ""
    reason: str = ""
    #: extra numbers a method wants to keep (not part of the JSON output)
    details: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: the unit of ``from_``, ``to`` and ``delta_abs`` (the profile's unit of the location's amounts; "" if none)
    unit: str = ""

    def with_method(self, method: str) -> Finding:
        return self if self.method else replace(self, method=method)

    def to_record(self) -> dict[str, Any]:
        """The finding as a JSON-ready dict (without baseline/target/method)."""
        return {
            "uid": self.location,
            "result": self.result.value,
            "type": self.type,
            "from": _clean(self.from_),
            "to": _clean(self.to),
            "delta_abs": _clean(self.delta_abs),
            "delta_rel": _clean(self.delta_rel),
            "unit": self.unit,
            "confidence_type": self.confidence_type,
            "confidence_rate": _clean(self.confidence_rate),
        }

    @classmethod
    def from_record(cls, record: dict[str, Any], method: str = "") -> Finding:
        """Rebuild a finding stored by :meth:`to_record` (unknown results raise ValueError)."""
        return cls(
            PerformanceChange.parse(str(record["result"])), str(record.get("type", "")), str(record.get("uid", "")),
            record.get("from"), record.get("to"), record.get("delta_abs"), record.get("delta_rel"),
            str(record.get("confidence_type", "no")), record.get("confidence_rate") or 0.0,
            method or str(record.get("method", "")), str(record.get("reason", "")),
            unit=str(record.get("unit") or ""),
        )
