"""What a fuzzing finds and reports: kept inputs, progress events and the final result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..amounts import format_amount

if TYPE_CHECKING:  # pragma: no cover
    from .growth import Growth
    from .setup import FuzzSettings

__all__ = ["Finding", "FuzzFinished", "FuzzProgress", "FuzzResult", "FuzzStarted", "FindingAnalysed", "InputKept",
           "LargestInput", "Verdict", "compact_rules"]


def format_cost(value: float, metric: str) -> str:
    """A run's cost with its unit, as every front end writes it: ``3.20G instructions``, ``41.2 ms``."""
    return format_amount(value, "instructions" if metric == "instructions" else "s")


def compact_rules(names: list[str], most: int = 4) -> str:
    """``grow-run x3, truncate, +2 more``: the rules that made an input, each once with its count."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    shown = [f"{name} x{count}" if count > 1 else name for name, count in ranked[:most]]
    if len(ranked) > most:
        shown.append(f"+{len(ranked) - most} more")
    return ", ".join(shown)


@dataclass
class Finding:
    """A seed or a kept input.  ``file`` is relative to the output directory ("" for seeds).

    ``slowdown`` is the input's cost over the cost of an ordinary input of its
    size (the seed grown to it, see :mod:`.confirm`), not over the seed's.
    """

    id: str
    file: str
    size: int
    cpu: float
    wall: float
    value: float
    slowdown: float
    seed: str
    parent: str | None
    rules: list[str]
    depth: int
    found_at: float
    execution: int
    hang: bool = False
    coverage: int | None = None
    data: bytes = field(default=b"", repr=False, compare=False)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "file": self.file, "size": self.size, "cpu": self.cpu, "wall": self.wall,
                "slowdown": self.slowdown, "seed": self.seed, "parent": self.parent, "rules": self.rules,
                "mutations": self.depth, "found_at": self.found_at, "execution": self.execution,
                "hang": self.hang, "coverage": self.coverage}


@dataclass
class LargestInput:
    """The worst input a growth analysis measured: ``repetitions`` of the slow part, ``size`` bytes, ``cost``
    (the cheapest of its runs, in the fuzzing's cost measure); ``file`` relative to the output directory."""

    repetitions: int
    size: int
    cost: float
    file: str = ""
    data: bytes = field(default=b"", repr=False, compare=False)

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "size": self.size, "cost": self.cost, "repetitions": self.repetitions}


@dataclass
class Verdict:
    """A kept input analysed after the search: ``reported`` when its cost grows superlinearly with the part
    that made it slow and it is clearly slower than an ordinary input of its size.

    ``file`` is the analysed input (the kept one scaled to run within the analysis' time cap), ``value``
    and ``reference_value`` the medians of the paired runs, ``ratio`` their quotient, ``confidence``
    1 - p of the one-sided test that the input is slower; ``reason`` says why it was not reported.

    ``largest`` is the worst input the growth analysis measured within its time cap (the slow part scaled to
    the most repetitions that ran within it), kept when the growth is superlinear: the input that shows the
    growth at the largest size measured, ``largest_file`` beside ``file``.  ``kept_file`` is the input the
    search kept, which was analysed.
    """

    id: str
    file: str
    size: int
    value: float
    reference_size: int
    reference_value: float
    reference: str
    ratio: float
    confidence: float
    growth: Growth
    reported: bool
    reason: str
    metric: str
    found_at: float = 0.0
    rules: list[str] = field(default_factory=list)
    kept_file: str = ""
    largest: LargestInput | None = None

    @property
    def shown_file(self) -> str:
        """The input a user is pointed at: the largest measured one when there is one, else the compared one."""
        return self.largest.file if self.largest is not None and self.largest.file else self.file

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "file": self.file, "kept_file": self.kept_file,
                "largest": self.largest.as_json() if self.largest is not None else None,
                "size": self.size, "cost": self.value,
                "ratio_at_equal_size": self.ratio, "confidence": self.confidence, "reference": self.reference,
                "reference_size": self.reference_size, "reference_cost": self.reference_value,
                "cost_measure": self.metric, "growth": self.growth.as_json(), "reported": self.reported,
                "reason": self.reason, "found_at": self.found_at, "rules": compact_rules(self.rules)}


@dataclass(frozen=True, slots=True)
class FuzzStarted:
    seeds: tuple[str, ...]
    baselines: tuple[float, ...]
    noise: float
    threshold: float
    jobs: int
    rules: tuple[str, ...]
    coverage: str
    metric: str = "cpu"
    note: str = ""


@dataclass(frozen=True, slots=True)
class FuzzProgress:
    executions: int
    kept: int
    hangs: int
    failures: int
    best_slowdown: float
    elapsed: float
    executions_per_second: float
    #: seconds into the fuzzing when the best input so far was found
    best_found_at: float = 0.0


@dataclass(frozen=True, slots=True)
class InputKept:
    finding: Finding
    best_slowdown: float


@dataclass(frozen=True, slots=True)
class FuzzFinished:
    stopped: str
    executions: int
    kept: int
    hangs: int
    best_slowdown: float
    elapsed: float
    reported: int = 0


@dataclass(frozen=True, slots=True)
class FindingAnalysed:
    """A kept input was analysed after the search (see :class:`Verdict`)."""

    verdict: Verdict


@dataclass
class FuzzResult:
    """What a fuzzing found; written to the output directory by :mod:`.output`."""

    settings: FuzzSettings
    argv: list[str]
    seeds: list[Finding]
    findings: list[Finding]
    timeline: list[tuple[float, float]]
    executions: int
    failures: int
    elapsed: float
    stopped: str
    noise: float
    threshold: float
    jobs: int
    rule_weights: dict[str, float]
    rule_successes: dict[str, int]
    coverage: str
    profiles: list[str] = field(default_factory=list)
    registered: list[str] = field(default_factory=list)
    matrix_workloads: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    metric: str = "cpu"
    verdicts: list[Verdict] = field(default_factory=list)
    #: seconds from the start to the search's end; the rest of ``elapsed`` is the analysis of the kept inputs
    searched: float = 0.0

    @property
    def reported(self) -> list[Verdict]:
        """The findings: analysed inputs that grow superlinearly and are slower at equal size, worst first."""
        return [v for v in self.verdicts if v.reported]

    @property
    def best(self) -> list[Finding]:
        """Kept inputs, slowest first (hangs first of all)."""
        return sorted(self.findings, key=lambda f: (f.hang, f.slowdown), reverse=True)

    @property
    def best_slowdown(self) -> float:
        return max((f.slowdown for f in self.findings), default=1.0)
