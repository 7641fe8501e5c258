"""What an explanation says: the functions carrying a time change, and how it is stored.

:class:`Explanation` is what :mod:`perun_core.check.explain` attaches to a
finding (``details["explanation"]``).  Its record (:meth:`Explanation.to_record`)
is what the JSON output shows and what a stored check keeps next to the
finding in ``.perun/changes`` (see :mod:`perun_core.storage.changes`);
:meth:`Explanation.from_record` reads it back, so later reports, the TUI
and pushed change records show it without collecting anything again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..amounts import format_amount, format_percent

__all__ = ["ExplainedFunction", "Explanation", "ThroughFunction", "relative_text"]

_BLOCKS = ("<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>", "<lambda>")


@dataclass(frozen=True, slots=True)
class ThroughFunction:
    """A foreign function (a library's, the runtime's) whose cost an owned function carries: the part of its
    cost charged to that function in the baseline and the target."""

    function: str
    baseline: float
    target: float

    @property
    def change(self) -> float:
        return self.target - self.baseline

    def text(self, unit: str) -> str:
        """``through memcpy: 0 Ir -> 59.3M Ir``."""
        return f"through {self.function}: {format_amount(self.baseline, unit)} -> {format_amount(self.target, unit)}"

    def to_record(self) -> dict[str, Any]:
        return {"function": self.function, "baseline": self.baseline, "target": self.target, "change": self.change}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ThroughFunction:
        return cls(str(record["function"]), float(record["baseline"]), float(record["target"]))


@dataclass(frozen=True, slots=True)
class ExplainedFunction:
    """One function's share of a change.

    For a function of the user's code (``owned``), ``baseline`` and
    ``target`` are its own cost plus the cost of the foreign functions it
    called that is charged to it (:mod:`perun_core.check.explain_owned`);
    ``through`` lists those foreign functions, largest change first.  A
    foreign function is listed itself only with the cost no owned function
    is above.
    """

    function: str
    file: str | None
    line: int | None
    baseline: float
    target: float
    #: change of exclusive cost / the whole program's change
    share: float
    status: str
    #: for sample counts (perf): the two-sided p-value of "the function's time did not change"; None for exact
    #: counts (callgrind) and single timings (cProfile)
    p_value: float | None = None
    #: True: the user's code; False: foreign code no owned function called; None: not classified (older records)
    owned: bool | None = None
    through: tuple[ThroughFunction, ...] = ()

    @property
    def change(self) -> float:
        return self.target - self.baseline

    @property
    def relative(self) -> float | None:
        return self.change / self.baseline if self.baseline else None

    def is_block(self) -> bool:
        """A comprehension, generator expression or lambda (a code block inside a function)."""
        return self.function in _BLOCKS and self.line is not None

    def name_is_code(self) -> bool:
        return not self.function.startswith("<") or self.function == "<module>"

    @property
    def where(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or ""

    def to_record(self) -> dict[str, Any]:
        return {"function": self.function, "file": self.file, "line": self.line, "baseline": self.baseline,
                "target": self.target, "change": self.change, "relative": self.relative, "share": self.share,
                "status": self.status, "p_value": self.p_value, "owned": self.owned,
                "through": [t.to_record() for t in self.through]}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ExplainedFunction:
        """Rebuild from :meth:`to_record`; KeyError, TypeError or ValueError for a damaged record."""
        line = record.get("line")
        p_value = record.get("p_value")
        owned = record.get("owned")
        return cls(str(record["function"]), _text_or_none(record.get("file")),
                   int(line) if isinstance(line, int) and not isinstance(line, bool) else None,
                   float(record["baseline"]), float(record["target"]), float(record["share"]),
                   str(record.get("status", "")), float(p_value) if isinstance(p_value, (int, float)) else None,
                   owned if isinstance(owned, bool) else None,
                   tuple(ThroughFunction.from_record(t) for t in record.get("through") or ()))

    def text(self, unit: str) -> str:
        """``name (file:line): 419 samples -> 1 sample (-99.8%), 87% of the change, p < 0.0001``: one style of
        percentage, the change's (:func:`~perun_core.amounts.format_percent`)."""
        parts = [self.function + (f" ({self.where})" if self.where else "")]
        if self.status == "new":
            parts.append(f"new, {format_amount(self.target, unit)}")
        elif self.status == "gone":
            parts.append(f"gone, was {format_amount(self.baseline, unit)}")
        else:
            rel = self.relative
            parts.append(f"{format_amount(self.baseline, unit)} -> {format_amount(self.target, unit)}"
                         + (f" ({relative_text(rel)})" if rel is not None else ""))
        parts.append(f"{100 * self.share:.0f}% of the change")
        if self.p_value is not None:
            parts.append(f"p = {self.p_value:.2g}" if self.p_value >= 1e-4 else "p < 0.0001")
        if self.through:
            names = [t.function for t in self.through]
            parts.append("through " + (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]))
        if self.owned is False:
            parts.append("outside the repository, called by no function of it")
        return ": ".join(parts[:1]) + ": " + ", ".join(parts[1:])


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why one job's time changed between two commits (or ``message``: why that is not known)."""

    collector: str = ""
    unit: str = ""
    baseline_total: float = 0.0
    target_total: float = 0.0
    functions: tuple[ExplainedFunction, ...] = ()
    message: str = ""
    #: files written: the difference flame graph, the call-level profiles (pending) or tags of registered ones
    written: tuple[str, ...] = ()
    reused: tuple[str, ...] = field(default=())
    #: the names of the two call-level profiles compared (baseline, target): pending file names, tags or paths
    profiles: tuple[str, ...] = ()
    #: how many times each side ran, interleaved baseline and target (1 for exact counts)
    rounds: int = 1
    #: where the two profiles are (baseline, target): ``object:<checksum>`` (registered), ``pending:<file name>``
    #: or ``file:<path>``; front ends load them to draw the difference flame graph without collecting again
    sources: tuple[str, ...] = ()
    #: how the collection was chosen and bounded: the collector's expected cost, a reduced workload
    notes: tuple[str, ...] = ()

    @property
    def explained(self) -> bool:
        return not self.message

    def headline(self) -> str:
        if self.message:
            return f"not explained: {self.message}"
        change = self.target_total - self.baseline_total
        rel = f" ({relative_text(change / self.baseline_total)})" if self.baseline_total else ""
        # the whole program's cost, named: it sits beside the finding's level (a median run, or a call at one size),
        # and two unlabelled percentages of one change read as a contradiction
        return (f"explained by ({self.collector}, the whole program's total: "
                f"{format_amount(self.baseline_total, self.unit)} -> {format_amount(self.target_total, self.unit)}"
                f"{rel}):")

    def to_record(self) -> dict[str, Any]:
        return {"collector": self.collector, "unit": self.unit, "baseline_total": self.baseline_total,
                "target_total": self.target_total, "message": self.message or None,
                "functions": [f.to_record() for f in self.functions], "written": list(self.written),
                "reused": list(self.reused), "profiles": list(self.profiles), "rounds": self.rounds,
                "sources": list(self.sources), "notes": list(self.notes)}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Explanation:
        """Rebuild a stored explanation; KeyError, TypeError or ValueError for a damaged record."""
        if not isinstance(record, dict):
            raise TypeError("an explanation is a mapping")
        rounds = record.get("rounds", 1)
        return cls(str(record.get("collector") or ""), str(record.get("unit") or ""),
                   float(record.get("baseline_total") or 0.0), float(record.get("target_total") or 0.0),
                   tuple(ExplainedFunction.from_record(f) for f in record.get("functions") or ()),
                   str(record.get("message") or ""), _texts(record.get("written")), _texts(record.get("reused")),
                   _texts(record.get("profiles")), rounds if isinstance(rounds, int) and rounds > 0 else 1,
                   _texts(record.get("sources")), _texts(record.get("notes")))


def _text_or_none(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _texts(value: Any) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(str(item) for item in value)


def relative_text(relative: float | None) -> str:
    """``+42.0%`` (:func:`~perun_core.amounts.format_percent`), or ``x391`` for changes beyond ten times."""
    if relative is None:
        return ""
    if relative >= 9:
        return f"x{1 + relative:.3g}"
    return format_percent(100 * relative)
