"""What a fuzzing finds and reports: kept inputs, progress events and the final result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .setup import FuzzSettings

__all__ = ["Finding", "FuzzFinished", "FuzzProgress", "FuzzResult", "FuzzStarted", "InputKept"]


@dataclass
class Finding:
    """A seed or a kept input.  ``file`` is relative to the output directory ("" for seeds)."""

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


@dataclass(frozen=True, slots=True)
class FuzzStarted:
    seeds: tuple[str, ...]
    baselines: tuple[float, ...]
    noise: float
    threshold: float
    jobs: int
    rules: tuple[str, ...]
    coverage: str


@dataclass(frozen=True, slots=True)
class FuzzProgress:
    executions: int
    kept: int
    hangs: int
    failures: int
    best_slowdown: float
    elapsed: float
    executions_per_second: float


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

    @property
    def best(self) -> list[Finding]:
        """Kept inputs, slowest first (hangs first of all)."""
        return sorted(self.findings, key=lambda f: (f.hang, f.slowdown), reverse=True)

    @property
    def best_slowdown(self) -> float:
        return max((f.slowdown for f in self.findings), default=1.0)
